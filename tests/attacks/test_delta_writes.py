"""A DeltaChannel thread's `messages` writes are all held, decoded, while its lists are rebuilt:
30 extra writes of 30 MB (19 MB in Postgres's TOAST) took a load to 1.9 GB. They stream, large
values come by key, and a thread's are read up to `delta.read.DELTA_WRITES_MAX_BYTES` of values;
the writes past it are one `load_errors` row, and only the lists that need one are not rebuilt
(docs/security.md, "DeltaChannel lists")."""

from __future__ import annotations

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

from storegen.delta import write_delta_threads
from tests.attacks.harness import attack
from tests.attacks.test_long_thread import _rows
from tests.loaders.pg_util import fresh_database

MB = 1_000_000


def test_large_deltachannel_writes_past_the_budget_are_not_read(tmp_path):
    with fresh_database() as dsn:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            [thread_id] = write_delta_threads(saver, ["chat"])
        with psycopg.connect(dsn, autocommit=True) as con:
            # 30 writes of a 30 MB msgpack string on a checkpoint the thread does not have: read, never replayed.
            con.execute(
                "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) "
                "SELECT %(t)s, '', 'zz-no-such-checkpoint', 'task-' || lpad(i::text, 3, '0'), 0, 'messages', 'msgpack', "
                "'\\xdb'::bytea || int4send(%(s)s) || convert_to(repeat('x', %(s)s), 'UTF8'), '' "
                "FROM generate_series(1, 30) AS i", {"t": thread_id, "s": 30 * MB})
            assert con.execute("SELECT pg_database_size(current_database())").fetchone()[0] < 100 << 20
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "write"
    assert reason == ("messages: 28 DeltaChannel writes not read: a thread's are read up to 64 MiB of values, in the "
                      "store's order; the lists that need one of them are not rebuilt")
    # Those writes were never replayed: the transcript is the runtime's, whole.
    assert _rows(db, "SELECT count(*) FROM messages")[0][0] > 0
    assert _rows(db, "SELECT count(*) FROM threads WHERE stale_reason IS NOT NULL") == [(0,)]
