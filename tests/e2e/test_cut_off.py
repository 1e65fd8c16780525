"""End to end: the text of a field shows whole, in Debian's Chromium through Playwright.

At a 1400 px window with the sidebar open, the date fields of the Compare page's two cohorts
(side by side, half a page each) hold their placeholder ("yyyy / mm / dd") and a date chosen
without cutting either off; so do the shared date fields of the filter bar, beside its text box.

In a 1000 px window with the sidebar open (a laptop's half screen: a main area of ~620 px), every
headline tile shows its whole label and value and every chart has room for its bars: rows of
tiles and charts wrap onto more rows (`ui.flow`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.util import app_server, chromium, require_chromium, settle

require_chromium()

#: Each date field's text ("yyyy / mm / dd", or the date chosen, a segment each): the width its
#: segments take against the width their scroller shows (a cut-off field scrolls its text).
_DATES = """() => [...document.querySelectorAll('[data-testid="stDateInput"]')].map(d => {
  const s = d.querySelector('[data-testid="stDateInputFieldsScroller"]');
  return {label: d.innerText.split('\\n')[0], text: s.innerText, need: s.scrollWidth, room: s.clientWidth};
})"""

#: Each metric's label and value whose text is wider than the room it has (cut with an ellipsis).
_CUT_METRICS = """() => [...document.querySelectorAll(
    '[data-testid="stMetricLabel"] *, [data-testid="stMetricValue"] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""

#: The text of the main area's labels, buttons and links that is cut (ellipsis) or lies past the
#: main area's right edge (a control pushed out of its column).
_CUT_CONTROLS = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
  return [...document.querySelectorAll('[data-testid="stMain"] :is([data-testid="stWidgetLabel"], '
      + '[data-testid="stCheckbox"] label, button, [data-testid="stPageLink"]) *')]
    .filter(e => e.children.length === 0 && e.innerText && e.innerText.trim())
    .filter(e => {
      const right = e.getBoundingClientRect().right, up = [];
      for (let a = e; a && a.dataset.testid !== 'stElementContainer'; a = a.parentElement) up.push(a);
      if (up.some(a => a.getBoundingClientRect().width <= 2 && getComputedStyle(a).position === 'absolute')) {
        return false;  // (an icon button's name, visually hidden)
      }
      if (right > main.right + 1) return true;
      for (const a of up) {
        if (a.scrollWidth > a.clientWidth + 1) return true;
        if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right < right - 1) return true;
      }
      return false;
    })
    .map(e => e.innerText.trim());
}"""

#: Each chart's width, in pixels.
_CHART_WIDTHS = """() => [...document.querySelectorAll('[data-testid="stEChartsChart"]')].map(e => e.offsetWidth)"""


@pytest.fixture(scope="module")
def demo_db() -> Path:
    from ui.database import ensure_demo_db

    return ensure_demo_db()


@pytest.fixture(scope="module")
def server(demo_db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_LENS_DB"}
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.mark.parametrize("page_params", [
    "compare", "compare?from=2025-03-03&to=2025-03-16&a_from=2025-03-03&a_to=2025-03-09&b_from=2025-03-10&b_to=2025-03-16",
])
def test_the_compare_pages_date_fields_show_their_text_whole(server, page_params):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(f"{server}/{page_params}")
        page.get_by_role("heading", name="Cohort B").wait_for()
        settle(page)
        page.get_by_test_id("stDateInputFieldsScroller").nth(5).wait_for()  # (drawn after the run is over)
        page.locator('[data-testid="stSkeleton"]').first.wait_for(state="detached")
        fields = page.evaluate(_DATES)
        assert len(fields) == 6  # the page's From and To, and each cohort's
        cut = [f for f in fields if f["need"] > f["room"]]
        assert not cut, cut


def test_the_filter_bars_dates_show_whole_beside_the_text_box(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(f"{server}/conversations?from=2025-03-03&to=2025-03-16")
        page.get_by_role("heading", name="Conversations").wait_for()
        settle(page)
        page.get_by_test_id("stDateInputFieldsScroller").nth(1).wait_for()
        fields = page.evaluate(_DATES)
        assert len(fields) == 2 and all(f["text"].startswith("2025") for f in fields)
        cut = [f for f in fields if f["need"] > f["room"]]
        assert not cut, cut


def open_narrow(browser, url: str, heading: str):
    """`url` in a 1000 px window, once `heading` is drawn and the run is over."""
    page = browser.new_page(viewport={"width": 1000, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(url)
    page.get_by_role("heading", name=heading, exact=True).first.wait_for()
    settle(page)
    return page


def test_at_1000_px_the_overview_shows_each_tile_whole_and_charts_with_room(server):
    with chromium() as browser:
        page = open_narrow(browser, f"{server}/", "Overview")
        page.get_by_test_id("stEChartsChart").nth(4).wait_for()  # two trends, three top lists
        assert page.locator('[data-testid="stMetricValue"]').count() >= 15
        assert page.evaluate(_CUT_METRICS) == []
        widths = page.evaluate(_CHART_WIDTHS)  # (a top list's long labels leave a narrow chart no bars)
        assert len(widths) == 5 and min(widths) >= 280, widths
        assert page.evaluate(_CUT_CONTROLS) == []


@pytest.mark.parametrize(("path", "heading", "drawn"), [
    ("conversations", "Conversations", "stEChartsChart"),
    ("outcomes", "Outcomes", "stDataFrame"),
    ("transcript?thread=acme:mobile:sess-3003", "Transcript explorer", "stChatMessage"),
    ("resume_qa", "Resume QA", "stDataFrame"),
])
def test_at_1000_px_a_pages_controls_show_their_text_whole(server, path, heading, drawn):
    with chromium() as browser:
        page = open_narrow(browser, f"{server}/{path}", heading)
        page.get_by_test_id(drawn).first.wait_for()
        assert page.evaluate(_CUT_CONTROLS) == []
        tables = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
                                  .map(e => e.offsetWidth)""")
        assert not tables or min(tables) >= 300, tables  # (a table beside a text leaves it one column)
