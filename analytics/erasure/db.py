"""What an erasure removes from a loaded DuckDB database, and how, without leaving a trace in the file.

Every table of the catalogue that has a `thread_id` column holds rows of a thread
(the loader's tables and the derived ones alike: `thread_tables`); `loads` and `meta`
name threads in their values and are copied scrubbed (`analytics.erasure.scrub`). A tombstone names
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

from analytics.catalog import ALL_TABLES, TOPICS
from analytics.erasure.scrub import TABLES as scrubbed_tables, copy_scrubbed, register as register_scrub
from loaders.writer import connect_read_only, remove_stale_temps

KINDS = ("thread", "tenant", "session")
#: The `threads` column a tombstone of each kind matches.
_COLUMN = {"thread": "thread_id", "tenant": "tenant_id", "session": "session_id"}
#: The temp table holding the ids of an erasure's threads.
_IDS = "erased_thread_ids"


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


def load_ids(con: duckdb.DuckDBPyConnection, thread_ids: list[str]) -> str:
    """The thread ids as a temp table of `con` (one column, `thread_id`); its name. Every
    statement then joins against it: set-based, linear in rows + ids (a list literal tested
    per row costs rows x ids)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_IDS} (thread_id VARCHAR)")
    con.execute(f"INSERT INTO {_IDS} SELECT DISTINCT unnest(?::VARCHAR[])", [thread_ids])
    return _IDS


def delete_threads(con: duckdb.DuckDBPyConnection, thread_ids: list[str]) -> dict[str, int]:
    """Delete the threads' rows from every thread table on `con`, in one transaction: one
    DELETE per table, against a temp table of the ids; {table: rows deleted} for the tables
    that had some (the staged database of a load)."""
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
        ids = load_ids(con, thread_ids)
        for table in thread_tables():
            if table in present:
                (n,) = con.execute(
                    f"DELETE FROM {table} WHERE thread_id IN (SELECT thread_id FROM {ids})").fetchone()
                if n:
                    removed[table] = n
        con.execute(f"DROP TABLE {ids}")
        if own:
            con.execute("COMMIT")
    except BaseException:
        if own:
            con.execute("ROLLBACK")
        raise
    return removed


def kept_rows(relation: str, ids: str, carries: bool = True) -> str:
    """The query of `relation`'s rows an erasure keeps: one anti-join against the ids' table
    (rows without a thread id are kept); every row of a table without thread rows.

    >>> kept_rows("src.main.messages", "erased_thread_ids")
    'SELECT src_rows.* FROM src.main.messages AS src_rows ANTI JOIN erased_thread_ids USING (thread_id)'
    """
    anti = f" ANTI JOIN {ids} USING (thread_id)" if carries else ""
    return f"SELECT src_rows.* FROM {relation} AS src_rows{anti}"


def rewrite_without(db: str | os.PathLike, thread_ids: list[str]) -> dict[str, int]:
    """Write the database at `db` again without the threads' rows and rename it into place;
    {table: rows removed}. With no thread ids, a compacted copy: rows a load deleted (a
    tombstoned thread it held back) leave the file too. The caller holds `database_lock`."""
    db = Path(db)
    remove_stale_temps(db)  # a killed load's or erasure's half-written copy holds the rows too
    tmp = db.with_name(f"{db.name}.tmp-{os.getpid()}-erase")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect()
    removed: dict[str, int] = {}
    try:
        if thread_ids:
            register_scrub(con, thread_ids)
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        con.execute("ATTACH ? AS dst", [str(tmp)])
        con.execute("COPY FROM DATABASE src TO dst (SCHEMA)")
        carries = set(thread_tables())
        ids = load_ids(con, thread_ids)
        present = _present(con, "src")
        retopic = bool(thread_ids) and TOPICS.name in present
        for table in sorted(present):
            if retopic and table == TOPICS.name:
                continue  # (computed again below: it names typical threads and holds words of every question)
            if thread_ids and table in scrubbed_tables:
                copied = copy_scrubbed(con, table, thread_ids)  # (they name threads without a thread_id column)
            else:
                (copied,) = con.execute(f'INSERT INTO dst.main."{table}" '
                                        + kept_rows(f'src.main."{table}"', ids, table in carries)).fetchone()
            (total,) = con.execute(f'SELECT count(*) FROM src.main."{table}"').fetchone()
            if total - copied:
                removed[table] = total - copied
        if retopic:
            _retopic(con)
        con.execute("CHECKPOINT dst")
        con.execute("DETACH dst")
        con.execute("DETACH src")
        con.close()
        os.replace(tmp, db)
        # The old file's log was read into the copy (ATTACH replays it); left, it would be replayed
        # onto the new file. No writer runs: the caller holds the lock.
        Path(f"{db}.wal").unlink(missing_ok=True)
    finally:
        con.close()
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
    return removed


def _retopic(con: duckdb.DuckDBPyConnection) -> None:
    """Compute the store's topics again in the copy attached as `dst`, into its empty `topics`
    table: never copied, so no page of the new file ever held an erased thread's id or words."""
    from analytics.topic_mining.materialize import materialize_topics  # (only an erasure needs it)

    con.execute("USE dst")
    try:
        materialize_topics(con)
    finally:
        con.execute("USE memory")


def rewrite_dataset(folder: str | os.PathLike, thread_ids: list[str]) -> dict[str, int]:
    """Erase the threads from the Parquet dataset at `folder` (`loaders.dataset`): its working
    database (`.lens.duckdb`, what every version is exported from) is rewritten without them,
    exported as a new current version, and every other version is removed (a version is
    immutable: the only way its files stop holding the text is to go). {table: rows removed}.
    The caller holds `database_lock(folder)`."""
    from loaders import dataset

    folder = Path(folder)
    work = folder / dataset.WORK_DB
    if not work.is_file():
        raise FileNotFoundError(f"the dataset {folder} has no working database {dataset.WORK_DB}: "
                                "load it again (--format parquet) before erasing")
    removed = rewrite_without(work, thread_ids)
    load_id = dataset.version_load_id(folder) if dataset.is_dataset(folder) else None
    con = connect_read_only(work)
    try:
        dataset.write_version(con, folder, load_id=load_id, keep=0)
    finally:
        con.close()
    for leftover in folder.glob(f"{dataset.CURRENT}.tmp-*"):  # a killed commit's pointer (names a version)
        leftover.unlink(missing_ok=True)
    return removed
