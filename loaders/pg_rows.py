"""What every Postgres-shaped source shares: options, table shapes, and rows → `ThreadBundle`s.

A `PostgresSaver` keeps `state['messages']` outside the checkpoint, in a
`checkpoint_blobs` row keyed by `(thread, ns, 'messages', version)` where the
version is `checkpoint.channel_versions.messages` (contract §7.5). One blob row
is shared by every checkpoint that carries that version. The live database and
the staged exports all hand three streams to `assemble()`, each ordered by
thread id in code-point order (= `COLLATE "C"` = UTF-8 byte order):

- `CheckpointRow`s (the JSONB already reduced to ts and messages version),
- `BlobRow`s of the `messages` channel,
- `WriteRow`s of the special channels.

`assemble()` merge-joins them one thread at a time, decodes each blob version
once and shares the decoded list between the checkpoints that carry it. It checks
the order as it goes: a thread met again after its rows ended fails the source
(`SourceError`), and a row repeating the key before it is reported and skipped.

Rows with a key column (`KEY_COLUMNS`) over `records.KEY_MAX_BYTES` never reach it:
the readers leave them out in their queries and count them (`OversizedKeys`), and
`assemble()` reports them with their thread.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from loaders import delta
from loaders.delta import read as delta_read
from loaders.decode import EXT_DELTA_SNAPSHOT, DecodeError, Ext, decode_typed, plain, without_undefined
from loaders.records import (
    KEY_MAX_BYTES, OVERSIZED_TAG, SPECIAL_CHANNELS, Deferred, LoadError, Payloads, RawCheckpoint, RawWrite, SourceError, SpecialWritesTail, ThreadBundle,
    blob_bytes, checkpoint_cap_error, key_size_problem, max_thread_checkpoints, second_copy,
)
from loaders.source import SourceOptions
from loaders.transform.limits import metadata_too_long

MESSAGES = "messages"
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
MIGRATIONS = "checkpoint_migrations"

# Required columns per table, for the current schema and for the deprecated
# ShallowPostgresSaver one (no checkpoint_id / parent in checkpoints, no
# version in blobs: one row per thread and namespace). `task_path` (v9) is
# never needed, so partially migrated databases read the same.
REQUIRED = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata"),
    "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "version", "type", "blob"),
    "checkpoint_writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob"),
}
SHALLOW_REQUIRED = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint", "metadata"),
    "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "type", "blob"),
}

# A ts exactly as langgraph writes it (UTC isoformat, micros omitted when 0).
# In this form text order is time order, so `--since` compares text on the
# server and in the staging database alike ('+' sorts before '.').
TS_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?\+00:00$"
# LangGraph.js writes `2026-03-01T09:30:00.123Z` (contract §7.12): its `--since` key is
# that instant in the form above, `2026-03-01T09:30:00.123000+00:00` (`since_key`). The
# same rewrite on the server: `SINCE_KEY_SQL`, with `JS_TS_PATTERN` and `JS_TS_TO_KEY`
# as its parameters (Postgres reads `\1000` as group 1 then "000"; Python, as `\g<1>000`).
JS_TS_PATTERN = r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3})Z$"
JS_TS_TO_KEY = r"\1000+00:00"
SINCE_KEY_SQL = "regexp_replace(checkpoint ->> 'ts', %s, %s)"
_TS_RE = re.compile(TS_PATTERN)
_JS_TS_RE = re.compile(JS_TS_PATTERN)


def since_key(ts: str | None) -> str | None:
    """A checkpoint ts as `--since` compares it (text order = time order), None when it is
    in neither writer's form.

    >>> since_key("2026-03-01T09:30:00.123Z"), since_key("2026-03-01T09:30:00+00:00"), since_key("yesterday")
    ('2026-03-01T09:30:00.123000+00:00', '2026-03-01T09:30:00+00:00', None)
    """
    if ts is None:
        return None
    key = _JS_TS_RE.sub(r"\g<1>000+00:00", ts)
    return key if _TS_RE.match(key) else None


class CheckpointRow(NamedTuple):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None
    parent_checkpoint_id: str | None
    ts: str | None
    messages_version: str | None  # None: the checkpoint has no messages channel
    shape: str | None  # None when the checkpoint JSON is an object, else its JSON type
    metadata: str | None  # JSON text, as JSONB prints it


class BlobRow(NamedTuple):
    thread_id: str
    checkpoint_ns: str
    version: str
    type: str | None
    blob: bytes | None


# The most bytes of fetched `messages` blobs one thread holds while it is assembled, when
# its reader can fetch a blob again by key: the kept blobs past it are released and
# fetched again, one at a time, when decoded (a hostile thread of 2,000 versions of 1 MB
# of zeros is 2 GB, and 60 MB on disk).
HELD_BLOB_BYTES = 64 << 20

# Metadata of more bytes than this (as Postgres prints the JSON) is left out of the checkpoint
# rows a FETCH brings, 2,000 at a time, in `DEFERRED_METADATA<bytes>`'s place, and fetched by
# key when its thread is assembled (300 threads of 7 MB of metadata, 33 MB on disk, took a load
# to 4.2 GB). A thread holds at most HELD_METADATA_BYTES of such metadata: past it, a large one is
# not fetched (one `load_errors` row for the thread); small ones count with the thread's rows.
INLINE_METADATA_BYTES = 16 << 10
DEFERRED_METADATA = "tl:deferred:"
HELD_METADATA_BYTES = 64 << 20


class WriteRow(NamedTuple):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    type: str | None
    blob: bytes | Deferred | None  # (Deferred: a large value, fetched when decoded)


def table_shape(columns: dict[str, set[str]], where: str) -> bool:
    """Check the three tables' columns; True for the deprecated shallow schema.

    `columns` maps table → its column names. Raises `SourceError` naming `where`.

    >>> table_shape({t: set(c) for t, c in REQUIRED.items()}, "db")
    False
    """
    missing = [t for t in TABLES if t not in columns]
    if missing:
        raise SourceError(
            f"{where}: missing table{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(expected the tables PostgresSaver.setup() creates: {', '.join(TABLES)})"
        )
    shallow = "checkpoint_id" not in columns["checkpoints"]
    for table in TABLES:
        needed = (SHALLOW_REQUIRED if shallow else REQUIRED).get(table, REQUIRED[table])
        lacking = [c for c in needed if c not in columns[table]]
        if lacking:
            raise SourceError(
                f"{where}: table {table} lacks column{'s' if len(lacking) > 1 else ''} {', '.join(lacking)} "
                f"(has {', '.join(sorted(columns[table]))})"
            )
    if shallow and "version" in columns["checkpoint_blobs"]:
        raise SourceError(
            f"{where}: checkpoints has no checkpoint_id column (ShallowPostgresSaver) but checkpoint_blobs has a "
            "version column (PostgresSaver): not a schema either saver writes"
        )
    return shallow


def since_text(since: str | None) -> str | None:
    """`--since` as langgraph would have written that instant as a checkpoint ts.

    A naive time is taken as UTC. Raises `ValueError` for a non-ISO value.

    >>> since_text("2025-03-03T10:00:00+01:00")
    '2025-03-03T09:00:00+00:00'
    """
    if since is None:
        return None
    try:
        dt = datetime.fromisoformat(since.strip())
    except ValueError:
        raise ValueError(f"--since {since!r} is not an ISO 8601 date or time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat()


@dataclass(frozen=True, slots=True)
class SinceOptions(SourceOptions):
    """The options of a COPY CSV export: `since`, only threads with a checkpoint at or
    after this ISO time (naive = UTC); checked here, so a bad value fails before
    anything is opened. (An export's files are its tables: it has no schema to pick.)

    >>> SinceOptions(since="2025-03-03T10:00:00+01:00").since_ts
    '2025-03-03T09:00:00+00:00'
    """

    since: str | None = field(default=None, metadata={
        "label": "Since", "placeholder": "2025-03-01T00:00Z",
        "help": "load only threads with a checkpoint at or after this ISO time (naive = UTC)"})

    def __post_init__(self) -> None:
        SourceOptions.__post_init__(self)
        since_text(self.since)

    @property
    def since_ts(self) -> str | None:
        """`since` as langgraph writes a checkpoint ts (see `since_text`)."""
        return since_text(self.since)


@dataclass(frozen=True, slots=True)
class PostgresOptions(SinceOptions):
    """The options of a live Postgres database and of a pg_dump: `since`, and `schema`,
    the schema holding the checkpoint tables. Given, it wins over the DSN's search_path;
    not given, a live database is read where a PostgresSaver on the same DSN reads (the
    schema its search_path finds `checkpoints` in, e.g. from `options=-csearch_path=agents`,
    else `public`), and a dump in the one schema it holds them in.

    >>> PostgresOptions(schema="app").names()
    ('threads', 'since', 'schema')
    """

    schema: str | None = field(default=None, metadata={
        "label": "Postgres schema", "placeholder": "public",
        "help": "the schema holding the checkpoint tables (wins over a DSN's search_path; default: where the DSN's "
                "search_path finds them, as PostgresSaver would, else public; of a dump, the one it holds)"})


class OversizedKeys(NamedTuple):
    """Rows of one table skipped for a key column over `KEY_MAX_BYTES`, as a reader counted
    them (of the key, only its size and first characters are ever fetched).

    >>> OversizedKeys(None, "checkpoints", "thread_id", 3, 100000, "aaaa").error().reason
    "thread_id 'aaaa'… is 100000 bytes long, over the 4096-byte limit for a key: 3 checkpoints rows skipped"
    """

    thread_id: str | None  # None: the thread id itself is the oversized key
    table: str  # checkpoints, checkpoint_blobs or checkpoint_writes
    column: str  # the first key column of those rows that is over the limit
    rows: int
    longest: int  # bytes
    begins: str  # the longest one's first characters

    def error(self) -> LoadError:
        reason = (
            f"{self.column} {self.begins!r}… {key_size_problem(self.longest)}: "
            f"{self.rows} {self.table} row{'s' if self.rows != 1 else ''} skipped"
        )
        return LoadError(self.thread_id, None, None, _STAGE_OF[self.table], reason)


# The key columns a reader caps (`KEY_MAX_BYTES`), per table, in the order they are checked.
# (`channel` of writes is one of SPECIAL_CHANNELS, and a blob's version is only looked up.)
KEY_COLUMNS = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id"),
    "checkpoint_blobs": ("thread_id", "checkpoint_ns"),
    "checkpoint_writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id"),
}
_STAGE_OF = {"checkpoints": "checkpoint", "checkpoint_blobs": "messages", "checkpoint_writes": "write"}
# How many characters of an oversized key a message shows.
KEY_SHOWN = 32


class _Follower:
    """The rows of a secondary stream that belong to the thread being assembled."""

    def __init__(self, rows: Iterable[tuple], what: str, where: str) -> None:
        self._rows = iter(rows)
        self._next: tuple | None = next(self._rows, None)
        self._last: str | None = None
        self.what = what
        self.where = where

    def take(self, thread_id: str, tail: SpecialWritesTail | None = None,
             keep: Callable[[tuple], bool] | None = None, spill: Callable[[tuple], tuple] | None = None) -> list[tuple]:
        """The rows of `thread_id` (into `tail` when given: kept bounded as they stream); with
        `keep`, only those it keeps: the others are dropped as they stream by, never held.
        With `spill`, the blob rows kept past `HELD_BLOB_BYTES` of blobs go through it
        (their bytes released, `Deferred`)."""
        out: list[tuple] = []
        add = tail.add if tail is not None else out.append
        held = 0
        row = self._next
        while row is not None and row[0] <= thread_id:
            if self._last is not None and row[0] < self._last:
                raise _disorder(self.where, self.what)
            self._last = row[0]
            if row[0] == thread_id and (keep is None or keep(row)):
                if spill is not None and type(row[4]) is bytes:
                    held += len(row[4])
                    if held > HELD_BLOB_BYTES:
                        held -= len(row[4])
                        row = spill(row)
                add(row)
            row = next(self._rows, None)
        self._next = row
        return tail.rows() if tail is not None else out


def _disorder(where: str, what: str) -> SourceError:
    # Rows are grouped by thread as they stream: a thread met again after its group ended
    # would be loaded twice (or half). The readers sort in code-point order (COLLATE "C").
    return SourceError(f"{where}: {what} rows are not ordered by thread id (a damaged index or a collation that is not byte order?)")


def _in_key_order(rows: list, key, what: str, where: str, errors: list[LoadError]) -> list:
    """One thread's rows, checked to come in strictly increasing key order: a row with the
    key of the one before it (a table without its primary key) is reported and skipped;
    a key that goes back means the source's order is not ours (SourceError)."""
    out = []
    last = None
    for row in rows:
        k = key(row)
        if k is None:  # no key to order by (a checkpoint without an id): build_bundle reports it
            out.append(row)
            continue
        if last is not None and k <= last:
            if k < last:
                raise SourceError(f"{where}: {what} rows of thread {row[0]!r:.80} are not ordered by their key")
            rest = f" (task_id, idx) {k[2:]!r:.200}" if len(k) > 2 else ""  # (the error row names the others)
            errors.append(LoadError(row[0], row[1], row[2], _STAGE_OF[what], second_copy(what, rest)))
            continue
        last = k
        out.append(row)
    return out


def _checkpoint_key(row: CheckpointRow) -> tuple | None:
    return None if row.checkpoint_id is None else (row.checkpoint_ns, row.checkpoint_id)


def _write_key(row: WriteRow) -> tuple:
    return (row.checkpoint_ns, row.checkpoint_id, row.task_id, row.idx)


def _oversized_groups(oversized: Iterable[OversizedKeys], where: str) -> Iterator[tuple[str | None, list[LoadError]]]:
    """`(thread_id, errors)` per thread of an ordered `OversizedKeys` stream; the rows of
    oversized thread ids (thread_id None) come first, as one group."""
    current: str | None = None
    errors: list[LoadError] = []
    started = False
    for row in oversized:
        if started and row.thread_id != current:
            if row.thread_id is None or (current is not None and row.thread_id < current):
                raise _disorder(where, "oversized key")
            yield current, errors
            errors = []
        current, started = row.thread_id, True
        errors.append(row.error())
    if started:
        yield current, errors


def assemble(
    checkpoints: Iterable[CheckpointRow],
    blobs: Iterable[BlobRow],
    writes: Iterable[WriteRow],
    where: str,
    oversized: Iterable[OversizedKeys] = (),
    delta_writes: Callable[[str], Iterable[tuple]] | None = None,
    fetch_blob: Callable[[str, str, str], bytes | None] | None = None,
    fetch_metadata: Callable[[str, str, str], str | None] | None = None,
) -> Iterator[ThreadBundle]:
    """Merge-join the three ordered streams into one `ThreadBundle` per thread.

    Blob and write rows of threads without checkpoints are skipped. `oversized` (ordered
    by thread id, the rows of oversized thread ids first) are the rows the reader left out
    for their key size: reported with their thread, or, of an oversized thread id, with
    the first thread (a bundle of errors only when there is none). `delta_writes(thread_id)`
    gives a DeltaChannel thread's `messages` writes (`loaders.delta.read.WriteRows`);
    `fetch_blob(thread_id, ns, version)` one `messages` blob again (`Deferred`);
    `fetch_metadata(thread_id, ns, id)` one checkpoint's metadata (`DEFERRED_METADATA`).

    >>> list(assemble([], [], [], "db"))
    []
    """
    blob_rows = _Follower(blobs, "checkpoint_blobs", where)
    spill = None if fetch_blob is None else (
        lambda b: b._replace(blob=Deferred(fetch_blob, (b.thread_id, b.checkpoint_ns, b.version))))
    write_rows = _Follower(writes, "checkpoint_writes", where)
    problems = _oversized_groups(oversized, where)
    problem = next(problems, None)
    stray: list[LoadError] = []  # of oversized thread ids: reported with the first bundle
    if problem is not None and problem[0] is None:
        stray, problem = problem[1], next(problems, None)

    def bundle(thread_id: str, rows: list[CheckpointRow], skipped: int = 0) -> ThreadBundle:
        nonlocal problem, stray
        errors, stray = stray, []
        if skipped:
            errors.append(checkpoint_cap_error(thread_id, cap, skipped))
        if problem is not None and problem[0] == thread_id:
            errors += problem[1]
            problem = next(problems, None)
        rows = _in_key_order(rows, _checkpoint_key, "checkpoints", where, errors)
        tail = SpecialWritesTail(7)  # (a WriteRow's blob)
        write_keep = _on_checkpoints_read(rows) if skipped else None
        thread_writes = _in_key_order(write_rows.take(thread_id, tail, write_keep), _write_key, "checkpoint_writes",
                                      where, errors)
        if tail.dropped:
            errors.append(tail.error(thread_id))
        blobs = blob_rows.take(thread_id, keep=_blob_of(rows), spill=spill)
        out = build_bundle(thread_id, rows, blobs, thread_writes, fetch_metadata)
        out.errors[:0] = errors
        if delta_writes is not None and delta.marked(out):  # a DeltaChannel thread: its messages rebuilt (loaders.delta)
            out = delta_read.postgres_thread(out, rows, blobs, delta_writes)
        return out

    def problems_before(thread_id: str | None) -> Iterator[ThreadBundle]:
        # Threads all of whose rows were left out: their errors alone.
        while problem is not None and (thread_id is None or problem[0] < thread_id):
            yield bundle(problem[0], [])

    current: str | None = None
    rows: list[CheckpointRow] = []
    cap, skipped = max_thread_checkpoints(), 0  # (a thread's rows past the limit: counted, not kept)
    for row in checkpoints:
        if row.thread_id != current:
            if current is not None:
                if row.thread_id < current:
                    raise _disorder(where, "checkpoints")
                yield bundle(current, rows, skipped)
            yield from problems_before(row.thread_id)
            current, rows, skipped = row.thread_id, [], 0
        if len(rows) < cap:
            rows.append(row)
        else:
            skipped += 1
    if current is not None:
        yield bundle(current, rows, skipped)
    yield from problems_before(None)
    if stray:
        yield ThreadBundle("", [], errors=stray)


def _blob_of(rows: list[CheckpointRow]) -> Callable[[BlobRow], bool]:
    """Whether a blob row holds the `messages` of one of `rows`: no other blob is ever looked
    up, so the others (a capped thread's later versions, versions no checkpoint names) are
    dropped as they stream by, and a thread holds at most one blob per checkpoint read."""
    wanted = {(r.checkpoint_ns, r.messages_version) for r in rows if r.messages_version is not None}
    return lambda b: (b[1], b[2]) in wanted


def _on_checkpoints_read(rows: list[CheckpointRow]) -> Callable[[WriteRow], bool] | None:
    """Of a thread cut short (its first checkpoints in key order read), whether a write row is
    not past the last checkpoint read: the writes of the checkpoints past it are dropped as
    they stream by, unread and uncounted (those checkpoints are counted already)."""
    keys = [(r.checkpoint_ns, r.checkpoint_id) for r in rows if r.checkpoint_id is not None]
    if not keys:
        return None
    last = max(keys)
    return lambda w: not (type(w[1]) is str and type(w[2]) is str) or (w[1], w[2]) <= last


_FAILED = object()


def build_bundle(thread_id: str, rows: list[CheckpointRow], blobs: list[BlobRow], writes: list[WriteRow],
                 fetch_metadata: Callable[[str, str, str], str | None] | None = None) -> ThreadBundle:
    """One thread's rows → `ThreadBundle`; damage is reported as `LoadError`s, never raised.

    Metadata the reader left on the server (`DEFERRED_METADATA`) is fetched here by key
    (`fetch_metadata(thread_id, ns, id)`), at most `HELD_METADATA_BYTES` of it per thread."""
    errors: list[LoadError] = []
    held_metadata, unread_metadata = 0, 0

    def metadata_of(row: CheckpointRow, where: tuple[str, str, str]) -> str | None:
        nonlocal held_metadata, unread_metadata
        raw = row.metadata
        if raw is not None and raw.startswith(DEFERRED_METADATA):
            size = int(raw[len(DEFERRED_METADATA):])
            if fetch_metadata is None or held_metadata + size > HELD_METADATA_BYTES:
                unread_metadata += 1
                return None
            held_metadata += size
            raw = fetch_metadata(*where)
        return _metadata(raw, errors, where)

    stored = {(b.checkpoint_ns, b.version): (b.type, b.blob) for b in blobs}
    decoded: dict[tuple[str, str], Any] = {}
    # Consecutive versions repeat most of their payloads; one object per
    # distinct payload keeps a long thread's memory linear, and makes the
    # transform's list comparisons identity hits.
    interned: dict[Any, Any] = {}
    payloads = Payloads()
    numbered: dict[tuple[str, str], array] = {}
    checkpoints: list[RawCheckpoint] = []
    for row in rows:
        ns, cid = row.checkpoint_ns, row.checkpoint_id
        if cid is None:
            errors.append(LoadError(thread_id, ns, None, "checkpoint", "checkpoint has no id"))
            continue
        md_json = metadata_of(row, (thread_id, ns, cid))
        ts = row.ts
        if row.shape is not None:
            errors.append(LoadError(thread_id, ns, cid, "checkpoint", f"checkpoint is a JSON {row.shape}, not an object"))
            checkpoints.append(
                RawCheckpoint(thread_id, ns, cid, row.parent_checkpoint_id, None, None, damaged=True, metadata=md_json)
            )
            continue
        messages = None
        if row.messages_version is not None and len(row.messages_version) > KEY_MAX_BYTES // 4:
            problem = key_size_problem(len(row.messages_version.encode("utf-8", "surrogatepass")))
            if problem is not None:  # (no blob of such a version is read: `PostgresReader`)
                errors.append(LoadError(thread_id, ns, cid, "messages", f"messages version {problem}"))
                checkpoints.append(RawCheckpoint(thread_id, ns, cid, row.parent_checkpoint_id, ts, None, damaged=True,
                                                 metadata=md_json))
                continue
        if row.messages_version is not None:
            key = (ns, row.messages_version)
            messages = decoded.get(key)
            if messages is None and key not in decoded:
                messages = decoded[key] = _decode_blob(stored.get(key), key, interned, errors, (thread_id, ns, cid))
        damaged = messages is _FAILED
        versions = None
        if messages is not None and not damaged:
            versions = numbered.get(key)
            if versions is None:
                versions = numbered[key] = payloads.versions(messages)
        checkpoints.append(
            RawCheckpoint(
                thread_id, ns, cid, row.parent_checkpoint_id, ts, versions,
                damaged=damaged, metadata=md_json,
            )
        )
    out_writes: list[RawWrite] = []
    for w in writes:
        try:
            value = plain(decode_typed(w.type, blob_bytes(w.blob), deep=True))
        except DecodeError as exc:
            errors.append(LoadError(thread_id, w.checkpoint_ns, w.checkpoint_id, "write", f"{w.channel}: {exc}"))
            continue
        out_writes.append(RawWrite(thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, value))
    if unread_metadata:
        errors.append(LoadError(thread_id, None, None, "metadata", (
            f"metadata of {unread_metadata} checkpoints not read: a thread's metadata over {INLINE_METADATA_BYTES >> 10} KiB "
            f"is read up to {HELD_METADATA_BYTES >> 20} MiB, its checkpoints in key order (their step, source and run_id are NULL)")))
    return ThreadBundle(thread_id, checkpoints, out_writes, errors, payloads.items)


def _decode_blob(stored, key: tuple[str, str], interned: dict, errors: list[LoadError], where: tuple[str, str, str]) -> Any:
    # A version without a blob row is "no value" (contract §7.5), as is a
    # legacy `empty` row.
    if stored is None:
        return None
    type_, blob = stored
    try:
        value = decode_typed(type_, blob_bytes(blob))
        if type(value) is Ext and value.code == EXT_DELTA_SNAPSHOT:  # a DeltaChannel snapshot: its value
            value = delta.stored_value(value)
    except DecodeError as exc:
        errors.append(LoadError(*where, "messages", f"messages blob version {key[1]}: {exc}"))
        return _FAILED
    if value is None:
        return None
    if not isinstance(value, list):
        errors.append(LoadError(*where, "messages", f"messages blob version {key[1]} is a {type(value).__name__}, not a list"))
        return _FAILED
    out = []
    for item in value:
        if isinstance(item, (bytes, str)):
            item = interned.setdefault(item, item)
        out.append(item)
    return out


def _metadata(raw: str | None, errors: list[LoadError], where: tuple[str, str, str]) -> str | None:
    """Metadata JSON text, passed through (DuckDB reads step/source/run_id at ingest), or None.

    JSONB prints strict JSON (no NaN), so only the shape needs a (cheap) look.
    """
    if raw is None:
        return None
    if raw.startswith(OVERSIZED_TAG):  # (left on the server for its length: `PostgresReader._checkpoint_sql`)
        errors.append(LoadError(*where, "metadata", metadata_too_long(int(raw[len(OVERSIZED_TAG):]))))
        return None
    if raw.lstrip()[:1] != "{":
        errors.append(LoadError(*where, "metadata", "metadata is not a JSON object"))
        return None
    return without_undefined(raw)


__all__ = [
    "BlobRow", "CheckpointRow", "DEFERRED_METADATA", "Deferred", "INLINE_METADATA_BYTES", "JS_TS_PATTERN", "JS_TS_TO_KEY", "KEY_COLUMNS", "MESSAGES", "OversizedKeys", "PostgresOptions", "SinceOptions", "SPECIAL_CHANNELS", "TABLES", "TS_PATTERN", "WriteRow",
    "assemble", "build_bundle", "since_key", "since_text", "table_shape", "SINCE_KEY_SQL",
]
