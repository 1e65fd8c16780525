"""End to end: the text of a field shows whole, in Debian's Chromium through Playwright.

At a 1400 px window with the sidebar open, the date fields of the Compare page's two cohorts
(side by side, half a page each) hold their placeholder ("yyyy / mm / dd") and a date chosen
without cutting either off; so do the shared date fields of the filter bar, beside its text box.
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
