"""A store of very many tiny threads (one empty checkpoint each): the load-time tables hand each
thread's facts to DuckDB as Arrow columns (`analytics.outcomes.columns`), so the load stays within the
memory budget (300,000 threads' facts bound as lists took 2.1 GB)."""

from __future__ import annotations

import sqlite3

import duckdb

from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages

THREADS = 300_000


def test_a_store_of_300k_empty_threads_loads_within_the_budget(tmp_path):
    store, db = tmp_path / "threads.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [], thread_id="t0")
    conn = sqlite3.connect(store)
    with conn:  # the saver's row copied under other thread ids
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
            "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) "
            "SELECT printf('t%d', i), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints, k WHERE thread_id = 't0'", [THREADS - 1])
    conn.close()
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM conversation_signals").fetchone()[0] == THREADS
    finally:
        con.close()
