"""Records that cross from a source reader to the transform (typed, frozen).

The contract a source implements (`Source`, `SourceReader`, options) is `loaders.source`.
"""

from __future__ import annotations

import os
from array import array
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# The pending-write channels a transcript needs (interrupts, resumes, errors); every other write is skipped.
SPECIAL_CHANNELS = ("__interrupt__", "__resume__", "__error__")

# A thread's special writes held at most (a crafted store may hold millions on one
# checkpoint; a real one holds one per interrupt, resume or failed task). Readers keep the
# LAST ones, which belong to the latest checkpoints (where a pending interrupt is).
SPECIAL_WRITES_MAX = 20_000
SPECIAL_WRITES_MAX_BYTES = 64 << 20


class SpecialWritesTail:
    """The last `SPECIAL_WRITES_MAX` rows / `SPECIAL_WRITES_MAX_BYTES` of values of one
    thread's special writes, kept as they stream by; the earlier ones are only counted.

    >>> tail = SpecialWritesTail(value_at=1, max_rows=2)
    >>> for row in [("t", b"a"), ("t", b"b"), ("t", b"c")]: tail.add(row)
    >>> tail.rows(), tail.dropped
    ([('t', b'b'), ('t', b'c')], 1)
    """

    __slots__ = ("_kept", "_size", "_value_at", "_max_rows", "_max_bytes", "dropped")

    def __init__(self, value_at: int, max_rows: int | None = None, max_bytes: int | None = None) -> None:
        self._kept: deque = deque()
        self._size = self.dropped = 0
        self._value_at = value_at
        self._max_rows = SPECIAL_WRITES_MAX if max_rows is None else max_rows
        self._max_bytes = SPECIAL_WRITES_MAX_BYTES if max_bytes is None else max_bytes

    def add(self, row: tuple) -> None:
        kept = self._kept
        kept.append(row)
        self._size += _value_size(row[self._value_at])
        while len(kept) > self._max_rows or (self._size > self._max_bytes and len(kept) > 1):
            self._size -= _value_size(kept.popleft()[self._value_at])
            self.dropped += 1

    def rows(self) -> list:
        return list(self._kept)

    def error(self, thread_id: str) -> LoadError | None:
        """The one error row of what was dropped, if anything was."""
        if not self.dropped:
            return None
        return LoadError(thread_id, None, None, "write", (
            f"{self.dropped} earlier special writes (__interrupt__ / __resume__ / __error__) skipped: a thread's "
            f"last {self._max_rows} or {self._max_bytes >> 20} MiB of them are read"))


# The most checkpoint rows of one thread a load reads. Every row of a thread is held
# at once (the transform compares each checkpoint with its parent and finds the latest),
# about 1 kB each for the smallest rows, so an 86 MB store of one thread of 1.5M tiny
# checkpoints took 1.5 GB. A real thread has thousands; a hostile one is cut here, with
# one `load_errors` row, and its transcript marked stale (`loaders.transform.rows.stale_reason`).
# `TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS` sets another limit (the attack test uses a small one).
MAX_THREAD_CHECKPOINTS = 250_000
_CAP_REASON = "checkpoints of the thread skipped: a load reads at most the first "


def max_thread_checkpoints() -> int:
    """The per-thread checkpoint limit in force (`MAX_THREAD_CHECKPOINTS`, or the environment's).

    >>> max_thread_checkpoints() == int(os.environ.get("TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS", MAX_THREAD_CHECKPOINTS))
    True
    """
    return _positive_env("TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS", MAX_THREAD_CHECKPOINTS)


