"""Where a review workspace lives, and opening it: SQLite in WAL mode, migrated on open.

A load replaces the DuckDB database wholesale (`loaders.writer` writes a new file
and renames it over the old one), so what reviewers write lives in a file of its
own beside it, `<db>.workspace.sqlite` (`lens.duckdb` → `lens.duckdb.workspace.sqlite`),
which no load touches: a full or incremental reload, or a load of another source
into the same `--db` path, keeps every annotation, queue and saved view.
`$TRANSCRIPT_LENS_WORKSPACE` (or `--workspace`) names another file instead, e.g.
one workspace for several databases; one named by `--workspace` is recorded in the database's
own workspace when written (`Workspace.record_other`), so an erasure finds it.

Why SQLite in WAL mode and not DuckDB: a workspace is written by several
processes at once — two app servers, the CLI importing an evaluator's labels,
a notebook — in small transactions of a row or two. DuckDB lets one process
open a file for writing and locks every other process out (readers included)
meanwhile; SQLite in WAL mode lets any number of processes read while one
writes, and queues writers on a lock for a few milliseconds each
(`busy_timeout`). It also ships with Python (no extension to install) and keeps
every committed transaction across a crash. Annotations join the loaded
database's rows in DuckDB as bound parameters (`analytics.workspace.resolve`), so
nothing needs the two engines in one query. WAL needs a local filesystem (not
NFS): its readers and writers share memory through the `-shm` file.

>>> ws = Workspace.beside("lens.duckdb")  # doctest: +SKIP
>>> ws.path.name  # doctest: +SKIP
'lens.duckdb.workspace.sqlite'
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from analytics.errors import AnalyticsError
from analytics.workspace.migrations import LATEST, MIGRATIONS, statements

T = TypeVar("T")
ENV = "TRANSCRIPT_LENS_WORKSPACE"
SUFFIX = ".workspace.sqlite"
#: How long a write waits for another process's write to finish before giving up (seconds).
BUSY_SECONDS = 30.0

_BOOTSTRAP = """CREATE TABLE IF NOT EXISTS migrations (
    version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    tool_version TEXT NOT NULL
)"""


class WorkspaceError(AnalyticsError):
    """The workspace cannot be opened or written (one line naming the file and why)."""


class Conflict(WorkspaceError):
    """An edit of something another session changed since it was read."""


def now() -> str:
    """The current time as the workspace stores times: ISO 8601, UTC, microseconds, `Z`.

    >>> len(now()), now().endswith("Z")
    (27, True)
    """
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def workspace_path(db: str | os.PathLike, environ: dict | None = None) -> Path:
    """The workspace of the database at `db`: `$TRANSCRIPT_LENS_WORKSPACE` when set, else beside it.

    >>> workspace_path("/data/lens.duckdb", environ={}).as_posix()
    '/data/lens.duckdb.workspace.sqlite'
    """
    configured = (os.environ if environ is None else environ).get(ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    p = Path(db).expanduser().resolve()
    return p.with_name(p.name + SUFFIX)


class Workspace:
    """One workspace file. Every call opens its own connection (Streamlit's script threads,
    worker processes and the CLI never share one) and closes it.

    `read()` never creates the file: a workspace that does not exist yet reads as a new,
    empty one (the default labels), so looking at a database in a read-only folder works.
    `write()` creates and migrates it on first use.
    """

    def __init__(self, path: str | os.PathLike, beside: str | os.PathLike | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.beside_db = None if beside is None else str(Path(beside).expanduser().resolve())
        self._ready = False
        self._recorded = False

    @classmethod
    def beside(cls, db: str | os.PathLike) -> Workspace:
        """The workspace of the database at `db` (`workspace_path`)."""
        return cls(workspace_path(db), beside=db)

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"

    def exists(self) -> bool:
        return self.path.is_file()

    # --- connections -----------------------------------------------------------------

    def _open(self, path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = FULL")  # a committed annotation survives a power cut, WAL or not
        return conn

    def _connect(self, create: bool) -> sqlite3.Connection:
        if not self.exists() and not create:
            conn = self._open(":memory:")
            _migrate(conn, None, self.beside_db)
            return conn
        try:
            if not self.path.parent.is_dir():
                raise OSError(f"no folder {self.path.parent}")
            conn = self._open(str(self.path))
            if not self._ready:
                _wal_mode(conn)
                _migrate(conn, self.path, self.beside_db)
                self._ready = True
            return conn
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise WorkspaceError(f"the review workspace {self.path} stayed locked by another writer for "
                                     f"{BUSY_SECONDS:.0f} s") from exc
            raise WorkspaceError(f"cannot open the review workspace {self.path}: {exc}") from exc
        except OSError as exc:
            raise WorkspaceError(
                f"cannot create the review workspace {self.path}: {exc.strerror or exc} "
                f"(set {ENV} to a file in a writable folder)"
            ) from exc

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection whose reads see one snapshot (a deferred transaction, rolled back after).

        >>> with ws.read() as conn:  # doctest: +SKIP
        ...     conn.execute("SELECT count(*) FROM annotations").fetchone()
        """
        with closing(self._connect(create=False)) as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            except sqlite3.IntegrityError:
                raise
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from exc
            finally:
                conn.execute("ROLLBACK")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (`BEGIN IMMEDIATE`: writers queue up front instead of failing
        half-way); the workspace's revision goes up with it. Any exception rolls it back. A
        workspace written for a database other than its own (`--workspace FILE`) is first
        recorded in the database's own (`record_other`)."""
        self.record_other()
        with closing(self._connect(create=True)) as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise WorkspaceError(f"the review workspace {self.path} stayed locked by another writer for "
                                     f"{BUSY_SECONDS:.0f} s") from exc
            try:
                yield conn
                conn.execute(
                    "UPDATE workspace SET value = CAST(value AS INTEGER) + 1 WHERE key = 'revision'"
                )
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.IntegrityError):
                    raise  # a constraint the write broke: its caller words it
                raise self._damaged(exc) from exc
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def record_other(self) -> None:
        """When this workspace is written for a database (`beside_db`) whose own workspace
        (`workspace_path`, where its tombstones are) is another file, record this one there
        (`other_workspaces`), before anything is written here: an annotation quotes message text,
        and an erasure of the database purges and scans every workspace recorded for it. When the
        record cannot be written, neither is this workspace (fail closed, as the export log)."""
        if self._recorded or self.beside_db is None:
            return
        own = workspace_path(self.beside_db)
        if own != self.path:
            try:
                with Workspace(own, beside=self.beside_db).write() as conn:
                    conn.execute("INSERT OR IGNORE INTO other_workspaces (path, db, at) VALUES (?, ?, ?)",
                                 (str(self.path), self.beside_db, now()))
            except WorkspaceError as exc:
                raise WorkspaceError(f"cannot write the review workspace {self.path} for {self.beside_db}: its own "
                                     f"workspace, where an erasure finds the others, cannot record it ({exc})") from exc
        self._recorded = True

    def others(self) -> list[Workspace]:
        """The other workspaces recorded in this one as written for its database (`record_other`)
        that exist, each once."""
        if not self.exists() or self.beside_db is None:
            return []
        with self.read() as conn:
            rows = conn.execute("SELECT path FROM other_workspaces WHERE db = ? ORDER BY path",
                                (self.beside_db,)).fetchall()
        found = [Workspace(p, beside=self.beside_db) for (p,) in rows]
        return [w for w in found if w.exists() and w.path != self.path]

    def _damaged(self, exc: sqlite3.DatabaseError) -> WorkspaceError:
        """What SQLite says about the file (damaged, or not the schema its migrations claim), naming it."""
        return WorkspaceError(f"the review workspace {self.path} cannot be used: {exc}")

    # --- facts -----------------------------------------------------------------------

    def revision(self) -> int:
        """A number that changes with every write (0 for a workspace not written yet): a cache key.

        Read without migrating or creating anything: it is asked on every page run.
        """
        if not self.exists():
            return 0
        try:
            with closing(sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, timeout=BUSY_SECONDS)) as conn:
                row = conn.execute("SELECT value FROM workspace WHERE key = 'revision'").fetchone()
        except sqlite3.Error:
            return -1  # not migrated yet (being created right now): the next run asks again
        return int(row[0]) if row else 0

    def info(self) -> dict[str, str | int]:
        """The workspace's identity and version: path, workspace_id, created_at, created_beside, version, revision."""
        with self.read() as conn:
            facts = dict(conn.execute("SELECT key, value FROM workspace").fetchall())
            (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM migrations").fetchone()
        return {"path": str(self.path), **facts, "version": version, "exists": self.exists()}


def as_workspace(ws_or_db: Workspace | str | os.PathLike) -> Workspace:
    """A `Workspace` as given, or the one beside the database at a path (every function that
    takes a workspace takes either).

    >>> as_workspace("/data/lens.duckdb").path.name
    'lens.duckdb.workspace.sqlite'
    """
    return ws_or_db if isinstance(ws_or_db, Workspace) else Workspace.beside(ws_or_db)


def workspace_of(db, workspace=None) -> Workspace:
    """The workspace a call on database `db` uses: `workspace` when given (a `Workspace`, or
    the path of a workspace file), else the one beside `db` (which must then be a path).

    >>> workspace_of("/data/lens.duckdb", "/data/team.sqlite").path.name
    'team.sqlite'
    """
    if workspace is not None:
        if isinstance(workspace, Workspace):
            return workspace
        return Workspace(workspace, beside=db if isinstance(db, (str, os.PathLike)) else None)
    if db is None or not isinstance(db, (str, os.PathLike)):
        from analytics.errors import BadRequest

        raise BadRequest("name the workspace (workspace=…) when the database is given as a connection")
    return Workspace.beside(db)


def report_workspace(con, options) -> Workspace:
    """The workspace of a report written from connection `con`: `options["workspace"]`, else beside
    `options["db"]` (the CLI's), else `$TRANSCRIPT_LENS_WORKSPACE`, else beside the open file.

    >>> report_workspace(con, {"db": "/data/lens.duckdb"}).path.name  # doctest: +SKIP
    'lens.duckdb.workspace.sqlite'
    """
    if options.get("workspace"):  # (written for that database: recorded in its own, `Workspace.record_other`)
        db = options.get("db")
        return Workspace(options["workspace"], beside=db if isinstance(db, (str, os.PathLike)) else None)
    if options.get("db"):
        return Workspace.beside(options["db"])
    if os.environ.get(ENV):
        return Workspace(os.environ[ENV])
    path = database_file(con)
    if not path:
        from analytics.errors import BadRequest

        raise BadRequest("a report of the workspace needs the database's path (options={'db': …}) or a workspace")
    return Workspace.beside(path)


def temp_ids(conn: sqlite3.Connection, table: str, thread_ids) -> None:
    """A temporary table `table` (one `thread_id` column, each id once) of `thread_ids` on `conn`:
    what a workspace query joins the threads it asks about against."""
    conn.execute(f"CREATE TEMP TABLE {table} (thread_id TEXT PRIMARY KEY)")
    conn.executemany(f"INSERT OR IGNORE INTO temp.{table} VALUES (?)", [(t,) for t in thread_ids])


def database_file(con) -> str | None:
    """The file of the database a DuckDB connection reads (None: in memory)."""
    ((path,),) = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return path or None


def takes_workspace(fn: Callable[..., T]) -> Callable[..., T]:
    """Let a function whose first argument is a `Workspace` take a database path instead (`as_workspace`)."""

    @functools.wraps(fn)
    def wrapper(ws, *args, **kwargs):
        return fn(as_workspace(ws), *args, **kwargs)

    return wrapper


def _wal_mode(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode (it stays so). Switching needs the file to itself, and SQLite
    answers "database is locked" at once, without its busy timeout, while another process
    holds it (several processes creating one new workspace at the same moment): so retry,
    for up to `BUSY_SECONDS` like any other wait for the lock."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _version(conn: sqlite3.Connection) -> int:
    has = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone()[0]
    if not has:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM migrations").fetchone()[0]


def _migrate(conn: sqlite3.Connection, path: Path | None, beside: str | None) -> None:
    """Apply the migrations this workspace lacks (see `analytics.workspace.migrations`)."""
    from loaders.version import __version__

    current = _version(conn)
    if current > LATEST:
        raise WorkspaceError(
            f"the review workspace {path} is at schema version {current}; this Transcript Lens "
            f"({__version__}) knows up to {LATEST}: upgrade Transcript Lens to use it"
        )
    if current == LATEST:
        return
    if path is not None and current > 0 and any(not m.adds_only for m in MIGRATIONS if m.version > current):
        _backup(conn, path.with_name(f"{path.name}.v{current}.bak"))
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_BOOTSTRAP)
        current = _version(conn)  # another process may have migrated while we waited for the lock
        if current > LATEST:
            raise WorkspaceError(f"the review workspace {path} is at schema version {current}; upgrade Transcript Lens")
        stamp = now()
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            for sql in statements(migration.sql):
                conn.execute(sql, {"now": stamp} if ":now" in sql else ())
            conn.execute("INSERT INTO migrations VALUES (?, ?, ?, ?)",
                         (migration.version, migration.name, stamp, __version__))
        conn.executemany(
            "INSERT OR IGNORE INTO workspace VALUES (?, ?)",
            [("workspace_id", uuid.uuid4().hex), ("created_at", stamp), ("created_beside", beside), ("revision", "0")],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _backup(conn: sqlite3.Connection, target: Path) -> None:
    """A consistent copy of the workspace before a migration changes it (kept if one exists)."""
    if target.exists():
        return
    tmp = target.with_name(target.name + f".{os.getpid()}")
    with closing(sqlite3.connect(tmp)) as copy:
        conn.backup(copy)
    shutil.move(tmp, target)
