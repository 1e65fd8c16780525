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
  A `-wal` that is not the file's (SQLite would apply another database's WAL
  silently) is refused in one line: the rule is in `sqlite_wal`.

Damaged and crafted files are read under three rules:

- **Key sizes** are capped (`records.KEY_MAX_BYTES`, UTF-8 bytes in every file
  encoding) in SQL: a checkpoint row whose thread_id, checkpoint_ns or
  checkpoint_id is longer is never fetched; it is listed from the primary-key
  index alone, its keys cut to 64 characters, and reported (one `load_errors`
  row per checkpoint row). A longer parent id is taken as none and reported, a
  special write with a longer key is reported and skipped.
- **Order** is the file's: SQLite sorts TEXT by the bytes of the file's encoding
  (BINARY collation), and UTF-16 code units do not sort as code points. Every
  query sorts and compares with an explicit `COLLATE BINARY` (a key column
  declared NOCASE is then sorted instead of read off its index, and such a file
  is not split), and the orders Python relies on come from `_Order`. A thread's
  rows must come in strictly increasing key order; an index that says otherwise
  (damage) fails the load with one line naming the threads.
- **File damage**: `PRAGMA integrity_check` runs on files up to `INTEGRITY_CHECK_MAX_BYTES`
  (256 MiB: it reads every page, about 1 GB/s measured, so a larger file would
  pay a second or more). Not `quick_check`, which costs about as much (0.19 s
  against 0.21 s on a 527 MB store) but does not compare the indexes with their
  table: the loader reads keys off the primary-key index, so a damaged index
  entry loaded a checkpoint under a key the table does not hold, unreported when all threads are read, once per load (by the reader
  of the first thread range, in a thread of its own while the rows are decoded);
  what it finds is one `load_errors` row without a thread (stage `file`). An
  error SQLite raises while reading a thread makes that thread one `load_errors`
  row (stage `file`, the thread named) after it was read again alone, and the
  read goes on after it: the next thread is asked of the key index and of the
  table (either may be the damaged one), and special writes are read the other
  way (scan or key) once one way met damage. Each thread is read by one reader,
  so a split load and a single-process one report the same rows. A table or key
  index that cannot be read from its root page (`_check_roots`) leaves no thread
  to read: the load fails with one line. A damaged key index makes `thread_count`
  unknown and incremental loads fail with one line (`key_digests`); a damaged or
  disordered one makes the load single-process (`split`).
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import ormsgpack

from loaders import _native
from loaders import delta, delta_read
from loaders.decode import EXT_DELTA_SNAPSHOT, UNPACK_OPT, DecodeError, Ext, decode_typed, outer_hook, plain, without_undefined
from loaders.elements import count as count_elements, max_elements
from loaders.records import (
    KEY_MAX_BYTES, SPECIAL_CHANNELS, CappedRows, LoadError, Payloads, RawCheckpoint, RawWrite, SourceError,
    SpecialWritesTail, ThreadBundle, checkpoint_cap_error, key_size_problem, max_blob_bytes, max_thread_checkpoints,
    oversized_tag_sql, second_copy, weighted_ranges,
)
from loaders.scratch import scratch_dir
from loaders.source import SPLIT_MIN_BYTES, Capabilities, Source, SourceOptions, SourceReader
from loaders.sqlite_wal import check_wal

# The compiled scan, read-ahead VFS and row source (None: the ormsgpack path below, SQLite's own VFS,
# the sqlite3 module's cursor; tests switch them off).
native_scan = _native.scan
native_readahead = _native.readahead
native_rows = _native.rows

_unpackb = ormsgpack.unpackb
_first = operator.itemgetter(0)  # rows grouped by thread id (a C call per row, not a lambda's frame)
FAST_TEXT = True  # read TEXT with sqlite3's own decoder until a value is not UTF-8 (`_threads_decoded`); tests turn it off
_CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
_WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
_SQLITE_MAGIC = b"SQLite format 3\x00"

# Keys are always sorted and compared by SQLite's BINARY collation, whatever a column
# declares (see the module docstring): on a BINARY index this costs nothing.
_THREAD = "thread_id COLLATE BINARY"
_KEY_ORDER = f"{_THREAD}, checkpoint_ns COLLATE BINARY, checkpoint_id COLLATE BINARY"
_CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id")
_WRITE_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id")
_SHOWN_CHARS = 64  # how much of an oversized key `load_errors` shows

