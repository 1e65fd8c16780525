"""Source: a SQLite checkpoint file written by `SqliteSaver` / `AsyncSqliteSaver`.

Read-only and side-effect free: LangGraph's own saver runs `setup()` (DDL,
`PRAGMA journal_mode=WAL`) even on a read and leaves `-wal`/`-shm` files
behind (contract §7.1), so this reader never uses it. How the file is opened
depends on its WAL state, so that the file and its folder stay byte-identical:

- no `-wal` with data: `immutable=1`; SQLite creates no side file;
- a `-wal` with data (recent rows not yet checkpointed, maybe a live writer):
  the file, then its `-wal`, are copied to a private temporary folder and the
  copy is read. Opening in place would write the `-shm` (even read-only
  connections take read marks there) or create it. The copy is one committed
  state of the store when the `-wal` did not restart (its header's checkpoint
  sequence and salts unchanged) between the start of the main file's copy and
  the copy of the `-wal`: every page a concurrent checkpoint wrote into the
  main file meanwhile is then also in the copied `-wal`, which overrides it,
  and a half-written last frame of a live writer fails SQLite's checksums. A
  restarted `-wal` holds only newer frames, so the copy is taken again.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import ormsgpack

from loaders import _native
from loaders.decode import UNPACK_OPT, DecodeError, decode_typed, outer_hook, plain
from loaders.records import (
    SPECIAL_CHANNELS, LoadError, Payloads, RawCheckpoint, RawWrite, SourceError, ThreadBundle, weighted_ranges,
)
from loaders.scratch import scratch_dir
from loaders.source import SPLIT_MIN_BYTES, Capabilities, Source, SourceOptions, SourceReader

# The compiled scan and read-ahead VFS (None: the ormsgpack path below and SQLite's own VFS; tests switch them off).
native_scan = _native.scan
native_readahead = _native.readahead

_unpackb = ormsgpack.unpackb
_first = operator.itemgetter(0)  # rows grouped by thread id (a C call per row, not a lambda's frame)
FAST_TEXT = True  # read TEXT with sqlite3's own decoder until a value is not UTF-8 (`_threads_decoded`); tests turn it off
_CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
_WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
_SQLITE_MAGIC = b"SQLite format 3\x00"

_CHECKPOINTS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
    "FROM checkpoints {where} ORDER BY thread_id, checkpoint_ns, checkpoint_id"
)
_WRITES_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
    "FROM writes {indexed} WHERE channel IN (?, ?, ?) {where} ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
)


def _wal_id(wal: Path) -> bytes | None:
    """Checkpoint sequence and salts from a `-wal` header: they change whenever the WAL restarts."""
    try:
        with wal.open("rb") as fh:
            head = fh.read(32)
    except FileNotFoundError:
        return None
    return head[12:24] if len(head) == 32 else None


def snapshot_copy(path: Path, wal: Path, folder: Path, attempts: int = 50) -> Path:
    """Copy a WAL-mode store (main file, then `-wal`) into `folder`; see the module docstring."""
    copy = folder / path.name
    copy_wal = copy.with_name(copy.name + "-wal")
    for _ in range(attempts):
        wal_id = _wal_id(wal)
        before = path.stat()
        shutil.copyfile(path, copy)
        after = path.stat()
        try:
            shutil.copyfile(wal, copy_wal)
        except FileNotFoundError:
            copy_wal.unlink(missing_ok=True)
        copied_id = _wal_id(copy_wal)
        if wal_id is not None and copied_id == wal_id:
            return copy
        if wal_id is None and copied_id is None and (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            return copy  # checkpointed and removed: the main file, which held still, is a committed state
    raise SourceError(f"{path}: its -wal kept restarting while it was copied (a busy writer); try again")


class _BadText(str):
    """A TEXT value that is not valid UTF-8, decoded with U+FFFD replacements: only ever
    shown in `load_errors`, never loaded as a key (two such values may look alike)."""

    __slots__ = ()


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _BadText(raw.decode("utf-8", "replace"))


def _key_problem(value) -> str | None:
    """Why a key column value (thread_id, checkpoint_ns, checkpoint_id) cannot be loaded, if it cannot."""
    if type(value) is str:
        return None
    if isinstance(value, _BadText):
        return "is not valid UTF-8 text"
    return f"is {'NULL' if value is None else 'a ' + type(value).__name__}, not text"


def _shown(value) -> str | None:
    """A key as `load_errors` can hold it (text; a BLOB as hex)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return f"x'{value.hex()}'"
    return str(value)


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def _connect_immutable(path: Path) -> sqlite3.Connection:
    """A read-only connection to a store that does not change while it is read,
    through the read-ahead VFS when there is one (`loaders/_readahead.c`: a
    checkpoint blob's overflow pages in one read instead of one read each)."""
    if native_readahead is not None:
        try:
            return sqlite3.connect(_uri(path, mode="ro", immutable="1", vfs=native_readahead.VFS_NAME), uri=True, isolation_level=None)
        except sqlite3.OperationalError:
            pass  # "no such vfs": this Python's sqlite3 carries a SQLite of its own
    return sqlite3.connect(_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None)