# The most message-list entries a thread's checkpoints hold in all. Each checkpoint's list
# is loaded in full (`checkpoints.message_versions`) and compared with its parent's, and a
# store need not keep one list per checkpoint: Postgres-shaped stores keep a list once per
# version, which any number of checkpoints may name, and a DeltaChannel thread keeps only
# the writes. So a small store can ask for any number of entries (1,000 checkpoints naming
# two 20,000-message blobs, 245 KB as a pg_dump, took a load past 2.5 GB). A SqliteSaver
# store holds every list it loads, so it meets this limit only at gigabytes of one thread.
# Past it, a thread's later checkpoints load without messages (one row error).
# `TRANSCRIPT_LENS_MAX_LIST_ENTRIES` sets another limit (the attack tests use a small one).
MAX_LIST_ENTRIES = 8_000_000
# The most `message_events` rows of one thread: every one is held until the thread is
# staged, about 250 bytes each. A thread that only appends has one event per message; a
# list reordered, edited or cut back at every checkpoint has one per entry each time. Past
# it, the later checkpoints record no events (one row error). `TRANSCRIPT_LENS_MAX_THREAD_EVENTS`
# sets another limit.
MAX_THREAD_EVENTS = 1_000_000


def max_list_entries() -> int:
    """The per-thread limit on message-list entries in force (`MAX_LIST_ENTRIES`, or the environment's).

    >>> max_list_entries() == int(os.environ.get("TRANSCRIPT_LENS_MAX_LIST_ENTRIES", MAX_LIST_ENTRIES))
    True
    """
    return _positive_env("TRANSCRIPT_LENS_MAX_LIST_ENTRIES", MAX_LIST_ENTRIES)


def list_entries_reason(cap: int) -> str:
    """Why a thread's later checkpoints load without messages: their lists pass `cap` entries.

    >>> list_entries_reason(5)
    "the thread's message lists hold more than 5 entries in all, over the per-thread limit (TRANSCRIPT_LENS_MAX_LIST_ENTRIES)"
    """
    return f"the thread's message lists hold more than {cap:,} entries in all, over the per-thread limit (TRANSCRIPT_LENS_MAX_LIST_ENTRIES)"


def max_thread_events() -> int:
    """The per-thread limit on message events in force (`MAX_THREAD_EVENTS`, or the environment's).

    >>> max_thread_events() == int(os.environ.get("TRANSCRIPT_LENS_MAX_THREAD_EVENTS", MAX_THREAD_EVENTS))
    True
    """
    return _positive_env("TRANSCRIPT_LENS_MAX_THREAD_EVENTS", MAX_THREAD_EVENTS)


# The most bytes one stored value may hold: a checkpoint (SQLite), a `messages` blob
# (Postgres, MySQL), a pending write's value. A value is held whole while it is decoded,
# with its decoded form beside it (three 200 MB blobs of zeros, 15 MB in TOAST, took
# 1.5 GB), so a larger one is left on the server: each reader measures it in SQL and
# fetches, in its place, the marker `oversized_tag_sql` builds (type
# `OVERSIZED_TAG<size>`, no data), which `loaders.decode.decode_typed` reports as a row
# error. Real values are far smaller: a whole message list of a long conversation with
# images is a few MB. `TRANSCRIPT_LENS_MAX_BLOB_BYTES` sets another limit (the attack
# tests use a small one).
MAX_BLOB_BYTES = 64 << 20
OVERSIZED_TAG = "tl:oversized:"


def max_blob_bytes() -> int:
    """The per-value size limit in force (`MAX_BLOB_BYTES`, or the environment's).

    >>> max_blob_bytes() == int(os.environ.get("TRANSCRIPT_LENS_MAX_BLOB_BYTES", MAX_BLOB_BYTES))
    True
    """
    return _positive_env("TRANSCRIPT_LENS_MAX_BLOB_BYTES", MAX_BLOB_BYTES)


# The most threads one load takes. What the load-time tables gather grows with the thread
# count (about 0.85 kB a thread: a store of 1M empty threads loads at an 850 MB peak), so a
# source of more threads is refused in one line, before it is decoded when the reader can
# count its threads (`SourceReader.thread_count`), else before the load-time tables are built;
# an incremental load counts the threads it replaces. `TRANSCRIPT_LENS_MAX_THREADS` sets
# another limit (the attack test uses a small one).
MAX_THREADS = 1_000_000


def max_threads() -> int:
    """The per-load thread limit in force (`MAX_THREADS`, or the environment's).

    >>> max_threads() == int(os.environ.get("TRANSCRIPT_LENS_MAX_THREADS", MAX_THREADS))
    True
    """
    return _positive_env("TRANSCRIPT_LENS_MAX_THREADS", MAX_THREADS)


