"""Values a masker must not miss, and look-alikes it must not take (docs/privacy.md, "Masking at
read time"). Missed: a card number or an IBAN one character short or with a wrong check digit,
printed in its groups (typo'd, it gives away all but one character of the real one; one short, its
check digit gives the missing one back); a card with digits typed on after it, or glued to a
comma or a word; an address with its `@`
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
    "card 4111 1111 1111 1112 ok": ("CARD", "4111 1111 1111 1112"),  # a major issuer's groups, the check fails
    "card 4111-1111-1111-1112.": ("CARD", "4111-1111-1111-1112"),
    "card 4111.1111.1111.1112 ok": ("CARD", "4111.1111.1111.1112"),
    "card 4111\u00a01111\u00a01111\u00a01112 ok": ("CARD", "4111\u00a01111\u00a01111\u00a01112"),  # non-breaking spaces
    "card 4111\u20091111\u20091111\u20091112 ok": ("CARD", "4111\u20091111\u20091111\u20091112"),  # thin spaces
    "card 4111\u20131111\u20131111\u20131112 ok": ("CARD", "4111\u20131111\u20131111\u20131112"),  # en dashes
    "card ４１１１ １１１１ １１１１ １１１２ ok": ("CARD", "４１１１ １１１１ １１１１ １１１２"),  # full-width digits
    "card 5500 0000 0000 0005 ok": ("CARD", "5500 0000 0000 0005"),
    "card 2221 0000 0000 0001 ok": ("CARD", "2221 0000 0000 0001"),
    "card 6011 0000 0000 0000 ok": ("CARD", "6011 0000 0000 0000"),
    "card 3530 1113 3330 0001 ok": ("CARD", "3530 1113 3330 0001"),
    "card 3782 822463 10006 ok": ("CARD", "3782 822463 10006"),  # American Express's 4-6-5
    "card 4111 1111 1111 1112 123 ok": ("CARD", "4111 1111 1111 1112 123"),  # 19 digits, 4-4-4-4-3
    "card 4111 1111 1111 1111 123 ok": ("CARD", "4111 1111 1111 1111 123"),  # a card with digits typed on
    "card 4111111111111111123 ok": ("CARD", "4111111111111111123"),
    "card 378282246310005 12 ok": ("CARD", "378282246310005"),
    "ref 12 4111 1111 1111 1111 ok": ("CARD", "4111 1111 1111 1111"),  # after a number
    "row a,4111111111111111,b": ("CARD", "4111111111111111"),  # glued to a comma
    "row 12,4111111111111111,USD": ("CARD", "4111111111111111"),
    "id-4111111111111111 ok": ("CARD", "4111111111111111"),  # glued to a word
    "key_4111111111111111 ok": ("CARD", "4111111111111111"),
    "iban DE89 3704 0044 0532 0130 0 pay": ("IBAN", "DE89 3704 0044 0532 0130 0"),  # one short
    "iban DE00 1234 5678 9012 3456 78 pay": ("IBAN", "DE00 1234 5678 9012 3456 78"),  # the check fails
    "iban de00 1234 5678 9012 3456 78 pay": ("IBAN", "de00 1234 5678 9012 3456 78"),
    "iban DE00123456789012345678 pay": ("IBAN", "DE00123456789012345678"),
    "iban de00-1234-5678-9012-3456-78 pay": ("IBAN", "de00-1234-5678-9012-3456-78"),
    "iban GB00 WEST 1234 5698 7654 32 pay": ("IBAN", "GB00 WEST 1234 5698 7654 32"),
    "iban fr0030006000011234567890189 pay": ("IBAN", "fr0030006000011234567890189"),
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
    "order 1234 5678 9012 3456, 1234-5678-9012-3456",  # a card's groups, no issuer's first digits, the check fails
    "4111_1111_1111_1112 4111/1111/1111/1112",  # other separators, the check fails
    "score 0.4111111111111111 and 0.5432154321543215",  # a number's decimals
    "id 4111111111111112 and 41111111111111110001",  # ungrouped, the check fails; a 20-digit run
    "DE00 1234 5678 9012 3456 7890 and DE0012345678901234567",  # longer, shorter than Germany's IBANs
    "on 2025-03-05 at 19:45, build 4111.1111.1, ticket 4111-1111",  # dates, versions, short numbers
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
