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
from urllib.parse import urlsplit, urlunsplit

import duckdb
import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import sql
from psycopg.rows import dict_row

from loaders.catalog import DATA_TABLES  # noqa: F401  (the tables a test compares)
from loaders.conformance.graphs import AWKWARD_TEXT, echo_graph, write_awkward_threads, write_scenarios  # noqa: F401
from tests import oracle

ADMIN_DSN = os.environ.get("TL_PG_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


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
