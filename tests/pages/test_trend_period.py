"""Every page with a trend sets its period with the one control: the same label, choices in the same
order, the same default and help, in the URL as `by`; a month works on each."""

from __future__ import annotations

import pytest

from tests.pages.conftest import open_page

PAGES = ("overview", "outcomes", "topics", "patterns")


def _control(at, page: str):
    radio = at.radio(key=f"{page}.by")
    return radio.label, list(radio.options), radio.value, radio.help


def test_every_trend_has_the_same_control(app):
    seen = {page: _control(open_page(app, page), page) for page in PAGES}
    assert len(set(map(repr, seen.values()))) == 1, seen
    label, options, value, _ = seen["overview"]
    assert label == "Trend per" and value == "auto" and options[1:] == ["Day", "Week", "Month"], seen["overview"]


@pytest.mark.parametrize("page", PAGES)
def test_a_month_is_a_period_of_every_trend(app, page):
    at = open_page(app, page, by="month")
    assert not at.exception and at.radio(key=f"{page}.by").value == "month"
