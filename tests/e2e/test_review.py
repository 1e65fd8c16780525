"""End to end, the review workspace in a real browser (a reviewer's whole round).

A reviewer filters Conversations, makes a queue of 10 threads (a seeded sample),
walks it labelling two threads and three messages, saves a view; the source is
reloaded with the real CLI (full, then --incremental) and every annotation is
still drawn inside its message; the saved view reopens exactly; a load of another
source into the same path leaves every annotation in the workspace, shown orphaned.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

import analytics
import transcript_lens
from analytics import metrics
from analytics import workspace as ws_api
from analytics.filters import Filters
from analytics.workspace.queueing import pick
from storegen import build_sqlite_store
from tests.e2e.util import ROOT, app_server, chromium, require_chromium, settle

require_chromium()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("review") / "lens.duckdb"
    transcript_lens.load(transcript_lens.demo_store(), path)
    return path


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    env = {**os.environ, "TRANSCRIPT_LENS_DB": str(db),
           "TRANSCRIPT_LENS_CACHE": str(tmp_path_factory.mktemp("cache"))}
    env.pop(ws_api.ENV, None)
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


def _load(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "transcript_lens", "load", *args, "--quiet"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _annotate(page, button, label: str, verdict: str | None = None) -> None:
    button.click()
    dialog = page.get_by_role("dialog")
    dialog.wait_for()
    settle(page)
    dialog.get_by_test_id("stSelectbox").filter(has_text="Label").click()
    page.get_by_role("option", name=label, exact=True).click()
    if verdict:
        dialog.get_by_text(f"{'✓' if verdict == 'pass' else '✗'} {verdict}", exact=True).click()
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    settle(page)


def _message(page, text: str):
    return page.get_by_test_id("stChatMessage").filter(has_text=text)


def _shown_in_place(page, server, thread: str, expected: dict) -> None:
    """On the transcript page of `thread`: each label of `expected` ({message text or None: label})
    inside that message's bubble (None: in the thread's box)."""
    page.goto(f"{server}/transcript?thread={thread}")
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)
    for text, label in expected.items():
        if text is None:
            box = page.locator(".st-key-rv-transcript-thread")
            box.get_by_text(label, exact=True).first.wait_for()
        else:
            _message(page, text).get_by_text(label, exact=True).wait_for()


def test_a_reviewer_walks_a_queue_and_every_annotation_survives_reloads(server, db, tmp_path):
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{server}/conversations")
        page.get_by_role("heading", name="Conversations").wait_for()
        settle(page)
        name = page.get_by_role("textbox", name="Reviewer")
        name.fill("ana")
        name.press("Enter")
        settle(page)
        # Typed once per browser session: a new tab (a new Streamlit session) already knows it.
        page.wait_for_function("() => document.cookie.includes('tl_reviewer=ana')")
        tab = context.new_page()
        tab.set_default_timeout(30_000)
        tab.goto(f"{server}/overview")
        tab.get_by_role("heading", name="Overview").wait_for()
        settle(tab)
        expect(tab.get_by_role("textbox", name="Reviewer")).to_have_value("ana", timeout=30_000)  # (a loaded machine draws the sidebar late)
        tab.close()

        # A filter, then a queue of 10 of its threads (a seeded sample, in the view's order).
        page.get_by_test_id("stMultiSelect").filter(has_text="Tenant").first.click()  # (before Sub-tenant)
        page.get_by_role("option", name="acme", exact=True).click()
        page.keyboard.press("Escape")
        page.wait_for_function("() => new URL(location.href).searchParams.get('tenant') === 'acme'")
        settle(page)
        # (the queue is made from the view the page last drew: wait until that is the filtered one, not
        # a run still drawing every thread, which a busy machine shows for longer)
        view = metrics.conversation_list(db, Filters(tenants=("acme",)))["thread_id"].tolist()
        page.get_by_text(re.compile(rf"of {len(view)} threads \(")).wait_for()
        page.get_by_role("button", name="Review queue…").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("textbox", name="Queue name").fill("acme week")
        dialog.get_by_text("Take a random sample").click()
        settle(page)
        dialog.get_by_role("spinbutton", name="Threads").fill("10")
        dialog.get_by_role("spinbutton", name="Seed").fill("7")
        dialog.get_by_role("spinbutton", name="Seed").press("Tab")
        settle(page)
        dialog.get_by_role("button", name="Create queue").click()
        page.get_by_test_id("stMainBlockContainer").get_by_role("heading", name="Review", exact=True).wait_for()
        page.wait_for_function("() => new URL(location.href).searchParams.get('queue') === '1'")
        settle(page)
        (queue,) = ws_api.queues(db)
        items = ws_api.queue_items(db, queue.queue_id)["thread_id"].tolist()
        assert (queue.items, queue.seed) == (10, 7) and items == pick(view, 10, 7)[0]

        # Walk it: the first thread and two of its messages, then the next thread and one message.
        first, second = items[0], items[1]
        con = analytics.connect(db)
        texts = {t: [r[0] for r in con.execute(
            "SELECT content FROM messages WHERE thread_id = ? AND content_chars > 0 AND role IN ('user', 'assistant') "
            "ORDER BY ordinal", [t]).fetchall()] for t in (first, second)}
        con.close()
        page.get_by_text("Item 1 of 10").wait_for()
        _annotate(page, page.get_by_role("button", name="Annotate thread"), "lost context", "fail")
        _annotate(page, _message(page, texts[first][0]).locator("[class*='-add'] button:visible").first, "wrong answer")
        _annotate(page, _message(page, texts[first][1]).locator("[class*='-add'] button:visible").first, "good answer", "pass")
        page.get_by_role("button", name="Mark done, next").click()
        settle(page)
        page.get_by_text("Item 2 of 10").wait_for()
        _annotate(page, page.get_by_role("button", name="Annotate thread"), "needs follow-up")
        _annotate(page, _message(page, texts[second][0]).locator("[class*='-add'] button:visible").first, "hallucination")
        made = ws_api.annotations(db)
        assert len(made) == 5 and set(made["author"]) == {"ana"} and set(made["status"]) == {"ok"}
        assert ws_api.queue_items(db, queue.queue_id)["status"].tolist()[:2] == ["done", "pending"]

        # A saved view: the Conversations page sorted by size, saved, reopened from the sidebar elsewhere.
        page.goto(f"{server}/conversations?tenant=acme&sort=messages&order=asc&q=order")
        page.get_by_role("heading", name="Conversations").wait_for()
        settle(page)
        rows_caption = page.get_by_text("rows 1–").first.inner_text()
        page.get_by_text("Saved views (0)").click()
        page.get_by_role("textbox", name="Save this view as").fill("acme orders by size")
        page.get_by_role("textbox", name="Save this view as").press("Enter")
        settle(page)
        page.get_by_role("button", name="Save view").click()
        settle(page)
        page.goto(f"{server}/overview")
        page.get_by_role("heading", name="Overview").wait_for()
        settle(page)
        page.get_by_text("Saved views (1)").click()
        page.get_by_role("link", name="acme orders by size").click()
        page.get_by_role("heading", name="Conversations").wait_for()
        settle(page)
        params = dict(p.split("=", 1) for p in page.url.split("?", 1)[1].split("&"))
        assert params == {"tenant": "acme", "sort": "messages", "order": "asc", "q": "order"}
        assert page.get_by_text("rows 1–").first.inner_text() == rows_caption
        assert page.get_by_test_id("stTextInput").filter(has_text="Text in messages").locator("input").input_value() \
            == "order"

        # Reload the source, full then incremental: every annotation is still drawn in place.
        expected = {first: {None: "lost context", texts[first][0]: "wrong answer", texts[first][1]: "good answer"},
                    second: {None: "needs follow-up", texts[second][0]: "hallucination"}}
        for mode in ([], ["--incremental"]):
            before = os.stat(db).st_ino
            _load(str(transcript_lens.demo_store()), "--db", str(db), *mode)
            # A full load replaces the file; an incremental one of an unchanged source writes nothing.
            assert (os.stat(db).st_ino != before) == (mode == [])
            for thread, where in expected.items():
                _shown_in_place(page, server, thread, where)
        page.screenshot(path=str(tmp_path / "after-reloads.png"))

        # Another source into the same path: nothing is lost, everything is orphaned and shown so.
        other = tmp_path / "other.sqlite"
        build_sqlite_store(other, threads={"other:web:s1": "simple_chat"})
        _load(str(other), "--db", str(db))
        gone = ws_api.annotations(db)
        assert len(gone) == 5 and set(gone["orphan_reason"]) == {"thread gone"}
        page.goto(f"{server}/transcript?thread={first}")
        page.get_by_text(f"No thread {first} in this database").wait_for()
        page.get_by_text("Orphaned annotations (3)").wait_for()
        page.goto(f"{server}/review")
        page.get_by_test_id("stMainBlockContainer").get_by_role("heading", name="Review", exact=True).wait_for()
        settle(page)
        page.get_by_text("Orphaned annotations (5)").wait_for()
