"""A card written with commas alone between its groups (`4111,1111,1111,1111`, `3782,822463,10005`), or
semicolons, apostrophes, tildes or hashes, is masked as the card, in a list of comma-joined numbers too, and a list of cards keeps each of them
(`4111 1111-1111_1111, 3782.822463 10005`: a comma and a space end a card); no part of one is found by
a masked search (docs/privacy.md, `CARD`). Comma-joined numbers that are no card stay: thousands
(`1,234,567,890,123,456`), years, groups of a card's sizes failing the Luhn check or without an
issuer's first digits, groups split by a comma and a space."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor
from tests.attacks.harness import found_unmasked_only, left_as_written, said_lens

CARDS = {
    "4111,1111,1111,1111": "4111111111111111",
    "3782,822463,10005": "378282246310005",
    "5500,0000,0000,0004": "5500000000000004",
    "４１１１，１１１１，１１１１，１１１１": "4111111111111111",  # (full-width digits and commas)
    "4111;1111;1111;1111": "4111111111111111",  # (a semicolon, a list's separator too)
    "4111'1111'1111'1111": "4111111111111111",  # (an apostrophe, a thousands separator)
    "4111~1111~1111~1111": "4111111111111111",
    "4111#1111#1111#1111": "4111111111111111",
}
DECOYS = ["1,234,567,890,123,456", "2021,2022,2023,2024", "4111,1111,1111,1112", "1234,5678,9012,3456",
          "4111, 1111, 1111, 1111", "0,4111,1111", "4111,1111;1111,1111", "4'111'111"]


@pytest.mark.parametrize("written", list(CARDS))
def test_the_card_is_masked_as_the_card(written):
    r = Redactor()
    assert r.text(f"pay with {written} today") == "pay with <CARD_1> today"
    assert r.text(CARDS[written]) == "<CARD_1>"


def test_in_a_list_of_numbers_the_card_alone_is_masked():
    assert Redactor().text("row 12,4111,1111,1111,1111,7") == "row 12,<CARD_1>,7"


@pytest.mark.parametrize("joined", [", ", ","])
def test_a_list_of_cards_keeps_each(joined):
    r = Redactor()
    assert r.text(f"4111 1111-1111_1111{joined}3782.822463 10005") == f"<CARD_1>{joined}<CARD_2>"
    assert r.text(f"4111,1111,1111,1111{joined}3782,822463,10005") == f"<CARD_1>{joined}<CARD_2>"


def test_the_look_alikes_are_left_as_written():
    left_as_written(DECOYS)


lens = said_lens("masking-comma-cards", [f"card {w} end" for w in CARDS])


@pytest.mark.parametrize("probe", ["4111,1111", "1111,1111", "822463", "3782,822463", "0000,0004", "4111;1111",
                                   "4111'1111"])
def test_a_masked_search_finds_no_part(lens, probe):
    found_unmasked_only(lens, probe)
