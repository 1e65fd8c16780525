"""Opening a Transcript Lens database.

Every analytics function takes a DuckDB connection or a path; `connection()`
turns either into a connection so the same call works from a notebook, the
CLI and a page.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Union

import duckdb

from analytics.policy import Policy, effective
from analytics.policy import apply as apply_policy
from analytics.errors import NotADatabase, OlderSchema
from analytics.stored_code import refuse_stored_code, without_outside_access
from analytics.text_match import register_search_functions
from loaders.catalog import SCHEMA_VERSION, TABLES as LOADER_TABLES

ConOrPath = Union[duckdb.DuckDBPyConnection, str, os.PathLike]


def connect(
    path: str | os.PathLike, *, redact: bool = False, tenants: Iterable[str] | None = None, policy: Policy | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a database read-only, with the session time zone set to UTC, under the
    deployment's policy plus what is asked here (`analytics.policy`): personal data
    masked (`redact`), only some tenants' rows (`tenants`).

    >>> con = connect("demo.duckdb", redact=True, tenants=["acme"])  # doctest: +SKIP
    """
    p = Path(path)
    if p.is_dir():
        con = open_dataset(p)  # a Parquet dataset folder (`--format parquet`)
    elif not p.is_file():
        raise FileNotFoundError(f"no Transcript Lens database at {p}")
    elif not _is_duckdb_file(p):  # (DuckDB would load a scanner for a file of another kind: a SQLite store's)
        raise NotADatabase(f"{p} is not a Transcript Lens database: not a DuckDB file (load a store into one "
                         f"with `transcript-lens load`)")
    else:
        con = _open_read_only(p)
        try:
            without_outside_access(con)
            refuse_stored_code(con, p)
        except BaseException:
            con.close()
            raise
    problem = schema_problem(con, p)
    if problem is not None:
        con.close()
        raise OlderSchema(problem)
    # Timestamps are stored as TIMESTAMPTZ; UTC keeps every reader's output identical.
    con.execute("SET TimeZone = 'UTC'")
    register_search_functions(con)
    _apply(con, effective(_asked(redact, tenants, policy)))
    return con


def schema_problem(con: duckdb.DuckDBPyConnection, where: str | os.PathLike) -> str | None:
    """Why this code cannot read the database on `con` (its `meta` names another schema version:
    columns it reads are missing), in one line; None when it can (or when it names none, as a
    database built by hand).

    >>> schema_problem(duckdb.connect(), "x.duckdb") is None
    True
    """
    try:
        found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    except duckdb.Error:
        return None
    if not found or found[0][0] == SCHEMA_VERSION:
        return None
    return (f"{where} was written under schema {found[0][0]} and this Transcript Lens reads schema {SCHEMA_VERSION}: "
            f"load its source again (transcript-lens load SOURCE --db {where}; an --incremental load of it is a full one)")


#: How long a reader waits for an incremental load that edits the file in place (it holds
#: DuckDB's write lock for the load's one transaction: seconds, in proportion to what changed).
LOCK_WAIT_SECONDS = 60.0


def _open_read_only(p: Path) -> duckdb.DuckDBPyConnection:
    """`loaders.writer.connect_read_only(p)`, waiting while another process holds the file's write
    lock (an in-place incremental load, `loaders.writer`), as SQLite's busy timeout waits.

    >>> _open_read_only(Path("demo.duckdb"))  # doctest: +SKIP
    """
    deadline, pause = time.monotonic() + LOCK_WAIT_SECONDS, 0.02
    while True:
        try:
            from loaders.writer import connect_read_only  # (here: the query layer imports no more of the loader than it reads)

            return connect_read_only(p)
        except duckdb.IOException as exc:
            if "Could not set lock" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _is_duckdb_file(p: Path) -> bool:
    from loaders.writer import is_duckdb_file

    return is_duckdb_file(p)


