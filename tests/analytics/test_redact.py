"""Masking personal data (analytics.redact): each kind found in the forms people write it,
decoys left alone, one placeholder per value, JSON kept JSON."""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analytics.masking import search_barrier
from analytics.redact import KINDS, RedactConfig, Redactor, find_personal_data

# (kind, value as written in a message)
PLANTED = [
    ("EMAIL", "bob@example.com"),
    ("EMAIL", "alice.o'neil+tag@mail.example.co.uk"),
    ("EMAIL", "josé.müller@exämple.de"),
    ("PHONE", "(415) 555-2671"),
    ("PHONE", "+1 415-555-2671"),
    ("PHONE", "415.555.2671"),
    ("PHONE", "+44 20 7946 0958"),
    ("PHONE", "020 7946 0958"),
    ("PHONE", "+49 30 901820"),
    ("PHONE", "+33 1 42 68 53 00"),
    ("PHONE", "555-867-5309"),
    ("PHONE", "(415) 555-0199"),
    ("CARD", "4111 1111 1111 1111"),
    ("CARD", "4111-1111-1111-1111"),
    ("CARD", "5500005555555559"),
    ("CARD", "3782 822463 10005"),
    ("IBAN", "DE89 3704 0044 0532 0130 00"),
    ("IBAN", "GB82WEST12345698765432"),
    ("IBAN", "FR1420041010050500013M02606"),
    ("IP", "192.168.1.20"),
    ("IP", "8.8.8.8"),
    ("IP", "2001:db8::8a2e:370:7334"),
    ("IP", "fe80::1"),
    ("IP", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("SSN", "123-45-6789"),
    ("SSN", "536 22 8726"),
    # Written in ways a careless detector misses: masking fails closed.
    ("EMAIL", "carol@acme-mail.com-h0"),  # a suffix glued to the address: masked with it
    ("IBAN", "de89 3704 0044 0532 0130 00"),
    ("IBAN", "DE89-3704-0044-0532-0130-00"),
    ("CARD", "4111.1111.1111.1111"),
    ("CARD", "4111\u00a01111\u00a01111\u00a01111"),  # non-breaking spaces
    ("CARD", "４１１１ １１１１ １１１１ １１１１"),  # full-width digits
    ("CARD", "4111 1111-1111_1111"),  # separators mixed in one number
    ("CARD", "5500\u00a00000.0000/0004"),
    ("CARD", "3782-822463 10005"),
    ("CARD", "4111 1111\n1111 1111"),  # a line break inside (a wrapped line)
    ("CARD", "⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹"),  # superscript digits
    ("EMAIL", "alice.entns&#64ent-mail.com"),  # a character reference without its `;`: a browser shows `@`
    ("EMAIL", "alice.dbl%2540dbl-mail.com"),  # URL-escaped twice
    ("IP", "010.001.002.003"),  # leading zeros
    ("IBAN", "DE89 3704 0044\n0532 0130 00"),  # over a line break
    ("PHONE", "+44 7700 900456"),  # a range kept for drama: not "valid", still a phone number
    ("PHONE", "07700 900456"),
]

# Look like personal data to a careless pattern; are not.
DECOYS = [
    "order A-1043",
    "ORD-2025-000123",
    "order #100234567",
    "INV/2025/0001234",
    "1234 5678 9012 3456",  # fails Luhn, no issuer's first digits
    "1234567812345678",  # fails Luhn
    "v1.2.3.4",
    "version 10.0.0.1",
    "release 1.2.3",
    "build 2025.03.05.1",
    "2025-03-05T19:45:00Z",
    "2025-03-05 19:45:00.123456+00:00",
    "2025/03/05",
    "05.03.2025",
    "epoch 1741203900",
    "took 12:30:45",
    "id 1f0a2b3c-4d5e-6f70-8a9b-0c1d2e3f4a5b",
    "$1,299.00",
    "sha 3f786850e387550fdab836ed7e6dc881de23001b",
    "std::vector",
    "ISBN 978-3-16-148410-0",
    "SSN-like 000-12-3456",  # area 000 is never issued
    "999.999.999.999",
    "DE00 1234 5678 9012 3456 7890",  # longer than an IBAN of Germany, bad checksum
    "firmware 1.2.4.0",
    "2025-03-05 1741203902",  # separators mixed, not in a card's groups (the digits pass Luhn)
    "05.03.2025 1234-5678-9012",
    "1\n2\n3\n4\n5\n6\n7\n8\n9\n1\n2\n3\n4\n5\n6\n3",  # numbers one per line (their digits pass Luhn)
    "firmware 010.001.002.004",
]


def test_other_spellings_are_the_same_value():
    r = Redactor()
    assert r.text("4111.1111.1111.1111 / ４１１１ １１１１ １１１１ １１１１ / 4111 1111 1111 1111") == "<CARD_1> / <CARD_1> / <CARD_1>"
    assert r.text("de89-3704-0044-0532-0130-00 = DE89 3704 0044 0532 0130 00") == "<IBAN_1> = <IBAN_1>"


@pytest.mark.parametrize("kind,value", PLANTED)
def test_each_kind_is_found_where_it_stands(kind, value):
    text = f"Hi, it is {value}, thanks."
    findings = find_personal_data(text)
    assert [(f.kind, text[f.start:f.end]) for f in findings] == [(kind, value)]
    masked = Redactor().text(text)
    assert value not in masked and masked == f"Hi, it is <{kind}_1>, thanks."


@pytest.mark.parametrize("decoy", DECOYS)
def test_decoys_stay(decoy):
    text = f"Note: {decoy}."
    assert find_personal_data(text) == []
    assert Redactor().text(text) == text


def test_same_value_same_placeholder_across_spellings_and_texts():
    r = Redactor()
    assert r.text("call (415) 555-2671") == "call <PHONE_1>"
    assert r.text("or +1 415 555 2671, or bob@example.com") == "or <PHONE_1>, or <EMAIL_1>"
    assert r.text("BOB@EXAMPLE.COM and carol@example.com") == "<EMAIL_1> and <EMAIL_2>"
    assert r.text("4111-1111-1111-1111 is 4111111111111111") == "<CARD_1> is <CARD_1>"
    assert r.counts() == {"CARD": 1, "EMAIL": 2, "PHONE": 1}
    # A new redactor (another export) numbers from 1 again.
    assert Redactor().text("carol@example.com") == "<EMAIL_1>"


def test_json_values_are_masked_and_stay_json():
    r = Redactor()
    args = json.dumps({"email": "bob@example.com", "card": 4111111111111111, "order": "A-1043",
                       "nested": [{"phone": "+44 20 7946 0958"}], "amount": 12.5, "ok": True})
    out = json.loads(r.json_text(args))
    assert out == {"email": "<EMAIL_1>", "card": "<CARD_1>", "order": "A-1043",
                   "nested": [{"phone": "<PHONE_1>"}], "amount": 12.5, "ok": True}
    assert r.json_text("not json: bob@example.com") == "not json: <EMAIL_1>"
    assert r.json_text(None) is None


def test_configured_patterns_and_terms():
    config = RedactConfig(patterns={"employee id": r"EMP-[0-9]{6}"}, terms=("Alice Example", "Falcon"))
    r = Redactor(config)
    text = "alice example (EMP-004211) asked about project FALCON; Falconry is fine; mail alice@example.com"
    assert r.text(text) == "<NAME_1> (<EMPLOYEE_ID_1>) asked about project <NAME_2>; Falconry is fine; mail <EMAIL_1>"


def test_config_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="not a valid regular expression"):
        RedactConfig(patterns={"x": "("})
    with pytest.raises(ValueError, match="unknown phone region"):
        RedactConfig(phone_regions=("XX",))
    bad = tmp_path / "r.toml"
    bad.write_text("[redact]\nterm = ['x']\n")
    with pytest.raises(ValueError, match=r"unknown \[redact\] key\(s\) term"):
        RedactConfig.from_toml(bad)
    good = tmp_path / "ok.toml"
    good.write_text("[redact]\nterms = ['Zed']\nphone_regions = ['de']\n[redact.patterns]\nTICKET = 'TCK-[0-9]+'\n")
    config = RedactConfig.from_toml(good)
    assert config.phone_regions == ("DE",) and config.patterns == (("TICKET", "TCK-[0-9]+"),)
    assert Redactor(config).text("Zed: TCK-12, 030 901820") == "<NAME_1>: <TICKET_1>, <PHONE_1>"
    with pytest.raises(ValueError, match="no such config file"):
        RedactConfig.from_toml(tmp_path / "missing.toml")


