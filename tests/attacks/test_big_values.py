"""Stored values over the size limit (`records.MAX_BLOB_BYTES`): measured in SQL and never
fetched, each one `load_errors` row naming the limit, the rest of the thread and every other
thread loaded (docs/security.md, "One stored value").

The Postgres store holds three 200 MB `messages` blobs of zeros that TOAST keeps in 15 MB:
fetched and decoded, they took the load to 1.5 GB. SQLite (a file holds no more than its
size) and the write values are checked under a small limit set through
`TRANSCRIPT_LENS_MAX_BLOB_BYTES`. Postgres checkpoint fields of hundreds of megabytes (metadata,
a `ts`, a version) are tests/attacks/test_big_values_pg_fields.py.
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.attacks.harness import attack
from tests.attacks.pg_stores import long_pg_thread
from tests.attacks.test_long_thread import _rows
from tests.loaders.pg_util import fresh_database, saver_for

LIMIT_WORDS = "over the limit of 64 MiB for one value (TRANSCRIPT_LENS_MAX_BLOB_BYTES)"
SMALL = 64 << 10  # the limit of the SQLite and write-value tests
BIG_TEXT = "x" * (SMALL * 2)


def test_postgres_blobs_over_the_limit_stay_on_the_server(tmp_path):
    with fresh_database() as dsn:
        # 4 checkpoints; from the 2nd on, each names its own blob version, 200 MB of zeros longer.
        long_pg_thread(dsn, 4, past=1, pad=200 << 20)
        with psycopg.connect(dsn) as con:
            size = con.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        assert size < 100 << 20
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    errors = _rows(db, "SELECT thread_id, stage, reason FROM load_errors ORDER BY reason")
    assert [(t, s) for t, s, _ in errors] == [("long", "messages")] * 3
    for (_, _, reason), version in zip(errors, ("1-1", "1-2", "1-3")):
        assert reason.startswith(f"messages blob version {version}: a stored value of 200 MiB (")
        assert reason.endswith(LIMIT_WORDS)
    # The transcript comes from the latest checkpoint whose messages were read: the first.
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]


def test_a_postgres_write_value_over_the_limit_is_one_error_and_the_thread_loads(tmp_path, monkeypatch):
    import loaders

    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_BLOB_BYTES", str(SMALL))
    with fresh_database() as dsn:
        long_pg_thread(dsn, 2, past=2, pad=0)
        with psycopg.connect(dsn) as con:
            last = con.execute("SELECT max(checkpoint_id) FROM checkpoints").fetchone()[0]
        with saver_for(dsn) as saver:
            at = {"configurable": {"thread_id": "long", "checkpoint_ns": "", "checkpoint_id": last}}
            saver.put_writes(at, [("__error__", BIG_TEXT)], "big")
            saver.put_writes(at, [("__interrupt__", "approve?")], "ask")
        db = tmp_path / "out.duckdb"
        summary = loaders.load(dsn, db)
    assert summary.errors == 1
    [(stage, cid, reason)] = _rows(db, "SELECT stage, checkpoint_id, reason FROM load_errors")
    assert (stage, cid) == ("write", last)
    assert reason.startswith("__error__: a stored value of ") and "over the limit of 65536 bytes" in reason
    assert _rows(db, "SELECT interrupt_pending FROM threads") == [(True,)]
    assert _rows(db, "SELECT content FROM messages") == [("the first question",)]


def _sqlite_store(path) -> None:
    """Thread `big`: a first checkpoint of one short message, a second whose list adds a message
    over the limit, a pending write over the limit; thread `short`: one short message."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        lists = {"big": [[{"role": "user", "content": "the first question", "id": "m1"}],
                         [{"role": "user", "content": "the first question", "id": "m1"},
                          {"role": "assistant", "content": BIG_TEXT, "id": "m2"}]],
                 "short": [[{"role": "user", "content": "a short thread", "id": "s1"}]]}
        for thread_id, steps in lists.items():
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            for step, messages in enumerate(steps):
                cp = empty_checkpoint()
                cp["channel_values"] = {"messages": messages}
                cp["channel_versions"] = {"messages": step + 1}
                config = saver.put(config, cp, {"source": "loop", "step": step}, {"messages": step + 1})
            if thread_id == "big":
                saver.put_writes(config, [("__error__", BIG_TEXT)], "big")
    finally:
        conn.close()


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure-python"])
def test_a_sqlite_checkpoint_and_write_over_the_limit_are_errors_and_the_rest_loads(tmp_path, pure):
    store, db = tmp_path / "big.sqlite", tmp_path / "out.duckdb"
    _sqlite_store(store)
    env = {"TRANSCRIPT_LENS_MAX_BLOB_BYTES": str(SMALL), **({"TRANSCRIPT_LENS_PUREPYTHON": "1"} if pure else {})}
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=env)
    out.succeeded().within_budget().wrote_only([db])
    errors = _rows(db, "SELECT thread_id, stage, reason FROM load_errors ORDER BY stage")
    assert [(t, s) for t, s, _ in errors] == [("big", "checkpoint"), ("big", "write")]
    assert errors[0][2].startswith("a stored value of ")
    assert errors[1][2].startswith("__error__: a stored value of ")
    assert all(r.endswith("over the limit of 65536 bytes for one value (TRANSCRIPT_LENS_MAX_BLOB_BYTES)")
               for _, _, r in errors)
    assert _rows(db, "SELECT thread_id, content FROM messages ORDER BY thread_id") == [
        ("big", "the first question"), ("short", "a short thread")]
    assert _rows(db, "SELECT thread_id, stale_reason IS NOT NULL FROM threads ORDER BY thread_id") == [
        ("big", True), ("short", False)]


