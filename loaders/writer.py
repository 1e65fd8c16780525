"""Writing the DuckDB database: schema, batched appends, atomic replace or one transaction.

A full load writes a new database next to the target (`<db>.tmp-<pid>-<n>`) and
only `os.replace`s it over the target once everything is written and the
file is closed. An incremental load changes the target in place, in one DuckDB
transaction (`in_place=True`): its cost is what changed, not a copy of the
database. Either way a failed, interrupted or killed load leaves the previous
database as it was (DuckDB writes a transaction to its log only at COMMIT).
"""

from __future__ import annotations

import glob
import itertools
import os
import stat
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from loaders.records import TargetError

if TYPE_CHECKING:
    import pyarrow as pa

from loaders.catalog import DATA_TABLES, TABLES, Table, ddl
from loaders.scratch import process_gone

# Rows per DuckDB row group in the databases a load writes (DuckDB's default: 122,880);
# see `DatabaseWriter.__init__`.
ROW_GROUP_SIZE = 20_480
# Staged bytes per INSERT transaction. DuckDB keeps what a transaction appended to a row
# group in memory until it commits (long text is not spilled), then needs about as much
# again to commit: one INSERT of 300 MB of 1 MB messages failed under a 256 MB limit
# and peaked near 1 GB under 512 MB. Committed a slice at a time, the row group is
# written out as it grows. A normal table stages far less: one INSERT, as before.
INSERT_BYTES = 64 << 20
# DuckDB's checkpoint merges a table's adjacent under-full row groups ("vacuum"). A full
# load leaves some (each INSERT ends one), so an incremental load's first append to such a
# table rewrote two row groups of it: 0.11 s of the 0.13 s commit after 5 new threads on the
# 2,000 x 40 store (message_versions alone). Merging reclaims nothing when nothing was
# deleted, so an incremental load's checkpoint merges only once it pays: after
# VACUUM_AFTER_ROWS rows deleted (replaced threads) or VACUUM_AFTER_LOADS loads (each adds
# a small row group per table it appends to) since the last merge. `meta.vacuum_debt` keeps count.
VACUUM_AFTER_ROWS = ROW_GROUP_SIZE
VACUUM_AFTER_LOADS = 16
_STAGED = "staged"
_counter = itertools.count()
_LOAD_ID = object()  # in a statement's parameters: the id of the load being written


def _ingest_statements(table: Table) -> list[tuple[str, tuple]]:
    """`(sql, params)` of the INSERTs that ingest `table`'s staged parts (read as `staged_batches`):
    its rows, then one `load_errors` INSERT per passthrough JSON column.

    JSON text a source passed through (`Column.passthrough_json`) is validated here,
    in DuckDB: a value that is not strict JSON becomes NULL and is reported in
    `load_errors` instead of failing the load. Every other JSON column was
    written by `loaders.decode.to_json`, which only writes strict JSON. Column
    names and expressions come from the catalogue, never from data.
    """
    staged = table.staged_columns
    inner = ", ".join(
        f"CASE WHEN json_valid({c.name}) THEN {c.name} END AS {c.name}" if c.passthrough_json else c.name for c in staged
    )
    # A column that is not staged is the load id (the only one: tests/loaders/test_catalog.py);
    # a derived one is computed here from the staged row.
    outer = ", ".join("?" if not c.staged else f"{c.derived} AS {c.name}" if c.derived else c.name for c in table.columns)
    load_ids = (_LOAD_ID,) * sum(not c.staged for c in table.columns)
    statements = [(f"INSERT INTO {table.name} SELECT {outer} FROM (SELECT {inner} FROM staged_batches)", load_ids)]
    ns = "checkpoint_ns" if "checkpoint_ns" in table.names else "NULL"
    key = "checkpoint_id" if table.name in ("checkpoints", "message_events") else "NULL"
    for c in staged:
        if c.passthrough_json:
            statements.append((
                f"INSERT INTO load_errors SELECT ?, thread_id, {ns}, {key}, ?, ? "
                f"FROM staged_batches WHERE {c.name} IS NOT NULL AND NOT json_valid({c.name})",
                (_LOAD_ID, table.name, f"{table.name}.{c.name} is not valid JSON; stored as NULL"),
            ))
    return statements


_INGEST = {t.name: _ingest_statements(t) for t in TABLES if t.staged}


def _stream(files: list[str]) -> pa.RecordBatchReader:
    """The record batches of staged parts, in order, as one stream DuckDB scans.

    Read, not memory-mapped: a batch's buffers are freed once DuckDB has it, so
    an ingest holds a batch at a time, whatever the size of the parts.
    """
    import pyarrow as pa  # (here: what opens a database without writing rows never imports it)
    import pyarrow.ipc as ipc

    with pa.OSFile(files[0]) as fh:
        schema = ipc.open_file(fh).schema
    return pa.RecordBatchReader.from_batches(schema, _part_batches(files))