def open_dataset(folder: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose views are the tables of the dataset's current version
    (`loaders.dataset`): every query of the API runs on them as on a database file.

    >>> open_dataset(Path("lens/")).sql("SELECT count(*) FROM messages")  # doctest: +SKIP
    """
    from loaders.dataset import create_views, table_sources

    folder = folder.resolve()
    sources = table_sources(folder)  # (FileNotFoundError when the folder holds no dataset)
    con = duckdb.connect()
    without_outside_access(con, allowed=folder)  # (its views read the folder's Parquet parts, nothing else)
    try:
        create_views(con, sources)
    except duckdb.Error as exc:  # (a part that is no Parquet, or a link out of the folder)
        con.close()
        raise NotADatabase(f"{folder} is not a Transcript Lens dataset this can read: {str(exc).splitlines()[0]}") from None
    return con


@contextmanager
def connection(con_or_path: ConOrPath, policy: Policy | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Yield a connection under the deployment's policy and `policy`; close it afterwards
    only if we opened it. A connection given that reads more than that policy allows (one
    opened with `duckdb.connect`, or with less masking) is not used itself: a cursor of it
    under the policy is, so the caller's connection keeps reading what it read.

    >>> with connection("demo.duckdb") as con:  # doctest: +SKIP
    ...     con.sql("select count(*) from messages")
    """
    if isinstance(con_or_path, duckdb.DuckDBPyConnection):
        register_search_functions(con_or_path)  # (the text questions' SQL names it: `analytics.text_match`)
        held = applied_policy(con_or_path)
        wanted = effective(policy).stricter(held)
        if held.covers(wanted):
            yield con_or_path
            return
        cur = con_or_path.cursor()
        try:
            cur.execute("SET TimeZone = 'UTC'")
            _apply(cur, wanted)
            yield cur
        finally:
            cur.close()
        return
    con = connect(con_or_path, policy=policy)
    try:
        yield con
    finally:
        con.close()


# The policy a connection was opened under, as a one-row temporary table (a connection
# carries no attribute of ours; a cursor of it starts without the table, as it starts
# without the views).
_POLICY_TABLE = "tl_policy"


def _asked(redact: bool, tenants: Iterable[str] | None, policy: Policy | None) -> Policy:
    asked = Policy(redact=redact, tenants=None if tenants is None else frozenset(tenants))
    return asked.stricter(policy)


def _apply(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    if policy.is_open:
        return
    apply_policy(con, policy)
    if policy.redact:
        from analytics.masking import blind_search

        blind_search(con)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {_POLICY_TABLE} AS SELECT ?::BOOLEAN AS redact, ?::VARCHAR[] AS tenants",
        [policy.redact, None if policy.tenants is None else sorted(policy.tenants)],
    ).fetchall()


def applied_policy(con: duckdb.DuckDBPyConnection) -> Policy:
    """The policy `con` reads under (an open one for a connection not opened here; the
    redaction config is not recorded).

    >>> applied_policy(duckdb.connect()).is_open
    True
    """
    rows = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp' AND table_name = ?", [_POLICY_TABLE]
    ).fetchall()
    if not rows[0][0]:
        return Policy()
    redact, tenants = con.execute(f"SELECT redact, tenants FROM temp.main.{_POLICY_TABLE}").fetchall()[0]
    return Policy(bool(redact), None if tenants is None else frozenset(tenants))


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
        "AND table_name IN (SELECT unnest(?)) "
        # (a Parquet dataset's tables are views: `open_dataset`)
        "UNION ALL SELECT view_name, comment FROM duckdb_views() "
        "WHERE database_name = current_database() AND schema_name = current_schema() "
        "AND view_name IN (SELECT unnest(?))",
        [list(names), list(names)],
    ).fetchall()
    return dict(rows)


def query_fingerprint(label: str, sql: str, params: list) -> str:
    """`label sha256:<digest of the query and its parameters>`: the comment a derived
    table carries, so a table written by another definition is never read.

    >>> query_fingerprint("t", "SELECT 1", []).startswith("t sha256:")
    True
    """
    return f"{label} sha256:" + hashlib.sha256(repr((sql, params)).encode()).hexdigest()[:32]


