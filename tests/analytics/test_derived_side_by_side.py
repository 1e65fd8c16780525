"""`analytics.derived.write_derived_tables` of a full rebuild: the signal and topic steps on
cursors of their own beside the other tables, with the same rows as one step after the other
(which is what a connection inside a transaction gets: a cursor would not see its rows)."""

from __future__ import annotations

import shutil

import duckdb
import pytest

import analytics.derived as derived
from analytics.catalog import DERIVED_TABLES


@pytest.fixture(autouse=True)
def side_by_side_at_any_size(monkeypatch):
    """The test database is small: side by side from its first message, as a large one is."""
    monkeypatch.setattr(derived, "SIDE_BY_SIDE_MESSAGES", 0)


def _copy(loaded, tmp_path, name: str) -> duckdb.DuckDBPyConnection:
    target = tmp_path / name
    shutil.copyfile(loaded, target)
    con = duckdb.connect(str(target))
    con.execute("SET memory_limit = '256MB'")  # (as the loader's writer)
    return con


def _tables(con) -> dict[str, tuple[list, str]]:
    """Every derived table's rows (sorted) and the fingerprint in its comment."""
    out = {}
    for table in DERIVED_TABLES:
        rows = sorted(con.execute(f"SELECT * FROM {table.name}").fetchall(), key=repr)
        (comment,) = con.execute("SELECT comment FROM duckdb_tables() WHERE database_name = current_database() "
                                 "AND table_name = ?", [table.name]).fetchone()
        out[table.name] = (rows, comment)
    return out


def test_side_by_side_writes_what_one_after_the_other_writes(loaded, tmp_path):
    side = _copy(loaded, tmp_path, "side.duckdb")
    serial = _copy(loaded, tmp_path, "serial.duckdb")
    for con in (side, serial):  # (the loaded tables dropped: written again from nothing)
        for table in DERIVED_TABLES:
            con.execute(f"DROP TABLE {table.name}")
    derived.write_derived_tables(side)
    serial.execute("BEGIN TRANSACTION")
    derived.write_derived_tables(serial)
    serial.execute("COMMIT")
    got, want = _tables(side), _tables(serial)
    assert all(rows for rows, _ in want.values())
    assert got == want


def test_inside_a_transaction_every_table_reads_its_uncommitted_rows(loaded, tmp_path):
    con = _copy(loaded, tmp_path, "tx.duckdb")
    (thread,) = con.execute("SELECT min(thread_id) FROM threads").fetchone()
    con.execute("BEGIN TRANSACTION")
    for table in ("messages", "checkpoints", "threads"):
        con.execute(f"DELETE FROM {table} WHERE thread_id = ?", [thread])
    derived.write_derived_tables(con)
    for table in ("conversation_metrics", "conversation_signals", "conversation_topics"):
        assert con.execute(f"SELECT count(*) FROM {table} WHERE thread_id = ?", [thread]).fetchone() == (0,), table
    con.execute("ROLLBACK")


def _limit(con) -> str:
    return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_the_memory_limit_is_restored_after_the_tables(loaded, tmp_path):
    con = _copy(loaded, tmp_path, "memory.duckdb")
    derived.write_derived_tables(con)
    assert _limit(con) == "244.1 MiB"  # (256 MB)


def test_a_failing_table_fails_the_rebuild_and_the_signals_stop_waiting(loaded, tmp_path, monkeypatch):
    con = _copy(loaded, tmp_path, "fail.duckdb")

    def broken(con, threads=None):
        raise RuntimeError("risk table failed")

    monkeypatch.setattr(derived, "materialize_risks", broken)
    with pytest.raises(RuntimeError, match="risk table failed"):
        derived.write_derived_tables(con)
    assert _limit(con) == "244.1 MiB"
