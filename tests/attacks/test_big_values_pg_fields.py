"""Postgres checkpoint fields of hundreds of megabytes (metadata, a `ts`, a channel version) are
measured and cut on the server, never fetched whole (docs/security.md, "One stored value"): each
a `load_errors` row, the thread loaded, within the memory budget. The other stored values over
the size limit are tests/attacks/test_big_values.py (a file of its own: a file runs whole on one
worker, and these take minutes)."""

from __future__ import annotations

import psycopg
import pytest

from tests.attacks.harness import attack
from tests.attacks.pg_stores import long_pg_thread
from tests.attacks.test_long_thread import _rows
from tests.loaders.pg_util import fresh_database


def test_postgres_metadata_longer_than_a_load_takes_stays_on_the_server(tmp_path):
    """Checkpoint rows come 2,000 a time: four of 200 MB metadata (17 MB of TOAST) took 1.9 GB.
    Metadata over `transform.limits.METADATA_MAX_CHARS` is measured on the server and reported as the
    transform reports it."""
    with fresh_database() as dsn:
        long_pg_thread(dsn, 4, past=4, pad=0)
        with psycopg.connect(dsn, autocommit=True) as con:
            con.execute("UPDATE checkpoints SET metadata = jsonb_build_object('x', repeat('0', %s))", [200 << 20])
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    assert _rows(db, "SELECT stage, reason FROM load_errors") == [("metadata", (
        "metadata is 209715209 characters long, over the 8388608-character limit; not loaded "
        "(step, source and run_id are NULL)"))] * 4
    assert _rows(db, "SELECT thread_id, content FROM messages") == [("long", "the first question")]


@pytest.mark.parametrize("path", ["{ts}", "{channel_versions,messages}"], ids=["ts", "messages-version"])
def test_postgres_checkpoint_fields_longer_than_any_valid_one_are_not_sent_whole(tmp_path, path):
    """A 200 MB `ts` or `messages` version in each of four checkpoints (17 MB of TOAST) took 1.9 GB:
    a ts is cut on the server to more than any valid one holds, a version to one byte over the
    key limit (no blob is read for it; reported)."""
    with fresh_database() as dsn:
        long_pg_thread(dsn, 4, past=4, pad=0)
        with psycopg.connect(dsn, autocommit=True) as con:
            con.execute("UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, %s, to_jsonb(repeat('0', %s)))",
                        [path, 200 << 20])
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    reasons = _rows(db, "SELECT stage, reason FROM load_errors")
    if path == "{ts}":
        assert reasons == [("checkpoint", f"unreadable ts '{'0' * 59} (ISO 8601, years 1 to 9999 in UTC)")] * 4
    else:
        assert reasons == [("messages", "messages version is 4097 bytes long, over the 4096-byte limit for a key")] * 4