INTEGRITY_CHECK_MAX_BYTES = 256 << 20
_INTEGRITY_CHECK_FINDINGS = 10  # asked of SQLite; the first three are shown
# The text encodings of a SQLite file, as Python codecs (None: UTF-8, where str order is the file's).
_CODECS = {"UTF-8": None, "UTF-16le": "utf-16-le", "UTF-16be": "utf-16-be"}
_NOTHING = object()  # no thread yet
_AFTER_NULL = object()  # a restart position after the threads whose id is NULL


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
            if (why := check_wal(copy, copy_wal)) is not None:
                raise SourceError(
                    f"{wal}: not the write-ahead log of {path.name}: {why} (a -wal from another database?); "
                    f"move it away to load {path.name} as last checkpointed")
            return copy
        if wal_id is None and copied_id is None and (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            return copy  # checkpointed and removed: the main file, which held still, is a committed state
    raise SourceError(f"{path}: its -wal kept restarting while it was copied (a busy writer); try again")


class _BadText(str):
    """A TEXT value that is not valid UTF-8, decoded with U+FFFD replacements: only ever
    shown in `load_errors`, never loaded as a key. It equals only a `_BadText` of the same
    `raw` bytes (as SQLite gave them): a valid id that looks alike is another thread."""

    raw: bytes

    def __eq__(self, other: object) -> bool:
        return type(other) is _BadText and self.raw == other.raw

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        bad = _BadText(raw.decode("utf-8", "replace"))
        bad.raw = raw
        return bad


def _one_step_digests(con: sqlite3.Connection, per_thread: str) -> Iterator[tuple[str, str]]:
    """`per_thread`'s (text thread_id, keys) rows of a UTF-8 file, fetched as one value.

    Each row fetched is a step that takes the GIL again; beside a thread that imports
    (an incremental load imports pyarrow and the derived tables' queries meanwhile) each
    waited out a switch interval, 2,000 rows 0.1-0.2 s. One value is one step: SQLite
    builds it with the GIL released. Each part is length-prefixed in bytes (`5:abcde`), the
    thread id then its keys, decoded as the connection decodes text.
    """
    sql = (f"SELECT CAST(group_concat(length(CAST(thread_id AS BLOB)) || ':' || thread_id "
           f"|| length(CAST(ifnull(keys, '') AS BLOB)) || ':' || ifnull(keys, ''), '') AS BLOB) "
           f"FROM ({per_thread}) WHERE typeof(thread_id) = 'text'")
    blob = con.execute(sql).fetchone()[0] or b""
    at, end = 0, len(blob)
    parts: list[str] = []
    while at < end:
        colon = blob.index(b":", at)
        size = int(blob[at:colon])
        parts.append(_text(blob[colon + 1:colon + 1 + size]))
        at = colon + 1 + size
    # (A thread id that is not UTF-8 is never a key: `_BadText`, left out as from the rows.)
    return ((t, k) for t, k in zip(parts[0::2], parts[1::2]) if type(t) is str)


def _utf8_size(codec: str, raw: bytes) -> int:
    """The UTF-8 size of UTF-16 text given as its bytes (`tl_utf8_size` in SQL)."""
    try:
        return len(raw.decode(codec, "surrogatepass").encode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:  # an odd byte out: as the text reads back
        return len(raw.decode(codec, "replace").encode("utf-8"))


def _value_size(col: str) -> str:
    """SQL of a stored value's size in bytes: of a BLOB, read from its record header without
    loading it (SQLite's length() of a column), so a value over `records.max_blob_bytes()`
    is never read; text (not what a saver writes) is measured as its bytes."""
    return f"(CASE WHEN typeof({col}) = 'blob' THEN length({col}) ELSE ifnull(length(CAST({col} AS BLOB)), 0) END)"


def _capped_value(col: str) -> str:
    """SQL of the type column and `col`, the value, with a value over `records.max_blob_bytes()`
    replaced by the oversized marker (`records.oversized_tag_sql`) and NULL."""
    size, cap = _value_size(col), max_blob_bytes()
    return f"{oversized_tag_sql(size, 'type', cap)}, CASE WHEN {size} > {cap} THEN NULL ELSE {col} END"


class _KeySql:
    """SQL measuring key values in UTF-8 bytes (the unit of `KEY_MAX_BYTES`) without
    fetching them. In a UTF-8 file that is their stored size; UTF-16 text takes 1/2 to
    3/2 of its stored size in UTF-8, so only a stored size in between is measured, by
    `tl_utf8_size` (Python, on a value of at most 8 kB)."""

    def __init__(self, codec: str | None) -> None:
        self.codec = codec

    def size(self, col: str) -> str:
        stored = f"ifnull(length(CAST({col} AS BLOB)), 0)"
        if self.codec is None:
            return stored
        return f"(CASE WHEN typeof({col}) = 'text' THEN tl_utf8_size(CAST({col} AS BLOB)) ELSE {stored} END)"

    def fits(self, col: str) -> str:
        stored = f"ifnull(length(CAST({col} AS BLOB)), 0)"
        if self.codec is None:
            return f"{stored} <= {KEY_MAX_BYTES}"
        return (
            f"(CASE WHEN typeof({col}) <> 'text' THEN {stored} <= {KEY_MAX_BYTES} "
            f"WHEN {stored} <= {KEY_MAX_BYTES * 2 // 3} THEN 1 WHEN {stored} > {KEY_MAX_BYTES * 2} THEN 0 "
            f"ELSE tl_utf8_size(CAST({col} AS BLOB)) <= {KEY_MAX_BYTES} END)"
        )

    def all_fit(self, cols: tuple[str, ...]) -> str:
        return " AND ".join(self.fits(c) for c in cols)


class _Order:
    """Where key values sort in one file, as SQLite sorts them: NULL, numbers, text, BLOBs;
    text by the bytes of the file's encoding (BINARY collation).

    >>> _Order("utf-16-le").before("\u4e2d", "a"), _Order(None).before("\u4e2d", "a")
    (True, False)
    """

    __slots__ = ("codec",)

    def __init__(self, codec: str | None) -> None:
        self.codec = codec

    def stored(self, text: str) -> bytes | None:
        """The bytes of `text` in the file (None: a `_BadText` not representable)."""
        if isinstance(text, _BadText):
            if self.codec is None:
                return text.raw
            try:
                return text.raw.decode("utf-8", "surrogatepass").encode(self.codec, "surrogatepass")
            except UnicodeError:
                return None
        return text.encode(self.codec or "utf-8", "surrogatepass")

    def key(self, value) -> tuple | None:
        if value is None:
            return (0, 0)
        if isinstance(value, (int, float)):
            return (1, value)
        if isinstance(value, bytes):
            return (3, value)
        stored = self.stored(value)
        return None if stored is None else (2, stored)

    def before(self, a, b) -> bool | None:
        """Whether `a` sorts strictly before `b` (None: cannot tell). Runs once per thread."""
        if self.codec is None and type(a) is str and type(b) is str:
            return a < b
        ka, kb = self.key(a), self.key(b)
        return None if ka is None or kb is None else ka < kb


def _key_problem(value) -> str | None:
    """Why a key column value (thread_id, checkpoint_ns, checkpoint_id) cannot be loaded, if it cannot."""
    if type(value) is str:
        return None
    if isinstance(value, _BadText):
        return "is not valid UTF-8 text"
    return f"is {'NULL' if value is None else 'a ' + type(value).__name__}, not text"


def _parent_problem(parent) -> str | None:
    """`_key_problem` of a parent id; the checkpoints query gives one over the size cap
    as minus its size (`SqliteReader._open`: it is never fetched), so a stored integer
    below that reads as one too: both are taken as none."""
    if type(parent) is int and parent < -KEY_MAX_BYTES:
        return key_size_problem(-parent)
    return _key_problem(parent)


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


def _file_token(path: Path, wal: Path) -> str:
    """The file's and its `-wal`'s inode, size and modification time: SQLite changes one of
    them at every committed write (`SourceReader.change_token`)."""
    parts = []
    for p in (path, wal):
        try:
            st = p.stat()
        except FileNotFoundError:
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "sqlite " + " ".join(parts)


class SqliteReader(SourceReader):
    """An opened SQLite store; see the module docstring for how it is opened and how damage is read."""

    capabilities = Capabilities(split=True, handoff=True, key_digests=True)

    def __init__(self, path: Path, options: SourceOptions, *, snapshot: Path | None = None) -> None:
        self.path = path
        self.options = options
        self._tmpdir: str | None = None
        self._snapshot: Path | None = None
        # How special writes are read once damage was met reading them (None: as `threads_after`
        # chooses), and the ways that met damage ({True: by key, False: by a scan}).
        self._writes_by_key: bool | None = None
        self._writes_failed: set[bool] = set()
        self._writes: _WriteGroups | None = None  # the special writes being read
        self._checkpoints = "checkpoints"  # "checkpoints NOT INDEXED" where its key index met damage (`_next_thread`)
        self._reading: object = _NOTHING  # the raw id of the thread being read
        self._rows_uri: str | None = None  # how `_rows.Store` opens this state (None: the sqlite3 cursor reads rows)
        self._store = None  # that `_rows.Store`, opened at the first read
        if snapshot is not None:
            # A worker reading the loading process's snapshot (`handoff`): same state, no second copy.
            self._open(lambda: sqlite3.connect(str(snapshot), isolation_level=None), snapshot)
            return
        if not path.is_file():
            raise SourceError(f"{path}: no such file (expected a SqliteSaver checkpoint file)")
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                raise SourceError(f"{path}: not a SQLite database (expected a SqliteSaver checkpoint file)")
        wal = path.with_name(path.name + "-wal")
        # Before anything is read: a write from now on changes it (a later load then compares digests).
        self._token = _file_token(path, wal)
        if not (wal.is_file() and wal.stat().st_size > 0):
            self._open(lambda: _connect_immutable(path), None)
            return

        def connect_snapshot() -> sqlite3.Connection:
            self._tmpdir = scratch_dir("snapshot")
            self._snapshot = snapshot_copy(path, wal, Path(self._tmpdir))
            return sqlite3.connect(str(self._snapshot), isolation_level=None)

        self._open(connect_snapshot, None)

    def _open(self, connect: Callable[[], sqlite3.Connection], copy: Path | None) -> None:
        path = self.path
        try:
            self.con = connect()
            self.con.text_factory = _text
            # One read transaction: every query below sees the same snapshot.
            self.con.execute("BEGIN")
            self._check_schema()
            codec = _CODECS.get(self.con.execute("PRAGMA encoding").fetchone()[0])
            page_size = self.con.execute("PRAGMA page_size").fetchone()[0]
            self._bytes = page_size * self.con.execute("PRAGMA page_count").fetchone()[0]
        except (sqlite3.DatabaseError, UnicodeDecodeError, MemoryError) as exc:
            # (UnicodeDecodeError: SQLite's own error message quotes schema text that is not
            # UTF-8; MemoryError: SQLITE_NOMEM on a header that claims an absurd size.)
            self.close()
            raise SourceError(f"{path}: unreadable SQLite file ({_why(exc)})") from None
        except SourceError:
            self.close()
            raise
        copy = copy if copy is not None else self._snapshot
        # A second connection to the same unchanging state, for `PRAGMA integrity_check` in a thread
        # (SQLite's own VFS: the read-ahead one serves the reading connection).
        if copy is not None:
            self._second = functools.partial(sqlite3.connect, str(copy), isolation_level=None, check_same_thread=False)
        else:
            self._second = functools.partial(
                sqlite3.connect, _uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None, check_same_thread=False,
            )
        if codec is None:  # (UTF-16 keys are measured by a Python function of this connection: `_KeySql`)
            self._rows_uri = _uri(copy, mode="ro") if copy is not None else _uri(path, mode="ro", immutable="1")
        self._order = _Order(codec)
        self._keys = _KeySql(codec)
        if codec is not None:
            self.con.create_function("tl_utf8_size", 1, functools.partial(_utf8_size, codec), deterministic=True)
        self._queries()

    def _queries(self) -> None:
        """The reading queries, with the size cap of the file's encoding (`_KeySql`).

        Checkpoints: rows whose keys fit (the others are `_oversized`); a parent id
        that does not fit comes as minus its size (`_parent_problem`). Special writes:
        every row, a key that does not fit cut short, with the column's name and size
        in two more columns (few rows: a Python check each is cheap there).
        """
        keys = self._keys
        self._fits = keys.all_fit(_CHECKPOINT_KEYS)
        parent = (f"CASE WHEN {keys.fits('parent_checkpoint_id')} THEN parent_checkpoint_id "
                  f"ELSE -{keys.size('parent_checkpoint_id')} END")
        self._checkpoint_value, self._write_value = _capped_value("checkpoint"), _capped_value("value")
        self._checkpoints_sql = (
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, {parent}, {self._checkpoint_value}, metadata "
            f"FROM {{table}} WHERE {self._fits}{{where}} ORDER BY {_KEY_ORDER}"
        )
        fit = {c: keys.fits(c) for c in _WRITE_KEYS}
        cut = ", ".join(f"CASE WHEN {fit[c]} THEN {c} ELSE substr({c}, 1, {_SHOWN_CHARS}) END" for c in _WRITE_KEYS)
        too_long = " ".join(f"WHEN NOT {fit[c]} THEN '{c}'" for c in _WRITE_KEYS)
        size = " ".join(f"WHEN NOT {fit[c]} THEN {keys.size(c)}" for c in _WRITE_KEYS)
        self._writes_sql = (
            f"SELECT {cut}, idx, channel, {oversized_tag_sql(_value_size('value'), 'type', max_blob_bytes())}, "
            f"CASE WHEN {' AND '.join(fit.values())} AND {_value_size('value')} <= {max_blob_bytes()} THEN value END, "
            f"CASE {too_long} END, CASE {size} END "
            f"FROM writes {{indexed}} WHERE channel COLLATE BINARY IN (?, ?, ?){{where}} "
            f"ORDER BY {_KEY_ORDER}, task_id COLLATE BINARY, idx"
        )

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
        clauses, params = self.thread_range.sql(_THREAD)
        if wanted is not None and len(wanted) <= 500:
            ids = sorted(wanted)
            clauses.append(f"{_THREAD} IN ({','.join('?' * len(ids))})" if ids else "FALSE")
            params.extend(ids)
            wanted = None
        return " AND ".join(clauses), params, wanted

    def _key_index_binary(self) -> bool:
        """Whether an index orders checkpoints by (thread_id, checkpoint_ns, checkpoint_id)
        under BINARY: else every read sorts (a key column declared NOCASE, say)."""
        for (name,) in self.con.execute("SELECT name FROM pragma_index_list('checkpoints')").fetchall():
            cols = self.con.execute(
                "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno", (name,)
            ).fetchall()[:3]
            if [c for c, _ in cols] == list(_CHECKPOINT_KEYS) and all(coll == "BINARY" for _, coll in cols):
                return True
        return False

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Thread-id ranges holding about equal decoding work, for `n` workers.

        A thread of k checkpoints holds about k²/2 message payloads (each checkpoint
        re-serializes the whole list), so threads are weighed by k², counted from the
        primary-key index alone: summing `length(checkpoint)` instead reads every
        row's pages (seconds on a large file). A file under `min_bytes` is not
        split: starting workers would cost more than it saves; nor is one whose key
        index is not BINARY (each range would sort the whole table), damaged or out
        of order (one process reads on past the damage and reports it, or fails).
        """
        if n <= 1 or self.path.stat().st_size < min_bytes:
            return [(None, None)]
        where, params, _ = self._thread_filter(None)
        try:
            if not self._key_index_binary():
                return [(None, None)]
            rows = self.con.execute(
                f"SELECT thread_id, count(*) FROM checkpoints WHERE {self._keys.fits('thread_id')}"
                f"{' AND ' + where if where else ''} GROUP BY {_THREAD} ORDER BY {_THREAD}",
                params,
            ).fetchall()
        except sqlite3.DatabaseError:
            return [(None, None)]
        before = self._order.before
        if any(before(a[0], b[0]) is False for a, b in zip(rows, rows[1:])):
            return [(None, None)]  # (an index out of order: the one reader fails in one line, or reads on)
        rows = [r for r in rows if type(r[0]) is str]
        return weighted_ranges([(t, k * k) for t, k in rows], n)

    def _out_of_order(self, prev, cur, table: str = "checkpoints") -> SourceError:
        return SourceError(
            f"{self.path}: the {table} index is out of order (damaged): thread {_shown(cur)!r:.80} comes after "
            f"thread {_shown(prev)!r:.80}; rebuild it on a copy (sqlite3 copy.sqlite REINDEX) and load the copy"
        )

    def thread_count(self) -> int | None:
        """Distinct thread ids (None when the key index is damaged: the read reports it)."""
        where, params, wanted = self._thread_filter(None)
        if wanted is not None:
            return len(wanted)
        sql = f"SELECT COUNT(DISTINCT {_THREAD}) FROM checkpoints {'WHERE ' + where if where else ''}"
        try:
            return self.con.execute(sql, params).fetchone()[0]
        except sqlite3.DatabaseError:
            return None

    def _damaged(self, exc: sqlite3.DatabaseError) -> SourceError:
        # Pages found damaged while reading (the header and schema were fine): the
        # file is damaged, not a row; say so in one line instead of a traceback.
        return SourceError(f"{self.path}: unreadable SQLite file ({exc})")

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        # Rows whose thread_id is not clean text, or whose keys are too long, are never loaded (see `threads`).
        try:
            yield from (
                k for k in self.con.execute(f"SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE {self._fits}")
                if type(k[0]) is str
            )
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def change_token(self) -> str | None:
        return getattr(self, "_token", None)  # (None for a worker reading a handed-off snapshot)

    def key_digests(self) -> Iterator[tuple[str, str]]:
        """(thread_id, every checkpoint key of the thread as one text) for incremental loads.

        Built by SQLite from the primary-key index, so an incremental load compares
        one value per thread instead of one Python tuple per checkpoint. The text is
        `loaders.digests`' key text, length-prefixed so that no two key sets share it.
        """
        try:
            if self._order.codec is None:
                yield from _one_step_digests(self.con, self._key_text_sql())
                return
            rows = self.con.execute(self._key_text_sql()).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        yield from (r for r in rows if type(r[0]) is str)

    def _key_text_sql(self) -> str:
        """(thread_id, keys): each thread's key text, a row a thread."""
        # (The empty namespace, almost every row, spelled without measuring it.)
        text = ("group_concat(CASE checkpoint_ns WHEN '' THEN '0:' ELSE length(checkpoint_ns) || ':' || checkpoint_ns "
                "END || length(checkpoint_id) || ':' || checkpoint_id, '')")
        if self._key_index_binary():
            # One pass over the key index, in key order, which is the order group_concat
            # takes its rows in: no sort of every key (half the time). Were SQLite ever to
            # feed a group in another order, its text would differ from the stored one and
            # the thread would be read again: slower, never a change missed.
            return f"SELECT thread_id, {text} AS keys FROM checkpoints WHERE {self._fits} GROUP BY {_THREAD}"
        return (f"SELECT thread_id, {text} AS keys FROM (SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                f"WHERE {self._fits} ORDER BY {_KEY_ORDER}) GROUP BY {_THREAD}")

    # --- threads ------------------------------------------------------------------

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        check = None
        if self.thread_range.lo is None and self.options.wanted(only) is None and self._bytes <= INTEGRITY_CHECK_MAX_BYTES:
            check = _IntegrityCheck(self._second)  # once per load: the reader of the first range (or of all)
        try:
            yield from self._oversized(only)
            yield from self._threads_decoded(only)
            if check is not None and check.wait():
                yield ThreadBundle(None, [], [], [LoadError(None, None, None, "file", check.reason())])
        finally:
            if check is not None:
                check.cancel()

    def _oversized(self, only: frozenset[str] | None) -> Iterator[ThreadBundle]:
        """Checkpoint rows with a key over `KEY_MAX_BYTES`, reported from the key index alone
        (their keys cut short), in bundles of at most 1,000 errors; from the table when the
        index is damaged."""
        where, params, _ = self._thread_filter(only)
        cut = ", ".join(
            f"substr({c}, 1, {_SHOWN_CHARS}), length({c}) > {_SHOWN_CHARS}, {self._keys.size(c)}" for c in _CHECKPOINT_KEYS
        )
        sql = f"SELECT {cut} FROM {{table}} WHERE NOT ({self._fits}){' AND ' + where if where else ''} ORDER BY {_KEY_ORDER}"
        errors: list[LoadError] = []
        done = 0  # rows reported (the table gives them again in the same order)
        try:
            try:
                for row in itertools.islice(self.con.execute(sql.format(table="checkpoints"), params), done, None):
                    if errors and (len(errors) >= 1000 or errors[-1].thread_id != _cut(row[0], row[1])):
                        yield ThreadBundle(None, [], [], errors)
                        errors = []
                    errors.append(_oversized_error(row))
                    done += 1
            except sqlite3.DatabaseError:  # (the key index is damaged: the table may not be)
                for row in itertools.islice(self.con.execute(sql.format(table="checkpoints NOT INDEXED"), params), done, None):
                    errors.append(_oversized_error(row))
        except sqlite3.DatabaseError as exc:
            reason = f"SQLite reports the file damaged: the keys could not be measured ({exc})"
            errors.append(LoadError(None, None, None, "file", reason))
        if errors:
            yield ThreadBundle(None, [], [], errors)

    def _threads_decoded(self, only: frozenset[str] | None) -> Iterator[ThreadBundle]:
        """`threads_after` from the start, again after any thread where the read stopped.

        sqlite3's built-in `str` text factory decodes UTF-8 in C (`_text`, a Python
        call per TEXT value, five per checkpoint row, costs about 2 % of a load) but
        raises on the first value that is not UTF-8: the read then goes on with
        `_text` after the last thread handed over. An error SQLite raises while a
        thread is read (a damaged page) makes that thread one error row
        (`_after_damage`), and the read goes on after it.
        """
        after = None  # where the next read starts: after this raw thread id (None: at the first)
        self.con.text_factory = str if FAST_TEXT else _text
        try:
            while True:
                damage, self._reading = None, _NOTHING
                try:
                    for raw_id, bundle in self.threads_after(only, after):
                        self._reading = _NOTHING
                        yield bundle
                        if raw_id is not _NOTHING:
                            after = _AFTER_NULL if raw_id is None else raw_id
                    return
                except sqlite3.DatabaseError as exc:
                    if not (self.con.text_factory is str and str(exc).startswith("Could not decode to UTF-8")):
                        damage = exc
                    self.con.text_factory = _text
                if damage is not None:
                    self._check_roots()
                    if self._writes is not None and self._writes.failed:
                        self._other_writes_read()
                    failed, self._reading = self._reading, _NOTHING
                    bundles, after = self._after_damage(only, after, failed, damage)
                    yield from bundles
                    if after is _NOTHING:
                        return
        finally:
            if self.con is not None:  # (None: the reader was closed before this generator was)
                self.con.text_factory = _text

    def _other_writes_read(self) -> None:
        """Special writes met damage: read them the other way (by key, or by a scan of the
        table: damage in the table or in its index), or by key when both met it (then a
        thread whose writes cannot be read is reported)."""
        failed = self._writes.by_key
        self._writes_failed.add(failed)
        self._writes_by_key = True if (not failed) in self._writes_failed else not failed

    def _check_roots(self) -> None:
        """Fail the source when a table or key index cannot be read from its root page (its
        first and its last row both fail): then no thread can be read, and the file is
        unusable, not damaged in places."""
        for tree, order in (
            ("checkpoints NOT INDEXED", ["rowid"]), ("checkpoints", _KEY_ORDER.split(", ")),
            ("writes NOT INDEXED", ["rowid"]), ("writes", [*_KEY_ORDER.split(", "), "task_id COLLATE BINARY", "idx"]),
        ):
            failed = []
            for direction in ("ASC", "DESC"):
                try:
                    self.con.execute(
                        f"SELECT thread_id FROM {tree} ORDER BY {', '.join(f'{o} {direction}' for o in order)} LIMIT 1"
                    ).fetchall()
                except sqlite3.OperationalError as exc:
                    if not str(exc).startswith("no such column"):  # (a table WITHOUT ROWID: its key is its order)
                        failed.append(exc)
                except sqlite3.DatabaseError as exc:
                    failed.append(exc)
            if len(failed) == 2:
                raise self._damaged(failed[0]) from None

    def _after_damage(self, only, after, failed, exc: sqlite3.DatabaseError) -> tuple[list[ThreadBundle], object]:
        """The bundles of the thread whose read failed (read again alone, by its key:
        other pages; or an error row naming it) and the position after it; `_NOTHING`
        as the position when there is no thread to name (the read ends there)."""
        where, params, wanted = self._thread_filter(only)
        if failed is _NOTHING:  # (before a thread's first row: the next one)
            failed, exc = self._next_thread(where, params, after, exc)
        prev = None if after is _AFTER_NULL else after
        if failed is _NOTHING or (after is not None and self._order.before(prev, failed) is False):
            # (no thread to name, or none past the last: the read cannot go on)
            where_ = "" if after is None else f" after thread {_shown(prev)!r:.80}"
            reason = f"SQLite reports the file damaged: reading stopped{where_} ({exc})"
            return [ThreadBundle(None, [], [], [LoadError(None, None, None, "file", reason)])], _NOTHING
        clause, args = self._key_sql(failed, "=")
        alone = (" AND ".join(filter(None, [where, clause])), [*params, *args])
        bundles = None
        for _ in range(2):  # (twice when its special writes met damage: the second time read the other way)
            by_key = True if self._writes_by_key is None else self._writes_by_key
            try:
                bundles = [b for _, b in self._bundles(*alone, wanted, _NOTHING, by_key)]
                break
            except sqlite3.DatabaseError as again:
                exc = again
                if self._writes is None or not self._writes.failed:
                    break
                self._other_writes_read()
                if self._writes_by_key == by_key:
                    break  # (both ways met damage)
        if bundles == [] and (wanted is None or failed in wanted):
            # Its key finds no row: the key index named a thread that is not where it says
            # (damaged). Reading on after it could skip the threads between, so the next
            # thread is asked of the index and of the table again (`_next_thread`).
            then, _ = self._next_thread(where, params, after, exc)
            if then is not _NOTHING and self._order.before(then, failed):
                return self._after_damage(only, after, then, exc)
        if bundles is None:
            shown = _shown(failed)
            reason = f"SQLite reports the file damaged: the thread could not be read ({exc})"
            bundles = [ThreadBundle(shown, [], [], [LoadError(shown, None, None, "file", reason)])]
        self._reading = _NOTHING
        return bundles, (_AFTER_NULL if failed is None else failed)

    def _next_thread(self, where: str, params: list, after, exc: sqlite3.DatabaseError) -> tuple[object, sqlite3.DatabaseError]:
        """The raw id of the first thread after `after` (`_NOTHING`: none), asked of the key
        index and of the table (a scan of its rows' first pages: the key index may end early
        or skip ahead where it is damaged). The reads go on the way that found it first: by
        the index (one damaged thread costs one thread), else by the table."""
        clauses, args = [where] if where else [], list(params)
        if after is not None:
            clause, more = self._key_sql(after, ">")
            clauses.append(clause)
            args.extend(more)
        sql = (f"SELECT thread_id FROM {{table}} WHERE {self._fits}{''.join(' AND ' + c for c in clauses)} "
               f"ORDER BY {_THREAD} LIMIT 1")
        found = {}
        for table in ("checkpoints", "checkpoints NOT INDEXED"):
            try:
                row = self.con.execute(sql.format(table=table), args).fetchone()
            except sqlite3.DatabaseError as again:
                exc = again
                continue
            if row is not None:
                found[table] = row[0]
        if not found:
            return _NOTHING, exc
        by_index, by_table = found.get("checkpoints", _NOTHING), found.get("checkpoints NOT INDEXED", _NOTHING)
        if by_index is _NOTHING or (by_table is not _NOTHING and self._order.before(by_table, by_index)):
            self._checkpoints = "checkpoints NOT INDEXED"
            return by_table, exc
        self._checkpoints = "checkpoints"
        return by_index, exc

    def _key_sql(self, raw_id, op: str) -> tuple[str, list]:
        """`thread_id <op> raw_id` in SQL (`op`: ">" or "="), for any value a thread id can hold."""
        if raw_id is None or raw_id is _AFTER_NULL:
            return ("thread_id IS NOT NULL" if op == ">" else "thread_id IS NULL"), []
        if isinstance(raw_id, _BadText):
            stored = self._order.stored(raw_id)
            if stored is None:
                raise SourceError(f"{self.path}: cannot read on after the thread id {raw_id!r:.80} (not text of the file's encoding)")
            return f"{_THREAD} {op} CAST(? AS TEXT)", [stored]
        return f"{_THREAD} {op} ?", [raw_id]

    def threads_after(self, only: frozenset[str] | None, after) -> Iterator[tuple[object, ThreadBundle]]:
        """(raw thread id, bundle) for every thread, or every thread whose raw id sorts after `after`."""
        where, params, wanted = self._thread_filter(only)
        if after is not None:
            clause, args = self._key_sql(after, ">")
            where = " AND ".join(filter(None, [where, clause]))
            params = [*params, *args]
        prev = _NOTHING if after is None else (None if after is _AFTER_NULL else after)
        by_key = self._writes_by_key
        if by_key is None:
            by_key = (self.options.wanted(only) is not None and wanted is None) or self.thread_range != (None, None)
        return self._bundles(where, params, wanted, prev, by_key)

    def _bundles(self, where: str, params: list, wanted: set[str] | None, prev, by_key: bool) -> Iterator[tuple[object, ThreadBundle]]:
        and_where = f" AND {where}" if where else ""
        cps = self._thread_rows(self._checkpoints_sql.format(table=self._checkpoints, where=and_where), params)
        self._writes = None
        writes = self._special_writes(and_where, params, by_key)
        before = self._order.before
        for thread_id, rows, payloads, fast, skipped in cps:
            # A thread's rows come together, so each thread id sorts after the one before
            # (one comparison per thread); an index that says otherwise is damaged.
            if prev is not _NOTHING and before(prev, thread_id) is False:
                raise self._out_of_order(prev, thread_id)
            prev = self._reading = thread_id
            problem = _key_problem(thread_id)
            if problem is not None:
                # No id to load these rows under (a hostile or damaged file): report each, load none.
                bad = [LoadError(_shown(r[0]), _shown(r[1]), _shown(r[2]), "checkpoint", f"thread_id {problem}; row skipped") for r in rows]
                yield thread_id, ThreadBundle(_shown(thread_id), [], [], bad + writes.drain())
                continue
            thread_writes = writes.take(thread_id)
            if wanted is not None and thread_id not in wanted:
                continue
            bundle = bundle_thread(thread_id, rows, thread_writes, payloads, fast, skipped)
            bundle.errors.extend(writes.drain())
            if delta.marked(bundle):  # a DeltaChannel thread: its messages are rebuilt (loaders.delta)
                bundle = delta_read.sqlite_thread(self.con, bundle, self._fits, self._keys.all_fit(_WRITE_KEYS),
                                                self._checkpoint_value, self._write_value)
            yield thread_id, bundle
        errors = writes.finish()
        if errors:
            yield _NOTHING, ThreadBundle(None, [], [], errors)

    def _thread_rows(self, sql: str, params: list) -> Iterator[tuple[object, object, Payloads | None, int, int]]:
        """The checkpoints query's rows grouped by thread: (raw id, rows, payloads, fast, skipped), where
        the first `fast` rows are `RawCheckpoint`s numbered into `payloads`, the others are raw rows
        (`bundle_thread`), and `skipped` rows past the thread's limit were only counted (C; the
        cursor's rows are an iterator `bundle_thread` cuts itself). Through `_rows.Store` (`loaders/_rows.c`: SQLite's C API, each blob scanned
        where SQLite holds it) when built, else the sqlite3 cursor (raw rows, grouped lazily). Both
        raise where the other does, with `_reading` naming the same thread."""
        if self._store is None and native_rows is not None and self._rows_uri is not None:
            try:
                self._store = self._open_store()
            except (sqlite3.Error, MemoryError):
                self._rows_uri = None  # (a second connection refused: this one reads on, as without C)
        if self._store is None or native_rows is None or not all(type(p) in (str, bytes, int) for p in params):
            cursor = self.con.execute(sql, params)
            return ((thread_id, rows, None, 0, 0) for thread_id, rows in itertools.groupby(cursor, key=_first))
        return self._charged(self._store.rows(sql, params, max_thread_checkpoints(), max_elements()))

    def _charged(self, rows) -> Iterator[tuple[object, list, Payloads, int, int]]:
        """`_rows.Rows`, with the thread an error is charged to (`Rows.reading`) set as `_reading`.

        The cursor path hands a thread over at its first row (`itertools.groupby`), so
        `_bundles` judges its id (order, key problems, the wanted set) before its rows
        fail; `_rows` hands a thread over only whole. A thread whose rows failed before
        it was handed over is therefore handed over here first, its rows raising the
        error when read (or on the next group when skipped), as the cursor's would."""
        last = _NOTHING
        while True:
            try:
                group = next(rows)
            except StopIteration:
                return
            except BaseException as exc:
                self._reading = reading = rows.reading
                if reading is not _NOTHING and reading is not last:
                    last = reading
                    yield reading, _raising(exc), None, 0, 0
                raise
            last = group[0]
            yield group

    def _open_store(self):
        """`_rows.Store` on this reader's state: through the read-ahead VFS when the file is read in place."""
        hooks = (_text, _sqlite_error, RawCheckpoint, Payloads, _NOTHING)
        if native_readahead is not None and "immutable=1" in self._rows_uri:
            try:
                return native_rows.Store(f"{self._rows_uri}&vfs={native_readahead.VFS_NAME}", *hooks)
            except sqlite3.OperationalError:
                pass  # (no such vfs)
        return native_rows.Store(self._rows_uri, *hooks)

    def _special_writes(self, and_where: str, params: list, by_key: bool) -> _WriteGroups:
        """The `__interrupt__` / `__resume__` / `__error__` writes of the selected threads,
        grouped by thread in thread order (`and_where`, `params`: the checkpoints query's)."""
        # Special writes are few among many (every step writes its messages): walking
        # the primary key in order would fetch every row from the table at random to
        # read its channel (2.3 s on a 7 GB store not in the page cache); a scan in
        # table order and a sort of the few that match is sequential. A chosen set of
        # threads bound in the SQL (not filtered afterwards) is looked up by the key,
        # and so is one range of a split load: a worker reads many small ranges, and a
        # whole-table scan for each would cost more than the lookups of its own rows.
        # (After damage, `_other_writes_read` may choose otherwise.)
        indexed = "" if by_key else "NOT INDEXED"
        groups = self._writes = _WriteGroups(self._order, functools.partial(self._out_of_order, table="writes"), by_key)
        try:
            rows = self.con.execute(self._writes_sql.format(indexed=indexed, where=and_where), [*SPECIAL_CHANNELS, *params])
        except sqlite3.DatabaseError:
            groups.failed = True
            raise
        groups.start(rows)  # (its first row: a scan sorts them all here)
        return groups

    def close(self) -> None:
        store, self._store = getattr(self, "_store", None), None
        if store is not None:
            store.close()
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


def _raising(exc: BaseException) -> Iterator[tuple]:
    """The rows of a thread whose read failed: reading them raises `exc` (`SqliteReader._charged`)."""
    raise exc
    yield  # (a generator: nothing is raised until it is read)


def _oversized_error(row) -> LoadError:
    """The error of a checkpoint row from `SqliteReader._oversized`: (cut key, was cut, size) x 3."""
    shown = [_cut(row[i], row[i + 1]) for i in (0, 3, 6)]
    column, size = next((c, row[i + 2]) for c, i in zip(_CHECKPOINT_KEYS, (0, 3, 6)) if key_size_problem(row[i + 2]))
    return LoadError(*shown, "checkpoint", f"{column} {key_size_problem(size)}; row skipped")


def _cut(prefix, was_cut) -> str | None:
    """A key cut to its first `_SHOWN_CHARS` characters, as `load_errors` shows it."""
    shown = _shown(prefix)
    return f"{shown}…" if was_cut and shown is not None else shown


# The sqlite3 module's exception classes by SQLite's primary result code (CPython's
# `get_exception_class`), for the errors `_rows.Store` meets: the same class and message either way.
_SQLITE_ERRORS = {
    **dict.fromkeys((2, 12), sqlite3.InternalError),
    **dict.fromkeys((1, 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 16, 17), sqlite3.OperationalError),
    18: sqlite3.DataError,
    **dict.fromkeys((19, 20), sqlite3.IntegrityError),
    **dict.fromkeys((21, 25), sqlite3.InterfaceError),
}
_SQLITE_NOMEM = 7


def _sqlite_error(code: int, message: str) -> BaseException:
    """The exception sqlite3 raises for SQLite's (extended) result `code` and `message`.

    >>> type(_sqlite_error(11, "database disk image is malformed")).__name__, type(_sqlite_error(7, "")).__name__
    ('DatabaseError', 'MemoryError')
    """
    if code & 0xFF == _SQLITE_NOMEM:
        return MemoryError()
    exc = _SQLITE_ERRORS.get(code & 0xFF, sqlite3.DatabaseError)(message)
    exc.sqlite_errorcode = code
    return exc


def _why(exc: BaseException) -> str:
    """An error SQLite raised, as one line: a MemoryError (SQLITE_NOMEM) carries no message,
    and a UnicodeDecodeError is sqlite3 failing to decode SQLite's message about damaged text."""
    if isinstance(exc, MemoryError):
        return "SQLite ran out of memory reading it (a damaged header or page)"
    if isinstance(exc, UnicodeDecodeError):
        return "SQLite's error message quotes text that is not UTF-8 (damaged schema or page)"
    return str(exc)


class _IntegrityCheck:
    """`PRAGMA integrity_check` on a connection of its own, in a thread: SQLite releases the
    GIL while it runs, so it costs the load's wall time little next to the decoding."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self.findings: list[str] = []
        self._con: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._thread = threading.Thread(target=self._run, args=(connect,), name="sqlite-integrity-check", daemon=True)
        self._thread.start()

    def _run(self, connect: Callable[[], sqlite3.Connection]) -> None:
        try:
            con = connect()
        except (sqlite3.Error, UnicodeDecodeError, MemoryError) as exc:
            self.findings = [_why(exc)]
            return
        with self._lock:
            if self._cancelled:
                con.close()
                return
            self._con = con
        try:
            found = [r[0] for r in con.execute(f"PRAGMA integrity_check({_INTEGRITY_CHECK_FINDINGS})")]
            self.findings = [] if found == ["ok"] else [str(f) for f in found]
        except (sqlite3.Error, UnicodeDecodeError, MemoryError) as exc:  # (the check itself stopped at damage)
            if not self._cancelled:
                self.findings = [f"integrity_check stopped: {_why(exc)}"]
        finally:
            with self._lock:
                self._con = None
            con.close()

    def wait(self) -> list[str]:
        self._thread.join()
        return self.findings

    def reason(self) -> str:
        shown = [" ".join(f.replace("*** in database main ***", "").split()) for f in self.findings[:3]]
        more = len(self.findings) - len(shown)
        tail = f" (and {more}{' or more' if len(self.findings) >= _INTEGRITY_CHECK_FINDINGS else ''} more)" if more else ""
        return f"SQLite reports the file damaged: {'; '.join(shown)}{tail}"

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._con is not None:
                self._con.interrupt()
        self._thread.join()


class _WriteGroups:
    """Special-write rows grouped by thread id, handed out as the threads come by (in the
    file's order, `_Order`); rows with a key over the size cap become errors (`drain`)."""

    def __init__(self, order: _Order, out_of_order: Callable[[object, object], SourceError], by_key: bool) -> None:
        self._order = order
        self._out_of_order = out_of_order
        self.by_key = by_key  # how the rows are read (by key, or by a scan of the table)
        self.failed = False  # SQLite raised while they were read
        self._errors: list[LoadError] = []
        self._prev: object = _NOTHING

    def start(self, rows) -> None:
        self._groups = itertools.groupby(self._sized(rows), key=_first)
        self._pending = self._next()

    def _sized(self, rows):
        try:
            for row in rows:
                if row[8] is None:
                    yield row[:8]
                    continue
                column, size = row[8], row[9]
                shown = [_cut(v, c == column) for v, c in zip(row[:3], _WRITE_KEYS)]
                self._errors.append(LoadError(*shown, "write", f"{row[5]}: {column} {key_size_problem(size)}; row skipped"))
        except sqlite3.DatabaseError:
            self.failed = True
            raise

    def _next(self):
        group = next(self._groups, None)
        if group is not None:
            if self._prev is not _NOTHING and self._order.before(self._prev, group[0]) is False:
                raise self._out_of_order(self._prev, group[0])
            self._prev = group[0]
        return group

    def take(self, thread_id: str) -> list:
        """The rows of `thread_id`, skipping those of threads before it."""
        pending = self._pending
        before = self._order.before
        while pending is not None and (type(pending[0]) is not str or before(pending[0], thread_id)):
            pending = self._next()
        rows: list = []
        if pending is not None and pending[0] == thread_id:
            rows = self._bounded(thread_id, pending[1])
            pending = self._next()
        self._pending = pending
        return rows

    def _bounded(self, thread_id: str, group) -> list:
        """A thread's rows, bounded (`records.SpecialWritesTail`): the earlier ones are one error row."""
        tail = SpecialWritesTail(7)
        for row in group:
            tail.add(row)
        error = tail.error(thread_id)
        if error is not None:
            self._errors.append(error)
        return tail.rows()

    def drain(self) -> list[LoadError]:
        """The errors met so far (each once)."""
        errors, self._errors = self._errors, []
        return errors

    def finish(self) -> list[LoadError]:
        """Read the rest (threads with no checkpoint to load): its errors and those not drained."""
        while self._pending is not None:
            for _ in self._pending[1]:
                pass
            self._pending = self._next()
        return self.drain()


def _open_snapshot(path: str, snapshot: str, options: SourceOptions) -> SqliteReader:
    return SqliteReader(Path(path), options, snapshot=Path(snapshot))


def bundle_thread(thread_id: str, rows, write_rows, payloads: Payloads | None = None, fast: int = 0,
                  skipped: int = 0) -> ThreadBundle:
    """One thread's `checkpoints` and special `writes` rows (in the reader's column
    order, by checkpoint id) → `ThreadBundle`; damage is reported, never raised.

    The first `fast` rows may already be `RawCheckpoint`s numbered into `payloads`
    (`_rows.Rows`: well-formed rows, no key repeated), the rest raw rows, numbered on.
    Rows past the first `records.max_thread_checkpoints()` are counted, not read
    (`skipped` more were counted before): one error row says so.
    """
    errors: list[LoadError] = []
    payloads = Payloads() if payloads is None else payloads
    checkpoints = []
    prev_ns = prev_cid = None
    cap, limit = max_thread_checkpoints(), max_elements()
    if fast:
        checkpoints, rows = rows[:fast], rows[fast:]
        _, prev_ns, prev_cid = checkpoints[-1][:3]
    rows = CappedRows(rows, max(cap - fast, 0))
    append = checkpoints.append
    for row in rows:
        if row[2] == prev_cid and row[1] == prev_ns:
            # Rows come sorted by key, so a key stored twice (a table without its primary
            # key) comes twice in a row: the copy is reported, never loaded as a second checkpoint.
            errors.append(LoadError(_shown(row[0]), _shown(row[1]), _shown(row[2]), "checkpoint", second_copy("checkpoints")))
            continue
        prev_ns, prev_cid = row[1], row[2]
        cp = fast_checkpoint(row, payloads, limit)
        if cp is None and _keys_ok(row, errors, "checkpoint"):
            cp = decode_checkpoint_row(row, errors, payloads)
        if cp is not None:
            append(cp)
    if skipped + rows.skipped:
        errors.append(checkpoint_cap_error(thread_id, cap, skipped + rows.skipped))
    writes = decode_writes(write_rows, errors)
    return ThreadBundle(thread_id, checkpoints, writes, errors, payloads.items)


def decode_writes(write_rows, errors: list[LoadError]) -> list[RawWrite]:
    """Special `writes` rows (the reader's column order) → `RawWrite`s; damage is reported."""
    writes = []
    for t, ns, cid, task_id, idx, channel, type_, value in write_rows:
        if not _keys_ok((t, ns, cid), errors, "write"):
            continue
        try:
            decoded = plain(decode_typed(type_, value, deep=True))
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
    return without_undefined(text)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _strict_json(text: str) -> bool:
    try:
        json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False
    return True



def fast_checkpoint(row, payloads: Payloads, limit: int | None = None) -> RawCheckpoint | None:
    """The common case of `decode_checkpoint_row` in a few checks; None when the
    row is anything but a well-formed msgpack checkpoint with JSON-object
    metadata of at most `limit` values (`loaders/elements.py`; the full path then
    reports what is wrong). This runs once per checkpoint, so every check costs
    the whole load time."""
    limit = max_elements() if limit is None else limit
    if native_scan is not None:
        # All of the below in one C call: the checks, a walk of the blob in place that
        # compares payloads with the previous checkpoint's where they lie, and the
        # numbering. None when it is not sure; then ormsgpack decides, below.
        cp = native_scan.row(row, payloads, RawCheckpoint, limit)
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
    if len(blob) > limit and count_elements(blob, limit) > limit:
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
    problem = None if parent is None else _parent_problem(parent)
    if problem is not None:
        errors.append(LoadError(*where, "checkpoint", f"parent_checkpoint_id {problem}; taken as none"))
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
    if type(messages) is Ext and messages.code == EXT_DELTA_SNAPSHOT:  # a DeltaChannel snapshot: its value (loaders.delta)
        try:
            messages = delta.stored_value(messages)
        except DecodeError as exc:
            errors.append(LoadError(*where, "messages", str(exc)))
            return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, None, damaged=True, metadata=md_json)
    if messages is not None and not isinstance(messages, list):
        errors.append(LoadError(*where, "messages", f"messages channel is a {type(messages).__name__}, not a list"))
        return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, None, damaged=True, metadata=md_json)
    versions = payloads.versions(messages) if messages is not None else None
    return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, versions, metadata=md_json)
