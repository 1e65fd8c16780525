"""Crafted and damaged Postgres stores: oversized keys, collations that are not
byte order, rows out of key order, and the schema a DSN's search_path names.

One database (ICU `en-US` collation, `pg_util.fresh_database`) written by a real
`PostgresSaver`; the damage is raw SQL on copies of its tables in other schemas, so
`public` stays the clean reference.
"""

from __future__ import annotations

import secrets
from types import SimpleNamespace
from urllib.parse import urlsplit

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from psycopg import sql

from loaders import PostgresOptions, SourceError
from loaders.pg_rows import CheckpointRow, assemble
from loaders.postgres_reader import PostgresReader
from loaders import records
from loaders.records import KEY_MAX_BYTES
from storegen import DEFAULT_START, Clock, deterministic
from storegen.build import SPACING
from tests.loaders.conformance import force_split
from tests.loaders.pg_util import (
    ADMIN_DSN, DATA_TABLES, dsn_for, echo_graph, export_csv, fresh_database, pg_dump, require_server, saver_for,
    table_rows, with_search_path,
)
from tests.loaders.util import load_db, rows

# Ordered one way by ICU en-US (and most locales), another by code points.
ORDER_THREADS = ("a-b", "a_b", "A", "a", "é", "e", "ab", "a b", "Z", "b")
AGENT_THREADS = ("agents:only:1", "agents:only:2")
HUGE = 100_000


def write_threads(saver, ids) -> None:
    """Two turns per thread through a one-node graph, deterministically (seeded ids, frozen clock)."""
    graph = echo_graph(saver)
    for i, tid in enumerate(ids):
        cfg = {"configurable": {"thread_id": tid}}
        with deterministic(f"damage:{tid}"), Clock(DEFAULT_START + i * SPACING) as clock:
            graph.invoke({"messages": [HumanMessage(content=f"hello {tid}", id=f"h-{i}")]}, cfg)
            clock.advance(seconds=30)
            graph.invoke({"messages": [HumanMessage(content=f"again {tid}", id=f"h2-{i}")]}, cfg)


def copy_schema(con: psycopg.Connection, schema: str, *, keys: bool = True) -> None:
    """`public`'s three tables copied into `schema` (with their primary keys, or without)."""
    con.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        target, source = sql.Identifier(schema, table), sql.Identifier("public", table)
        if keys:
            con.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(target, source))
            con.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(target, source))
        else:
            con.execute(sql.SQL("CREATE TABLE {} AS SELECT * FROM {}").format(target, source))


# Rows with keys over the limit: a whole thread under a 100 kB id (checkpoints and blobs),
# and on thread 'a' one checkpoint and one blob in a 5 kB namespace and one interrupt
# write with a 5 kB task id.
_OVERSIZED = f"""
INSERT INTO big.checkpoints SELECT repeat('x', {HUGE}), checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
  FROM public.checkpoints WHERE thread_id = 'b';
INSERT INTO big.checkpoint_blobs SELECT repeat('x', {HUGE}), checkpoint_ns, channel, version, type, blob
  FROM public.checkpoint_blobs WHERE thread_id = 'b';
INSERT INTO big.checkpoints SELECT thread_id, repeat('n', 5000), checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
  FROM public.checkpoints WHERE thread_id = 'a' ORDER BY checkpoint_id LIMIT 1;
INSERT INTO big.checkpoint_blobs SELECT thread_id, repeat('n', 5000), channel, version, type, blob
  FROM public.checkpoint_blobs WHERE thread_id = 'a' AND channel = 'messages' ORDER BY version LIMIT 1;
INSERT INTO big.checkpoint_writes SELECT thread_id, checkpoint_ns, checkpoint_id, repeat('t', 5000), idx, '__interrupt__', type, blob
  FROM public.checkpoint_writes WHERE thread_id = 'a' ORDER BY checkpoint_id, task_id, idx LIMIT 1;
"""


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            write_threads(saver, ORDER_THREADS)
        with saver_for(dsn, schema="agents") as saver:  # the saver's connection carries search_path=agents
            write_threads(saver, AGENT_THREADS)
        with psycopg.connect(dsn, autocommit=True) as con:
            copy_schema(con, "big")
            con.execute(_OVERSIZED)
            copy_schema(con, "nopk", keys=False)
            # A table without its primary key can hold a checkpoint twice.
            con.execute("INSERT INTO nopk.checkpoints SELECT * FROM public.checkpoints WHERE thread_id = 'e' "
                        "ORDER BY checkpoint_id DESC LIMIT 1")
        out = tmp_path_factory.mktemp("pg_damage")
        clean = out / "clean.duckdb"
        load_db(dsn, clean)
        yield SimpleNamespace(dsn=dsn, out=out, clean=clean)


