"""End to end, in Chromium: a forked thread's branch picker and diff, and the "Waiting on a human" page.

The app runs as `streamlit run app.py` (the server and browser fixtures of test_browser.py). QA opens
the forked demo thread, shows its history, reads the abandoned branch (the old answer is there and
nowhere in the transcript), compares it with the current branch and downloads the diff; then opens the
backlog from the sidebar, sees the waiting refund and downloads the list.
"""

from __future__ import annotations

import pandas as pd

import analytics
from analytics.history.backlog import backlog
from analytics.history.branches import branch_head
from tests.e2e.test_browser import browser, demo_db, server, settle  # noqa: F401  (fixtures)

FORKED = "globex:api:sess-2105"


def test_branch_picker_and_diff_in_a_real_browser(server, browser, demo_db, tmp_path):  # noqa: F811
    con = analytics.connect(demo_db)
    try:
        head = branch_head(con, FORKED, 2)
        old_answer = analytics.read(con, FORKED, checkpoint_id=head)["content"].iloc[-1]
        current_answer = analytics.read(con, FORKED)["content"].iloc[-1]
        expected = analytics.diff(con, analytics.TranscriptQuery(FORKED), analytics.TranscriptQuery(FORKED, checkpoint_id=head))
    finally:
        con.close()
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1400})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{server}/transcript?thread={FORKED}")
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)
    assert old_answer.startswith("Yes: pass") and current_answer.startswith("Pass a list")
    assert page.get_by_text("Yes: pass").count() == 0  # the old answer is not in the transcript

    page.get_by_text("Show the history: 2 branches (1 abandoned)").click()
    settle(page)
    page.get_by_role("heading", name="History").wait_for()
    page.get_by_text("Branch 2 (abandoned, original run) forks here").wait_for()
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Read branch")
    picker.click()
    page.keyboard.type("branch 2")  # (typing opens the list, as a user filters it)
    page.get_by_role("option", name="branch 2 · abandoned").click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('branch') === '2'")
    settle(page)
    page.get_by_text("Yes: pass").first.wait_for()  # (rendered as markdown: its code spans are not text)
    page.get_by_text("Fork point: branch 2 leaves branch 1 here").wait_for()

    page.get_by_role("tab", name="Compare with…").click()
    settle(page)
    same = page.get_by_test_id("stMetric").filter(has_text="Same").get_by_test_id("stMetricValue")
    edited = page.get_by_test_id("stMetric").filter(has_text="Edited").get_by_test_id("stMetricValue")
    assert same.inner_text().strip() == "3" and edited.inner_text().strip() == "1"
    # The edited answer, side by side: struck-out words on the left, new ones on the right.
    assert page.locator("del").count() > 0 and page.locator("ins").count() > 0
    with page.expect_download() as info:
        page.get_by_test_id("stDownloadButton").filter(has_text="Download CSV").last.click()
    path = tmp_path / "diff.csv"
    info.value.save_as(path)
    csv = pd.read_csv(path, keep_default_na=False)
    assert csv["Status"].tolist() == expected["status"].tolist() == ["same", "same", "same", "edited"]
    assert csv["Left content"].iloc[-1] == current_answer and csv["Right content"].iloc[-1] == old_answer
    assert "compare=b1" in page.url and "branch=2" in page.url and "history=1" in page.url
    context.close()


def test_the_backlog_in_a_real_browser(server, browser, demo_db, tmp_path):  # noqa: F811
    waiting = backlog(str(demo_db))
    assert len(waiting) == 1
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(server)
    page.get_by_role("heading", name="Overview").wait_for()
    settle(page)
    page.get_by_role("link", name="Waiting on a human").click()
    page.get_by_role("heading", name="Waiting on a human").wait_for()
    settle(page)
    tile = page.get_by_test_id("stMetric").filter(has_text="Longest wait").get_by_test_id("stMetricValue")
    assert tile.inner_text().strip() == "2 d 19 h"
    with page.expect_download() as info:
        page.get_by_role("button", name="Download every row (CSV)").click()
    path = tmp_path / "waiting.csv"
    info.value.save_as(path)
    csv = pd.read_csv(path, keep_default_na=False)
    assert csv["Thread"].tolist() == waiting["thread_id"].tolist()
    assert "args.amount=89.0" in csv["Request (the interrupt's value)"].item()
    # Sorting lives in the URL.
    page.get_by_text("↑ Low first").click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('order') === 'asc'")
    context.close()
