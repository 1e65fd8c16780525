"""What an erasure removes from a loaded DuckDB database, and how, without leaving a trace in the file.

Every table of the catalogue that has a `thread_id` column holds rows of a thread
(the loader's tables and the derived ones alike: `thread_tables`). A tombstone names
a thread, a tenant or a session; the threads it covers are looked up in `threads`
(tenant and session are parsed from the thread id at load time).

Deleting rows in DuckDB only marks them deleted: their bytes stay in the file's
blocks until those are rewritten. So an erasure writes a new file holding every row
but the erased ones (`rewrite_without`) and renames it over the database, as a load
does: readers see the old file or the new one, never half of it.

>>> thread_tables()[:3]
('load_errors', 'threads', 'checkpoints')
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import duckdb

from analytics.catalog import ALL_TABLES

KINDS = ("thread", "tenant", "session")
#: The `threads` column a tombstone of each kind matches.
_COLUMN = {"thread": "thread_id", "tenant": "tenant_id", "session": "session_id"}


def thread_tables() -> tuple[str, ...]:
    """The catalogue's tables that hold rows of a thread (a `thread_id` column), in its order."""
    return tuple(t.name for t in ALL_TABLES if "thread_id" in t.names)


def _present(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> set[str]:
    sql = "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
    params: list = []
    if catalog is not None:
        sql += " AND database_name = ?"
        params.append(catalog)
    return {name for (name,) in con.execute(sql, params).fetchall()}


def covered_threads(con: duckdb.DuckDBPyConnection, marks: Iterable[tuple[str, str]],
                    catalog: str | None = None) -> list[str]:
    """The thread ids the (kind, value) marks cover in the database on `con`: a thread mark
    its own id (whether or not the database has it), a tenant or session mark the threads
    of that tenant or session.

    >>> covered_threads(con, [("tenant", "acme")])  # doctest: +SKIP
    ['acme:web:sess-001', 'acme:web:sess-002']
    """
    threads = f"{catalog}.main.threads" if catalog else "threads"
    has_threads = "threads" in _present(con, catalog)
    found: set[str] = set()
    for kind, value in marks:
        if kind == "thread":
            found.add(value)
        elif has_threads:
            column = _COLUMN[kind]  # one of three fixed names, never user text
            found.update(t for (t,) in con.execute(
                f"SELECT thread_id FROM {threads} WHERE {column} = ?", [value]).fetchall())
    return sorted(found)


def delete_threads(con: duckdb.DuckDBPyConnection, thread_ids: list[str]) -> dict[str, int]:
    """Delete the threads' rows from every thread table on `con`, in one transaction;
    {table: rows deleted} for the tables that had some (the staged database of a load)."""
    if not thread_ids:
        return {}
    present = _present(con)
    removed: dict[str, int] = {}
    # Inside the caller's transaction (an incremental load's, in place) the caller commits: two
    # statements there share one transaction id, where each is a transaction of its own otherwise.
    own = con.execute("SELECT txid_current()").fetchone() != con.execute("SELECT txid_current()").fetchone()
    if own:
        con.execute("BEGIN TRANSACTION")
    try:
        for table in thread_tables():
            if table in present:
                (n,) = con.execute(f"DELETE FROM {table} WHERE list_contains(?, thread_id)", [thread_ids]).fetchone()
                if n:
                    removed[table] = n
        if own:
            con.execute("COMMIT")
    except BaseException:
        if own:
            con.execute("ROLLBACK")
        raise
    return removed


def rewrite_without(db: str | os.PathLike, thread_ids: list[str]) -> dict[str, int]:
    """Write the database at `db` again without the threads' rows and rename it into place;
    {table: rows removed}. With no thread ids, a compacted copy: rows a load deleted (a
    tombstoned thread it held back) leave the file too. The caller holds `database_lock`."""
    db = Path(db)
    tmp = db.with_name(f"{db.name}.tmp-{os.getpid()}-erase")  # (a killed erasure's leftover: loaders.writer clears it)
    tmp.unlink(missing_ok=True)
    con = duckdb.connect()
    removed: dict[str, int] = {}
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        con.execute("ATTACH ? AS dst", [str(tmp)])
        con.execute("COPY FROM DATABASE src TO dst (SCHEMA)")
        carries = set(thread_tables())
        for table in sorted(_present(con, "src")):
            keep = "NOT coalesce(list_contains(?, thread_id), false)" if table in carries else "true"
            params = [thread_ids] if table in carries else []
            (copied,) = con.execute(
                f'INSERT INTO dst.main."{table}" SELECT * FROM src.main."{table}" WHERE {keep}', params).fetchone()
            (total,) = con.execute(f'SELECT count(*) FROM src.main."{table}"').fetchone()
            if total - copied:
                removed[table] = total - copied
        con.execute("CHECKPOINT dst")
        con.execute("DETACH dst")
        con.execute("DETACH src")
        con.close()
        os.replace(tmp, db)
    finally:
        con.close()
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return removed
