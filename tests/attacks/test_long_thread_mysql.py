"""A MySQL thread of more checkpoints than a load reads, whose later `messages` blobs are large
but compress to little in InnoDB: the live reader streams them into the stage one row at a
time (its batches bounded by bytes), and `pg_rows.assemble` drops those of the checkpoints
past the limit as they stream by (docs/security.md, "Checkpoints per thread").

Held (a fetch of 500 rows, or the thread's blobs), the 550 blobs of 2 MiB would take the load
over its budget; the store is a few MB.
"""

from __future__ import annotations

from tests.attacks.harness import attack
from tests.attacks.mysql_stores import mysql_long_thread, store_size
from tests.attacks.test_long_thread import CAP, CHECKPOINTS, _assert_cut, _rows
from tests.loaders.mysql_util import fresh_mysql_database

PAD, BLOBS = 2 << 20, 550  # the blobs past the limit: 1.1 GB of zeros


def test_a_mysql_thread_past_the_limit_holds_no_blob_of_the_checkpoints_it_skips(tmp_path):
    with fresh_mysql_database() as mysql:
        mysql_long_thread(mysql, CHECKPOINTS, past=CAP, pad=PAD, blobs=BLOBS)
        assert store_size(mysql.name) < 100 << 20  # (a small store: the budget's promise is for inputs under 100 MB)
        db = tmp_path / "out.duckdb"
        out = attack(["load", mysql.reader_dsn, "--db", str(db)], tmp_path,
                     env={"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(CAP)})
    out.succeeded().within_budget().wrote_only([db])
    _assert_cut(db)
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]