def _errors(db) -> list[tuple]:
    return table_rows(db, "load_errors", exclude=("load_id",))


def _same_tables(db, reference) -> None:
    for table in DATA_TABLES:
        assert table_rows(db, table) == table_rows(reference, table), table


# --- oversized keys ------------------------------------------------------------------


def _limit(column: str, first: str, size: int, n: int, table: str) -> str:
    return (f"{column} {first * 32!r}… is {size} bytes long, over the {KEY_MAX_BYTES}-byte limit for a key: "
            f"{n} {table} row{'s' if n != 1 else ''} skipped")


def test_rows_with_oversized_keys_are_reported_and_the_rest_loads(pg, tmp_path):
    db = tmp_path / "big.duckdb"
    summary = load_db(pg.dsn, db, options=PostgresOptions(schema="big"))
    with psycopg.connect(pg.dsn) as con:
        b_rows = con.execute("SELECT count(*) FROM public.checkpoints WHERE thread_id = 'b'").fetchone()[0]
        b_blobs = con.execute("SELECT count(*) FROM public.checkpoint_blobs WHERE thread_id = 'b' AND channel = 'messages'").fetchone()[0]
    assert sorted(_errors(db), key=str) == sorted([
        (None, None, None, "checkpoint", _limit("thread_id", "x", HUGE, b_rows, "checkpoints")),
        (None, None, None, "messages", _limit("thread_id", "x", HUGE, b_blobs, "checkpoint_blobs")),
        ("a", None, None, "checkpoint", _limit("checkpoint_ns", "n", 5000, 1, "checkpoints")),
        ("a", None, None, "messages", _limit("checkpoint_ns", "n", 5000, 1, "checkpoint_blobs")),
        ("a", None, None, "write", _limit("task_id", "t", 5000, 1, "checkpoint_writes")),
    ], key=str)
    assert summary.errors == 5
    _same_tables(db, pg.clean)  # every other row loads, and nothing of the oversized ones


@pytest.mark.parametrize("way", ["csv", "dump"])
def test_exports_report_oversized_keys_as_the_live_database_does(way, pg, tmp_path):
    live = tmp_path / "live.duckdb"
    load_db(pg.dsn, live, options=PostgresOptions(schema="big"))
    if way == "csv":
        source = export_csv(pg.dsn, tmp_path / "csv", schema="big", tables=("checkpoints", "checkpoint_blobs", "checkpoint_writes"))
    else:
        source = pg_dump(pg.dsn, tmp_path / "big.sql", "-n", "big")
    db = tmp_path / f"{way}.duckdb"
    load_db(source, db)
    assert _errors(db) == _errors(live)
    _same_tables(db, pg.clean)


def test_a_split_load_reports_each_oversized_key_once(pg, tmp_path, monkeypatch):
    force_split(monkeypatch, PostgresReader)
    db = tmp_path / "split.duckdb"
    load_db(pg.dsn, db, options=PostgresOptions(schema="big"), workers=2)
    single = tmp_path / "single.duckdb"
    load_db(pg.dsn, single, options=PostgresOptions(schema="big"), workers=1)
    assert _errors(db) == _errors(single) and len(_errors(db)) == 5
    _same_tables(db, pg.clean)


def test_an_incremental_load_leaves_oversized_keys_out_of_the_comparison(pg, tmp_path):
    db = tmp_path / "inc.duckdb"
    load_db(pg.dsn, db, options=PostgresOptions(schema="big"))
    before = _errors(db)
    # The oversized rows make no thread look changed (they are not among the keys compared).
    again = load_db(pg.dsn, db, options=PostgresOptions(schema="big"), incremental=True)
    assert again.mode == "incremental" and again.threads == len(ORDER_THREADS) and again.errors == 0
    assert _errors(db) == before
    _same_tables(db, pg.clean)