class SqliteSource(Source):
    """A `SqliteSaver` file. Detected by its SQLite header."""

    kind = "sqlite"
    label = "SQLite file written by SqliteSaver"
    upload_suffixes = ("sqlite", "sqlite3", "db")

    def detect(self, spec: str) -> bool:
        p = Path(spec)
        if not p.is_file():
            return False
        with p.open("rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC

    def open_reader(self, spec: str, options: SourceOptions) -> SqliteReader:
        return SqliteReader(Path(spec), options)


class SqliteReader(SourceReader):
    """An opened SQLite store; see the module docstring for how it is opened."""

    capabilities = Capabilities(split=True, handoff=True, key_digests=True)

    def __init__(self, path: Path, options: SourceOptions, *, snapshot: Path | None = None) -> None:
        self.path = path
        self.options = options
        self._tmpdir: str | None = None
        self._snapshot: Path | None = None
        if snapshot is not None:
            # A worker reading the loading process's snapshot (`handoff`): same state, no second copy.
            self._open(lambda: sqlite3.connect(str(snapshot), isolation_level=None))
            return
        if not path.is_file():
            raise SourceError(f"{path}: no such file (expected a SqliteSaver checkpoint file)")
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                raise SourceError(f"{path}: not a SQLite database (expected a SqliteSaver checkpoint file)")
        wal = path.with_name(path.name + "-wal")
        if not (wal.is_file() and wal.stat().st_size > 0):
            self._open(lambda: _connect_immutable(path))
            return

        def connect_snapshot() -> sqlite3.Connection:
            self._tmpdir = scratch_dir("snapshot")
            self._snapshot = snapshot_copy(path, wal, Path(self._tmpdir))
            return sqlite3.connect(str(self._snapshot), isolation_level=None)

        self._open(connect_snapshot)

    def _open(self, connect: Callable[[], sqlite3.Connection]) -> None:
        path = self.path
        try:
            self.con = connect()
            self.con.text_factory = _text
            # One read transaction: every query below sees the same snapshot.
            self.con.execute("BEGIN")
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise SourceError(f"{path}: unreadable SQLite file ({exc})") from None
        except SourceError:
            self.close()
            raise

    def _check_schema(self) -> None:
        tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in ("checkpoints", "writes") if t not in tables]
        if missing:
            raise SourceError(
                f"{self.path}: not a SqliteSaver checkpoint file (missing table {', '.join(missing)}; found {', '.join(sorted(tables)) or 'no tables'})"
            )
        for table, needed in (("checkpoints", _CHECKPOINT_COLUMNS), ("writes", _WRITE_COLUMNS)):
            cols = {r[1] for r in self.con.execute("SELECT * FROM pragma_table_info(?)", (table,))}
            lacking = needed - cols
            if lacking:
                raise SourceError(f"{self.path}: table {table} lacks column(s) {', '.join(sorted(lacking))}")

    def describe(self) -> str:
        return str(self.path.resolve())

    def handoff(self) -> Callable[[SourceOptions], SqliteReader] | None:
        """How a worker process opens this reader's snapshot copy, if it took one
        (a store with a `-wal`): every worker then reads the one committed state
        the load started from, and the store is copied once, not once per worker.
        None for a store read in place (`immutable=1`): workers open it themselves.
        Picklable: a spawned worker gets it too."""
        if self._snapshot is None:
            return None
        return functools.partial(_open_snapshot, str(self.path), str(self._snapshot))

    def _thread_filter(self, only: frozenset[str] | None) -> tuple[str, list, set[str] | None]:
        """SQL predicate for the wanted threads, and a set to filter by in Python
        when the id list is too long to bind (SQLite caps bound parameters)."""
        selected = self.options.wanted(only)
        wanted = set(selected) if selected is not None else None
        clauses, params = self.thread_range.sql()
        if wanted is not None and len(wanted) <= 500:
            ids = sorted(wanted)
            clauses.append(f"thread_id IN ({','.join('?' * len(ids))})" if ids else "FALSE")
            params.extend(ids)
            wanted = None
        return " AND ".join(clauses), params, wanted

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Thread-id ranges holding about equal decoding work, for `n` workers.

        A thread of k checkpoints holds about k²/2 message payloads (each checkpoint
        re-serializes the whole list), so threads are weighed by k², counted from the
        primary-key index alone: summing `length(checkpoint)` instead reads every
        row's pages (seconds on a large file). A file under `min_bytes` is not
        split: starting workers would cost more than it saves.
        """
        if n <= 1 or self.path.stat().st_size < min_bytes:
            return [(None, None)]
        where, params, _ = self._thread_filter(None)
        try:
            rows = self.con.execute(
                f"SELECT thread_id, count(*) FROM checkpoints {'WHERE ' + where if where else ''} "
                "GROUP BY thread_id ORDER BY thread_id",
                params,
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        rows = [r for r in rows if type(r[0]) is str]
        return weighted_ranges([(t, k * k) for t, k in rows], n)

    def thread_count(self) -> int | None:
        where, params, wanted = self._thread_filter(None)
        if wanted is not None:
            return len(wanted)
        sql = f"SELECT COUNT(DISTINCT thread_id) FROM checkpoints {'WHERE ' + where if where else ''}"
        try:
            return self.con.execute(sql, params).fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: sqlite3.DatabaseError) -> SourceError:
        # Pages found damaged while reading (the header and schema were fine): the
        # file is damaged, not a row; say so in one line instead of a traceback.
        return SourceError(f"{self.path}: unreadable SQLite file ({exc})")

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        # Rows whose thread_id is not clean text are never loaded (see `threads`).
        try:
            yield from (k for k in self.con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints") if type(k[0]) is str)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def key_digests(self) -> Iterator[tuple[str, str]]:
        """(thread_id, every checkpoint key of the thread as one text) for incremental loads.

        Built by SQLite from the primary-key index, so an incremental load compares
        one value per thread instead of one Python tuple per checkpoint. The text is
        `pipeline.KEY_DIGEST_SQL`'s, length-prefixed so that no two key sets share it.
        """
        try:
            yield from (
                r for r in self.con.execute(
                    "SELECT thread_id, group_concat(length(checkpoint_ns) || ':' || checkpoint_ns || "
                    "length(checkpoint_id) || ':' || checkpoint_id, '') FROM "
                    "(SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id) "
                    "GROUP BY thread_id"
                ) if type(r[0]) is str
            )
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        try:
            yield from self._threads_decoded(only)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def _threads_decoded(self, only: frozenset[str] | None) -> Iterator[ThreadBundle]:
        """`threads_after` with sqlite3's own UTF-8 decoding while the text is valid.

        `_text` (a Python call per TEXT value, five per checkpoint row) costs about
        2 % of a load; the built-in `str` factory decodes in C but raises on the
        first value that is not UTF-8. Then the read starts again with `_text`:
        after the last thread handed over when its id was text (ids come in
        order), else from the start, skipping the threads already handed over.
        """
        done = 0  # threads handed over
        last: object = None  # the raw id of the last one
        self.con.text_factory = str if FAST_TEXT else _text
        try:
            try:
                for raw_id, bundle in self.threads_after(only, None):
                    yield bundle
                    done, last = done + 1, raw_id
                return
            except sqlite3.OperationalError as exc:
                if self.con.text_factory is _text or not str(exc).startswith("Could not decode to UTF-8"):
                    raise
            self.con.text_factory = _text
            after = last if type(last) is str else None
            skip = 0 if after is not None else done
            for raw_id, bundle in self.threads_after(only, after):
                if skip:
                    skip -= 1
                    continue
                yield bundle
        finally:
            if self.con is not None:  # (None: the reader was closed before this generator was)
                self.con.text_factory = _text

    def threads_after(self, only: frozenset[str] | None, after: str | None) -> Iterator[tuple[object, ThreadBundle]]:
        """(raw thread id, bundle) for every thread, or every thread whose id sorts after `after`."""
        where, params, wanted = self._thread_filter(only)
        if after is not None:
            where = " AND ".join(filter(None, [where, "thread_id > ?"]))
            params = [*params, after]
        cps = self.con.execute(_CHECKPOINTS_SQL.format(where=f"WHERE {where}" if where else ""), params)
        writes = self._special_writes(only, where, params, wanted)
        for thread_id, rows in itertools.groupby(cps, key=_first):
            problem = _key_problem(thread_id)
            if problem is not None:
                # No id to load these rows under (a hostile or damaged file): report each, load none.
                bad = [LoadError(_shown(r[0]), _shown(r[1]), _shown(r[2]), "checkpoint", f"thread_id {problem}; row skipped") for r in rows]
                yield thread_id, ThreadBundle(_shown(thread_id), [], [], bad)
                continue
            thread_writes = writes.take(thread_id)
            if wanted is not None and thread_id not in wanted:
                continue
            yield thread_id, bundle_thread(thread_id, rows, thread_writes)

    def _special_writes(self, only: frozenset[str] | None, where: str, params: list, wanted: set[str] | None) -> _WriteGroups:
        """The `__interrupt__` / `__resume__` / `__error__` writes of the selected threads,
        grouped by thread in thread order (`where`, `params`, `wanted`: `_thread_filter`'s)."""
        # Special writes are few among many (every step writes its messages): walking
        # the primary key in order would fetch every row from the table at random to
        # read its channel (2.3 s on a 7 GB store not in the page cache); a scan in
        # table order and a sort of the few that match is sequential. A chosen set of
        # threads bound in the SQL (not filtered afterwards) is looked up by the key,
        # and so is one range of a split load: a worker reads many small ranges, and a
        # whole-table scan for each would cost more than the lookups of its own rows.
        by_key = (self.options.wanted(only) is not None and wanted is None) or self.thread_range != (None, None)
        indexed = "" if by_key else "NOT INDEXED"
        return _WriteGroups(self.con.execute(
            _WRITES_SQL.format(indexed=indexed, where=f"AND {where}" if where else ""), [*SPECIAL_CHANNELS, *params]
        ))

    def close(self) -> None:
        con = getattr(self, "con", None)
        if con is not None:
            try:
                con.close()
            except sqlite3.Error:
                pass
            self.con = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


class _WriteGroups:
    """Special-write rows grouped by thread id, handed out as the threads come by (in id order)."""

    def __init__(self, rows) -> None:
        self._groups = itertools.groupby(rows, key=_first)
        self._pending = next(self._groups, None)

    def take(self, thread_id: str) -> list:
        """The rows of `thread_id`, skipping those of threads before it."""
        pending = self._pending
        while pending is not None and (type(pending[0]) is not str or pending[0] < thread_id):
            pending = next(self._groups, None)
        rows: list = []
        if pending is not None and pending[0] == thread_id:
            rows = list(pending[1])
            pending = next(self._groups, None)
        self._pending = pending
        return rows


def _open_snapshot(path: str, snapshot: str, options: SourceOptions) -> SqliteReader:
    return SqliteReader(Path(path), options, snapshot=Path(snapshot))


def bundle_thread(thread_id: str, rows, write_rows) -> ThreadBundle:
    """One thread's `checkpoints` and special `writes` rows (in the reader's column
    order, by checkpoint id) → `ThreadBundle`; damage is reported, never raised."""
    errors: list[LoadError] = []
    payloads = Payloads()
    checkpoints = []
    append = checkpoints.append
    for row in rows:
        cp = fast_checkpoint(row, payloads)
        if cp is None and _keys_ok(row, errors, "checkpoint"):
            cp = decode_checkpoint_row(row, errors, payloads)
        if cp is not None:
            append(cp)
    writes = decode_writes(write_rows, errors)
    return ThreadBundle(thread_id, checkpoints, writes, errors, payloads.items)


def decode_writes(write_rows, errors: list[LoadError]) -> list[RawWrite]:
    """Special `writes` rows (the reader's column order) → `RawWrite`s; damage is reported."""
    writes = []
    for t, ns, cid, task_id, idx, channel, type_, value in write_rows:
        if not _keys_ok((t, ns, cid), errors, "write"):
            continue
        try:
            decoded = plain(decode_typed(type_, value))
        except DecodeError as exc:
            errors.append(LoadError(t, ns, cid, "write", f"{channel}: {exc}"))
            continue
        writes.append(RawWrite(t, ns, cid, task_id, idx, channel, decoded))
    return writes


def _keys_ok(row, errors: list[LoadError], stage: str) -> bool:
    for name, value in (("checkpoint_ns", row[1]), ("checkpoint_id", row[2])):
        problem = _key_problem(value)
        if problem is not None:
            errors.append(LoadError(_shown(row[0]), _shown(row[1]), _shown(row[2]), stage, f"{name} {problem}; row skipped"))
            return False
    return True


def decode_metadata(raw, errors: list[LoadError], where: tuple[str, str, str]) -> str | None:
    """SqliteSaver metadata is UTF-8 JSON text stored as a BLOB (contract §7.2).

    It is passed on as text: DuckDB validates it and extracts `step`, `source`
    and `run_id` at ingest (`loaders.writer`), which is much cheaper than
    parsing it here for every checkpoint.
    """
    if raw is None:
        return None
    if type(raw) is str:
        text = raw
    elif isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            errors.append(LoadError(*where, "metadata", f"metadata is not UTF-8 text: {exc}"))
            return None
    else:
        errors.append(LoadError(*where, "metadata", f"metadata is {'not UTF-8 text' if isinstance(raw, str) else 'a ' + type(raw).__name__}, not JSON text"))
        return None
    # DuckDB's JSON reader accepts what strict JSON does not (NaN, Infinity) and
    # any JSON value; both are cheap to rule out here without parsing.
    if text.lstrip()[:1] != "{":
        errors.append(LoadError(*where, "metadata", "metadata is not a JSON object"))
        return None
    if ("NaN" in text or "Infinity" in text) and not _strict_json(text):
        errors.append(LoadError(*where, "metadata", "metadata is not strict JSON (NaN or Infinity)"))
        return None
    return text


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _strict_json(text: str) -> bool:
    try:
        json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False
    return True



def fast_checkpoint(row, payloads: Payloads) -> RawCheckpoint | None:
    """The common case of `decode_checkpoint_row` in a few checks; None when the
    row is anything but a well-formed msgpack checkpoint with JSON-object
    metadata (the full path then reports what is wrong). This runs once per
    checkpoint, so every check costs the whole load time."""
    if native_scan is not None:
        # All of the below in one C call: the checks, a walk of the blob in place that
        # compares payloads with the previous checkpoint's where they lie, and the
        # numbering. None when it is not sure; then ormsgpack decides, below.
        cp = native_scan.row(row, payloads, RawCheckpoint)
        if cp is not None:
            return cp
    thread_id, ns, cid, parent, type_, blob, metadata = row
    if type_ != "msgpack" or type(ns) is not str or type(cid) is not str or type(blob) is not bytes:
        return None
    if parent is not None and type(parent) is not str:
        return None
    if type(metadata) is bytes:
        try:
            metadata = metadata.decode("utf-8")
        except UnicodeDecodeError:
            return None
    elif type(metadata) is not str:
        return None
    if metadata[:1] != "{" or "NaN" in metadata or "Infinity" in metadata:
        return None
    try:
        checkpoint = _unpackb(blob, ext_hook=outer_hook, option=UNPACK_OPT)
    except Exception:  # noqa: BLE001 - the full path says what is wrong
        return None
    if type(checkpoint) is not dict:
        return None
    values = checkpoint.get("channel_values")
    ts = checkpoint.get("ts")
    if type(values) is not dict or type(ts) is not str:
        return None
    messages = values.get("messages")
    if messages is not None:
        if type(messages) is not list:
            return None
        messages = payloads.versions(messages)
    return RawCheckpoint(thread_id, ns, cid, parent, ts, messages, False, metadata)


def decode_checkpoint_row(row, errors: list[LoadError], payloads: Payloads | None = None) -> RawCheckpoint:
    """One `checkpoints` row → `RawCheckpoint`; damage is reported, never raised.

    Message payloads are numbered in `payloads` (a fresh table when omitted).
    """
    payloads = payloads if payloads is not None else Payloads()
    thread_id, ns, cid, parent, type_, blob, metadata = row
    where = (thread_id, ns, cid)
    if parent is not None and _key_problem(parent) is not None:
        errors.append(LoadError(*where, "checkpoint", f"parent_checkpoint_id {_key_problem(parent)}; taken as none"))
        parent = None
    md_json = decode_metadata(metadata, errors, where)
    try:
        checkpoint = decode_typed(type_, blob)
        if not isinstance(checkpoint, dict):
            raise DecodeError(f"checkpoint is a {type(checkpoint).__name__}, not a mapping")
        values = checkpoint.get("channel_values") or {}
        if not isinstance(values, dict):
            raise DecodeError("channel_values is not a mapping")
    except DecodeError as exc:
        errors.append(LoadError(*where, "checkpoint", str(exc)))
        return RawCheckpoint(thread_id, ns, cid, parent, None, None, damaged=True, metadata=md_json)
    ts = checkpoint.get("ts")
    if ts is not None and not isinstance(ts, str):
        errors.append(LoadError(*where, "checkpoint", f"ts is a {type(ts).__name__}, not a string"))
        ts = None
    messages = values.get("messages")
    if messages is not None and not isinstance(messages, list):
        errors.append(LoadError(*where, "messages", f"messages channel is a {type(messages).__name__}, not a list"))
        return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, None, damaged=True, metadata=md_json)
    versions = payloads.versions(messages) if messages is not None else None
    return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, versions, metadata=md_json)
