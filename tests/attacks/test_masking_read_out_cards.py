"""A card read out digit by digit (`4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1`, or with one other separator
throughout) after other digits — a reference, a list dictated before it — is masked: the digits
that end the run make a major issuer's card passing the Luhn check (docs/privacy.md, `CARD`).
Left as written: a list of digits read out whose end is no such card, a card one digit a line (a
list), and the leading `0,` of a card after a comma (`0,4111111111111111`: a field of a CSV row, or
a number's decimals: the card is masked, the `0,` kept)."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor

CARD = "4111111111111111"
AMEX = "378282246310005"


@pytest.mark.parametrize("sep", [" ", "-", ".", "/", "_", ":", "|", " - "])
@pytest.mark.parametrize("before", ["3 7 0 1 9", "12", "0 0 7"])
def test_a_card_read_out_after_other_digits_is_masked(sep, before):
    card = sep.join(CARD)
    text = f"ref {sep.join(before.split())}{sep}{card} thanks"
    masked = Redactor().text(text)
    assert card not in masked and sep.join(CARD[-6:]) not in masked, masked
    assert masked.startswith("ref ") and masked.endswith("> thanks") and "<CARD_1>" in masked, masked


def test_an_american_express_card_read_out_is_masked():
    masked = Redactor().text("ref 9 " + " ".join(AMEX) + " thanks")
    assert masked == "ref 9 <CARD_1> thanks"


@pytest.mark.parametrize("text", [
    "digits 9 9 3 7 0 1 9 2 8 4 6 5 1 0 2 9 3 end",  # their last 16 or 15 digits: no issuer's card passing the check
    "digits 9 8 " + " ".join("4111111111111112") + " end",  # an issuer's first digits, the check fails
    "lines 9\n9\n" + "\n".join(CARD) + "\nend",  # one digit a line: a list
    "digits 9 8 " + " ".join("1234567812345670") + " end",  # passes the check, no issuer's first digits
])
def test_a_list_read_out_is_left_as_written(text):
    assert Redactor().text(text) == text


def test_after_a_comma_the_card_alone_is_masked():
    assert Redactor().text("x 0,4111111111111111 y") == "x 0,<CARD_1> y"
