"""End to end, in Chromium: from the Outcomes page a signal's row lists its conversations on
Conversations, and a conversation's row opens its transcript at the flagged message, scrolled
to, highlighted and badged with the signal, the outcome on top (demo: `acme:web:sess-1010`
loops on `track_shipment` at messages 4, 6 and 8).

The app runs on a private cache folder: the demo database it builds there is this test's own.
"""

from __future__ import annotations

import os

import pytest

from tests.e2e.util import app_server, chromium, require_chromium, settle

THREAD = "acme:web:sess-1010"
FIRST_LOOP = 4  # the first message the agent loop points at (ordinal 3)

require_chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_LENS_DB"}
    env["TRANSCRIPT_LENS_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def click_row(page, grid, row: int) -> None:
    """Select row `row` of a dataframe by clicking its row selector (the grid is a canvas)."""
    grid.locator("#glide-cell-1-0").wait_for(state="attached")  # drawn
    box = grid.bounding_box()
    row_height = 35  # Streamlit's default row height; the header row is as tall
    page.mouse.click(box["x"] + 15, box["y"] + row_height * (row + 1.5))


def in_view(page, selector: str) -> None:
    page.wait_for_function(
        "sel => { const e = document.querySelector(sel); if (!e) return false;"
        " const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }",
        arg=selector,
    )


def test_outcomes_to_conversations_to_the_flagged_message(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(f"{server}/outcomes")
    page.get_by_role("heading", name="Outcomes", exact=True).wait_for()
    settle(page)

    # Outcomes: the signals table; its "agent loop" row lists those conversations.
    grid = page.locator(".st-key-outcomes-signals [data-testid='stDataFrame']")
    grid.wait_for()
    labels = [grid.locator(f"#glide-cell-1-{i}").text_content() for i in range(9)]  # (most frequent first)
    click_row(page, grid, labels.index("agent loop"))
    page.wait_for_url("**/conversations?signal=agent_loop*")
    page.get_by_role("heading", name="Conversations").wait_for()
    settle(page)

    # Conversations: that one thread, its outcome and signals in the row.
    table = page.get_by_test_id("stDataFrame").first
    table.locator("#glide-cell-1-0").wait_for(state="attached")
    assert table.locator("#glide-cell-1-0").text_content() == THREAD
    assert page.get_by_text("rows 1–1 of 1 thread").count() == 1
    click_row(page, table, 0)
    page.wait_for_url("**/transcript?thread=*")
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)
    assert "signal=agent_loop" in page.url

    # Transcript: at the first looping call, scrolled to, highlighted, badged.
    target = f".st-key-chat-msg-{FIRST_LOOP}"
    in_view(page, target)
    message = page.locator(target)
    assert "rgba(230, 160, 0" in message.evaluate("e => getComputedStyle(e).boxShadow")
    badge = message.locator(f".st-key-signal-marks-{FIRST_LOOP}").get_by_text("agent loop").first
    assert badge.is_visible()
    assert page.locator("[class*='st-key-signal-marks-']").count() == 4  # messages 4, 6, 8 and 11
    banner = page.locator(".st-key-transcript-outcome")
    assert "Outcome: Resolved" in banner.inner_text() and "agent loop · from message 4" in banner.inner_text()

    # Back: the conversations of that signal again.
    page.go_back()
    page.wait_for_url("**/conversations?signal=agent_loop*")
    page.get_by_role("heading", name="Conversations").wait_for()
    page.close()
