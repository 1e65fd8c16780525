"""`--incremental` re-reads only changed threads and ends identical to a full reload."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time

from loaders import SourceOptions, resolve
from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, open_sqlite_saver, run_scenarios, say, thread_config
from tests.loaders.util import assert_same_tables, load_db, one_node_app, rows

def _grow(path, existing_thread: str) -> None:
    """New threads, plus one more turn on an existing thread, written by real graphs."""
    saver = open_sqlite_saver(path)
    try:
        run_scenarios(saver, ["edit"], threads={"zeta:new:s1": "edit"}, start=dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc))
        graph = build_chat_graph(ScriptedChatModel(replies=[Reply("Glad it worked out!")]), saver)
        with Clock(dt.datetime(2025, 6, 2, tzinfo=dt.timezone.utc)) as clock:
            say(graph, thread_config(existing_thread), "One more question: is it free?", clock)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


def _waiting(db) -> set[str]:
    return {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads WHERE interrupt_pending")}


def test_incremental_reload_equals_a_full_reload(sqlite_store, tmp_path):
    src = tmp_path / "grow.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db_inc = tmp_path / "inc.duckdb"
    load_db(src, db_inc)
    existing = sqlite_store.thread("simple_chat")
    _grow(src, existing)

    summary = load_db(src, db_inc, incremental=True)
    assert summary.mode == "incremental"
    db_full = tmp_path / "full.duckdb"
    load_db(src, db_full)
    assert_same_tables(db_inc, db_full)
    assert summary.threads == len(sqlite_store.manifest) + 1
    loads = rows(db_inc, "SELECT mode, threads FROM loads ORDER BY load_id")
    assert [r["mode"] for r in loads] == ["full", "incremental"]
    # The grown thread has the new turn.
    last = rows(db_inc, "SELECT content FROM messages WHERE thread_id = ? ORDER BY ordinal DESC LIMIT 1", [existing])
    assert last[0]["content"] == "Glad it worked out!"


def test_incremental_reload_reads_only_changed_threads(sqlite_store, tmp_path, monkeypatch):
    src = tmp_path / "same.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db = tmp_path / "inc.duckdb"
    load_db(src, db)
    _grow(src, sqlite_store.thread("simple_chat"))

    import loaders.jobs as jobs
    import loaders.pipeline as pipeline

    seen: list[str] = []
    real = jobs.batches

    def spy(*a, **k):
        # Every thread read gives one `threads` row, whichever path made it.
        for table, rows in real(*a, **k):
            if table == "threads":
                seen.extend(r[0] for r in rows)
            yield table, rows

    monkeypatch.setattr(jobs, "batches", spy)
    waiting = _waiting(db)
    assert waiting  # the fixture store has threads left at an interrupt
    load_db(src, db, incremental=True, workers=1)
    assert sorted(seen) == sorted({"zeta:new:s1", sqlite_store.thread("simple_chat"), *waiting})
    # Not a byte of the file changed since (its change token): nothing is read, not even keys.
    seen.clear()
    monkeypatch.setattr(pipeline, "_changed_threads", None)  # (would raise if called)
    assert load_db(src, db, incremental=True, workers=1).changed == 0
    assert seen == []
    monkeypatch.undo()
    monkeypatch.setattr(jobs, "batches", spy)
    # Written to, with no new checkpoint (a resume that met the next interrupt, say): the keys are
    # compared and only the threads waiting on a human are read again.
    os.utime(src, ns=(time.time_ns(), time.time_ns()))
    load_db(src, db, incremental=True, workers=1)
    assert sorted(seen) == sorted(_waiting(db))


def test_a_swapped_checkpoint_and_a_deleted_thread_are_seen(sqlite_store, tmp_path, monkeypatch):
    """Same number of checkpoints but one replaced (a store edited by hand or by a
    maintenance job), and a thread deleted: the incremental load notices both."""
    import sqlite3

    src = tmp_path / "edited.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db = tmp_path / "inc.duckdb"
    load_db(src, db)
    edited, deleted = sqlite_store.thread("simple_chat"), sqlite_store.thread("tool_calls")
    con = sqlite3.connect(src)
    with con:
        # Replace the thread's newest checkpoint by a copy under another id: count, min id unchanged.
        (last,) = con.execute(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''", (edited,)
        ).fetchone()
        con.execute(
            "UPDATE checkpoints SET checkpoint_id = ? WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
            (last[:-1] + ("0" if last[-1] != "0" else "1"), edited, last),
        )
        con.execute("DELETE FROM checkpoints WHERE thread_id = ?", (deleted,))
        con.execute("DELETE FROM writes WHERE thread_id = ?", (deleted,))
    con.close()

    import loaders.pipeline as pipeline

    reader = resolve(str(src)).open(str(src), SourceOptions())
    try:
        changed, gone = pipeline._changed_threads(reader, pipeline._previous(db))
    finally:
        reader.close()
    assert changed == {edited, *_waiting(db)} and gone == [deleted]
    load_db(src, db, incremental=True)
    full = tmp_path / "full.duckdb"
    load_db(src, full)
    assert_same_tables(db, full)



def test_a_pending_interrupt_that_changed_without_a_new_checkpoint_is_reloaded(tmp_path):
    """Found by an independent check: a resume that meets the node's next `interrupt()` only
    adds writes to the checkpoint it resumed from, and the incremental load kept the first
    question as the pending one."""
    import sqlite3

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import MessagesState
    from langgraph.types import Command, interrupt

    def ask(state):
        first = interrupt({"ask": "first?"})
        second = interrupt({"ask": "second?"})
        return {"messages": [AIMessage(content=f"{first} {second}")]}

    src, db, full = tmp_path / "hitl.sqlite", tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    conn = sqlite3.connect(src, check_same_thread=False)
    try:
        app = one_node_app(conn, MessagesState, ask)
        config = {"configurable": {"thread_id": "acme:web:hitl"}}
        app.invoke({"messages": [HumanMessage(content="hi")]}, config)
        load_db(src, db, workers=1)
        keys = rows(db, "SELECT checkpoint_id FROM checkpoints ORDER BY 1")
        app.invoke(Command(resume="one"), config)  # now "second?" waits, on the same checkpoint
    finally:
        conn.close()
    load_db(src, db, incremental=True, workers=1)
    load_db(src, full, workers=1)
    assert rows(db, "SELECT checkpoint_id FROM checkpoints ORDER BY 1") == keys  # no checkpoint came
    assert "second?" in rows(db, "SELECT interrupt_value FROM threads")[0]["interrupt_value"]
    assert_same_tables(db, full)


def test_incremental_load_of_a_database_written_under_another_schema_is_a_full_load(sqlite_store, tmp_path):
    # An older database lacks tables and columns this loader writes: new rows cannot sit beside its old ones.
    import duckdb

    db = tmp_path / "old.duckdb"
    load_db(sqlite_store.path, db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.execute("DROP TABLE subgraph_messages")
    con.close()
    summary = load_db(sqlite_store.path, db, incremental=True)
    assert summary.mode == "full"
    fresh = tmp_path / "fresh.duckdb"
    load_db(sqlite_store.path, fresh)
    assert_same_tables(db, fresh)


def test_a_database_with_another_name_is_edited_as_a_copy(sqlite_store, tmp_path):
    """A hard link (how the app pins the version a session reads) keeps the version it names."""
    src = tmp_path / "grow.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db, pinned = tmp_path / "inc.duckdb", tmp_path / "pinned.duckdb"
    load_db(src, db)
    os.link(db, pinned)
    before = rows(pinned, "SELECT thread_id FROM threads ORDER BY 1")
    _grow(src, sqlite_store.thread("simple_chat"))
    assert load_db(src, db, incremental=True).mode == "incremental"
    assert os.stat(db).st_ino != os.stat(pinned).st_ino  # a new file took the name
    assert rows(pinned, "SELECT thread_id FROM threads ORDER BY 1") == before
    full = tmp_path / "full.duckdb"
    load_db(src, full)
    assert_same_tables(db, full)
