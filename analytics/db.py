"""Opening a Transcript Lens database.

Every analytics function takes a DuckDB connection or a path; `connection()`
turns either into a connection so the same call works from a notebook, the
CLI and a page.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Union

import duckdb

ConOrPath = Union[duckdb.DuckDBPyConnection, str, os.PathLike]


def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open a database read-only, with the session time zone set to UTC.

    >>> con = connect("demo.duckdb")  # doctest: +SKIP
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no Transcript Lens database at {p}")
    con = duckdb.connect(str(p), read_only=True)
    # Timestamps are stored as TIMESTAMPTZ; UTC keeps every reader's output identical.
    con.execute("SET TimeZone = 'UTC'")
    return con


@contextmanager
def connection(con_or_path: ConOrPath) -> Iterator[duckdb.DuckDBPyConnection]:
    """Yield a connection; close it afterwards only if we opened it.

    >>> with connection("demo.duckdb") as con:  # doctest: +SKIP
    ...     con.sql("select count(*) from messages")
    """
    if isinstance(con_or_path, duckdb.DuckDBPyConnection):
        yield con_or_path
        return
    con = connect(con_or_path)
    try:
        yield con
    finally:
        con.close()


def table_comments(con: duckdb.DuckDBPyConnection, names: list[str]) -> dict[str, str | None]:
    """{table: its comment} for those of `names` that exist in `con`'s database.

    The loader's derived tables carry the fingerprint of the query that wrote
    them as their comment; readers compare it before trusting a table.

    >>> table_comments(con, ["conversation_metrics"])  # doctest: +SKIP
    {'conversation_metrics': 'conversations_sql sha256:…'}
    """
    rows = con.execute(
        "SELECT table_name, comment FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = current_schema() "
        "AND table_name IN (SELECT unnest(?))",
        [list(names)],
    ).fetchall()
    return dict(rows)


def query_fingerprint(label: str, sql: str, params: list) -> str:
    """`label sha256:<digest of the query and its parameters>`: the comment a derived
    table carries, so a table written by another definition is never read.

    >>> query_fingerprint("t", "SELECT 1", []).startswith("t sha256:")
    True
    """
    return f"{label} sha256:" + hashlib.sha256(repr((sql, params)).encode()).hexdigest()[:32]


def write_derived_table(con: duckdb.DuckDBPyConnection, table: str, sql: str, params: list, fingerprint: str) -> None:
    """(Re)create `table` as the result of `sql` and label it with `fingerprint`.

    The loader calls this on its staged database; the session time zone is UTC,
    as `connect` sets it for readers. `table` and `fingerprint` are our own text
    (a name and hex digits), never data: COMMENT takes no parameter.

    >>> write_derived_table(con, "t", "SELECT 1 AS x", [], "t sha256:00")  # doctest: +SKIP
    """
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE OR REPLACE TABLE {table} AS {sql}", params)
    con.execute(f"COMMENT ON TABLE {table} IS '{fingerprint}'")

