"""End to end: `streamlit run app.py` in a subprocess, driven by Debian's Chromium through Playwright.

- the transcript explorer: a thread typed into the picker, the whole conversation, the
  filtered read (speaker, index), its CSV against the analytics API, the copied link;
- Conversations sorted by duration, then by a header click: the downloaded CSV is in the grid's order,
  under the table's headers;
- Search: a phrase typed, a hit clicked, the conversation opens scrolled to that message;
- browser Back restores the filters of the page it returns to, and a filter chosen on one
  page is still chosen on the next.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

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
    # The run's own cache (tests/conftest.py `app_cache`): the server opens the demo the test built.
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_LENS_DB"}
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def download(page, button: str, path: Path) -> pd.DataFrame:
    """Click the download button named `button`; the CSV it gives, read as text cells."""
    with page.expect_download() as info:
        page.get_by_role("button", name=button).click()
    info.value.save_as(path)
    return pd.read_csv(path, keep_default_na=False)


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

    # Narrow the list to other threads, then type the id anyway: the picker finds it.
    find = page.get_by_test_id("stTextInput").filter(has_text="Find threads").locator("input")
    find.fill("globex")
    find.press("Enter")
    page.wait_for_function("() => new URL(location.href).searchParams.get('find') === 'globex'")
    settle(page)
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Thread")
    picker.click()
    assert page.get_by_role("option", name=THREAD).count() == 0  # not in the list
    page.keyboard.type(THREAD)
    page.keyboard.press("Enter")
    page.get_by_text(assistant_last).wait_for()  # the whole conversation
    settle(page)
    page.get_by_text('lookup_order(order_id="A-1043")').wait_for()  # a tool call as a call

    page.get_by_test_id("stButtonGroup").filter(has_text="Filtered read").get_by_text("Filtered read").click()
    settle(page)
    page.get_by_test_id("stRadio").filter(has_text="Speaker").get_by_text("user", exact=True).click()
    settle(page)
    index = page.get_by_test_id("stNumberInput").filter(has_text="Index").locator("input")
    index.fill("0")
    index.press("Enter")
    page.wait_for_function("() => new URL(location.href).searchParams.get('index') === '0'")
    settle(page)
    page.get_by_text(first, exact=True).wait_for()
    page.get_by_text("1 message", exact=True).wait_for()
    assert page.get_by_text(assistant_last).count() == 0

    csv = download(page, "Download CSV", tmp_path / "transcript.csv")
    assert len(csv) == len(expected) == 1
    assert csv["Message"].tolist() == [o + 1 for o in expected["ordinal"]]  # the number the chat shows
    assert csv["Role"].tolist() == ["user"]
    assert csv["Content"].tolist() == expected["content"].tolist()
    assert csv["Message id"].tolist() == expected["message_id"].tolist()
    assert pd.to_datetime(csv["Time (UTC)"], utc=True).tolist() == expected["ts"].dt.floor("s").tolist()  # (to the second)

    # The URL is the view: a new page opened on it shows the same message.
    link = page.url
    assert f"thread={THREAD.replace(':', '%3A')}" in link and "speaker=user" in link and "index=0" in link
    assert "find=" in link  # the find box is part of the view
    other = context.new_page()
    other.set_default_timeout(30_000)
    other.goto(link)
    other.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(other)
    other.get_by_text("1 message", exact=True).wait_for()
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


def _grid_column(page, column: int, rows: int) -> list[str]:
    """The text of the first `rows` cells of a dataframe column, as the grid draws them (its
    accessible cells: `glide-cell-<column>-<row>`)."""
    cells = page.get_by_test_id("stDataFrame").first
    cells.locator(f"#glide-cell-{column}-{rows - 1}").wait_for(state="attached")
    return [cells.locator(f"#glide-cell-{column}-{r}").text_content() for r in range(rows)]


def test_conversations_sorted_by_duration_download_in_the_grid_order(server, browser, demo_db, tmp_path):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{server}/conversations")
    page.get_by_role("heading", name="Conversations").wait_for()
    settle(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Sort by").click()
    page.get_by_role("option", name="Duration", exact=True).click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('sort') === 'duration_s'")
    settle(page)
    page.get_by_text("sorted by Duration, high first").wait_for()
    shown = _grid_column(page, 1, 10)  # column 0 is the row selector
    csv = download(page, "Download all", tmp_path / "conversations.csv")
    assert csv["Thread"].head(10).tolist() == shown
    durations = pd.to_numeric(csv["Duration (s)"].replace("", None))
    assert durations.dropna().is_monotonic_decreasing and durations.head(10).notna().all()
    con = analytics.connect(demo_db)
    try:
        longest = con.execute("SELECT thread_id FROM conversation_metrics ORDER BY duration_s DESC NULLS LAST, thread_id "
                              "LIMIT 10").fetchall()
    finally:
        con.close()
    assert shown == [t for (t,) in longest]
    # A click on the Duration header sorts every page by it, the other way round: the grid, the
    # caption, the address and the CSV all follow (the grid's own sort reordered one page in the browser).
    _click_header(page, "Duration")
    page.wait_for_function("() => new URL(location.href).searchParams.get('order') === 'asc'")
    settle(page)
    page.get_by_text("sorted by Duration, low first").wait_for()
    shown = _grid_column(page, 1, 10)
    csv = download(page, "Download all", tmp_path / "conversations-asc.csv")
    assert csv["Thread"].head(10).tolist() == shown
    assert pd.to_numeric(csv["Duration (s)"].replace("", None)).dropna().is_monotonic_increasing
    # The CSV is the table's: its headers, its outcome names, its times to the second in UTC.
    assert list(csv.columns[:6]) == ["Thread", "Last active (UTC)", "Tenant", "Outcome", "Why", "Messages"]
    assert set(csv["Outcome"]) <= {"Resolved", "Abandoned", "Failed", "Waiting", "Unknown", ""}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", t) for t in csv["Last active (UTC)"] if t)
    context.close()


def _click_header(page, label: str) -> None:
    """Click the header of the last column the first grid shows, which must be `label` (the grid
    draws on a canvas: its accessible header cells say the order, not where each is drawn)."""
    grid = page.get_by_test_id("stDataFrame").first
    headers = grid.locator("[role=columnheader]")
    assert headers.nth(headers.count() - 1).text_content() == label
    grid.evaluate("e => e.scrollIntoView({block: 'center'})")  # (a download click may have scrolled past it)
    page.wait_for_timeout(300)
    top = grid.bounding_box()
    page.mouse.click(top["x"] + top["width"] - 50, top["y"] + 17)


def test_search_a_phrase_and_land_on_the_message(server, browser, demo_db):
    phrase = "refund please"
    hits = analytics.search(str(demo_db), phrase)
    assert hits.total == 1
    thread, ordinal = hits.hits["thread_id"].item(), int(hits.hits["ordinal"].item())
    page = browser.new_page(viewport={"width": 1400, "height": 700})
    page.set_default_timeout(30_000)
    page.goto(server)
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)
    page.get_by_role("link", name="Search").click()
    page.get_by_role("heading", name="Search").wait_for()
    settle(page)
    box = page.get_by_test_id("stTextInput").filter(has_text="Search messages").locator("input")
    box.fill(phrase.upper())  # any case
    box.press("Enter")
    settle(page)
    page.get_by_text("1 message in 1 conversation").wait_for()
    mark = page.locator(".tl-snippet mark")
    assert mark.inner_text() == "refund please"
    page.get_by_role("link", name=f"{thread} · Message {ordinal + 1}").click()
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)
    assert f"msg={ordinal + 1}" in page.url
    target = page.locator(f".st-key-chat-msg-{ordinal + 1}")
    target.wait_for()
    page.wait_for_function(
        "sel => { const r = document.querySelector(sel).getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }",
        arg=f".st-key-chat-msg-{ordinal + 1}",
    )  # scrolled into view
    assert "rgba(230, 160, 0" in target.evaluate("e => getComputedStyle(e).boxShadow")  # and highlighted
    assert "Full refund please" in target.inner_text()
    # The whole conversation is there, each message (tool results beneath their calls too) in its place.
    assert page.locator("[class*='st-key-chat-msg-']").count() == len(analytics.read(str(demo_db), thread))
    # Jumping elsewhere changes two params at once (msg goes, at comes): still one step of Back.
    page.get_by_test_id("stButtonGroup").filter(has_text="Last reply").get_by_text("Last reply").click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('at') === 'last-reply'")
    settle(page)
    assert "msg=" not in page.url
    page.go_back()
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('msg') === '{ordinal + 1}'")
    settle(page)
    assert "at=" not in page.url
    assert "rgba(230, 160, 0" in page.locator(f".st-key-chat-msg-{ordinal + 1}").evaluate("e => getComputedStyle(e).boxShadow")
    page.close()


def test_back_restores_the_filters_and_filters_travel_between_pages(server, browser, demo_db):
    con = analytics.connect(demo_db)
    try:
        acme = con.execute("SELECT count(*) FROM threads WHERE tenant_id = 'acme'").fetchall()[0][0]
        # The first row of acme's conversations sorted by duration, as the grid orders them.
        first = con.execute("SELECT thread_id FROM conversation_metrics WHERE tenant_id = 'acme' "
                            "ORDER BY duration_s DESC NULLS LAST, thread_id LIMIT 1").fetchall()[0][0]
    finally:
        con.close()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    page.goto(server)
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)
    tenant = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("Tenant", exact=True))
    tenant.click()
    page.get_by_role("option", name="acme", exact=True).click()
    page.keyboard.press("Escape")
    page.wait_for_function("() => new URL(location.href).searchParams.get('tenant') === 'acme'")
    settle(page)
    # The tenant travels to Conversations through the navigation.
    page.get_by_role("link", name="Conversations").click()
    page.get_by_role("heading", name="Conversations").wait_for()
    settle(page)
    page.wait_for_url(re.compile(r"[?&]tenant=acme\b"))
    page.get_by_text(f"rows 1–{acme} of {acme} threads").wait_for()
    page.get_by_test_id("stSelectbox").filter(has_text="Sort by").click()
    page.get_by_role("option", name="Duration", exact=True).click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('sort') === 'duration_s'")
    settle(page)
    listing = page.url
    # Open a row's transcript (once the grid draws the sorted rows), then go Back.
    expect(page.get_by_test_id("stDataFrame").first.locator("#glide-cell-1-0")).to_have_text(first, timeout=30_000)
    box = page.get_by_test_id("stDataFrame").first.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 36 + 17)  # the row marker of the first row (selection)
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)
    page.wait_for_url(re.compile(re.escape(f"thread={first.replace(':', '%3A')}")))
    page.go_back()
    page.get_by_role("heading", name="Conversations").wait_for()
    settle(page)
    page.wait_for_url(listing)
    page.get_by_text(f"rows 1–{acme} of {acme} threads").wait_for()
    page.get_by_text("sorted by Duration, high first").wait_for()
    expect(tenant.get_by_text("acme", exact=True)).to_have_count(1, timeout=30_000)
    # One step further back: the Conversations page before the sort, still for acme.
    page.go_back()
    settle(page)
    page.get_by_text("sorted by Last active (UTC), high first").wait_for()
    page.get_by_text(f"rows 1–{acme} of {acme} threads").wait_for()
    page.close()
