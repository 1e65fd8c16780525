"""Two loads' tables compared, row for row: what the conformance checks hold a kind's load to.

    >>> TABLE_ORDER[0]
    ('messages', 'thread_id, ordinal')
"""

from __future__ import annotations

import json
import os
from typing import Any

import duckdb

from loaders.writer import connect_read_only


# Every data table with an order that makes its rows comparable between two loads.
TABLE_ORDER = [
    ("messages", "thread_id, ordinal"),
    ("checkpoints", "thread_id, checkpoint_ns, checkpoint_id"),
    ("message_versions", "thread_id, version"),
    ("message_events", "thread_id, checkpoint_id, event, position"),
    ("threads", "thread_id"),
    ("subgraph_messages", "thread_id, checkpoint_ns, ordinal"),
]


def query(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    """A query's rows on an open connection (`open_read_only`), each a dict by column."""
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def open_read_only(db: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """A read-only connection to `db`, times in UTC."""
    con = connect_read_only(db)
    con.execute("SET TimeZone = 'UTC'").fetchall()
    return con


def rows(db: str | os.PathLike, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    """A query's rows from a DuckDB database (read-only, times in UTC), each a dict by column."""
    con = open_read_only(db)
    try:
        return query(con, sql, params)
    finally:
        con.close()


def assert_same_tables(
    a: str | os.PathLike, b: str | os.PathLike, with_errors: bool = False, json_columns: tuple[str, ...] = ()
) -> None:
    """Every data table (and `load_errors`, without its load id) holds the same rows in both databases.

    `json_columns` are compared as parsed JSON (Postgres' JSONB keeps object keys in another order).
    Each database is opened once for all its tables (a DuckDB connection costs more than reading
    a small table)."""
    queries = [(t, f"SELECT * FROM {t} ORDER BY {order}") for t, order in TABLE_ORDER]
    if with_errors:
        queries.append(("load_errors", "SELECT * EXCLUDE (load_id) FROM load_errors ORDER BY ALL"))

    def parsed(con, sql):
        return [{k: json.loads(v) if k in json_columns and v is not None else v for k, v in r.items()} for r in query(con, sql)]

    con_a, con_b = open_read_only(a), open_read_only(b)
    try:
        for table, sql in queries:
            assert parsed(con_a, sql) == parsed(con_b, sql), table
    finally:
        con_a.close()
        con_b.close()
