"""Annotating a message in a real browser, where the dialog reruns alone (a fragment):

- the per-message control is one small icon at the end of the message's header line, not a
  button row beneath it, in a 1400 px window and a 1000 px one (a long header wraps beside it);
- a fresh browser with no reviewer name in the sidebar: the name typed in the dialog is
  still there after a label and a verdict are chosen, and Save stamps it;
- a multi-line message keeps its line breaks in the default (Markdown) rendering;
- the toolbar offers a reader's menu, not Streamlit's "Deploy" button.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

import analytics
import transcript_lens
from analytics import workspace as ws_api
from tests.e2e.util import app_server, chromium, require_chromium, settle

require_chromium()
THREAD = "acme:mobile:sess-3004"  # its third message is two lines (demo/make_demo_store.py)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("annotate") / "lens.duckdb"
    transcript_lens.load(transcript_lens.demo_store(), path)
    return path


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    env = {**os.environ, "TRANSCRIPT_LENS_DB": str(db),
           "TRANSCRIPT_LENS_CACHE": str(tmp_path_factory.mktemp("cache"))}
    env.pop(ws_api.ENV, None)
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


def _open(page, server) -> None:
    page.goto(f"{server}/transcript?thread={THREAD}")
    page.get_by_role("heading", name="Transcript explorer").wait_for()
    settle(page)


@pytest.mark.parametrize("width", [1400, 1000])  # (1000: a laptop's half screen, the sidebar open)
def test_one_small_control_per_message_in_its_header_line(server, tmp_path, width):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": width, "height": 1000})
        page.set_default_timeout(30_000)
        _open(page, server)
        messages = page.get_by_test_id("stChatMessage")
        assert messages.count() >= 4
        assert page.get_by_role("button", name="Annotate", exact=True).count() == 0  # no text button row
        for i in range(messages.count()):
            bubble = messages.nth(i)
            control = bubble.locator("[class*='st-key-rv-transcript-m'][class*='-add'] button:visible")
            expect(control).to_have_count(1)  # (drawn with its message: waited for, not counted at once)
            head = bubble.get_by_test_id("stCaptionContainer").first.bounding_box()
            box = control.bounding_box()
            # On the header's line (their vertical middles within a line's height), at its right end.
            assert abs((box["y"] + box["height"] / 2) - (head["y"] + head["height"] / 2)) < 16, (i, box, head)
            assert box["x"] > head["x"] + head["width"] / 2
        page.screenshot(path=str(tmp_path / f"transcript-{width}.png"), full_page=True)


def test_a_name_typed_in_the_dialog_survives_a_label_and_a_verdict(server, db, tmp_path):
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()  # no cookie: no name
        page.set_default_timeout(30_000)
        _open(page, server)
        assert page.get_by_role("textbox", name="Reviewer").input_value() == ""
        page.locator(".st-key-rv-transcript-m2-add button:visible").click()
        dialog = page.get_by_role("dialog")
        dialog.wait_for()
        settle(page)
        dialog.get_by_role("textbox", name="Your name").fill("ana")
        dialog.get_by_role("textbox", name="Your name").press("Tab")
        settle(page)
        dialog.get_by_test_id("stSelectbox").filter(has_text="Label").click()
        page.get_by_role("option", name="good answer", exact=True).click()
        settle(page)
        dialog.get_by_text("✓ pass", exact=True).click()
        settle(page)
        page.screenshot(path=str(tmp_path / "dialog.png"))
        assert dialog.get_by_role("textbox", name="Your name").input_value() == "ana"
        dialog.get_by_role("button", name="Save").click()
        dialog.wait_for(state="detached")
        settle(page)
        made = ws_api.annotations(db)
        assert made[["author", "label", "verdict"]].values.tolist() == [["ana", "good answer", "pass"]]
        # The name is the sidebar's from then on.
        assert page.get_by_role("textbox", name="Reviewer").input_value() == "ana"


def test_a_multi_line_message_keeps_its_lines(server, db):
    typed = next(t for t in analytics.read(str(db), THREAD)["content"] if "\n" in t)
    first, second = typed.split("\n")[:2]
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        _open(page, server)
        body = page.get_by_test_id("stChatMessage").filter(has_text=first).get_by_test_id("stMarkdownContainer")
        body = body.filter(has_text=first).first
        # Drawn on two lines: the second starts below the first.
        assert body.inner_text().split("\n")[:2] == [first, second]


def test_no_deploy_button(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        _open(page, server)
        page.get_by_test_id("stMainMenu").wait_for()  # the toolbar is drawn …
        assert page.get_by_test_id("stAppDeployButton").count() == 0  # … without "Deploy"
        assert page.get_by_role("button", name="Deploy").count() == 0


def test_a_page_asks_no_other_host_and_its_icon_buttons_have_names(server):
    """The tab's icon is drawn inline (a `:material/` favicon is fetched from fonts.gstatic.com);
    the annotate icons are named by what they do, not by their glyph ("rate_review icon")."""
    with chromium() as browser:
        page = browser.new_page()
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        _open(page, server)
        page.wait_for_function("() => [...document.querySelectorAll('link[rel~=icon]')]"
                               ".some(l => l.href.includes('svg'))")  # the page config's icon is set
        icons = page.eval_on_selector_all("link[rel~=icon]", "ls => ls.map(l => l.href)")
        assert all(not i.startswith("http") or i.startswith(server) for i in icons), icons
        elsewhere = [u for u in asked if not u.startswith((server, "data:", "blob:"))]
        assert not elsewhere, elsewhere
        page.get_by_role("button", name="Annotate this message").first.wait_for()
