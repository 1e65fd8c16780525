"""End to end: no table hides columns past the page's right edge (Debian's Chromium through Playwright).

At a 1400 px window with the sidebar open, every table of Conversations, Resume QA (with and
without a thread), Topics and Failure patterns fits its grid: nothing to scroll sideways to. The
columns that do not fit at first are named under the table and are one click away in its
Show/hide columns menu; shown from there, the column appears. The column the rows are sorted by
always shows. Conversations' first questions wrap inside their column. Screenshots are kept in
the test's tmp folder (`WIDE_SCREENSHOTS` names another folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest
from PIL import Image

from tests.e2e.util import app_server, chromium, require_chromium, settle

require_chromium()

#: Each grid's content width against its visible width (the scroller Glide Data Grid draws in).
_GRIDS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(t => {
  const s = t.querySelector('.dvn-scroller');
  return {content: s ? s.scrollWidth : 0, visible: s ? s.clientWidth : 0};
})"""
#: The headers of the first grid (its accessible table: one `th` per column shown).
_HEADERS = """() => [...document.querySelector('[data-testid="stDataFrame"]').querySelectorAll('th')].map(th => th.textContent)"""


def _headers(page) -> list[str]:
    """The first grid's column headers, once it has drawn them (the grid writes its accessible
    header cells after it shows: read at once, a busy browser gives none)."""
    # Read in the same call that sees them: a rerun of the page redraws the grid, and a second read
    # could fall between its removal and its drawing again.
    return page.wait_for_function(f"() => {{ const h = ({_HEADERS})(); return h.length > 0 ? h : null; }}").json_value()


@pytest.fixture(scope="module")
def demo_db() -> Path:
    from ui.database import ensure_demo_db

    return ensure_demo_db()


@pytest.fixture(scope="module")
def server(demo_db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_LENS_DB"}
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


def _busiest(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT thread_id FROM threads ORDER BY message_count DESC, thread_id LIMIT 1").fetchone()[0]
    finally:
        con.close()


def _open(page, url: str, grids: int) -> list[dict]:
    page.goto(url)
    page.locator('[data-testid="stDataFrame"]').nth(grids - 1).wait_for()
    settle(page)
    page.wait_for_function(f"() => {_GRIDS}().filter(g => g.visible > 0).length >= {grids}")
    return page.evaluate(_GRIDS)


def test_every_wide_table_fits_and_its_other_columns_are_one_click_away(server, demo_db, tmp_path):
    shots = Path(os.environ.get("WIDE_SCREENSHOTS") or tmp_path)
    pages = {
        "conversations": ("/conversations", 1),
        "resume_qa": ("/resume_qa", 1),
        "resume_qa_thread": (f"/resume_qa?thread={quote(_busiest(demo_db))}", 2),
        "topics": ("/topics", 1),
        "patterns": ("/patterns", 1),
    }
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        for name, (path, grids) in pages.items():
            measured = _open(page, server + path, grids)
            page.screenshot(path=str(shots / f"wide-{name}.png"), full_page=True)
            for grid in measured:
                assert grid["visible"] > 0
                assert grid["content"] <= grid["visible"] + 1, f"{name}: columns past the right edge {measured}"

        # The column the rows are sorted by shows, whatever else must wait.
        sorted_by = _open(page, server + "/conversations?sort=resume_points", 1)
        assert sorted_by[0]["content"] <= sorted_by[0]["visible"] + 1
        assert "Resumes" in _headers(page)

        # Conversations' other columns: named under the table, and shown from its column menu.
        _open(page, server + "/conversations", 1)
        caption = page.get_by_text("more columns:").first
        assert "Resumes" in caption.inner_text()
        assert "Resumes" not in _headers(page)
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.hover()
        page.get_by_role("button", name="Show/hide columns").click()
        page.get_by_text("Resumes", exact=True).last.click()
        page.keyboard.press("Escape")
        page.screenshot(path=str(shots / "wide-conversations-resumes-shown.png"), full_page=True)
        page.wait_for_function(f"() => {_HEADERS}().includes('Resumes')")


def test_conversations_shows_when_whose_how_it_ended_how_long_and_what_was_asked_at_1400_px(server, tmp_path):
    """The columns a reader scans a row for (how it ended and why among them) show without scrolling
    sideways, beside the sidebar."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        (grid,) = _open(page, server + "/conversations", 1)
        page.screenshot(path=str(Path(os.environ.get("WIDE_SCREENSHOTS") or tmp_path) / "wide-conversations-first.png"))
        headers = _headers(page)
        for wanted in ("Thread", "Last active (UTC)", "Tenant", "Outcome", "Why", "Messages", "First question"):
            assert any(h.startswith(wanted) for h in headers), (wanted, headers)
        assert grid["content"] <= grid["visible"] + 1, grid


def _lines(pixels, length: int, at) -> list[int]:
    """Where the grid's separator lines cross a line of `length` pixels (`at(i)`: its i-th pixel): the
    pixels as light as Glide's lines (mean 229 ± 3), between the header's and the cells' lighter grounds."""
    return [i for i in range(length) if abs(sum(pixels[at(i)]) / 3 - 229) < 4]


def test_conversations_first_questions_wrap_inside_their_column_at_1400_px(server, tmp_path):
    """A first question wraps onto its row's three lines instead of running on past the column's right edge
    (where 20 characters of it showed): as drawn, no text touches the column's right padding on any row,
    and each row is three lines high."""
    shot = Path(os.environ.get("WIDE_SCREENSHOTS") or tmp_path) / "wide-conversations-grid.png"
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        _open(page, server + "/conversations", 1)
        assert _headers(page)[-1] == "First question"
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.scroll_into_view_if_needed()
        grid.screenshot(path=str(shot))
    image = Image.open(shot).convert("RGB")
    pixels, (width, height) = image.load(), image.size
    columns = _lines(pixels, width, lambda x: (x, 4))  # (the header row, above its text)
    rows = _lines(pixels, height, lambda y: (3, y))  # (the row-selection column, left of its boxes)
    assert len(columns) == 9 and len(rows) >= 6, (columns, rows)  # (borders, the row markers' edge, seven columns)
    right = columns[-1]  # the First question column is the last shown: its right edge is the grid's
    for top, bottom in zip(rows, rows[1:]):
        ink = [(x, y) for x in range(right - 6, right) for y in range(top + 1, bottom) if sum(pixels[x, y]) / 3 < 140]
        assert not ink, f"the first question between y={top} and y={bottom} runs past its column: {ink[:5]}"
    assert all(b - a >= 60 for a, b in zip(rows[:6], rows[1:6])), rows