def write_derived_table(
    con: duckdb.DuckDBPyConnection, table: str, sql: str, params: list, fingerprint: str, threads: list[str] | None = None
) -> None:
    """(Re)create `table` as the result of `sql` and label it with `fingerprint`.

    The loader calls this on the database it writes; the session time zone is UTC,
    as `connect` sets it for readers. `table` and `fingerprint` are our own text
    (a name and hex digits), never data: COMMENT takes no parameter.

    `threads` (an incremental load): only these threads' rows are replaced, by
    `sql` run where the loader's tables show only them (`analytics.derived.only_threads`),
    when `table` was written by the same query; else it is rebuilt whole.

    >>> write_derived_table(con, "t", "SELECT 1 AS x", [], "t sha256:00")  # doctest: +SKIP
    """
    con.execute("SET TimeZone = 'UTC'")
    if threads is not None and table_comments(con, [table]).get(table) == fingerprint:
        con.execute(f"DELETE FROM {table} WHERE thread_id IN (SELECT unnest(?))", [threads])
        with only_threads(con, threads):
            con.execute(f"INSERT INTO {table} SELECT * FROM ({sql})", params)
        return
    with every_thread(con):
        con.execute(f"CREATE OR REPLACE TABLE {table} AS {sql}", params)
    con.execute(f"COMMENT ON TABLE {table} IS '{fingerprint}'")



# The loader's tables that hold rows of threads (every one with a thread_id column).
_THREAD_TABLES = tuple(t.name for t in LOADER_TABLES if "thread_id" in t.names)
_CHANGED = "tl_changed_threads"


# id(connection) -> the threads its `only_threads` block shows, while one is open.
_NARROWED: dict[int, tuple[str, ...]] = {}


@contextmanager
def only_threads(con: duckdb.DuckDBPyConnection, threads: list[str]) -> Iterator[None]:
    """On `con`, the loader's tables show only `threads` until the block ends.

    Temporary views of the same names come first in DuckDB's name lookup, so a
    derived table's query runs unchanged over them (every derived row is a function
    of one thread's rows); the real tables stay reachable by qualified names. A block
    inside one of the same threads shares its views (`analytics.derived` opens one
    for every derived table: ~7 ms a table for the views alone).

    >>> with only_threads(con, ["acme:web:s1"]):  # doctest: +SKIP
    ...     con.sql("SELECT count(DISTINCT thread_id) FROM messages")  # 1
    """
    shown = tuple(threads)
    if id(con) in _NARROWED:
        if _NARROWED[id(con)] != shown:
            raise RuntimeError("only_threads inside only_threads of other threads")
        yield
        return
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_CHANGED} AS SELECT unnest(?::VARCHAR[]) AS thread_id", [threads])
    _NARROWED[id(con)] = shown
    try:
        _narrow(con)
        yield
    finally:
        del _NARROWED[id(con)]
        _widen(con)
        con.execute(f"DROP TABLE IF EXISTS temp.main.{_CHANGED}")


@contextmanager
def every_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Inside `only_threads`: the real tables again until the block ends (a derived table
    rebuilt whole); elsewhere nothing."""
    if id(con) not in _NARROWED:
        yield
        return
    _widen(con)
    try:
        yield
    finally:
        _narrow(con)


def _narrow(con: duckdb.DuckDBPyConnection) -> None:
    (database,) = con.execute("SELECT current_database()").fetchone()
    for name in _THREAD_TABLES:
        # (names from the catalogue, never data; a view takes no parameters)
        con.execute(
            f'CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM "{database}".main.{name} '
            f"WHERE thread_id IN (SELECT thread_id FROM temp.main.{_CHANGED})"
        )


def _widen(con: duckdb.DuckDBPyConnection) -> None:
    for name in _THREAD_TABLES:
        con.execute(f"DROP VIEW IF EXISTS temp.main.{name}")
