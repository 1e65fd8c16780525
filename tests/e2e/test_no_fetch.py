"""Rendering never fetches anything named in the data, proved in Chromium (docs/security.md, "Rendering").

A real graph writes messages (user, assistant, a tool result) holding a Markdown image, a
reference-style image, a raw `<img>`, a link and an autolink (and the user's an image part), all pointing at a small HTTP server
this test runs on 127.0.0.1. The app is served on that store's database and every view of the
thread is opened in Chromium (whole conversation, as typed, with ids, the table, the filtered
read, a search for the text): the server must receive no request at all, no `<img>` may name
it, and the links are drawn (a reader may click them; nothing follows them by itself); the image
part is said, its URL written as text.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from langchain_core.tools import tool

from storegen import Clock, deterministic
from storegen.build import open_sqlite_saver
from storegen.clock import UTC
from storegen.graphs import build_agent_graph
from storegen.models import Reply, ScriptedChatModel
from storegen.scenarios import say, thread_config
from tests.e2e.util import app_server, chromium, require_chromium, settle

require_chromium()

THREAD = "acme:web:beacon"


class _Beacon(ThreadingHTTPServer):
    def __init__(self) -> None:
        self.hits: list[str] = []
        beacon = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                beacon.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture(scope="module")
def beacon():
    server = _Beacon()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _payload(base: str, who: str) -> str:
    return (f"{who} says ![pixel]({base}/{who}-md.png) and ![ref][r] and <img src=\"{base}/{who}-html.png\"> "
            f"and [the report]({base}/{who}-link) and <{base}/{who}-auto>\n\n"
            f"A new paragraph ![after](  {base}/{who}-md2.png  )\n\n[r]: {base}/{who}-ref.png")


@pytest.fixture(scope="module")
def db(beacon, tmp_path_factory) -> Path:
    import transcript_lens

    base = f"http://127.0.0.1:{beacon.server_address[1]}"

    @tool
    def fetch_report(name: str) -> str:
        """Fetch a report."""
        return _payload(base, "tool")

    folder = tmp_path_factory.mktemp("beacon-store")
    saver = open_sqlite_saver(folder / "store.sqlite")
    try:
        model = ScriptedChatModel(replies=[Reply("", [("fetch_report", {"name": "q3"})]),
                                           Reply(_payload(base, "assistant"))])
        graph = build_agent_graph(model, [fetch_report], saver)
        with deterministic(THREAD), Clock(dt.datetime(2025, 3, 5, 9, 0, tzinfo=UTC)) as clock:
            say(graph, thread_config(THREAD), [{"type": "text", "text": _payload(base, "user")},
                                               {"type": "image_url", "image_url": {"url": f"{base}/user-image.png"}}],
                clock, think=0)
    finally:
        saver.conn.close()
    out = folder / "lens.duckdb"
    transcript_lens.load(folder / "store.sqlite", out)
    return out


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k not in ("TRANSCRIPT_LENS_DB", "TRANSCRIPT_LENS_CACHE")}
    env.update(TRANSCRIPT_LENS_DB=str(db), TRANSCRIPT_LENS_CACHE=str(tmp_path_factory.mktemp("cache")))
    with app_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


VIEWS = {
    "conversation": "transcript?thread={t}",
    "as-typed": "transcript?thread={t}&raw=true",
    "with-ids": "transcript?thread={t}&ids=true",
    "table": "transcript?thread={t}&table=true",
    "filtered": "transcript?thread={t}&view=filtered",
    "search": "search?q=report",
}


def test_no_view_of_a_message_fetches_what_it_names(server, beacon, browser_page, tmp_path):
    page = browser_page
    port = beacon.server_address[1]
    for name, path in VIEWS.items():
        page.goto(f"{server}/{path.format(t=quote(THREAD))}")
        settle(page)
        if name == "table":
            page.get_by_test_id("stDataFrame").first.wait_for()
        else:
            page.get_by_text("the report").first.wait_for()
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
        named = page.evaluate(f"() => [...document.querySelectorAll('img')].map(i => i.src)"
                              f".filter(s => s.includes(':{port}/'))")
        assert named == [], (name, named)
        assert beacon.hits == [], (name, beacon.hits)
        if name in ("conversation", "as-typed", "with-ids"):  # the image part: said, its URL as text, not loaded
            marker = page.get_by_text("Image (not loaded):").first
            assert f"127.0.0.1:{port}/user-image.png" in marker.inner_text(), name
            assert marker.locator("a").count() == 0, name
        if name in ("conversation", "with-ids", "filtered"):  # the Markdown views draw the link, not follow it
            link = page.locator(f'a[href="http://127.0.0.1:{port}/assistant-link"]').first
            rel = (link.get_attribute("rel") or "").split()
            assert link.is_visible() and {"noopener", "noreferrer"} <= set(rel), (name, rel)
    if os.environ.get("TL_SCREENSHOTS"):
        for png in tmp_path.glob("*.png"):
            Path(os.environ["TL_SCREENSHOTS"], png.name).write_bytes(png.read_bytes())


def test_an_image_part_is_kept_as_its_url(db, beacon):
    """The loader keeps what the user's image part was (`messages.media`), not only that there was one."""
    import analytics

    first = analytics.read(str(db), THREAD, speaker="user", index=0)
    port = beacon.server_address[1]
    assert first["non_text_blocks"].item() == 1
    assert json.loads(first["media"].item()) == [{"type": "image", "url": f"http://127.0.0.1:{port}/user-image.png"}]


@pytest.mark.parametrize("page_path", ["transcript", "resume_qa"])
def test_a_thread_id_in_a_link_fetches_nothing(server, beacon, browser_page, page_path):
    """A link whose thread id closes the warning's code span and opens an image: the id is drawn
    as text (`ui.markup.code`), the server named in it gets no request."""
    port = beacon.server_address[1]
    hostile = f"x` ![u](http://127.0.0.1:{port}/url-param.png) `"
    page = browser_page
    page.goto(f"{server}/{page_path}?thread={quote(hostile)}")
    settle(page)
    page.get_by_text("in this database").first.wait_for()
    page.wait_for_load_state("networkidle")
    named = page.evaluate(f"() => [...document.querySelectorAll('img')].map(i => i.src).filter(s => s.includes(':{port}/'))")
    assert named == [] and beacon.hits == [], (named, beacon.hits)
    assert page.get_by_text(f"/url-param.png").count() >= 1  # drawn as the text it is

@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture()
def browser_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()
