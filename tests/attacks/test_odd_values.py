"""Values a store can hold that no writer writes, through the real command line.

- a checkpoint `ts` whose offset puts it outside years 1 to 9999 in UTC
  (`9999-12-31T23:59:59-01:00` is year 10000): a load error and NULL, as any unreadable ts
  (contract §7.12), never a stored year 10000 or year 0;
- a mysqldump hex value of an odd number of digits: refused in one line naming the line.
"""

from __future__ import annotations

import duckdb

from tests.attacks.harness import attack
from tests.conftest import copy_store_files
from tests.loaders.hostile_util import StoreEditor

OUT_OF_RANGE = {"late": "9999-12-31T23:59:59-01:00", "early": "0001-01-01T00:00:00+01:00"}


def test_a_ts_outside_the_years_a_date_holds_is_a_row_error_not_a_stored_time(sqlite_store, tmp_path):
    store = copy_store_files(sqlite_store.path, tmp_path / "src")
    ed = StoreEditor(store)
    threads = {}
    for (name, ts), thread in zip(OUT_OF_RANGE.items(), sqlite_store.threads_of("simple_chat")[:1]
                                  + sqlite_store.threads_of("tool_agent")[:1]):
        threads[name] = (thread, ed.edit_latest(thread, lambda cp, ts=ts: cp.__setitem__("ts", ts)))
    ed.close()
    db = tmp_path / "lens.duckdb"
    attack(["load", str(store), "--db", str(db)], tmp_path).succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    for name, (thread, cid) in threads.items():
        [(reason,)] = con.execute("SELECT reason FROM load_errors WHERE thread_id = ? AND checkpoint_id = ?",
                                  [thread, cid]).fetchall()
        assert reason.startswith(f"unreadable ts '{OUT_OF_RANGE[name]}'"), reason
        assert con.execute("SELECT ts FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
                           [thread, cid]).fetchone() == (None,)
    years = con.execute("SELECT min(year(ts)), max(year(ts)) FROM checkpoints").fetchone()
    assert 2000 < years[0] <= years[1] < 3000, years


def test_an_odd_hex_value_in_a_mysqldump_is_refused_naming_its_line(tmp_path):
    dump = tmp_path / "dump.sql"
    dump.write_text(
        "-- MySQL dump 10.13  Distrib 8.0\n"
        "INSERT INTO `checkpoints` (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `parent_checkpoint_id`, `type`, "
        "`checkpoint`, `metadata`) VALUES ('t','','c1',NULL,'msgpack','{}','{}'),\n"
        "('t','','c2','c1','msgpack',0xABC,'{}');\n"
    )
    db = tmp_path / "lens.duckdb"
    out = attack(["load", str(dump), "--db", str(db)], tmp_path)
    out.refused("line 3", "odd number of digits").within_budget().wrote_only([db])  # (its lock file)
    assert not db.exists()