# --- order ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def c_collation_db():
    """The same threads in a database whose default collation is C (byte order)."""
    require_server()
    name = f"tl_c_{secrets.token_hex(5)}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        con.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'").format(sql.Identifier(name)))
    try:
        dsn = dsn_for(name)
        with saver_for(dsn) as saver:
            write_threads(saver, ORDER_THREADS)
        yield dsn
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as con:
            con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_locale_collation_loads_the_same_tables_as_byte_order(pg, c_collation_db, tmp_path, monkeypatch):
    with psycopg.connect(pg.dsn) as con:
        locale_order = [t for (t,) in con.execute("SELECT DISTINCT thread_id FROM public.checkpoints ORDER BY 1")]
    assert locale_order != sorted(locale_order)  # the database really orders otherwise
    c_db = tmp_path / "c.duckdb"
    load_db(c_collation_db, c_db)
    assert sorted(r["thread_id"] for r in rows(c_db, "SELECT thread_id FROM threads")) == sorted(ORDER_THREADS)
    _same_tables(pg.clean, c_db)
    force_split(monkeypatch, PostgresReader)  # workers read ranges bounded by thread ids
    split = tmp_path / "split.duckdb"
    load_db(pg.dsn, split, workers=2)
    _same_tables(split, c_db)


def test_a_checkpoint_stored_twice_is_reported_once_and_loaded_once(pg, tmp_path):
    db = tmp_path / "nopk.duckdb"
    load_db(pg.dsn, db, options=PostgresOptions(schema="nopk"))
    (error,) = _errors(db)
    assert error[:2] == ("e", "") and error[3] == "checkpoint"
    assert error[4].startswith("a second checkpoints row with the same key")
    _same_tables(db, pg.clean)


def _cp(thread_id: str, cid: str) -> CheckpointRow:
    return CheckpointRow(thread_id, "", cid, None, "2025-01-01T00:00:00+00:00", None, None, "{}")


def test_a_thread_met_again_after_its_rows_ended_fails_the_source():
    with pytest.raises(SourceError, match="db: checkpoints rows are not ordered by thread id"):
        list(assemble([_cp("a", "1"), _cp("b", "1"), _cp("a", "2")], [], [], "db"))
    with pytest.raises(SourceError, match="checkpoints rows of thread 'a' are not ordered by their key"):
        list(assemble([_cp("a", "2"), _cp("a", "1")], [], [], "db"))


# --- the DSN's search_path -----------------------------------------------------------


def _keyword(dsn: str, schema: str) -> str:
    parts = urlsplit(dsn)
    return f"host={parts.hostname} port={parts.port} dbname={parts.path[1:]} user={parts.username} options='-csearch_path={schema}'"


@pytest.mark.parametrize("form", ["url", "keyword"])
def test_a_dsn_naming_a_search_path_is_read_there(form, pg, tmp_path):
    dsn = with_search_path(pg.dsn, "agents") if form == "url" else _keyword(pg.dsn, "agents")
    db = tmp_path / "agents.duckdb"
    summary = load_db(dsn, db)  # (the keyword form is detected as postgres too)
    assert summary.source_kind == "postgres" and summary.source.endswith("(schema agents)")
    assert sorted(r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")) == sorted(AGENT_THREADS)
    # --schema wins over the DSN's search_path.
    public = tmp_path / "public.duckdb"
    load_db(dsn, public, options=PostgresOptions(schema="public"))
    _same_tables(public, pg.clean)


def test_a_flood_of_special_writes_is_bounded_as_from_sqlite(pg, tmp_path, monkeypatch):
    """Special writes are kept bounded as they stream (`records.SpecialWritesTail`, the one
    rule both readers use): the earlier ones of a thread are one error row."""
    monkeypatch.setattr(records, "SPECIAL_WRITES_MAX", 50)
    with psycopg.connect(pg.dsn, autocommit=True) as con:
        copy_schema(con, "flood")
        first = con.execute("SELECT min(checkpoint_id) FROM flood.checkpoints WHERE thread_id = 'a'").fetchone()[0]
        with con.cursor() as cur:
            cur.executemany(
                "INSERT INTO flood.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) "
                "VALUES ('a', '', %s, %s, 0, '__error__', 'msgpack', %s)",
                [(first, f"flood{i:04d}", b"\xa4boom") for i in range(300)])
        before = con.execute("SELECT count(*) FROM public.checkpoint_writes WHERE thread_id = 'a' "
                             "AND channel IN ('__interrupt__', '__resume__', '__error__')").fetchone()[0]
    db = tmp_path / "flood.duckdb"
    load_db(pg.dsn, db, options=PostgresOptions(schema="flood"))
    assert _errors(db) == [("a", None, None, "write", f"{before + 300 - 50} earlier special writes (__interrupt__ / "
                            "__resume__ / __error__) skipped: a thread's last 50 or 64 MiB of them are read")]
    _same_tables(db, pg.clean)
