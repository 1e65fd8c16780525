"""Helpers for loader tests: load a store, read tables back, fingerprint folders."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import loaders
from loaders.conformance.tables import TABLE_ORDER, assert_same_tables, open_read_only, query, rows  # noqa: F401  (the tests' names for them)


@contextmanager
def reading(db: str | os.PathLike) -> Iterator[Callable[..., list[dict[str, Any]]]]:
    """One read-only connection to `db` for many queries: `query(sql, params)` gives rows as `rows`
    does. A DuckDB connection costs more than a query of a small table (tens of ms).

    >>> with reading(db) as query:  # doctest: +SKIP
    ...     query("SELECT count(*) AS n FROM threads")
    """
    con = open_read_only(db)
    try:
        yield lambda sql, params=None: query(con, sql, params)
    finally:
        con.close()


def load_db(source: str | os.PathLike, db: str | os.PathLike, **kw: Any) -> loaders.LoadSummary:
    return loaders.load(str(source), db, **kw)


def folder_fingerprint(folder: str | os.PathLike) -> dict[str, str]:
    """name → sha256 of every file in a folder (side files included)."""
    out = {}
    for p in sorted(Path(folder).iterdir()):
        if p.is_file():
            out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def edited_store(path: str | os.PathLike, copy_to: str | os.PathLike, *statements: tuple[str, list]) -> Path:
    """A copy of an SQLite store (``conftest.copy_store_files``) with SQL `(statement, params)`
    applied, checkpointed into the main file (no ``-wal`` left)."""
    import sqlite3

    from tests.conftest import copy_store_files

    copy = copy_store_files(path, copy_to)
    con = sqlite3.connect(copy)
    for sql, params in statements:
        con.execute(sql, params)
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return copy


def one_node_app(conn, state, node):
    """A real graph of one node (`START → node`) over a real `SqliteSaver` on `conn` (set to
    `synchronous = OFF`, as storegen.open_sqlite_saver: no fsync per commit, the same bytes).

    >>> app = one_node_app(sqlite3.connect(path, check_same_thread=False), MessagesState, node)  # doctest: +SKIP
    """
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, StateGraph

    graph = StateGraph(state)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    conn.execute("PRAGMA synchronous = OFF")
    return graph.compile(checkpointer=SqliteSaver(conn))


def table_snapshot(con, skip: tuple[str, ...] = ("loads", "meta")) -> dict[str, list[tuple]]:
    """Every table's (or a dataset's views') rows, sorted, load ids left out (they count loads,
    not content): what two loads of the same source must agree on, row for row."""
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
        "AND table_schema = 'main' ORDER BY table_name"
    ).fetchall()]
    out = {}
    for t in tables:
        if t in skip:
            continue
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
            "AND table_schema = 'main' AND table_name = ?", [t]
        ).fetchall()]
        exclude = " EXCLUDE (load_id)" if "load_id" in cols else ""
        out[t] = con.execute(f'SELECT *{exclude} FROM "{t}" ORDER BY ALL').fetchall()
    return out


def sigint_default() -> None:
    """`preexec_fn` of a child that a test interrupts with SIGINT (Ctrl-C).

    A process started in the background by a shell inherits SIGINT ignored, and
    Python then installs no KeyboardInterrupt handler: a CI run launched with `&`
    made the Ctrl-C tests' loads carry on. The child gets a terminal's default.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
