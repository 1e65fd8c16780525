"""Element floods and deep nesting in a real saver's store: a load stays within the memory
budget and writes rows in proportion to the messages, not to the entries (docs/security.md)."""

from __future__ import annotations

import sqlite3

import duckdb
from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages as _store_with_messages

FLOOD = 500_000


def _count(db, sql: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_a_list_flooded_with_empty_arrays_costs_one_error_not_an_event_each(tmp_path):
    store, db = tmp_path / "flood.sqlite", tmp_path / "out.duckdb"
    _store_with_messages(store, [[]] * FLOOD)
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.no_traceback().within_budget().wrote_only([db])
    assert out.returncode == 0, out.stderr
    assert _count(db, "SELECT count(*) FROM message_events") == 0
    assert _count(db, "SELECT count(*) FROM messages") == 0
    assert _count(db, "SELECT count(*) FROM load_errors WHERE stage = 'message'") == 1


def test_deeply_nested_checkpoint_is_a_row_error_not_a_crash(tmp_path):
    """100,000 nested arrays (no serializer writes that: the saver's bytes are edited, msgpack
    counts elements, not bytes, so one value swaps for another in place)."""
    store, db = tmp_path / "deep.sqlite", tmp_path / "out.duckdb"
    marker = "DEEP-NESTING-GOES-HERE"
    _store_with_messages(store, [{"role": "user", "content": marker}, "a plain question"])
    conn = sqlite3.connect(store)
    with conn:
        (blob,) = conn.execute("SELECT checkpoint FROM checkpoints").fetchone()
        packed = bytes([0xA0 | len(marker)]) + marker.encode()
        assert blob.count(packed) == 1
        conn.execute("UPDATE checkpoints SET checkpoint = ?", [blob.replace(packed, b"\x91" * 100_000 + b"\x90")])
    conn.close()
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    # The checkpoint's msgpack is past the decoder's nesting limit: one row error, the thread still listed.
    assert _count(db, "SELECT count(*) FROM load_errors WHERE stage = 'checkpoint'") == 1
    assert _count(db, "SELECT count(*) FROM threads") == 1
