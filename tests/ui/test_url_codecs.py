"""The URL codecs (ui/state.py): a value and its URL spelling round-trip, and a list the user
cleared is a present-but-empty param, not an absent one (absent means the page's default)."""

from __future__ import annotations

from datetime import date

import pytest

from ui import state

DEFAULT = ["gpt-4o"]


@pytest.mark.parametrize("codec", [state.LIST, state.subset(("gpt-4o", "claude", "o3"))], ids=["list", "subset"])
@pytest.mark.parametrize("value", [[], ["claude"], ["claude", "o3"]])
def test_a_list_round_trips_through_the_url_whatever_its_default(codec, value):
    raw = codec.to_url(value, DEFAULT)
    assert raw != [] or value == DEFAULT
    assert codec.from_url(raw) == value


@pytest.mark.parametrize("codec", [state.LIST, state.subset(("gpt-4o",))], ids=["list", "subset"])
def test_a_cleared_list_is_a_present_but_empty_param_and_the_default_is_absent(codec):
    assert codec.to_url([], DEFAULT) == [""]  # `?model=`: the user chose none
    assert codec.to_url(DEFAULT, DEFAULT) == []  # no param: the default
    assert codec.to_url([], []) == []  # an empty default is left out as ever
    assert codec.from_url([""]) == []


def test_scalars_keep_their_spelling():
    assert state.TEXT.to_url("refund", "") == ["refund"] and state.TEXT.to_url("", "") == []
    assert state.DATE.to_url(date(2025, 3, 5), None) == ["2025-03-05"]
    assert state.DATE.from_url(["2025-03-05"]) == date(2025, 3, 5)
    assert state.INT.to_url(30, 30) == [] and state.BOOL.to_url(True, False) == ["1"]


def test_a_link_keeps_a_cleared_list_and_drops_what_says_nothing():
    assert state.link_params(a_model=[state.EMPTY], tenant=[], q="", signal=None, meta=["v = 1"]) == {
        "a_model": [""], "meta": ["v = 1"]}
