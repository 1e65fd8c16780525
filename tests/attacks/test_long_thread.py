"""One thread of more checkpoints than a load reads (`records.MAX_THREAD_CHECKPOINTS`): its first
checkpoints load, one `load_errors` row names the limit and the thread, its transcript is
marked stale, and every other thread loads whole (docs/security.md, "Checkpoints per thread").

The limit is lowered through `TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS`, which the loader reads,
so the store stays small; `bench/attack_sweep.py` loads 1.5M checkpoints at the real limit.
"""

from __future__ import annotations

import duckdb
import pytest
from tests.attacks.harness import attack
from tests.attacks.stores import store_with_long_thread, store_with_messages

CAP = 2_000
CHECKPOINTS = 5_000


def _rows(db, sql: str, params=()) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _assert_cut(db, thread_id: str = "long") -> None:
    [(reason,)] = _rows(db, "SELECT reason FROM load_errors")
    assert reason == (f"{CHECKPOINTS - CAP} more checkpoints of the thread skipped: a load reads at most the first "
                      f"{CAP} of a thread (by namespace and id); its transcript is stale")
    assert _rows(db, "SELECT thread_id, checkpoint_id FROM load_errors") == [(thread_id, None)]
    [(checkpoints, stale, latest)] = _rows(
        db, "SELECT checkpoint_count, stale_reason, latest_checkpoint_id FROM threads WHERE thread_id = ?", [thread_id])
    assert checkpoints == CAP
    assert stale == f"the thread was cut short: {reason}"
    # The first CAP checkpoints by id: the latest read is the CAP-th, the rest never read.
    assert latest.endswith(f"-{CAP - 1:07d}")


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure-python"])
def test_a_thread_past_the_checkpoint_limit_loads_its_first_checkpoints_stale_marked(tmp_path, pure):
    store, db = tmp_path / "long.sqlite", tmp_path / "out.duckdb"
    store_with_long_thread(store, CHECKPOINTS)
    store_with_messages(store, [{"role": "user", "content": "a short thread", "id": "s1"}], thread_id="short")
    env = {"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(CAP), **({"TRANSCRIPT_LENS_PUREPYTHON": "1"} if pure else {})}
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=env)
    out.succeeded().within_budget().wrote_only([db])
    _assert_cut(db)
    assert _rows(db, "SELECT checkpoint_count, stale_reason FROM threads WHERE thread_id = 'short'") == [(1, None)]
    assert _rows(db, "SELECT thread_id, content FROM messages ORDER BY thread_id") == [
        ("long", "the first question"), ("short", "a short thread")]


def test_a_mysqldump_thread_past_the_limit_is_cut_the_same_way(tmp_path):
    """The dump kinds (and Postgres, live or exported) read threads through `pg_rows.assemble`."""
    dump, db = tmp_path / "dump.sql", tmp_path / "out.duckdb"
    cp = '{"v":1,"ts":"2024-01-01T00:00:00+00:00","channel_values":{},"channel_versions":{}}'
    head = ("INSERT INTO `checkpoints` (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `parent_checkpoint_id`, `type`, "
            "`checkpoint`, `metadata`) VALUES ")
    ids = ["first"] + [f"first-{i:07d}" for i in range(1, CHECKPOINTS)]
    rows = [f"('long','','{cid}',{'NULL' if i == 0 else repr(ids[i - 1])},NULL,'{cp}','{{}}')" for i, cid in enumerate(ids)]
    dump.write_text("-- MySQL dump 10.13  Distrib 8.0\n" + head + ",".join(rows) + ";\n")
    out = attack(["load", str(dump), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(CAP)})
    out.succeeded().within_budget().wrote_only([db])
    _assert_cut(db)


def test_a_limit_that_is_not_a_positive_number_is_refused_in_one_line(tmp_path):
    store, db = tmp_path / "long.sqlite", tmp_path / "out.duckdb"
    store_with_long_thread(store, 3)
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": "0"})
    out.refused("TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS").wrote_only([db])
    assert not db.exists()
