"""Values a masker must not miss, and look-alikes it must not take (docs/privacy.md, "Masking at
read time"). Missed: a card number or an IBAN one character short or with a wrong check digit,
printed in its groups (its check digit gives the missing digit back); an address with its `@`
and dots spelled out (`alice (at) example (dot) com`) or quoted-printable (`alice=40example.com`).
Taken: a version glued to a name or a pin (`Chrome/120.0.0.0`, `foo==1.2.3.4`) as an IP address;
long digit runs as cards."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor

MASKED = {
    "card 4111 1111 1111 111 please": ("CARD", "4111 1111 1111 111"),  # one digit short
    "card 4111-1111-1111-111.": ("CARD", "4111-1111-1111-111"),
    "card 5500.0000.0000.000 ok": ("CARD", "5500.0000.0000.000"),
    "card 4111 1111 1111 1111 11 ok": ("CARD", "4111 1111 1111 1111 11"),  # one short of 19
    "iban DE89 3704 0044 0532 0130 0 pay": ("IBAN", "DE89 3704 0044 0532 0130 0"),  # one short
    "iban GB82 WEST 1234 5698 7654 3 now": ("IBAN", "GB82 WEST 1234 5698 7654 3"),
    "iban FR76-3000-6000-0112-3456-7890-18 ok": ("IBAN", "FR76-3000-6000-0112-3456-7890-18"),
    "write to alice (at) example (dot) com now": ("EMAIL", "alice (at) example (dot) com"),
    "write to alice[at]example[.]com now": ("EMAIL", "alice[at]example[.]com"),
    "write to alice at example dot com now": ("EMAIL", "alice at example dot com"),
    "write to alice{at}mail.example.org now": ("EMAIL", "alice{at}mail.example.org"),
    "write to alice=40example=2Ecom now": ("EMAIL", "alice=40example=2Ecom"),
    "write to alice=40example.com now": ("EMAIL", "alice=40example.com"),
    "from 10.0.0.1 now": ("IP", "10.0.0.1"),
    "see http://192.168.1.20/admin": ("IP", "192.168.1.20"),
    "client ip=203.0.113.5 ok": ("IP", "203.0.113.5"),
}

DECOYS = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0.0.0 Safari/537.36",
    "pin foo==1.2.3.4 and bar>=10.0.0.1, baz~=2.0.0.1",
    "build v1.2.3.4, abc1.2.3.4, Version/10.0.0.1",
    "order 41111111111111111111 (20 digits)",
    "id 1234567890123456789012 and snowflake 12345678901234567890",
    "ts 1741203902124 ms, epoch 1741203902",
    "ORD-2025-000123 A-1043 INV/2025/0001234",
    "look it up at example.com, meet at noon dot, at home",
    "card=4111111111111112 key=value x=20y color=FF0000 width=100px a==1",
    "AB12 CDEF GHIJ KLMN OPQR ST",  # no country has IBANs starting AB
    "DE89 3704 0044",  # too short to be an IBAN
    "4111 1111 1111 1112 and DE00 1234 5678 9012 3456 78",  # full length, the check fails: a wrong number
    "at and dot is, full-width at and dot is carol",  # sentences
    "1234 5678 9012",  # three groups: not a card's
]


@pytest.mark.parametrize("text", list(MASKED))
def test_a_value_in_its_shape_is_masked(text):
    kind, value = MASKED[text]
    masked = Redactor().text(text)
    assert value not in masked and f"<{kind}_1>" in masked, masked
    assert masked.replace(f"<{kind}_1>", value) == text  # only the value, the words around it kept


@pytest.mark.parametrize("text", DECOYS)
def test_a_look_alike_is_left_as_written(text):
    assert Redactor().text(text) == text


def test_spellings_of_one_address_are_one_value():
    r = Redactor()
    masked = r.text("alice@example.com, alice (at) example (dot) com, ALICE[at]example[.]com, alice=40example.com")
    assert masked == "<EMAIL_1>, <EMAIL_1>, <EMAIL_1>, <EMAIL_1>"