_filler = st.sampled_from(["Hello", "order", "please", "Grüße", "注文", "thanks!", "\n", ",", "the", "ok"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_filler, st.sampled_from(PLANTED), st.sampled_from(DECOYS)), min_size=1, max_size=12))
def test_mixed_text_loses_every_planted_value_and_keeps_every_decoy(parts):
    words = [p[1] if isinstance(p, tuple) else p for p in parts]
    text = " ; ".join(words)
    masked = Redactor().text(text)
    for p in parts:
        if isinstance(p, tuple):
            assert p[1] not in masked
        elif p in DECOYS:
            assert p in masked
    assert set(KINDS) >= {f.kind for f in find_personal_data(text)}


def test_a_card_grouped_by_spaced_dashes_and_an_escaped_at_are_masked():
    r = Redactor()
    assert r.text("card 4111 - 1111 - 1111 - 1111 ok") == "card <CARD_1> ok"
    assert r.text("4111 . 1111 . 1111 . 1111") == "<CARD_1>"
    assert r.text("4111 -1111- 1111 - 1111") == "4111 -1111- 1111 - 1111"  # mixed groupings: not a card
    said = ("mail alice.pii@acme-mail.com, alice.pii%40acme-mail.com, alice.pii&#64;acme-mail.com "
            "or alice.pii&#x40;acme-mail.com")
    assert r.text(said) == "mail <EMAIL_1>, <EMAIL_1>, <EMAIL_1> or <EMAIL_1>"
    blind = duckdb.connect().execute("SELECT regexp_replace(?, ?, '#', 'g')", [said, search_barrier(RedactConfig())])
    assert "acme-mail" not in blind.fetchone()[0]  # a search cannot find a part of them either


