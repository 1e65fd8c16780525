"""DeltaChannel threads: the messages channel rebuilt as the runtime does.

The stores are written by real graphs (`storegen.delta`) through real savers with
the installed langgraph; the oracle is the runtime itself: `graph.get_state()` for
the transcript and `get_state_history()` for what every root checkpoint holds
(the runtime rebuilds both from snapshots and writes). Message `ts` follows the
SPEC rule: the oldest root checkpoint, on any branch, whose rebuilt list holds the id.
"""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

import loaders
from loaders import delta
from loaders.delta import replay
from loaders.messages import content_text
from storegen.delta import GRAPHS, SCENARIOS, write_delta_store, write_delta_threads
from tests.loaders.pg_util import export_csv, fresh_database, pg_dump
from tests.loaders.util import rows


def runtime_view(saver, manifest: dict[str, str]) -> dict[str, dict]:
    """Per thread, what the runtime rebuilds: the transcript `(id, type, text)`, each root
    checkpoint's message ids, and each message id's SPEC ts (oldest holder; ties: smallest id)."""
    out = {}
    for thread_id, name in manifest.items():
        graph = GRAPHS[name](saver)
        cfg = {"configurable": {"thread_id": thread_id}}
        transcript = [(m.id, m.type, content_text(m.content)[0]) for m in graph.get_state(cfg).values.get("messages", [])]
        lists, first = {}, {}
        for snap in graph.get_state_history(cfg):
            conf = snap.config["configurable"]
            if conf.get("checkpoint_ns", ""):
                continue
            cid = conf["checkpoint_id"]
            ids = [m.id for m in snap.values.get("messages", [])] if "messages" in snap.values else None
            lists[cid] = ids
            for mid in ids or ():
                key = (snap.created_at, cid)
                if mid is not None and (mid not in first or key < first[mid]):
                    first[mid] = key
        out[thread_id] = {"transcript": transcript, "lists": lists, "ts": {m: k[0] for m, k in first.items()}}
    return out


