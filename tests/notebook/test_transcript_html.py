"""A transcript in a notebook cell (lens_notebook.transcript): the app's messages and markers, escaped and inert."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import lens_notebook as lens
import transcript_lens
from analytics import connect
from tests.stale_store import MIXED, load_without_key, write_stale_store
from ui.models.chat import Edit, Marker, MessageItem, ToolCall
from ui.models.transcript import conversation

#: The only elements a transcript's HTML holds; none of them fetches anything.
TAGS = {"style", "div", "span", "b", "i", "code", "details", "summary"}


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _parse(html: str) -> _Elements:
    parsed = _Elements()
    parsed.feed(html)
    return parsed


def _flat(items):
    for item in items:
        yield item
        if isinstance(item, MessageItem):
            yield from (c.result for c in item.tool_calls if c.result is not None)


@pytest.fixture(scope="module")
def scenario_db(sqlite_store, tmp_path_factory):
    """Every storegen scenario (edits, removals, forks, interrupts, errors…) loaded into tmp_path."""
    db = tmp_path_factory.mktemp("notebook-scenarios") / "lens.duckdb"
    transcript_lens.load(sqlite_store.path, db)
    return db


def test_every_message_and_marker_of_every_thread_is_drawn_in_order(scenario_db):
    con = connect(scenario_db)
    try:
        threads = [t for (t,) in con.execute("SELECT thread_id FROM threads ORDER BY 1").fetchall()]
    finally:
        con.close()
    kinds = set()
    for thread in threads:
        conv = conversation(scenario_db, thread)
        html = lens.transcript(scenario_db, thread)._repr_html_()
        at = 0
        for item in _flat(conv.items):
            needle = (f'id="tl-msg-{item.number}"' if isinstance(item, MessageItem)
                      else f"tl-marker-{item.kind}")
            found = html.find(needle, at)
            assert found >= 0, (thread, needle)
            at = found
            if isinstance(item, Marker):
                kinds.add(item.kind)
        parsed = _parse(html)
        assert {t for t, _ in parsed.tags} <= TAGS, thread
    assert {"removed", "edited", "pending"} <= kinds  # the scenarios reach the markers that matter


def test_the_demo_thread_reads_as_in_the_app(demo_db):
    conv = conversation(demo_db, "acme:mobile:sess-3003")
    html = lens.transcript(demo_db, "acme:mobile:sess-3003")._repr_html_()
    text = "".join(_parse(html).text)
    messages = [i for i in _flat(conv.items) if isinstance(i, MessageItem)]
    assert all(f"Message {m.number}" in text for m in messages)
    calls = [c for m in messages for c in m.tool_calls]
    assert calls and all(c.signature in text for c in calls)
    markers = [i for i in conv.items if isinstance(i, Marker)]
    assert markers and all(m.title in text for m in markers)
    assert "✔ success" in text


def test_data_is_escaped_and_nothing_is_fetched():
    evil = '<img src="http://x/beacon.png"> ![i](http://x/b.png) <a href="http://x">x</a> <script>alert(1)</script>'
    call = ToolCall("lookup<b>", {"q": evil}, "c1", f'lookup<b>(q="{evil}")',
                    result=MessageItem(3, 2, "tool", "Tool", evil, None, tool_status="error"))
    items = (
        MessageItem(1, 0, "user", "User <i>x</i>", evil, None),
        MessageItem(2, 1, "assistant", "Assistant", evil, None, tool_calls=(call,),
                    edits=(Edit(None, evil),)),
        Marker("removed", 1, f"1 message removed {evil}", note=evil, texts=(("User", evil),)),
        Marker("pending", 2, "Waiting", note=evil, detail=evil),
    )
    html = lens.Transcript(items, "t<1>", warning=f"**Stale transcript**: `{evil}`")._repr_html_()
    parsed = _parse(html)
    assert {t for t, _ in parsed.tags} <= TAGS
    assert all(not ({"src", "href"} & set(a)) for _, a in parsed.tags)
    text = "".join(parsed.text)
    shown = text.count('<img src="http://x/beacon.png">')  # as text, in every place the data goes
    assert shown >= 10 and html.count("&lt;img src=&quot;http://x/beacon.png&quot;&gt;") == shown
    assert "✖ error" in text and "User <i>x</i>" in text


def test_a_long_message_is_folded_after_a_preview():
    long = "word " * 1000
    html = lens.Transcript((MessageItem(1, 0, "user", "User", long, None),))._repr_html_()
    assert "<details>" in html and "Show the whole message (5,000 characters)" in html


def test_a_stale_transcript_carries_the_app_warning(tmp_path):
    store = write_stale_store(tmp_path / "stale.sqlite")
    db = load_without_key(store, tmp_path / "stale.duckdb")
    shown = lens.transcript(db, MIXED)
    assert shown.warning and shown.warning.startswith("**Stale transcript**")
    assert "<b>Stale transcript</b>" in shown._repr_html_()
    assert lens.transcript(db, "acme:nope:none").warning  # a thread that is not there: said, not raised


def test_a_window_around_a_focused_message(demo_db):
    shown = lens.transcript(demo_db, "acme:mobile:sess-3003", focus=5, size=3)
    numbers = [i.number for i in _flat(shown.items) if isinstance(i, MessageItem)]
    assert 5 in numbers and len([i for i in shown.items if isinstance(i, MessageItem)]) <= 3
    assert 'tl-focus" id="tl-msg-5"' in shown._repr_html_()
