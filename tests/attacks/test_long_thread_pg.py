"""A Postgres thread of more checkpoints than a load reads: the `messages` blobs of the
checkpoints past the limit stream by and are dropped, never held (`pg_rows.assemble`, the
one rule of the live, exported and MySQL readers; docs/security.md, "Checkpoints per thread").

The blobs past the limit are 1.1 GB of zeros that TOAST keeps in a few MB: held, they alone
would take the load over its budget.
"""

from __future__ import annotations

import psycopg

from tests.attacks.harness import attack
from tests.attacks.pg_stores import long_pg_thread
from tests.attacks.test_long_thread import CAP, CHECKPOINTS, _assert_cut, _rows
from tests.loaders.pg_util import fresh_database

PAD = 384 << 10  # bytes of each blob past the limit: (CHECKPOINTS - CAP) of them, 1.1 GB


def test_a_postgres_thread_past_the_limit_holds_no_blob_of_the_checkpoints_it_skips(tmp_path):
    with fresh_database() as dsn:
        long_pg_thread(dsn, CHECKPOINTS, past=CAP, pad=PAD)
        with psycopg.connect(dsn) as con:
            size = con.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        assert size < 100 << 20  # (a small store: the budget's promise is for inputs under 100 MB)
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(CAP)})
    out.succeeded().within_budget().wrote_only([db])
    _assert_cut(db)
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]


def test_the_writes_of_the_checkpoints_a_cut_thread_skips_do_not_crowd_out_its_pending_interrupt(tmp_path, monkeypatch):
    """Writes past the last checkpoint read are dropped before the special-writes tail keeps
    the last ones: a flood on a skipped checkpoint leaves the interrupt of the last one read."""
    import loaders
    from loaders import records
    from tests.loaders.pg_util import saver_for

    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS", "20")
    monkeypatch.setattr(records, "SPECIAL_WRITES_MAX", 50)
    with fresh_database() as dsn:
        long_pg_thread(dsn, 50, past=20, pad=0)
        with psycopg.connect(dsn) as con:
            first = con.execute("SELECT min(checkpoint_id) FROM checkpoints").fetchone()[0]
        with saver_for(dsn) as saver:
            config = {"configurable": {"thread_id": "long", "checkpoint_ns": ""}}
            saver.put_writes({"configurable": {**config["configurable"], "checkpoint_id": f"{first}-0000019"}},
                             [("__interrupt__", "approve?")], "ask")
            skipped = {"configurable": {**config["configurable"], "checkpoint_id": f"{first}-0000030"}}
            for i in range(100):
                saver.put_writes(skipped, [("__error__", "boom")], f"flood-{i:03d}")
        db = tmp_path / "out.duckdb"
        summary = loaders.load(dsn, db)
    assert summary.errors == 1  # the cut, and no special write skipped
    assert _rows(db, "SELECT interrupt_pending, latest_checkpoint_id FROM threads") == [(True, f"{first}-0000019")]
