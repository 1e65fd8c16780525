"""The per-thread facts as a load computes them: joined in SQL, with the Python rules read once
per distinct input, and nothing left behind on the connection."""

from __future__ import annotations

import duckdb

from analytics.conversation_outcomes import materialize
from analytics.db import every_thread


def _temp_tables(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()]


def test_loop_arguments_are_normalised_once_per_distinct_text(signal_store, monkeypatch):
    _, db, _ = signal_store
    seen: list = []
    real = materialize._norm_args
    monkeypatch.setattr(materialize, "_norm_args", lambda args: seen.append(args) or real(args))
    with duckdb.connect(str(db), read_only=True) as con, every_thread(con):
        facts = materialize.thread_facts(con, "TRUE", [])
    assert any(facts.column("agent_loop").to_pylist())  # (the store's loop repeats one call's arguments)
    assert seen and len(seen) == len(set(seen))


def test_facts_are_the_same_twice_and_leave_no_table_behind(signal_store):
    _, db, _ = signal_store
    with duckdb.connect(str(db), read_only=True) as con, every_thread(con):
        before = _temp_tables(con)
        first = materialize.thread_facts(con, "TRUE", [])
        assert _temp_tables(con) == before
        some = sorted(first.column("thread_id").to_pylist())[::2]
        second = materialize.thread_facts(con, "list_contains(?, t.thread_id)", [some])
        assert _temp_tables(con) == before
    assert first.schema == second.schema == materialize.pa.schema(materialize._FACT_TYPES)
    by_thread = {r["thread_id"]: r for r in first.to_pylist()}
    assert sorted(r["thread_id"] for r in second.to_pylist()) == some
    assert all(r == by_thread[r["thread_id"]] for r in second.to_pylist())