def test_the_search_barrier_covers_an_at_sign_escaped_without_its_semicolon_or_twice():
    said = "mail alice.entns&#64ent-mail.com or alice.dbl%2540dbl-mail.com"
    blind = duckdb.connect().execute("SELECT regexp_replace(?, ?, '#', 'g')", [said, search_barrier(RedactConfig())])
    assert blind.fetchone()[0] == "mail # or #"


def test_the_search_barrier_covers_superscript_digits():
    said = "card ⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹ ok"
    blind = duckdb.connect().execute("SELECT regexp_replace(?, ?, '#', 'g')", [said, search_barrier(RedactConfig())])
    assert blind.fetchone()[0] == "card # ok"


def test_a_configured_pattern_reads_a_text_holding_a_lone_surrogate_at_its_own_offsets():
    """A stored string can hold a lone surrogate, which RE2's UTF-8 cannot: masking raised
    UnicodeEncodeError on such a message once a pattern was configured."""
    from analytics.redact import RedactConfig, find_personal_data

    text = "order \ud800 A-1043 and \udfff A-2044"
    found = find_personal_data(text, RedactConfig(patterns=(("ORDER", "A-[0-9]{4}"),)))
    assert [(f.kind, text[f.start:f.end], f.value) for f in found] == [("ORDER", "A-1043", "A-1043"),
                                                                       ("ORDER", "A-2044", "A-2044")]
