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