def test_the_limit_from_the_environment_must_be_a_positive_number(tmp_path):
    store, db = tmp_path / "big.sqlite", tmp_path / "out.duckdb"
    _sqlite_store(store)
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_BLOB_BYTES": "0"})
    out.refused("TRANSCRIPT_LENS_MAX_BLOB_BYTES=0", "positive").wrote_only([db])


def _assert_blobs_refused(db, versions=("1-1", "1-2", "1-3"), limit: str = "65536 bytes") -> None:
    errors = _rows(db, "SELECT thread_id, stage, reason FROM load_errors ORDER BY reason")
    assert [(t, s) for t, s, _ in errors] == [("long", "messages")] * len(versions)
    for (_, _, reason), version in zip(errors, versions):
        assert reason.startswith(f"messages blob version {version}: a stored value of ")
        assert reason.endswith(f"over the limit of {limit} for one value (TRANSCRIPT_LENS_MAX_BLOB_BYTES)")
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]


@pytest.mark.parametrize("form", ["copy-csv", "pg_dump"])
def test_exported_blobs_over_the_limit_are_staged_as_errors(tmp_path, form):
    """A text export holds no blob over 32 MB (the line limit); a smaller limit applies at staging."""
    from tests.loaders.pg_util import export_csv, pg_dump

    with fresh_database() as dsn:
        long_pg_thread(dsn, 4, past=1, pad=SMALL)
        source = export_csv(dsn, tmp_path / "csv") if form == "copy-csv" else pg_dump(dsn, tmp_path / "dump.sql")
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(source), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_BLOB_BYTES": str(SMALL)})
    out.succeeded().within_budget().wrote_only([db])
    _assert_blobs_refused(db)


def test_mysql_blobs_over_the_limit_stay_on_the_server(tmp_path):
    from tests.attacks.mysql_stores import mysql_long_thread
    from tests.loaders.mysql_util import fresh_mysql_database

    with fresh_mysql_database() as mysql:
        mysql_long_thread(mysql, 4, past=1, pad=2 << 20)
        db = tmp_path / "out.duckdb"
        out = attack(["load", mysql.reader_dsn, "--db", str(db)], tmp_path,
                     env={"TRANSCRIPT_LENS_MAX_BLOB_BYTES": str(1 << 20)})
    out.succeeded().within_budget().wrote_only([db])
    _assert_blobs_refused(db, limit="1 MiB")


def _assert_whole(db) -> None:
    assert _rows(db, "SELECT count(*) FROM load_errors") == [(0,)]
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]
    assert _rows(db, "SELECT stale_reason FROM threads") == [(None,)]


def test_postgres_blobs_under_the_limit_come_a_bounded_batch_at_a_time(tmp_path):
    """Ten 60 MB blobs (under the limit): one FETCH of 100 blob rows held them all at once. Blobs
    over `postgres_reader.INLINE_BLOB_BYTES` come alone, by key, when decoded."""
    with fresh_database() as dsn:
        long_pg_thread(dsn, 11, past=1, pad=60 << 20)
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    _assert_whole(db)


def test_a_postgres_thread_holds_a_bounded_size_of_blobs(tmp_path):
    """2,000 versions of 0.9 MB (1.8 GB of zeros, 33 MB of TOAST), each fetched in a batch: past
    `pg_rows.HELD_BLOB_BYTES` a thread's kept blobs are released, fetched again when decoded."""
    with fresh_database() as dsn:
        long_pg_thread(dsn, 2_001, past=1, pad=900 << 10)
        with psycopg.connect(dsn) as con:
            size = con.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        assert size < 100 << 20
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    _assert_whole(db)


def test_a_mysql_thread_holds_a_bounded_size_of_blobs(tmp_path):
    """The same thread in InnoDB's compressed rows (18 MB): the stage hands its blobs to
    `pg_rows.assemble`, which releases those past `HELD_BLOB_BYTES` and fetches them from the
    stage again when decoded."""
    from tests.attacks.mysql_stores import mysql_long_thread, store_size
    from tests.loaders.mysql_util import fresh_mysql_database

    with fresh_mysql_database() as mysql:
        mysql_long_thread(mysql, 2_001, past=1, pad=900 << 10)
        assert store_size(mysql.name) < 100 << 20
        db = tmp_path / "out.duckdb"
        out = attack(["load", mysql.reader_dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    _assert_whole(db)
