"""Older and odder Postgres stores: partial migrations, `empty` blobs, `v < 4`, damaged rows, ShallowPostgresSaver.

One database; `public` is written by `PostgresSaver`, the other schemas are
derived from it with SQL (or written by `ShallowPostgresSaver`).
"""

from __future__ import annotations

from types import SimpleNamespace

import psycopg
import psycopg.sql
import pytest
from langgraph.checkpoint.postgres.base import MIGRATIONS
from langgraph.checkpoint.postgres.shallow import ShallowPostgresSaver
from psycopg.rows import dict_row

from loaders import PostgresOptions, SourceError
from storegen import run_scenarios
from tests import oracle
from tests.loaders.pg_util import DATA_TABLES, export_csv, fresh_database, pg_dump, saver_for, table_rows, with_search_path
from tests.loaders.util import load_db, rows

THREADS = {"acme:web:sess-001": "simple_chat", "globex::s2": "edit", "initech:support:sess-022": "interrupt_resumed"}
V3, EMPTY, DAMAGED = THREADS

_COPY_SCHEMA = """
CREATE SCHEMA odd;
CREATE TABLE odd.checkpoints (LIKE public.checkpoints INCLUDING ALL);
CREATE TABLE odd.checkpoint_blobs (LIKE public.checkpoint_blobs INCLUDING ALL);
CREATE TABLE odd.checkpoint_writes (LIKE public.checkpoint_writes INCLUDING ALL);
INSERT INTO odd.checkpoints SELECT * FROM public.checkpoints;
INSERT INTO odd.checkpoint_blobs SELECT * FROM public.checkpoint_blobs;
INSERT INTO odd.checkpoint_writes SELECT * FROM public.checkpoint_writes;
"""


def _odd_rows(con: psycopg.Connection) -> None:
    """v1 checkpoints, a legacy `empty` blob and three kinds of damage, each on its own thread."""
    con.execute(
        """UPDATE odd.checkpoints SET checkpoint = jsonb_set(checkpoint, '{v}', '1') || '{"pending_sends": []}'
           WHERE thread_id = %s""",
        [V3],
    )
    con.execute(
        """UPDATE odd.checkpoint_blobs SET type = 'empty', blob = NULL
           WHERE thread_id = %s AND channel = 'messages'
             AND version = (SELECT min(version) FROM odd.checkpoint_blobs WHERE thread_id = %s AND channel = 'messages')""",
        [EMPTY, EMPTY],
    )
    latest = con.execute(
        "SELECT checkpoint_id, checkpoint -> 'channel_versions' ->> 'messages' FROM odd.checkpoints "
        "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
        [DAMAGED],
    ).fetchone()
    con.execute(
        "UPDATE odd.checkpoint_blobs SET blob = '\\xc1'::bytea WHERE thread_id = %s AND channel = 'messages' AND version = %s",
        [DAMAGED, latest[1]],
    )
    con.execute(
        "UPDATE odd.checkpoints SET checkpoint = '[]' WHERE thread_id = %s AND checkpoint_id = "
        "(SELECT min(checkpoint_id) FROM odd.checkpoints WHERE thread_id = %s)",
        [DAMAGED, DAMAGED],
    )
    con.execute("UPDATE odd.checkpoint_writes SET type = 'pickle' WHERE thread_id = %s AND channel = '__resume__'", [DAMAGED])


@pytest.fixture(scope="module")
def compat(tmp_path_factory):
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            for tid, scenario in THREADS.items():
                run_scenarios(saver, threads={tid: scenario})
        with psycopg.connect(dsn, autocommit=True) as con:
            # As a database stopped at migration v3 looks: blob NOT NULL, no task_path, no migrations table.
            con.execute("CREATE SCHEMA legacy")
            con.execute("SET search_path = legacy")
            for ddl in MIGRATIONS[1:4]:
                con.execute(ddl)
            con.execute("INSERT INTO legacy.checkpoints SELECT * FROM public.checkpoints")
            con.execute("INSERT INTO legacy.checkpoint_blobs SELECT * FROM public.checkpoint_blobs")
            con.execute(
                "INSERT INTO legacy.checkpoint_writes SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                "channel, type, blob FROM public.checkpoint_writes"
            )
            con.execute(_COPY_SCHEMA)
            _odd_rows(con)
            con.execute("CREATE SCHEMA shallow")
        with ShallowPostgresSaver.from_conn_string(with_search_path(dsn, "shallow")) as shallow:
            shallow.setup()
            for tid, scenario in list(THREADS.items())[:2]:
                run_scenarios(shallow, threads={tid: scenario})
        out = tmp_path_factory.mktemp("compat")
        public_db = out / "public.duckdb"
        load_db(dsn, public_db)
        yield SimpleNamespace(dsn=dsn, out=out, public_db=public_db)


def test_a_partially_migrated_schema_loads_like_the_current_one(compat):
    db = compat.out / "legacy.duckdb"
    summary = load_db(compat.dsn, db, options=PostgresOptions(schema="legacy"))
    assert summary.errors == 0 and summary.source.endswith("(schema legacy)")
    for table in DATA_TABLES:
        assert table_rows(db, table) == table_rows(compat.public_db, table), table


@pytest.fixture(scope="module")
def odd(compat):
    live = compat.out / "odd_live.duckdb"
    load_db(compat.dsn, live, options=PostgresOptions(schema="odd"))
    dump = pg_dump(compat.dsn, compat.out / "odd.sql", "-n", "odd")
    staged = compat.out / "odd_dump.duckdb"
    load_db(dump, staged)
    return live, staged