def _part_batches(files: Iterable[str]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    for path in files:
        with pa.OSFile(path) as fh:
            reader = ipc.open_file(fh)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)


def _commits(stream: pa.RecordBatchReader, max_bytes: int) -> Iterator[pa.RecordBatchReader]:
    """`stream` as consecutive streams of at most `max_bytes` (a larger batch alone), one
    INSERT and so one transaction each (see `INSERT_BYTES`); none for an empty stream.

    >>> import pyarrow as pa
    >>> b = pa.record_batch([pa.array(["x" * 100])], names=["s"])
    >>> [len(list(r)) for r in _commits(pa.RecordBatchReader.from_batches(b.schema, [b] * 5), 2 * b.nbytes)]
    [2, 2, 1]
    """
    import pyarrow as pa

    batches = iter(stream)
    pending = next(batches, None)

    def upto() -> Iterator[pa.RecordBatch]:
        nonlocal pending
        size = 0
        while pending is not None and (size == 0 or size + pending.nbytes <= max_bytes):
            batch, pending = pending, None
            size += batch.nbytes
            yield batch  # before reading on: a feed's next part may not be staged yet
            pending = next(batches, None)

    while pending is not None:
        yield pa.RecordBatchReader.from_batches(stream.schema, upto())


def connect_for_writing(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """A connection that writes the database at `path` the way a load does.

    Attached rather than opened, for its row group size (`ROW_GROUP_SIZE`): DuckDB
    compresses and writes a table's rows a row group at a time, and with its default
    (122,880 rows) nearly all of a load's compression waited for the end of each
    INSERT, after the last worker; with smaller groups it runs while workers still
    decode. Other connections to it: `.cursor()`, then `USE staged`.

    >>> con = connect_for_writing("new.duckdb")  # doctest: +SKIP
    """
    con = duckdb.connect()
    con.execute(f"ATTACH ? AS {_STAGED} (ROW_GROUP_SIZE {ROW_GROUP_SIZE})", [str(path)]).fetchall()
    con.execute(f"USE {_STAGED}").fetchall()
    return con



def is_duckdb_file(path: str | os.PathLike) -> bool:
    """True for a DuckDB database file (its header's magic bytes).

    >>> is_duckdb_file(__file__)
    False
    """
    try:
        with Path(path).open("rb") as fh:
            return fh.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def connect_read_only(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the database file at `path` whose DuckDB installs and loads no
    extension for what it reads (a type of an extension's). Set once the file is open, not as the
    connection's config: DuckDB gives every connect() of a file the one instance open for it and
    refuses a second config, so a notebook's own `duckdb.connect(path, read_only=True)` beside
    ours would fail. A file of another kind is the caller's to refuse first (`is_duckdb_file`):
    DuckDB would load a scanner for it (a SQLite store's) while opening it.

    >>> connect_read_only("lens.duckdb").sql("SELECT count(*) FROM messages")  # doctest: +SKIP
    """
    con = duckdb.connect(str(path), read_only=True)
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    return con


def refuse_foreign_target(db: Path) -> None:
    """A load replaces its database: a file that is not one is refused, never overwritten
    (an empty file holds nothing); so is anything but a regular file (`refuse_non_file`)."""
    refuse_non_file(db, "--db")
    if db.is_file() and db.stat().st_size > 0 and not is_duckdb_file(db):
        raise TargetError(f"not a DuckDB database, so not replaced: {db} (name a new file or a Transcript Lens database)")


def kind_of(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file ("a symbolic link", "a device", ...); else None.

    >>> kind_of(Path("/dev/null")), kind_of(Path(__file__)), kind_of(Path("/no/such/file"))
    ('a device', None, None)
    """
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket"


def refuse_non_file(path: Path, flag: str) -> None:
    """A write that renames a finished file over `path` replaces whatever `path` names: a device
    node (`/dev/null`), a FIFO or a symbolic link would become a regular file. Refused, in one line.

    >>> refuse_non_file(Path("/dev/null"), "--db")
    Traceback (most recent call last):
    loaders.records.TargetError: --db /dev/null is a device, so not replaced (name a regular file)
    """
    kind = kind_of(path)
    if kind is not None:
        raise TargetError(f"{flag} {path} is {kind}, so not replaced (name a regular file)")

class PartFeed:
    """Staged part files of one table, handed over in order while they are still being made.

    A streaming ingest (`DatabaseWriter.ingest_feeds`) reads the feed's batches as one
    stream, waiting for the next part until the feed is closed: one INSERT per table
    for the whole load (DuckDB appends and compresses best in one statement), started
    while the workers still decode.

    >>> feed = PartFeed(schema); feed.add("checkpoints.p0.arrow"); feed.close()  # doctest: +SKIP
    """

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.files: list[str] = []
        self._cond = threading.Condition()
        self._closed = False
        self._failed = False

    def add(self, file: str) -> None:
        with self._cond:
            self.files.append(file)
            self._cond.notify_all()

    def close(self, failed: bool = False) -> None:
        """No more parts; `failed`: the load is abandoned, the ingest stops at once."""
        with self._cond:
            self._closed = True
            self._failed = self._failed or failed
            self._cond.notify_all()

    def _paths(self) -> Iterator[str]:
        i = 0
        while True:
            with self._cond:
                while i >= len(self.files) and not self._closed and not self._failed:
                    self._cond.wait()
                if self._failed:
                    raise RuntimeError("the load was abandoned")
                if i >= len(self.files):
                    return
                path = self.files[i]
            i += 1
            yield path

    def stream(self) -> pa.RecordBatchReader:
        """Every part's batches in order, waiting for parts not yet added."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_batches(self.schema, _part_batches(self._paths()))


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create every table of the catalogue (those that do not exist yet)."""
    con.execute(ddl()).fetchall()


def remove_stale_temps(target: Path) -> None:
    """Delete `<db>.tmp-<pid>-<n>` files (and their `.wal`) whose process no longer runs.

    A load killed outright (SIGKILL, OOM killer, power loss) cannot remove its
    half-written database; it is never valid, and may be as large as the real one.
    Temporary databases of running processes (concurrent loads) are left alone.
    """
    prefix = f"{target.name}.tmp-"
    for p in target.parent.glob(f"{glob.escape(prefix)}*"):
        pid = p.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and process_gone(int(pid)):
            p.unlink(missing_ok=True)


def _sole_name(path: Path) -> bool:
    """Whether `path` exists with no other name (hard link). The app reads each version of a
    database through a hard link of its own (`ui.database.version_path`), and a reader in the
    writer's own process takes no lock a writer would meet (DuckDB's locks are per process):
    editing such a file in place can rewrite blocks under that reader (the likely cause of a
    "Cannot open database" in an app session while its own process reloaded, seen once in CI).
    A copy is edited then, as when locked."""
    try:
        return path.stat().st_nlink == 1
    except FileNotFoundError:
        return False


class DatabaseWriter:
    """Stage a database beside `target`, then swap it in with `commit()`.

    >>> with DatabaseWriter("out.duckdb") as w:  # doctest: +SKIP
    ...     w.ingest("threads", ["threads.p0.arrow"], load_id=1); w.commit()
    """

    def __init__(self, target: str | os.PathLike, *, start_from_existing: bool = False, in_place: bool = False) -> None:
        self.target = Path(target)
        self.tmp = self.target.with_name(f"{self.target.name}.tmp-{os.getpid()}-{next(_counter)}")
        self.target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(self.target)
        self._committed = False
        self._incremental = start_from_existing
        self._deleted_rows = 0  # by `delete_threads` (see VACUUM_AFTER_ROWS)
        #: Whether this writer edits the target itself, in one transaction (see `_open_in_place`).
        self.in_place = in_place and _sole_name(self.target) and self._open_in_place()
        if not self.in_place:
            if start_from_existing and self.target.exists():
                # Edit a copy; the original stays valid until the swap.
                shutil.copyfile(self.target, self.tmp)
            self.con = connect_for_writing(self.tmp)
        self.con.execute("SET TimeZone = 'UTC'").fetchall()
        # Ingest streams staged batches; a cap keeps DuckDB from growing with the store
        # (it spills to a temp file instead), so a load's memory stays bounded.
        # (A 50 MB message needs a block of that size: 128 MB was too little.) A split load
        # runs an INSERT per table side by side with the workers: each writes a row group
        # as soon as it is full (DuckDB buffers 5 by default).
        # Long text is not spilled: a row group's worth of it must fit, committed a slice at a time
        # (`INSERT_BYTES`; 300 messages of 1 MB: a 0.55 GB peak for the whole load, where 512 MB
        # gave 0.7 GB and more room for long text in one row group).
        self.con.execute("SET memory_limit = '256MB'").fetchall()
        self.con.execute("SET write_buffer_row_group_count = 1").fetchall()
        if self.in_place:
            # Everything from here to `commit()` is one transaction: statements run on this
            # connection only (a cursor would be a transaction of its own).
            self.con.execute("BEGIN TRANSACTION").fetchall()
        create_schema(self.con)

    def _open_in_place(self) -> bool:
        """Open the target itself for writing; False when another process holds it open
        (the app reads it: DuckDB lets one process write a file only when none reads
        it), and the load then edits a copy as before."""
        try:
            self.con = connect_for_writing(self.target)
        except duckdb.Error:  # (a lock held elsewhere; a damaged file fails the same way on the copy, with its own error)
            return False
        return True

    def __enter__(self) -> DatabaseWriter:
        return self

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """Another connection to the staged database (for statements run side by side)."""
        con = self.con.cursor()
        con.execute(f"USE {_STAGED}").fetchall()
        return con

    def __exit__(self, *exc) -> None:
        if not self._committed:
            self.abort()

    def previous_loads(self) -> None:
        """Carry the `loads` history of the database being replaced into the new one."""
        if not self.target.exists():
            return
        try:
            self.con.execute("ATTACH ? AS prev (READ_ONLY)", [str(self.target)])
        except duckdb.Error:
            return  # not a database of ours: it is replaced, nothing to carry
        try:
            has = self.con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'prev' AND table_name = 'loads'"
            ).fetchall()[0][0]
            if has:
                self.con.execute("INSERT INTO loads SELECT * FROM prev.loads").fetchall()
        except duckdb.Error:
            pass
        finally:
            self.con.execute("DETACH prev").fetchall()

    def next_load_id(self) -> int:
        return self.con.execute("SELECT coalesce(max(load_id), 0) + 1 FROM loads").fetchall()[0][0]

    def ingest(self, table: str, files: list[str], load_id: int) -> None:
        """Insert staged Arrow IPC parts (in order) into `table`, streamed a batch at a time
        (passthrough JSON validated on the way: `_ingest_statements`)."""
        if not files:
            return
        if self.in_place:
            self._ingest(self.con, table, files, load_id)
            return
        con = self.cursor()  # its own connection: `ingest_all` runs tables side by side
        try:
            self._ingest(con, table, files, load_id)
        finally:
            con.close()

    def ingest_all(self, files: dict[str, list[str]], load_id: int, threads: int = 2) -> None:
        """`ingest` every table, `threads` tables at a time.

        One INSERT from a stream runs on one core, mostly in DuckDB's column
        compression; appends to different tables do not conflict, so two tables
        go in side by side (DuckDB releases the GIL meanwhile).
        """
        # Biggest first, so the last table to finish is a small one.
        order = sorted(files, key=lambda t: -sum(os.path.getsize(f) for f in files[t]))
        if self.in_place:  # one connection, one transaction: one table after another
            for t in order:
                self.ingest(t, files[t], load_id)
            return
        before = self.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        # One DuckDB thread per INSERT: a stream scan does not parallelise, and
        # extra threads only contend with the other table's INSERT.
        self.con.execute("SET threads = 1").fetchall()
        try:
            with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
                for future in [pool.submit(self.ingest, t, files[t], load_id) for t in order]:
                    future.result()
        finally:
            self.con.execute(f"SET threads = {int(before)}").fetchall()

    def ingest_feeds(self, feeds: dict[str, PartFeed], load_id: int) -> Callable[..., None]:
        """Start one streaming INSERT per table, each in its own thread, reading its feed
        until the feed is closed; returns `wait(raise_errors=True)`, which joins them and
        re-raises the first failure. Parts must be added in the order their rows are to be stored."""
        before = self.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        self.con.execute("SET threads = 1").fetchall()  # one core per INSERT, as in `ingest_all`
        failures: list[BaseException] = []

        def run(table: str, feed: PartFeed) -> None:
            con = self.cursor()
            try:
                self._ingest(con, table, feed, load_id)
            except BaseException as exc:  # noqa: BLE001 - re-raised by wait()
                failures.append(exc)
                for other in feeds.values():
                    other.close(failed=True)
            finally:
                con.close()

        threads = [threading.Thread(target=run, args=(t, f), name=f"ingest-{t}", daemon=True) for t, f in feeds.items()]
        for t in threads:
            t.start()

        def wait(raise_errors: bool = True) -> None:
            for t in threads:
                t.join()
            self.con.execute(f"SET threads = {int(before)}").fetchall()
            if failures and raise_errors:
                raise failures[0]

        return wait

    def _ingest(self, con: duckdb.DuckDBPyConnection, table: str, files: list[str] | PartFeed, load_id: int) -> None:
        for i, (sql, params) in enumerate(_INGEST[table]):
            # A feed is read as it grows by the first statement; later ones read its files again.
            paths = files.files if isinstance(files, PartFeed) else files
            if i > 0 and not paths:
                break
            stream = files.stream() if i == 0 and isinstance(files, PartFeed) else _stream(paths)
            values = [load_id if p is _LOAD_ID else p for p in params]
            if i > 0:  # (these only read the rows again and insert the few invalid ones)
                staged_batches = stream  # noqa: F841 - DuckDB reads it by name
                con.execute(sql, values).fetchall()
                continue
            for staged_batches in _commits(stream, INSERT_BYTES):  # noqa: B007 - DuckDB reads it by name
                con.execute(sql, values).fetchall()

    def counts(self, load_id: int) -> dict[str, int]:
        return counts(self.con, load_id)

    def record_load(self, load_row: list, schema_version: str, tool_version: str) -> None:
        record_load(self.con, load_row, schema_version, tool_version)

    def record_source_token(self, token: str | None) -> None:
        """Remember the source's change token (`SourceReader.change_token`) for the next incremental load."""
        self._set_meta("source_token", token)

    def _set_meta(self, key: str, value: str | None) -> None:
        """`meta[key] = value` (None: no row)."""
        self.con.execute("DELETE FROM meta WHERE key = ?", [key]).fetchall()
        if value is not None:
            self.con.execute("INSERT INTO meta VALUES (?, ?)", [key, value]).fetchall()

    def delete_threads(self, thread_ids: list[str]) -> None:
        """Drop every row of these threads (incremental reloads replace whole threads)."""
        if not thread_ids:
            return
        # (Errors of earlier loads about these threads no longer describe what is stored.)
        for table in (*DATA_TABLES, "load_errors"):
            sql = f"DELETE FROM {table} WHERE thread_id IN (SELECT unnest(?))"
            self._deleted_rows += self.con.execute(sql, [thread_ids]).fetchall()[0][0]

    def _vacuum_due(self) -> bool:
        """Whether this commit's checkpoint may merge row groups (see VACUUM_AFTER_ROWS); an
        incremental load that defers it adds itself to `meta.vacuum_debt`, one that merges clears it."""
        if not self._incremental:
            return True
        found = self.con.execute("SELECT value FROM meta WHERE key = 'vacuum_debt'").fetchall()
        try:
            loads, deleted = (int(n) for n in found[0][0].split(","))
        except (IndexError, ValueError, AttributeError):  # none yet (or not ours): nothing owed
            loads, deleted = 0, 0
        loads, deleted = loads + 1, deleted + self._deleted_rows
        due = loads >= VACUUM_AFTER_LOADS or deleted >= VACUUM_AFTER_ROWS
        self._set_meta("vacuum_debt", None if due else f"{loads},{deleted}")
        return due

    def _checkpoint(self, vacuum: bool) -> None:
        if not vacuum:
            self.con.execute("SET max_vacuum_tasks = 0").fetchall()
        self.con.execute("CHECKPOINT").fetchall()  # (the log into the file; a crash here replays it)

    def commit(self) -> None:
        vacuum = self._vacuum_due()
        if self.in_place:
            self.con.execute("COMMIT").fetchall()
            self._checkpoint(vacuum)
            self.con.close()
            self._committed = True
            return
        self._checkpoint(vacuum)
        self.con.close()
        os.replace(self.tmp, self.target)
        self._committed = True

    def abort(self) -> None:
        try:
            if self.in_place:
                self.con.execute("ROLLBACK").fetchall()
        except duckdb.Error:
            pass
        try:
            self.con.close()
        except duckdb.Error:
            pass
        for p in (self.tmp, self.tmp.with_name(self.tmp.name + ".wal")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def counts(con: duckdb.DuckDBPyConnection, load_id: int) -> dict[str, int]:
    """What a load's summary reports: rows of the main tables, and the errors this load added."""
    row = con.execute(
        "SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM checkpoints), "
        "(SELECT count(*) FROM messages), (SELECT count(*) FROM load_errors WHERE load_id = ?)",
        [load_id],
    ).fetchall()[0]
    return dict(zip(("threads", "checkpoints", "messages", "errors"), row))


def record_load(con: duckdb.DuckDBPyConnection, load_row: list, schema_version: str, tool_version: str) -> None:
    """Add the load's `loads` row and set `meta` (`meta` must be empty of other keys' duplicates)."""
    con.execute("INSERT INTO loads VALUES (?, ?, ?, ?, ?, ?, 'ok', ?, ?, ?, ?, ?, ?, ?)", load_row).fetchall()
    con.execute(
        "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?), ('tool_version', ?)", [schema_version, tool_version]
    ).fetchall()