def check_thread_count(where: str, count: int | None, cap: int) -> None:
    """`SourceError` when a load would take more than `cap` threads.

    >>> try:
    ...     check_thread_count("s.sqlite", 3, 2)
    ... except SourceError as exc:
    ...     print(exc)
    s.sqlite: 3 threads, over the limit of 2 threads one load takes (TRANSCRIPT_LENS_MAX_THREADS)
    """
    if count is not None and count > cap:
        raise SourceError(f"{where}: {count:,} threads, over the limit of {cap:,} threads one load takes "
                          "(TRANSCRIPT_LENS_MAX_THREADS)")


def _positive_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SourceError(f"{name}={raw!r:.40} is not a whole number") from None
    if value < 1:
        raise SourceError(f"{name}={value} is not a positive number")
    return value


def oversized_tag_sql(size: str, type_column: str, cap: int, concat: bool = False) -> str:
    """The SQL of a value's type column that is the marker when `size` (an SQL expression of
    the value's size in bytes, read without fetching the value) is over `cap`; the value
    column is then NULL or empty (`CASE WHEN size > cap THEN NULL ELSE value END`).

    >>> oversized_tag_sql("length(v)", "type", 10)
    "CASE WHEN length(v) > 10 THEN 'tl:oversized:' || length(v) ELSE type END"
    """
    tag = f"CONCAT('{OVERSIZED_TAG}', {size})" if concat else f"'{OVERSIZED_TAG}' || {size}"  # (MySQL: || is OR)
    return f"CASE WHEN {size} > {int(cap)} THEN {tag} ELSE {type_column} END"


def capped_value(type_tag: object, value: object, cap: int) -> tuple[object, object]:
    """`(type, value)` as a reader that measured the value after fetching it (a text export's
    stager) keeps it: over `cap` bytes, the oversized marker and no data.

    >>> capped_value("msgpack", b"12345", 4)
    ('tl:oversized:5', b'')
    """
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) > cap:
        return f"{OVERSIZED_TAG}{len(value)}", b""
    return type_tag, value


def oversized_reason(type_tag: str) -> str | None:
    """Why a value whose type is the marker of `oversized_tag_sql` was not read (None: not the marker).

    >>> oversized_reason(OVERSIZED_TAG + "209715200").split(",")[0]
    'a stored value of 200 MiB (209715200 bytes) not read'
    """
    if not type_tag.startswith(OVERSIZED_TAG):
        return None
    size = type_tag[len(OVERSIZED_TAG):]
    shown = f"{int(size) / 2**20:.0f} MiB ({size} bytes)" if size.isdigit() else f"{size!r:.40} bytes"
    return (f"a stored value of {shown} not read, over the limit of {_mib(max_blob_bytes())} for one value "
            "(TRANSCRIPT_LENS_MAX_BLOB_BYTES)")


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def checkpoint_cap_error(thread_id: str, cap: int, skipped: int) -> LoadError:
    """The one error row of a thread cut at `cap` checkpoints, `skipped` more left unread.

    >>> checkpoint_cap_error("t", 3, 2).reason
    '2 more checkpoints of the thread skipped: a load reads at most the first 3 of a thread (by namespace and id); its transcript is stale'
    """
    return LoadError(thread_id, None, None, "checkpoint", (
        f"{skipped} more {_CAP_REASON}{cap} of a thread (by namespace and id); its transcript is stale"))


def over_checkpoint_cap(reason: str) -> bool:
    """Whether a row error says its thread was cut at the checkpoint limit (`checkpoint_cap_error`)."""
    return _CAP_REASON in reason


class CappedRows:
    """The first `cap` rows of one thread's iterable, the rest counted as they stream by.

    >>> rows = CappedRows(iter("abcde"), 3)
    >>> list(rows), rows.skipped
    (['a', 'b', 'c'], 2)
    """

    __slots__ = ("_rows", "_cap", "skipped")

    def __init__(self, rows, cap: int | None = None) -> None:
        self._rows = rows
        self._cap = max_thread_checkpoints() if cap is None else cap
        self.skipped = 0

    def __iter__(self):
        n = 0
        for row in self._rows:
            if n < self._cap:
                n += 1
                yield row
            else:
                self.skipped += 1


