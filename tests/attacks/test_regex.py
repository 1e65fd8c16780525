"""A thread-key pattern that backtracks catastrophically under Python's `re` runs in linear
time (RE2, loaders/linear_regex.py); one RE2 cannot run is refused in one line."""

from __future__ import annotations

import duckdb

from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages

# Three alternatives that each take any character: 3^n ways to split a thread id of n
# characters, every one tried by a backtracking engine before it gives up on `XYZ$`.
BOMB = r"^(?P<session>(\w|\W|.)*)XYZ$"
THREAD = "acme:web:" + "s" * 40  # (2 s at 17 characters grew to 52 s; at 49, never)


def test_a_backtracking_bomb_of_a_thread_key_pattern_loads_in_linear_time(tmp_path):
    store, db = tmp_path / "s.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [{"role": "user", "content": "hi", "id": "m1"}], thread_id=THREAD)
    # (the timeout only ends a hang: a backtracking engine would not finish this in years)
    out = attack(["load", str(store), "--db", str(db), "--thread-key-pattern", BOMB], tmp_path, timeout=300)
    out.succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT tenant_id, session_id FROM threads").fetchall() == [(None, THREAD)]  # no match
    con.close()


def test_a_pattern_only_a_backtracking_engine_runs_is_refused_in_one_line(tmp_path):
    store, db = tmp_path / "s.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [{"role": "user", "content": "hi", "id": "m1"}], thread_id=THREAD)
    out = attack(["load", str(store), "--db", str(db), "--thread-key-pattern", r"^(?P<session>(s+)\2)"], tmp_path)
    out.refused("thread-key pattern", "RE2").within_budget().wrote_only([db])
    assert not db.exists()
