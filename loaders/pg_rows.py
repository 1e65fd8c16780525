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
once and shares the decoded list between the checkpoints that carry it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from loaders.decode import DecodeError, decode_typed, plain
from loaders.records import SPECIAL_CHANNELS, LoadError, Payloads, RawCheckpoint, RawWrite, SourceError, ThreadBundle
from loaders.source import SourceOptions

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


class WriteRow(NamedTuple):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    type: str | None
    blob: bytes | None


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
    the schema holding the checkpoint tables (default `public`; of a dump, the one
    schema it holds them in).

    >>> PostgresOptions(schema="app").names()
    ('threads', 'since', 'schema')
    """

    schema: str | None = field(default=None, metadata={
        "label": "Postgres schema", "placeholder": "public",
        "help": "the schema holding the checkpoint tables (default public)"})


class _Follower:
    """The rows of a secondary stream that belong to the thread being assembled."""

    def __init__(self, rows: Iterable[tuple], what: str, where: str) -> None:
        self._rows = iter(rows)
        self._next: tuple | None = next(self._rows, None)
        self._last: str | None = None
        self.what = what
        self.where = where

    def take(self, thread_id: str) -> list[tuple]:
        out: list[tuple] = []
        row = self._next
        while row is not None and row[0] <= thread_id:
            if self._last is not None and row[0] < self._last:
                raise SourceError(f"{self.where}: {self.what} rows are not ordered by thread id")
            self._last = row[0]
            if row[0] == thread_id:
                out.append(row)
            row = next(self._rows, None)
        self._next = row
        return out


def assemble(
    checkpoints: Iterable[CheckpointRow],
    blobs: Iterable[BlobRow],
    writes: Iterable[WriteRow],
    where: str,
) -> Iterator[ThreadBundle]:
    """Merge-join the three ordered streams into one `ThreadBundle` per thread.

    Blob and write rows of threads without checkpoints are skipped.

    >>> list(assemble([], [], [], "db"))
    []
    """
    blob_rows = _Follower(blobs, "checkpoint_blobs", where)
    write_rows = _Follower(writes, "checkpoint_writes", where)
    current: str | None = None
    rows: list[CheckpointRow] = []
    for row in checkpoints:
        if row.thread_id != current:
            if current is not None:
                if row.thread_id < current:
                    raise SourceError(f"{where}: checkpoints rows are not ordered by thread id")
                yield build_bundle(current, rows, blob_rows.take(current), write_rows.take(current))
            current, rows = row.thread_id, []
        rows.append(row)
    if current is not None:
        yield build_bundle(current, rows, blob_rows.take(current), write_rows.take(current))


_FAILED = object()


def build_bundle(thread_id: str, rows: list[CheckpointRow], blobs: list[BlobRow], writes: list[WriteRow]) -> ThreadBundle:
    """One thread's rows → `ThreadBundle`; damage is reported as `LoadError`s, never raised."""
    errors: list[LoadError] = []
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
        md_json = _metadata(row.metadata, errors, (thread_id, ns, cid))
        ts = row.ts
        if row.shape is not None:
            errors.append(LoadError(thread_id, ns, cid, "checkpoint", f"checkpoint is a JSON {row.shape}, not an object"))
            checkpoints.append(
                RawCheckpoint(thread_id, ns, cid, row.parent_checkpoint_id, None, None, damaged=True, metadata=md_json)
            )
            continue
        messages = None
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
            value = plain(decode_typed(w.type, w.blob))
        except DecodeError as exc:
            errors.append(LoadError(thread_id, w.checkpoint_ns, w.checkpoint_id, "write", f"{w.channel}: {exc}"))
            continue
        out_writes.append(RawWrite(thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, value))
    return ThreadBundle(thread_id, checkpoints, out_writes, errors, payloads.items)


def _decode_blob(stored, key: tuple[str, str], interned: dict, errors: list[LoadError], where: tuple[str, str, str]) -> Any:
    # A version without a blob row is "no value" (contract §7.5), as is a
    # legacy `empty` row.
    if stored is None:
        return None
    type_, blob = stored
    try:
        value = decode_typed(type_, blob)
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
    if raw.lstrip()[:1] != "{":
        errors.append(LoadError(*where, "metadata", "metadata is not a JSON object"))
        return None
    return raw


__all__ = [
    "BlobRow", "CheckpointRow", "MESSAGES", "PostgresOptions", "SinceOptions", "SPECIAL_CHANNELS", "TABLES", "TS_PATTERN", "WriteRow",
    "assemble", "build_bundle", "since_text", "table_shape",
]