def _value_size(value: object) -> int:
    if type(value) is Deferred:
        return value.size
    return len(value) if isinstance(value, (bytes, str, memoryview)) else 0

# The most bytes (UTF-8) a key column may hold: thread_id, checkpoint_ns, checkpoint_id,
# task_id, channel. Real ids are UUIDs or short composite keys; a key is copied into
# every staged row of its thread, so an unbounded one multiplies a small store into
# gigabytes. A longer key is a reported row error, never loaded.
KEY_MAX_BYTES = 4096


def key_too_long(value: object) -> str | None:
    """Why a key value is refused for its size, if it is (text or bytes; others pass).

    >>> key_too_long("t1") is None, key_too_long("x" * 5000)
    (True, 'is 5000 bytes long, over the 4096-byte limit for a key')
    """
    if isinstance(value, str):
        size = len(value) if len(value) * 4 <= KEY_MAX_BYTES else len(value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        size = len(value)
    else:
        return None
    return key_size_problem(size)


def second_copy(table: str, rest: str = "") -> str:
    """The reason a row whose key repeats the row before it (a table without its primary
    key) is skipped, from every reader; `rest` names more of the key.

    >>> second_copy("checkpoints")
    'a second checkpoints row with the same key: skipped'
    """
    return f"a second {table} row with the same key{rest}: skipped"


def key_size_problem(size: int) -> str | None:
    """`key_too_long` for a key known by its size only (a reader that measured it without fetching it).

    >>> key_size_problem(4096) is None, key_size_problem(4097)
    (True, 'is 4097 bytes long, over the 4096-byte limit for a key')
    """
    return None if size <= KEY_MAX_BYTES else f"is {size} bytes long, over the {KEY_MAX_BYTES}-byte limit for a key"


class Deferred:
    """A blob left on the server, fetched by its key when it is decoded and released after:
    a reader that can fetch one blob by key (`pg_rows.assemble`'s `fetch_blob`) sends large
    blobs so, and spills to it the blobs a thread holds past `pg_rows.HELD_BLOB_BYTES`."""

    __slots__ = ("fetch", "key", "size")

    def __init__(self, fetch: Callable[..., bytes | None], key: tuple, size: int = 0) -> None:
        self.fetch, self.key = fetch, key
        self.size = size  # its bytes, when the reader measured them (a special write's value)

    def load(self) -> bytes | None:
        return self.fetch(*self.key)


def blob_bytes(blob: bytes | Deferred | None) -> bytes | None:
    """A blob's bytes, fetched now when it was deferred.

    >>> blob_bytes(b"x"), blob_bytes(Deferred(lambda k: k.encode(), ("y",)))
    (b'x', b'y')
    """
    return blob.load() if type(blob) is Deferred else blob


@dataclass(frozen=True, slots=True)
class LoadError:
    """A damaged row that was skipped: which thread, which checkpoint, why."""

    thread_id: str | None
    checkpoint_ns: str | None
    checkpoint_id: str | None
    stage: str
    reason: str


class RawCheckpoint(NamedTuple):
    """One checkpoint as a source reader hands it over.

    `messages` is `state['messages']` as version numbers into the thread's
    `ThreadBundle.payloads` (each distinct payload still undecoded, see
    `loaders.decode`), an `array('i')`, or None when the checkpoint has no
    messages channel. (An array: it slices, compares and is staged as Arrow
    `list<int32>` with memcpy, where a list converts int by int.)
    `damaged` checkpoints keep their row but give no messages. (A NamedTuple,
    not a dataclass: one is built per checkpoint, and this is 3x cheaper.)
    """

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    ts: str | None
    messages: array | None
    damaged: bool = False
    # The metadata as JSON object text, passed through untouched: DuckDB validates it
    # and reads step / source / run_id from it at ingest. None: no usable metadata.
    metadata: str | None = None


class Payloads:
    """The distinct message payloads of one thread, numbered as a reader meets them.

    A SqliteSaver re-serializes the whole message list in every checkpoint, so
    each list mostly repeats the previous one: the common prefix with the
    previous list is found by equality of the undecoded payloads (memcmp, no
    hashing) and only the rest is looked up. Readers keep version numbers, not
    payloads, so a thread's memory is its distinct payloads.

    >>> p = Payloads()
    >>> [p.versions(x).tolist() for x in ([b"a", b"b"], [b"a", b"b", b"c"], [b"c"])]
    [[0, 1], [0, 1, 2], [2]]
    """

    __slots__ = ("items", "_index", "_prev", "_prev_versions", "blob", "spans")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._index: dict[Any, int] = {}
        self._prev: list[Any] = []
        self._prev_versions = array("i")
        # The previous list when `loaders._scan.row` numbered it: the checkpoint blob
        # and where its payloads lie in it. That C function reads and sets these
        # attributes and `_prev_versions`, `_index` and `items` as `versions` does,
        # so a thread's lists may take either path in any mix (tests/loaders/test_scan.py).
        self.blob: bytes | None = None
        self.spans: bytes | None = None

    def versions(self, payloads: list[Any]) -> array:
        prev = self._prev
        n = len(prev)
        if len(payloads) >= n and payloads[:n] == prev:
            common = n
        else:
            common = 0
            limit = min(n, len(payloads))
            while common < limit and payloads[common] == prev[common]:
                common += 1
        out = self._prev_versions[:common]
        index, items = self._index, self.items
        for payload in payloads[common:] if common else payloads:
            key = payload
            try:
                v = index.get(key)
            except TypeError:
                # A plain dict (an `operator.add` list of API-style messages): keyed by its text form.
                key = ("unhashable", repr(payload))
                v = index.get(key)
            if v is None:
                v = index[key] = len(items)
                items.append(payload)
            out.append(v)
        self._prev, self._prev_versions = payloads, out
        self.blob = self.spans = None
        return out


@dataclass(frozen=True, slots=True)
class ColumnBuffers:
    """Rows of one staged table as Arrow buffers per column (`loaders._scan.stage`
    builds them in C); a column of the table's schema that is absent is all NULL.

    Each column is `(length, null_count, validity, offsets, data, list_values)`:
    bytes in Arrow's layout (bit-packed validity and booleans, int32 offsets for
    text and lists), None where the type has no such buffer or nothing is NULL.
    """

    length: int
    columns: Mapping[str, tuple]


@dataclass(frozen=True, slots=True)
class RawWrite:
    """A pending write on a special channel (`__interrupt__`, `__resume__`, `__error__`)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    value: Any


@dataclass(frozen=True, slots=True)
class ThreadBundle:
    """Everything a source holds for one thread."""

    thread_id: str
    checkpoints: list[RawCheckpoint]
    writes: list[RawWrite] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    # What `RawCheckpoint.messages` numbers point into (`Payloads.items`).
    payloads: list[Any] = field(default_factory=list)


def weighted_ranges(weights: list[tuple[str, int]], n: int) -> list[tuple[str | None, str | None]]:
    """Cut threads `(thread_id, weight)`, in id order, into `n` `[lo, hi)` ranges of about
    equal weight, for `SourceReader.split`; one unbounded range when there is nothing to cut.

    >>> weighted_ranges([("a", 1), ("b", 1), ("c", 2)], 2)
    [(None, 'c'), ('c', None)]
    """
    total = sum(w or 0 for _, w in weights)
    if n <= 1 or len(weights) < 2 or total <= 0:
        return [(None, None)]
    bounds: list[str] = []
    acc = 0
    for thread_id, w in weights:
        if acc >= total * (len(bounds) + 1) / n and len(bounds) < n - 1:
            bounds.append(thread_id)
        acc += w or 0
    edges = [None, *bounds, None]
    return list(zip(edges[:-1], edges[1:]))


class SourceError(Exception):
    """The source itself is unusable (missing, unknown or damaged)."""


class TargetError(SourceError):
    """The database a load was to write is not one it may replace (a file that is not a
    DuckDB database: a mistyped `--db` naming the store itself, say). A `SourceError`
    for its callers: nothing was touched, and the message names the file."""