def _messages(db, thread_id):
    return rows(db, "SELECT ordinal, role, content, message_id FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread_id])


def test_v1_checkpoints_and_empty_blobs_load_without_errors(compat, odd):
    live, _ = odd
    errors = rows(live, "SELECT * FROM load_errors")
    assert {e["thread_id"] for e in errors} == {DAMAGED}
    assert _messages(live, V3) == _messages(compat.public_db, V3)
    assert _messages(live, EMPTY) == _messages(compat.public_db, EMPTY)
    counts = rows(live, "SELECT message_count FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id", [EMPTY])
    before = rows(compat.public_db, "SELECT message_count FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id", [EMPTY])
    # Exactly the checkpoints that carried the now-`empty` version lost their list, nothing else changed.
    changed = [(a["message_count"], b["message_count"]) for a, b in zip(counts, before) if a != b]
    assert changed and all(a is None and b is not None for a, b in changed)


def test_damaged_rows_are_reported_and_skipped_the_same_live_and_from_a_dump(compat, odd):
    live, staged = odd
    errors = rows(live, "SELECT thread_id, checkpoint_ns, checkpoint_id, stage, reason FROM load_errors ORDER BY ALL")
    stages = {e["stage"] for e in errors}
    assert stages == {"messages", "checkpoint", "write"}, errors
    assert any("not an object" in e["reason"] for e in errors if e["stage"] == "checkpoint")
    assert any("pickle" in e["reason"] for e in errors if e["stage"] == "write")
    assert any("invalid msgpack" in e["reason"] for e in errors if e["stage"] == "messages")
    assert errors == rows(staged, "SELECT thread_id, checkpoint_ns, checkpoint_id, stage, reason FROM load_errors ORDER BY ALL")
    # The damaged thread still loads; its transcript comes from the latest undamaged root checkpoint.
    assert rows(live, "SELECT count(*) AS n FROM threads")[0]["n"] == len(THREADS)
    assert _messages(live, DAMAGED)
    for table in DATA_TABLES:
        assert table_rows(live, table) == table_rows(staged, table), table


def test_shallow_saver_schema_loads_its_latest_checkpoints(compat, tmp_path):
    db = tmp_path / "shallow.duckdb"
    summary = load_db(compat.dsn, db, options=PostgresOptions(schema="shallow"))
    assert summary.errors == 0
    with psycopg.connect(with_search_path(compat.dsn, "shallow"), autocommit=True, prepare_threshold=0, row_factory=dict_row) as con:
        expected = oracle.expected_messages(ShallowPostgresSaver(con, serde=oracle.strict_serde()))
    cols = ", ".join(oracle.MESSAGE_KEYS)
    got = rows(db, f"SELECT {cols} FROM messages ORDER BY thread_id, ordinal")
    assert got == expected and len({r["thread_id"] for r in got}) == 2
    # Only the latest checkpoint per namespace survives in that schema.
    per_ns = rows(db, "SELECT thread_id, checkpoint_ns, count(*) AS n FROM checkpoints GROUP BY ALL")
    assert per_ns and all(r["n"] == 1 for r in per_ns)
    csv_db = tmp_path / "shallow_csv.duckdb"
    load_db(export_csv(compat.dsn, tmp_path / "csv", schema="shallow", tables=("checkpoints", "checkpoint_blobs", "checkpoint_writes")), csv_db)
    for table in DATA_TABLES:
        assert table_rows(csv_db, table) == table_rows(db, table), table


def test_a_dump_of_several_schemas_needs_schema(compat, tmp_path):
    dump = pg_dump(compat.dsn, tmp_path / "all.sql")
    with pytest.raises(SourceError, match="pick one with --schema"):
        load_db(dump, tmp_path / "x.duckdb")
    db = tmp_path / "legacy.duckdb"
    load_db(dump, db, options=PostgresOptions(schema="legacy"))
    assert table_rows(db, "messages") == table_rows(compat.public_db, "messages")


def test_an_unknown_schema_names_the_ones_that_exist(compat, tmp_path):
    with pytest.raises(SourceError, match=r"no checkpoints table.*legacy, odd, public, shallow.*--schema"):
        load_db(compat.dsn, tmp_path / "x.duckdb", options=PostgresOptions(schema="nope"))
    assert not (tmp_path / "x.duckdb").exists()


def test_a_schema_name_that_needs_quoting(compat, tmp_path):
    schema = 'Agent "Data"; DROP'
    with psycopg.connect(compat.dsn, autocommit=True) as con:
        con.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            con.execute(
                psycopg.sql.SQL("CREATE TABLE {} AS SELECT * FROM public.{}").format(
                    psycopg.sql.Identifier(schema, table), psycopg.sql.Identifier(table)
                )
            )
    try:
        db = tmp_path / "quoted.duckdb"
        load_db(compat.dsn, db, options=PostgresOptions(schema=schema))
        assert table_rows(db, "messages") == table_rows(compat.public_db, "messages")
        dump = pg_dump(compat.dsn, tmp_path / "quoted.sql", "-n", '"' + schema.replace('"', '""') + '"')
        assert b'COPY "Agent ""Data""; DROP".checkpoints' in dump.read_bytes()
        db2 = tmp_path / "quoted_dump.duckdb"
        load_db(dump, db2)
        assert table_rows(db2, "messages") == table_rows(compat.public_db, "messages")
    finally:
        with psycopg.connect(compat.dsn, autocommit=True) as con:
            con.execute(psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(schema)))
