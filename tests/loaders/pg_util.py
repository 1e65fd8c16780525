"""Helpers for the Postgres source tests: throwaway databases, real savers, real exports.

Every database is created fresh (`tl_<random>`) on the server of
`TL_PG_ADMIN_DSN` (default: the local test server) and dropped afterwards. It
uses an ICU `en-US` collation on purpose: there `ORDER BY thread_id` is not
Python's string order, so a reader that forgets `COLLATE "C"` fails the tests.

Example:
    with fresh_database() as dsn, saver_for(dsn) as saver:
        run_scenarios(saver, ["simple_chat"])
        export_csv(dsn, tmp_path / "csv")
"""

from __future__ import annotations

import os
import secrets
import subprocess
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import duckdb
import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from psycopg import sql
from psycopg.rows import dict_row

from storegen import DEFAULT_START, DEFAULT_THREADS, Clock, deterministic, run_scenarios
from storegen.build import SPACING
from tests import oracle

ADMIN_DSN = os.environ.get("TL_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
DATA_TABLES = ("threads", "checkpoints", "messages", "message_versions", "message_events")


def dsn_for(database: str, base: str = ADMIN_DSN) -> str:
    """`base` with its database name replaced."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


def require_server() -> None:
    """Fail (not skip) when the test server is down: these tests are part of the suite."""
    try:
        psycopg.connect(ADMIN_DSN, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL not reachable at {ADMIN_DSN} ({exc}); run scripts/test-services.sh")


@contextmanager
def fresh_database(prefix: str = "tl_") -> Iterator[str]:
    """Create an empty database (ICU en-US collation), yield its DSN, drop it."""
    require_server()
    name = f"{prefix}{secrets.token_hex(5)}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as con:
        con.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
            .format(sql.Identifier(name))
        )
    try:
        yield dsn_for(name)
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as con:
            con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def saver_for(dsn: str, schema: str | None = None) -> Iterator[PostgresSaver]:
    """A `PostgresSaver` (tables set up) writing into `schema` (default public)."""
    if schema is not None:
        with psycopg.connect(dsn, autocommit=True) as con:
            con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        dsn = with_search_path(dsn, schema)
    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        yield saver


def with_search_path(dsn: str, schema: str) -> str:
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}options=-csearch_path%3D{schema}"


@contextmanager
def oracle_saver(dsn: str) -> Iterator[PostgresSaver]:
    """A strict-decoding `PostgresSaver` for `tests.oracle` (reads only)."""
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as con:
        yield PostgresSaver(con, serde=oracle.strict_serde())


def echo_graph(checkpointer):
    """A one-node chat graph: replies `echo: <last message>`."""

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].content}")]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    return g.compile(checkpointer=checkpointer)


# Text that every escape layer meets: COPY text (\t \n \r \\ \N), CSV (" , newline), JSON (\\ \").
AWKWARD_TEXT = 'tab\there, "quoted", comma; new\nline, cr\r, back\\slash, \\N, \\x41, ✓ Ärger 😀'
# Ordered differently by Python (code points) and by an ICU collation. No two differ only by
# case or accents: the MySQL savers' keys compare under utf8mb4_general_ci, where such ids are
# one thread (the saver itself then continues one thread with the other's input).
AWKWARD_THREADS = ("a:b:Zed", "a:b:alpha", "a:b:Ärger", "a:b:_x", "a:b:Beta", 'odd:\t"sub",:new\nline\\')


def write_awkward_threads(saver) -> list[str]:
    """Threads whose ids, content and metadata need every escape; returns their ids.

    Deterministic (seeded ids, frozen clock, after `write_scenarios`' threads), so
    two savers written by it hold the same rows."""
    graph = echo_graph(saver)
    start = DEFAULT_START + len(DEFAULT_THREADS) * SPACING
    for i, tid in enumerate(AWKWARD_THREADS):
        cfg = {"configurable": {"thread_id": tid, "user_id": AWKWARD_TEXT}}
        with deterministic(f"awkward:{tid}"), Clock(start + i * SPACING) as clock:
            graph.invoke({"messages": [HumanMessage(content=f"{AWKWARD_TEXT} #{i}", id=f"awk-{i}")]}, cfg)
            clock.advance(seconds=30)
            graph.invoke({"messages": [HumanMessage(content=["block", {"type": "text", "text": AWKWARD_TEXT}])]}, cfg)
    return list(AWKWARD_THREADS)


def write_scenarios(saver) -> dict[str, str]:
    """storegen's default threads minus `second_process`, each at the time `run_scenarios` gives it.

    `second_process` starts a second Python process (seconds of imports) and
    only re-tests LangGraph, so it is left out; every other thread is written
    exactly as in a full `run_scenarios` run, so two savers hold the same rows.
    """
    manifest = {}
    for i, (tid, scenario) in enumerate(DEFAULT_THREADS.items()):
        if scenario != "second_process":
            manifest.update(run_scenarios(saver, threads={tid: scenario}, start=DEFAULT_START + i * SPACING))
    return manifest


def psql(dsn: str, command: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", command], check=True, capture_output=True)


def export_csv(dsn: str, folder: Path, schema: str = "public", tables: tuple[str, ...] = TABLES) -> Path:
    """`\\copy <schema>.<t> TO '<folder>/<t>.csv' CSV HEADER` for each table, as an operator would."""
    folder.mkdir(parents=True, exist_ok=True)
    for t in tables:
        psql(dsn, f"\\copy \"{schema}\".{t} TO '{folder / (t + '.csv')}' CSV HEADER")
    return folder


def zip_folder(folder: Path, target: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.iterdir()):
            zf.write(p, prefix + p.name)
    return target


def pg_dump(dsn: str, target: Path, *args: str) -> Path:
    """`pg_dump --data-only [args] -f target dsn` (plain unless `-Fc` is passed)."""
    subprocess.run(["pg_dump", "--data-only", *args, "-f", str(target), dsn], check=True, capture_output=True)
    return target


def table_rows(db: str | os.PathLike, table: str, exclude: tuple[str, ...] = ()) -> list[tuple]:
    """Every row of a DuckDB table, in a stable order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'").fetchall()
        cols = "* EXCLUDE (" + ", ".join(exclude) + ")" if exclude else "*"
        return con.execute(f"SELECT {cols} FROM {table} ORDER BY ALL").fetchall()
    finally:
        con.close()
