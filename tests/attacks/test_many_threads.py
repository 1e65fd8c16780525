"""A store of very many tiny threads (one empty checkpoint each): the load-time tables hand each
thread's facts to DuckDB as Arrow columns (`analytics.conversation_outcomes.columns`), so the load stays within the
memory budget (300,000 threads' facts bound as lists took 2.1 GB). What they gather still grows with
the thread count, so a load takes at most `records.MAX_THREADS` threads (1M load at 850 MB) and
refuses a source of more in one line (`TRANSCRIPT_LENS_MAX_THREADS`, set small here)."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest

from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages

THREADS = 300_000


def _store(path, threads: int) -> None:
    store_with_messages(path, [], thread_id="t0")
    conn = sqlite3.connect(path)
    with conn:  # the saver's row copied under other thread ids
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
            "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) "
            "SELECT printf('t%d', i), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints, k WHERE thread_id = 't0'", [threads - 1])
    conn.close()


def test_a_store_of_300k_empty_threads_loads_within_the_budget(tmp_path):
    store, db = tmp_path / "threads.sqlite", tmp_path / "out.duckdb"
    _store(store, THREADS)
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM conversation_signals").fetchone()[0] == THREADS
    finally:
        con.close()


def test_a_store_of_more_threads_than_a_load_takes_is_refused_in_one_line(tmp_path):
    store, db = tmp_path / "threads.sqlite", tmp_path / "out.duckdb"
    _store(store, 1001)
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_THREADS": "1000"})
    out.refused("1,001 threads, over the limit of 1,000 threads one load takes (TRANSCRIPT_LENS_MAX_THREADS)")
    out.within_budget().wrote_only([db])  # (its lock file at most)
    assert not db.exists()
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_THREADS": "1001"})
    out.succeeded()


def test_a_reader_that_cannot_count_its_threads_is_held_before_the_load_time_tables(tmp_path, monkeypatch):
    import transcript_lens
    from loaders.sqlite import reader as sqlite_reader

    store, db = tmp_path / "threads.sqlite", tmp_path / "out.duckdb"
    _store(store, 1001)
    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_THREADS", "1000")
    monkeypatch.setattr(sqlite_reader.SqliteReader, "thread_count", lambda self: None)
    with pytest.raises(transcript_lens.LoadFailed, match="1,001 threads, over the limit of 1,000 threads one load takes"):
        transcript_lens.load(store, db, workers=1)
    assert not db.exists()
