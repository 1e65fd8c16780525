"""Rows a live Postgres load fetches 2,000 at a time, each field near its limit: a FETCH holds only
what is small, the large values come by key, one at a time, when decoded (docs/security.md,
"Blob bytes at once"). Special-write values and metadata compress in TOAST, so a few MB on disk
filled one FETCH with gigabytes: 30 `__error__` values of 30 MB took a load to 1.8 GB, 300
threads of 7 MB of metadata to 4.2 GB."""

from __future__ import annotations

import psycopg

from tests.attacks.harness import attack
from tests.attacks.pg_stores import long_pg_thread
from tests.attacks.test_long_thread import _rows
from tests.loaders.pg_util import fresh_database

MB = 1_000_000


def _small_on_disk(dsn: str) -> None:
    with psycopg.connect(dsn) as con:
        assert con.execute("SELECT pg_database_size(current_database())").fetchone()[0] < 100 << 20


def test_thirty_special_write_values_of_30_mb_are_fetched_one_at_a_time(tmp_path):
    with fresh_database() as dsn:
        long_pg_thread(dsn, 1, past=1, pad=0)
        with psycopg.connect(dsn, autocommit=True) as con:
            # `__error__` writes on the one checkpoint, each an msgpack string of 30 MB of 'x'.
            con.execute(
                "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) "
                "SELECT thread_id, checkpoint_ns, checkpoint_id, 'task-' || lpad(i::text, 3, '0'), 0, '__error__', 'msgpack', "
                "'\\xdb'::bytea || int4send(%(s)s) || convert_to(repeat('x', %(s)s), 'UTF8'), '' "
                "FROM checkpoints, generate_series(1, 30) AS i", {"s": 30 * MB})
        _small_on_disk(dsn)
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    # The thread keeps its last 64 MiB of special writes (two values), as from every source.
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason.split(" earlier")[0]) == ("write", "28")
    assert _rows(db, "SELECT content FROM messages") == [("the first question",)]


def test_large_metadata_comes_by_key_and_a_thread_holds_at_most_its_share(tmp_path, monkeypatch):
    """Metadata over 16 KiB is not in the rows a FETCH brings (a marker of its size is), and is
    fetched by key when its thread is assembled, up to `HELD_METADATA_BYTES` a thread (set small
    here: DuckDB's own 256 MB limit refuses loads of tens of MB of metadata, whatever the source)."""
    import loaders
    from loaders import pg_rows
    from loaders.postgres_reader import PostgresReader

    checkpoints, size = 6, 100_000
    monkeypatch.setattr(pg_rows, "HELD_METADATA_BYTES", 4 * (size + 1000))  # (the JSON around each pad)
    with fresh_database() as dsn:
        long_pg_thread(dsn, checkpoints, past=checkpoints, pad=0)
        with psycopg.connect(dsn, autocommit=True) as con:
            con.execute("UPDATE checkpoints SET metadata = metadata || jsonb_build_object('pad', repeat('x', %s))", [size])
        reader = PostgresReader(dsn, pg_rows.PostgresOptions())
        try:
            where, params = reader._filter(None, "checkpoints")
            fetched = [row[-1] for row in reader._stream("t", reader._checkpoint_sql(where), params, 100)]
        finally:
            reader.close()
        assert all(md.startswith(pg_rows.DEFERRED_METADATA) for md in fetched), [md[:40] for md in fetched]
        db = tmp_path / "out.duckdb"
        summary = loaders.load(dsn, db)
    assert summary.errors == 1
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "metadata"
    assert reason.startswith("metadata of 2 checkpoints not read: a thread's metadata over 16 KiB is read up to ")
    assert _rows(db, "SELECT count(*) FILTER (WHERE length(metadata::VARCHAR) > %d), count(*) FROM checkpoints" % size) \
        == [(4, checkpoints)]
