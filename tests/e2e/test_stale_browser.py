"""End to end: a stale transcript in a real browser (Debian's Chromium through Playwright).

tests/stale_store.py's store loaded without its key, served by `streamlit run app.py`: the
transcript page of a stale thread shows the warning (the checkpoint shown and why) above the
conversation, and Conversations' `?stale=1` link lists only the stale threads. Screenshots of both
pages are kept in the test's tmp folder (`STALE_SCREENSHOTS` names another folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.e2e.util import app_server, chromium, require_chromium, settle
from tests.loaders.util import rows
from tests.stale_store import load_without_key, MIXED, write_stale_store

require_chromium()


@pytest.fixture(scope="module")
def stale_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("stale-e2e")
    store = write_stale_store(folder / "stale.sqlite")
    db = folder / "stale.duckdb"
    return load_without_key(store, db)


@pytest.fixture(scope="module")
def server(stale_db, tmp_path_factory):
    cache = tmp_path_factory.mktemp("stale-cache")
    env = {**os.environ, "TRANSCRIPT_LENS_DB": str(stale_db), "TRANSCRIPT_LENS_CACHE": str(cache)}
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


def test_the_transcript_page_of_a_stale_thread_warns_in_the_browser(server, stale_db, tmp_path):
    (row,) = rows(stale_db, "SELECT transcript_checkpoint_id, stale_reason FROM threads WHERE thread_id = ?", [MIXED])
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server}/transcript?thread={quote(MIXED)}")
        settle(page)
        alert = page.locator('[data-testid="stAlert"]').filter(has_text="Stale transcript")
        alert.wait_for()
        text = alert.inner_text()
        assert row["transcript_checkpoint_id"] in text and "no key given" in text
        page.get_by_text("Answer to: It was due on Monday.").first.wait_for()  # the transcript shown beneath (drawn after the alert)
        shots = Path(os.environ.get("STALE_SCREENSHOTS") or tmp_path)
        page.screenshot(path=str(shots / "stale-transcript.png"))

        page.goto(f"{server}/conversations?stale=1")
        settle(page)
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.wait_for()
        assert page.get_by_role("checkbox", name="Stale threads only").is_checked()
        page.get_by_text("rows 1–2 of 2 threads (3 in the database)").wait_for()  # MIXED and SECRET only
        page.screenshot(path=str(shots / "stale-conversations.png"))
