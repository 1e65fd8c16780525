"""LangGraph.js stores: written by real JS graphs through `@langchain/langgraph-checkpoint-sqlite`
and `-postgres` (storegen/js), loaded from the SQLite file, the live database, its COPY CSV
export (folder, zip) and its pg_dump (plain, `-Fc`), and compared with what the JS savers
themselves read back.

The expected rows are tests/oracle.py's, fed the JS savers' `list`/`getTuple` answers
(`JsSaverView`): one set of rules for Python and JS stores alike.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

import loaders
from tests import oracle
from tests.loaders.js_util import JsSaverView, write_js_stores
from tests.loaders.pg_util import export_csv, fresh_database, pg_dump, zip_folder
from tests.loaders.util import rows

WAYS = ("sqlite", "live", "csv", "zip", "plain", "custom")
REACT = "acme:app:react"
TOOLS = "globex::tools"
UNDEFINED = '{"lc":2,"type":"undefined"}'


@pytest.fixture(scope="session")
def js_stores(tmp_path_factory: pytest.TempPathFactory):
    """One Node run: the JS threads in a SQLite file and a fresh Postgres database, the
    database exported (COPY CSV, pg_dump), and each saver's own reading of its store."""
    out = tmp_path_factory.mktemp("js_stores")
    with fresh_database("tl_js_") as dsn:
        dump = write_js_stores(out, sqlite=out / "js.sqlite", postgres=dsn)
        csv = export_csv(dsn, out / "csv")
        exports = {
            "csv": csv,
            "zip": zip_folder(csv, out / "export.zip", prefix="export/"),
            "plain": pg_dump(dsn, out / "data.sql"),
            "custom": pg_dump(dsn, out / "data.dump", "-Fc"),
        }
        yield SimpleNamespace(
            sources={"sqlite": out / "js.sqlite", "live": dsn, **exports},
            views={"sqlite": JsSaverView(dump["sqlite"]), "postgres": JsSaverView(dump["postgres"])},
        )