def loaded_view(db: Path, thread_id: str) -> dict:
    transcript = [(r["message_id"], r["lc_type"], r["content"]) for r in rows(
        db, "SELECT message_id, lc_type, content FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread_id])]
    ids = {r["version"]: r["message_id"] for r in rows(
        db, "SELECT version, message_id FROM message_versions WHERE thread_id = ?", [thread_id])}
    lists = {r["checkpoint_id"]: None if r["v"] is None else [ids[v] for v in r["v"]] for r in rows(
        db, "SELECT checkpoint_id, message_versions AS v FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
        [thread_id])}
    ts = {r["message_id"]: r["ts"] for r in rows(
        db, "SELECT message_id, strftime(ts, '%Y-%m-%dT%H:%M:%S.%f+00:00') AS ts FROM messages "
            "WHERE thread_id = ? AND message_id IS NOT NULL", [thread_id])}
    return {"transcript": transcript, "lists": lists, "ts": ts}


def assert_as_the_runtime(db: Path, expected: dict[str, dict]) -> None:
    for thread_id, want in expected.items():
        got = loaded_view(db, thread_id)
        assert got["transcript"] == want["transcript"], thread_id
        assert got["lists"] == want["lists"], thread_id
        want_ts = {m: want["ts"][m] for m, *_ in want["transcript"] if m in want["ts"]}
        assert {m: got["ts"][m] for m in want_ts} == {m: _iso(t) for m, t in want_ts.items()}, thread_id


def _iso(created_at: str) -> str:
    from datetime import datetime, timezone

    return datetime.fromisoformat(created_at).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


@pytest.fixture(scope="module")
def delta_sqlite(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    path = tmp_path_factory.mktemp("delta") / "delta.sqlite"
    manifest = write_delta_store(path)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        expected = runtime_view(SqliteSaver(conn), manifest)
    finally:
        conn.close()
    return path, expected


def test_the_store_keeps_most_lists_only_as_writes(delta_sqlite):
    """(What the rebuild is for: most checkpoints store no messages value.)"""
    path, expected = delta_sqlite
    con = sqlite3.connect(path)
    counted = con.execute("SELECT count(*), sum(CAST(metadata AS TEXT) LIKE '%counters_since_delta_snapshot%') FROM checkpoints").fetchone()
    con.close()
    assert counted[1] > counted[0] / 2
    assert all(want["transcript"] for want in expected.values())


@pytest.mark.parametrize("workers", [1, 2])
def test_sqlite_threads_are_what_the_runtime_rebuilds(delta_sqlite, tmp_path, workers):
    path, expected = delta_sqlite
    db = tmp_path / "db.duckdb"
    summary = loaders.load(str(path), db, workers=workers)
    assert summary.errors == 0, rows(db, "SELECT * FROM load_errors")
    assert sorted(expected) == sorted(f"delta:{name}" for name in SCENARIOS)
    assert_as_the_runtime(db, expected)


def test_an_incremental_load_after_more_turns(delta_sqlite, tmp_path):
    path, _ = delta_sqlite
    copy = tmp_path / "grow.sqlite"
    copy.write_bytes(path.read_bytes())
    db = tmp_path / "db.duckdb"
    loaders.load(str(copy), db, workers=1)
    conn = sqlite3.connect(copy, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        GRAPHS["chat"](saver).invoke({"messages": [("user", "one more")]}, {"configurable": {"thread_id": "delta:chat"}})
        expected = runtime_view(saver, {"delta:chat": "chat"})
    finally:
        conn.close()
    loaders.load(str(copy), db, workers=1, incremental=True)
    assert_as_the_runtime(db, expected)


def test_postgres_live_and_exports_are_what_the_runtime_rebuilds(tmp_path):
    with fresh_database() as dsn:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            manifest = write_delta_threads(saver)
            expected = runtime_view(saver, manifest)
        specs = {"live": dsn, "csv": str(export_csv(dsn, tmp_path / "csv")), "dump": str(pg_dump(dsn, tmp_path / "d.sql"))}
        for name, spec in specs.items():
            db = tmp_path / f"{name}.duckdb"
            summary = loaders.load(spec, db, workers=1)
            assert summary.errors == 0, (name, rows(db, "SELECT * FROM load_errors"))
            assert_as_the_runtime(db, expected)


class NumbersState(TypedDict):
    messages: Annotated[list, DeltaChannel(operator.add, snapshot_frequency=2)]


def test_a_reducer_other_than_the_messages_one_is_reported(tmp_path):
    """`operator.add` over numbers: not a messages reducer. Reported, nothing invented, nothing imported."""
    path = tmp_path / "numbers.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = (StateGraph(NumbersState).add_node("count", lambda s: {"messages": [len(s["messages"])]})
             .add_edge(START, "count").add_edge("count", END).compile(checkpointer=SqliteSaver(conn)))
    for _ in range(3):
        graph.invoke({"messages": [7]}, {"configurable": {"thread_id": "numbers"}})
    conn.close()
    db = tmp_path / "db.duckdb"
    loaders.load(str(path), db, workers=1)
    reasons = [r["reason"] for r in rows(db, "SELECT reason FROM load_errors WHERE stage = 'messages'")]
    assert any("the channel's reducer is not the messages reducer (_messages_delta_reducer)" in r for r in reasons)
    assert rows(db, "SELECT count(*) AS n FROM checkpoints WHERE thread_id = 'numbers'")[0]["n"] > 0


def test_mysql_live_and_dump_are_what_the_runtime_rebuilds(tmp_path):
    from tests.loaders.mysql_util import fresh_mysql_database, mysql_saver, mysqldump

    with fresh_mysql_database() as db:
        with mysql_saver(db.admin_dsn) as saver:
            manifest = write_delta_threads(saver)
            expected = runtime_view(saver, manifest)
        for name, spec in (("live", db.reader_dsn), ("dump", str(mysqldump(db.name, tmp_path / "d.sql")))):
            out = tmp_path / f"{name}.duckdb"
            summary = loaders.load(spec, out, workers=1)
            assert summary.errors == 0, (name, rows(out, "SELECT * FROM load_errors"))
            assert_as_the_runtime(out, expected)


def test_mongodb_live_and_dump_are_what_the_runtime_rebuilds(tmp_path, monkeypatch):
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.loaders import mongo_util

    client = mongo_util.mongomock_client()
    saver = MongoDBSaver(client)
    manifest = write_delta_threads(saver)
    mongo_util.index_ordered_writes(monkeypatch)  # the runtime's view as a server gives it
    expected = runtime_view(saver, manifest)
    mongo_util.serve(monkeypatch, client, "mongodb://h/checkpointing_db")
    specs = {"live": "mongodb://h/checkpointing_db", "dump": mongo_util.write_dump(client, tmp_path / "dump"),
             "archive": mongo_util.write_archive(client, tmp_path / "a.archive")}
    for name, spec in specs.items():
        out = tmp_path / f"{name}.duckdb"
        summary = loaders.load(str(spec), out, workers=1)
        assert summary.errors == 0, (name, rows(out, "SELECT * FROM load_errors"))
        assert_as_the_runtime(out, expected)


def _chain(n: int):
    """`n` root checkpoints in a chain, none storing the list, each with one write adding a message."""
    cps = [delta.DeltaCheckpoint("", f"c{i:06d}", f"c{i - 1:06d}" if i else None, delta.NOTHING, True) for i in range(n)]
    writes = [delta.DeltaWrite("", f"c{i:06d}", "~", "t", 0, [replay._msg("ai", f"m{i}", f"id{i}")]) for i in range(n)]
    return cps, writes


def test_a_long_chain_is_rebuilt_once_and_its_entries_are_budgeted(monkeypatch):
    """A chain of n writes makes n²/2 list entries: within the per-thread limit they are all rebuilt
    (each list its parent's plus one); past it, one error and the rest without messages."""
    cps, writes = _chain(600)
    lists, errors = delta.rebuild("t", cps, writes)
    assert errors == []
    assert [len(lists[("", f"c{i:06d}")]) for i in (0, 1, 599)] == [0, 1, 599]
    assert lists[("", "c000599")][-1] == writes[598].value[0]
    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_LIST_ENTRIES", str(600 * 599 // 2 - 1))  # one entry short of the whole chain
    lists, errors = delta.rebuild("t", cps, writes)
    assert len(errors) == 1 and "more than" in errors[0].reason and "entries" in errors[0].reason
    assert lists[("", "c000599")] is delta.FAILED and len(lists[("", "c000500")]) == 500


def test_a_thread_past_the_entry_budget_is_stale_and_says_why(delta_sqlite, tmp_path, monkeypatch):
    # The rebuild stops at the budget, so the latest checkpoints keep no list: the thread shows an
    # older transcript and says so (threads.stale_reason), quoting the budget's error.
    path, _expected = delta_sqlite
    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_LIST_ENTRIES", "5")
    db = tmp_path / "capped.duckdb"
    loaders.load(str(path), db, workers=1)
    [chat] = rows(db, "SELECT * FROM threads WHERE thread_id = 'delta:chat'")
    assert chat["transcript_checkpoint_id"] != chat["latest_checkpoint_id"]
    assert "more than 5 entries" in chat["stale_reason"], chat["stale_reason"]
