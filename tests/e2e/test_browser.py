"""End to end: `streamlit run app.py` in a subprocess, driven by Debian's Chromium through Playwright.

Opens the app, goes to the transcript explorer, picks a thread, sets speaker and
index, sees the message, downloads the CSV and checks its rows against the
analytics API; then opens the copied link in a new page and sees the same view.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import analytics
from tests.e2e.util import app_server, chromium, require_chromium, settle

THREAD = "acme:web:sess-1002"

require_chromium()


@pytest.fixture(scope="module")
def demo_db() -> Path:
    from ui.database import ensure_demo_db

    return ensure_demo_db()


@pytest.fixture(scope="module")
def server(demo_db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k not in ("TRANSCRIPT_LENS_DB", "TRANSCRIPT_LENS_CACHE")}
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def test_transcript_explorer_in_a_real_browser(server, browser, demo_db, tmp_path):
    expected = analytics.read(str(demo_db), THREAD, speaker="user", index=0)
    first = expected["content"].item()
    assistant_last = analytics.read(str(demo_db), THREAD, speaker="assistant", index=-1)["content"].item()
    assert first and assistant_last

    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(server)
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)

    page.get_by_role("link", name="Transcript explorer").click()
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)

    picker = page.get_by_test_id("stSelectbox").filter(has_text="Thread")
    picker.click()
    page.keyboard.type(THREAD)
    page.get_by_role("option", name=THREAD).first.click()
    page.get_by_text(assistant_last).wait_for()  # the whole transcript first (speaker "all")
    settle(page)

    page.get_by_test_id("stRadio").filter(has_text="Speaker").get_by_text("user", exact=True).click()
    settle(page)
    index = page.get_by_test_id("stNumberInput").filter(has_text="Index").locator("input")
    index.fill("0")
    index.press("Enter")
    page.wait_for_function("() => new URL(location.href).searchParams.get('index') === '0'")
    settle(page)
    page.get_by_text(first, exact=True).wait_for()
    page.get_by_text("1 message(s)").wait_for()
    assert page.get_by_text(assistant_last).count() == 0

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").click()
    path = tmp_path / "transcript.csv"
    info.value.save_as(path)
    csv = pd.read_csv(path, keep_default_na=False)
    assert len(csv) == len(expected) == 1
    assert csv["index"].tolist() == expected["index"].tolist()
    assert csv["ordinal"].tolist() == expected["ordinal"].tolist()
    assert csv["role"].tolist() == ["user"]
    assert csv["content"].tolist() == expected["content"].tolist()
    assert csv["message_id"].tolist() == expected["message_id"].tolist()
    assert pd.to_datetime(csv["ts"], utc=True).tolist() == expected["ts"].tolist()

    # The URL is the view: a new page opened on it shows the same message.
    link = page.url
    assert f"thread={THREAD.replace(':', '%3A')}" in link and "speaker=user" in link and "index=0" in link
    other = context.new_page()
    other.set_default_timeout(30_000)
    other.goto(link)
    other.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(other)
    other.get_by_text("1 message(s)").wait_for()
    other.get_by_text(first, exact=True).wait_for()
    assert other.get_by_text(assistant_last).count() == 0
    assert other.url == link
    context.close()


def test_the_overview_answers_at_its_own_address(server, browser, demo_db):
    """The default page is served at "/"; a typed or bookmarked /overview link (with its
    filters) opens it too, instead of Streamlit's "Page not found" and a rewritten URL."""
    con = analytics.connect(demo_db)
    try:
        acme = con.execute("SELECT count(*) FROM threads WHERE tenant_id = 'acme'").fetchall()[0][0]
        total = con.execute("SELECT count(*) FROM threads").fetchall()[0][0]
    finally:
        con.close()
    assert 0 < acme < total
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    page.goto(f"{server}/overview?tenant=acme")
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)
    assert page.get_by_text("Page not found").count() == 0
    assert page.url == f"{server}/overview?tenant=acme"
    threads = page.get_by_test_id("stMetric").filter(has_text="Threads").get_by_test_id("stMetricValue")
    assert threads.inner_text().strip() == f"{acme:,}"
    page.close()
