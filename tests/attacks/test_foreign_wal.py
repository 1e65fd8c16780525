"""A `-wal` beside a database it does not belong to is refused in one line, never applied
(loaders/sqlite/wal.py: page size, page 1's change counter, the file's size; docs/security.md)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import duckdb

from storegen import build_sqlite_store, run_scenarios
from tests.attacks.harness import attack
from tests.conftest import copy_store_files


def _live_wal_store(folder, scenarios, more, threads):
    """A store written by SqliteSaver whose last threads are only in its `-wal` (copied while the writer was open)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    folder.mkdir()
    live = folder / "live.sqlite"
    build_sqlite_store(live, scenarios=scenarios)
    conn = sqlite3.connect(live, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        conn.execute("PRAGMA wal_autocheckpoint=0")
        run_scenarios(saver, more, threads=threads)
        return copy_store_files(live, folder / "copy", "store.sqlite")
    finally:
        conn.close()


def test_a_wal_from_another_database_is_refused_and_its_own_loads(tmp_path):
    ours = _live_wal_store(tmp_path / "ours", ["simple_chat"], ["edit"], {"acme::ours": "edit"})
    theirs = _live_wal_store(tmp_path / "theirs", ["simple_chat", "tool_calls"], ["edit"], {"globex::theirs": "edit"})
    target = tmp_path / "target"
    target.mkdir()
    store = target / "store.sqlite"
    shutil.copyfile(ours, store)
    shutil.copyfile(f"{theirs}-wal", f"{store}-wal")
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.refused("store.sqlite-wal", "not the write-ahead log of store.sqlite").within_budget().wrote_only([db])
    assert not db.exists()

    # The store's own -wal loads, its WAL-only thread with it.
    shutil.copyfile(f"{ours}-wal", f"{store}-wal")
    attack(["load", str(store), "--db", str(db)], tmp_path).succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM threads WHERE thread_id = 'acme::ours'").fetchone()[0] == 1
    con.close()


def test_a_stale_wal_of_an_earlier_checkpoint_is_refused_not_applied_over_what_came_after(tmp_path):
    """The store's own `-wal` from before a checkpoint, beside the file as it is after later writes:
    SQLite would read the file as long as that WAL's last commit says, losing every later thread."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    live = tmp_path / "live.sqlite"
    build_sqlite_store(live, scenarios=["simple_chat"])
    conn = sqlite3.connect(live, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        conn.execute("PRAGMA wal_autocheckpoint=0")
        run_scenarios(saver, ["edit"], threads={"acme::early": "edit"})
        stale = tmp_path / "stale-wal"
        shutil.copyfile(f"{live}-wal", stale)
        conn.execute("PRAGMA wal_checkpoint(RESTART)")
        run_scenarios(saver, ["tool_calls"], threads={"acme::later": "tool_calls"})
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        target = tmp_path / "target"
        target.mkdir()
        store = target / "store.sqlite"
        shutil.copyfile(live, store)
    finally:
        conn.close()
    shutil.copyfile(stale, f"{store}-wal")
    db = tmp_path / "out.duckdb"
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.refused("store.sqlite-wal", "not the write-ahead log of store.sqlite", "moved on past it")
    out.within_budget().wrote_only([db])

    # Without it, the file loads whole, the later thread included.
    Path(f"{store}-wal").unlink()
    attack(["load", str(store), "--db", str(db)], tmp_path).succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    found = con.execute("SELECT count(*) FROM threads WHERE thread_id IN ('acme::early', 'acme::later')").fetchone()
    assert found[0] == 2
    con.close()
