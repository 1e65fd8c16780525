"""An incremental load defers DuckDB's row-group merge until it reclaims something
(`loaders.writer.VACUUM_AFTER_ROWS` / `VACUUM_AFTER_LOADS`), and the rows are the same either way."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

import loaders.writer as writer
from loaders.catalog import DATA_TABLES
from storegen import open_sqlite_saver, run_scenarios
from tests.loaders.test_incremental import _grow
from tests.loaders.util import assert_same_tables, load_db, rows

_START = dt.datetime(2025, 7, 1, tzinfo=dt.timezone.utc)


def _new_thread(path, thread_id: str) -> None:
    """One new thread, written by a real graph (nothing of the store's other threads changes)."""
    saver = open_sqlite_saver(path)
    try:
        run_scenarios(saver, ["simple_chat"], threads={thread_id: "simple_chat"}, start=_START)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


def _row_groups(db, table: str = "messages") -> int:
    return rows(db, f"SELECT count(DISTINCT row_group_id) AS n FROM pragma_storage_info('{table}')")[0]["n"]


def _waiting_rows(db) -> int:
    """Rows of the threads waiting on a human, which every incremental load reads again
    (`loaders.pipeline._changed_threads`): what it deletes when no other thread changed."""
    tables = (*DATA_TABLES, "load_errors")
    waiting = "SELECT thread_id FROM threads WHERE interrupt_pending"
    total = " + ".join(f"(SELECT count(*) FROM {t} WHERE thread_id IN ({waiting}))" for t in tables)
    return rows(db, f"SELECT {total} AS n")[0]["n"]


def _debt(db) -> str | None:
    found = rows(db, "SELECT value FROM meta WHERE key = 'vacuum_debt'")
    return found[0]["value"] if found else None


@pytest.fixture
def grown(sqlite_store, tmp_path):
    """(store copy, database of its full load)."""
    src = tmp_path / "s.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db = tmp_path / "inc.duckdb"
    load_db(src, db)
    return src, db


def test_new_threads_alone_leave_row_groups_unmerged_until_enough_loads(grown, tmp_path, monkeypatch):
    src, db = grown
    monkeypatch.setattr(writer, "VACUUM_AFTER_LOADS", 3)
    assert (_row_groups(db), _debt(db)) == (1, None)  # (a small store: one row group a table)
    waiting = _waiting_rows(db)
    assert 0 < waiting < writer.VACUUM_AFTER_ROWS

    _new_thread(src, "zeta:new:a")
    load_db(src, db, incremental=True)
    assert (_row_groups(db), _debt(db)) == (2, f"1,{waiting}")  # appended as a row group of its own

    _new_thread(src, "zeta:new:b")
    load_db(src, db, incremental=True)
    assert (_row_groups(db), _debt(db)) == (3, f"2,{2 * waiting}")

    _new_thread(src, "zeta:new:c")
    load_db(src, db, incremental=True)  # the third: merged, nothing owed
    assert (_row_groups(db), _debt(db)) == (1, None)

    full = tmp_path / "full.duckdb"
    load_db(src, full)
    assert _debt(full) is None
    assert_same_tables(db, full, with_errors=True)


def test_deleted_rows_make_the_merge_due(grown, sqlite_store, tmp_path, monkeypatch):
    src, db = grown
    _new_thread(src, "zeta:new:a")
    load_db(src, db, incremental=True)
    assert (_row_groups(db), _debt(db)) == (2, f"1,{_waiting_rows(db)}")

    # Another turn on an existing thread: the load deletes its rows and appends them again.
    replaced = sqlite_store.thread("simple_chat")
    before = rows(db, "SELECT (SELECT count(*) FROM messages WHERE thread_id = $t) + "
                      "(SELECT count(*) FROM checkpoints WHERE thread_id = $t) AS n", {"t": replaced})[0]["n"]
    # Due only once the replaced thread's rows are counted (more than those two tables' rows alone).
    monkeypatch.setattr(writer, "VACUUM_AFTER_ROWS", 2 * _waiting_rows(db) + before + 1)
    _grow(src, replaced)
    load_db(src, db, incremental=True)
    assert (_row_groups(db), _debt(db)) == (1, None)

    full = tmp_path / "full.duckdb"
    load_db(src, full)
    assert_same_tables(db, full, with_errors=True)


def test_a_debt_that_is_not_ours_is_no_debt(grown):
    src, db = grown
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("INSERT INTO meta VALUES ('vacuum_debt', 'not two numbers')")
    con.close()
    _new_thread(src, "zeta:new:a")
    load_db(src, db, incremental=True)
    assert _debt(db) == f"1,{_waiting_rows(db)}"