@pytest.fixture(scope="session")
def js_loaded(js_stores, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("js_loaded")
    for way in WAYS:
        loaders.load(str(js_stores.sources[way]), out / f"{way}.duckdb")
    return {way: out / f"{way}.duckdb" for way in WAYS}


def view_for(js_stores, way: str) -> JsSaverView:
    return js_stores.views["sqlite" if way == "sqlite" else "postgres"]


@pytest.mark.parametrize("way", WAYS)
def test_every_row_loads_without_errors(js_loaded, way):
    assert rows(js_loaded[way], "SELECT thread_id, stage, reason FROM load_errors") == []


@pytest.mark.parametrize("way", WAYS)
def test_messages_and_checkpoints_equal_the_js_savers_view(js_stores, js_loaded, way):
    view = view_for(js_stores, way)
    db = js_loaded[way]
    cols = ", ".join(oracle.MESSAGE_KEYS)
    assert rows(db, f"SELECT {cols} FROM messages ORDER BY thread_id, ordinal") == oracle.expected_messages(view)
    cols = ", ".join(oracle.CHECKPOINT_KEYS)
    assert rows(db, f"SELECT {cols} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id") == oracle.expected_checkpoints(view)


@pytest.mark.parametrize("way", WAYS)
def test_message_fields_equal_the_js_messages(js_stores, js_loaded, way):
    """Name, tool calls, tool call id and status of each transcript message, as JS has them."""
    view = view_for(js_stores, way)
    want = []
    for thread_id in sorted({t.config["configurable"]["thread_id"] for t in view.tuples}):
        latest = view.get_tuple({"configurable": {"thread_id": thread_id}})
        for m in latest.checkpoint["channel_values"].get("messages", []):
            tool = m["type"] == "tool"
            want.append({
                "message_id": m["id"],
                "lc_type": m["type"],
                "chat_role": m["role"],
                "name": m["name"],
                "tool_calls": m["tool_calls"] or None,
                "tool_call_id": m["tool_call_id"] if tool else None,
                "tool_status": m["status"] if tool else None,
            })
    got = rows(js_loaded[way], "SELECT message_id, lc_type, chat_role, name, tool_calls, tool_call_id, tool_status FROM messages ORDER BY thread_id, ordinal")
    for r in got:
        r["tool_calls"] = json.loads(r["tool_calls"]) if r["tool_calls"] is not None else None
    assert got == want
    # The cases that need the JS rules: ChatMessage is `generic`, a failed tool call is an error.
    assert {(r["lc_type"], r["chat_role"]) for r in got if r["chat_role"]} == {("generic", "crm")}
    assert sorted(r["tool_status"] for r in got if r["tool_status"]) == ["error", "success", "success", "success"]


@pytest.mark.parametrize("way", WAYS)
def test_the_react_agent_thread_keeps_all_its_ai_messages(js_stores, js_loaded, way):
    latest = view_for(js_stores, way).get_tuple({"configurable": {"thread_id": REACT}})
    ai = [m["id"] for m in latest.checkpoint["channel_values"]["messages"] if m["type"] == "ai"]
    got = rows(js_loaded[way], "SELECT message_id FROM messages WHERE thread_id = ? AND role = 'assistant' ORDER BY ordinal", [REACT])
    assert [r["message_id"] for r in got] == ai and len(ai) == 4


@pytest.mark.parametrize("way", ("live", "csv", "custom"))
@pytest.mark.parametrize("after", (0, 1), ids=("at-a-ts", "1us-after-it"))
def test_since_keeps_the_threads_with_a_checkpoint_at_or_after_it(js_stores, tmp_path, way, after):
    """`since` against LangGraph.js's `...T09:30:00.123Z` ts: on the server (live) and in the
    staged exports alike, as the instants the JS savers read back."""
    tuples = js_stores.views["postgres"].tuples
    instant = lambda t: datetime.fromisoformat(t.checkpoint["ts"].replace("Z", "+00:00"))  # noqa: E731
    stamps = sorted({instant(t) for t in tuples})
    since = stamps[len(stamps) // 2] + timedelta(microseconds=after)
    want = sorted({t.config["configurable"]["thread_id"] for t in tuples if instant(t) >= since})
    assert 0 < len(want) < len({t.config["configurable"]["thread_id"] for t in tuples})
    loaders.load(str(js_stores.sources[way]), tmp_path / "since.duckdb", options={"since": since.isoformat()})
    assert [r["thread_id"] for r in rows(tmp_path / "since.duckdb", "SELECT thread_id FROM threads ORDER BY thread_id")] == want


def test_the_sqlite_store_holds_what_the_fix_is_for(js_stores):
    """The JS writer really wrote the `undefined` marker into createReactAgent's AI messages and
    into a tool's artifact, and the JS tables lack the Python savers' later columns."""
    con = sqlite3.connect(js_stores.sources["sqlite"])
    try:
        blobs = {t: [bytes(b).decode() for (b,) in con.execute("SELECT checkpoint FROM checkpoints WHERE thread_id = ?", [t])] for t in (REACT, TOOLS)}
        write_columns = {r[1] for r in con.execute("PRAGMA table_info(writes)")}
    finally:
        con.close()
    assert any(f'"name":{UNDEFINED}' in b for b in blobs[REACT])
    assert any(f'"eta":{UNDEFINED}' in b for b in blobs[TOOLS])  # inside a ToolMessage's artifact
    assert "task_path" not in write_columns


@pytest.mark.parametrize("way", WAYS)
def test_events_subgraphs_and_interrupts_equal_the_js_savers_view(js_stores, js_loaded, way):
    view = view_for(js_stores, way)
    db = js_loaded[way]
    threads = sorted({t.config["configurable"]["thread_id"] for t in view.tuples})
    events = oracle.expected_events(view, threads)
    got = rows(db, "SELECT thread_id, checkpoint_id, event, position FROM message_events ORDER BY ALL")
    for thread_id in threads:
        mine = sorted([r["checkpoint_id"], r["event"], r["position"]] for r in got if r["thread_id"] == thread_id)
        assert mine == events[thread_id]["events"], thread_id
    counts = {r["thread_id"]: r for r in rows(db, "SELECT thread_id, edited_message_count, removed_message_count, interrupt_pending FROM threads")}
    for thread_id in threads:
        assert counts[thread_id]["edited_message_count"] == events[thread_id]["edited_message_count"], thread_id
        assert counts[thread_id]["removed_message_count"] == events[thread_id]["removed_message_count"], thread_id
        latest = view.get_tuple({"configurable": {"thread_id": thread_id}})
        pending = any(channel == "__interrupt__" for _, channel, _ in latest.pending_writes)
        assert counts[thread_id]["interrupt_pending"] == pending, thread_id
    assert [t for t in threads if counts[t]["interrupt_pending"]] == ["acme:web:hitl-pending"]
    assert events["acme:web:remove"]["removed_message_count"] >= 3
    assert events["initech:lab:nested"]["removed_message_count"] == 1  # updateState's RemoveMessage
    keys = ("thread_id", "checkpoint_ns", "checkpoint_id", "ordinal", "role", "content", "message_id")
    got = rows(db, f"SELECT {', '.join(keys)} FROM subgraph_messages ORDER BY thread_id, checkpoint_ns, ordinal")
    assert got == oracle.expected_subgraph_messages(view) and got
    assert any("|" in r["checkpoint_ns"] for r in got)  # a subgraph's subgraph
