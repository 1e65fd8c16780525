"""Source: a live Redis store written by `langgraph-checkpoint-redis` (a `redis://` URI).

The documents it reads (the full and the shallow savers' layouts), and the row each
becomes, are `loaders.redis.documents`. A key's parts cannot be split back (a thread id
may hold `:`), so every id is taken from the documents: the reader SCANs the keys under
the two prefixes, learns each document's thread with `JSON.MGET … $.thread_id` (and each
write's channel), then reads one thread at a time, in id order, with `JSON.MGET` in
batches, and hands the rows to the shared row decoding (`loaders.bundles.bundle_thread`)
as `json` checkpoints. Both layouts are read by the same code: a document says which it
is. A thread of more checkpoints than a load reads (`records.max_thread_checkpoints()`),
or of more special writes than it keeps (`records.SPECIAL_WRITES_MAX`), has only its
documents' ids fetched first; then only the documents of the checkpoints and writes kept
are.

Strictly read-only: it sends SCAN, JSON.MGET, JSON.DEBUG MEMORY (or MEMORY USAGE), GET,
ZRANGE (and PING, SELECT), nothing that writes or creates (no index, no FT.* command); a
user whose ACL allows only these can load (tests/loaders/test_redis_source.py). Redis has
no snapshot: see `RedisReader`.

>>> RedisSource().describe("redis://app:s3cret@cache:6379/2")
'redis://app:***@cache:6379/2'
"""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from loaders import delta, records
from loaders.bundles import bundle_thread
from loaders.dsn import DsnSpec, first_line, mask_dsn
from loaders.records import (
    OVERSIZED_TAG, SPECIAL_CHANNELS, LoadError, SourceError, SpecialWritesTail, ThreadBundle, key_too_long,
    max_blob_bytes, max_thread_checkpoints, oversized_reason,
)
from loaders.redis.documents import (
    EMPTY_ID_SENTINEL, EMPTY_STRING_SENTINEL, Unreadable, checkpoint_row, from_storage_safe, one_text, shown_key,
    without_delta_messages, write_row,
)
from loaders.source import Source, SourceOptions, SourceReader

REDIS_PREFIXES = ("redis://", "rediss://", "unix://")
SCAN_COUNT = 1000  # keys asked of each SCAN step
MGET_KEYS = 200  # documents per JSON.MGET (a checkpoint holds its whole message list)
FETCH_BYTES = 64 << 20  # server-side bytes of the documents one JSON.MGET fetches, at most
CHAIN_MAX = 100_000  # checkpoints followed back from a moved latest pointer, at most
_GLOB = re.compile(rb"([*?\[\]\\])")
# How a document's size is asked of the server, the first this user may run: what RedisJSON
# holds for it, and the same plus the key's own overhead (RedisJSON reports its memory to Redis).
MEASURES = (("JSON.DEBUG", "MEMORY"), ("MEMORY", "USAGE"))
#: Set to 1 to load a store whose server measures no document for this user (neither of
#: `MEASURES` allowed): its documents are then fetched unmeasured, past the per-value limit.
UNMEASURED_ENV = "TRANSCRIPT_LENS_REDIS_UNMEASURED"


@dataclass(frozen=True, slots=True)
class RedisOptions(SourceOptions):
    """`key_prefix`: the saver's `checkpoint_prefix`, and after a comma its
    `checkpoint_write_prefix` (default `<checkpoint_prefix>_write`).

    >>> RedisOptions(key_prefix="app_cp").prefixes
    ('app_cp', 'app_cp_write')
    """

    key_prefix: str | None = field(default=None, metadata={
        "label": "Redis key prefix", "placeholder": "checkpoint,checkpoint_write",
        "help": "the saver's checkpoint_prefix[,checkpoint_write_prefix] (default: checkpoint, checkpoint_write)"})

    def __post_init__(self) -> None:
        SourceOptions.__post_init__(self)
        self.prefixes  # noqa: B018 - checked here, before anything is opened

    @property
    def prefixes(self) -> tuple[str, str]:
        text = (self.key_prefix or "checkpoint").strip()
        parts = [p.strip() for p in text.split(",")]
        if len(parts) > 2 or not all(parts):
            raise SourceError(f"key_prefix {self.key_prefix!r}: expected CHECKPOINT_PREFIX[,WRITE_PREFIX]")
        return parts[0], parts[1] if len(parts) == 2 else f"{parts[0]}_write"


class RedisSource(DsnSpec, Source):
    """A live Redis (RedisJSON) store written by `langgraph-checkpoint-redis`; detected by its URI scheme."""

    kind = "redis"
    label = "Redis store written by langgraph-checkpoint-redis (a redis:// URI)"
    options_class = RedisOptions

    def detect(self, spec: str) -> bool:
        return spec.startswith(REDIS_PREFIXES)

    def open_reader(self, spec: str, options: RedisOptions) -> RedisReader:
        return RedisReader(spec, options)


def _not_run(exc: Exception) -> bool:
    """Whether a command was refused as a whole (not allowed by the ACL, or unknown to the server)
    rather than for its key."""
    import redis

    why = str(exc).lower()
    return isinstance(exc, redis.exceptions.NoPermissionError) or "unknown command" in why or "unknown subcommand" in why


class RedisReader(SourceReader):
    """One Redis store, read thread by thread.

    Consistency: Redis has no snapshot. The keys are listed once when the reader
    opens (SCAN sees every key that exists throughout the scan); each thread is
    then read when its turn comes, and re-checked: for each namespace of a full
    saver's thread, its `checkpoint_latest` pointer is read after the documents, and
    checkpoints written since the scan are followed back from it by their parents
    (with the writes its key registry lists); a shallow thread's write registry is
    re-read the same way. A document deleted since the scan is left out. So each
    thread is loaded as it was at one moment of the load, or later, never as a mix
    that leaves out a newer latest checkpoint; different threads are read at
    different moments. (A fork made during the load off a checkpoint that is not the
    latest is seen by the next load.)
    """

    def __init__(self, spec: str, options: RedisOptions) -> None:
        import redis  # (the `redis` extra: imported only when a store is opened)

        self._redis_errors = (redis.RedisError,)
        self._reply_error = redis.ResponseError  # (a command refused for one key: WRONGTYPE, …)
        self.spec, self.options = spec, options
        self.where = mask_dsn(spec)
        self.cp_prefix, self.write_prefix = (p.encode() for p in options.prefixes)
        try:
            self.con = redis.Redis.from_url(spec, socket_connect_timeout=10, socket_timeout=60)
            self.con.ping()
        except (redis.RedisError, ValueError) as exc:
            raise SourceError(f"{self.where}: cannot read the store ({first_line(exc, spec)})") from None
        self.index_errors: list[LoadError] = []
        try:
            # RedisJSON is there (a read of one key that is never written).
            self.con.execute_command("JSON.MGET", self.cp_prefix + b":", "$")
            self._measure = self._measure_command()
            self.cp_keys = self._group(self._scan(self.cp_prefix), channel=False)
            self.write_keys = self._group(self._scan(self.write_prefix), channel=True)
        except redis.RedisError as exc:
            self.close()
            why = first_line(exc, spec)
            if "unknown command" in why.lower() and "json." in why.lower():
                why = "the server has no RedisJSON module, which langgraph-checkpoint-redis stores need"
            raise SourceError(f"{self.where}: {why}") from None
        except SourceError:
            self.close()
            raise
        if not self.cp_keys and not self.index_errors:
            self.close()
            raise SourceError(f"{self.where}: no checkpoint document under {shown_key(self.cp_prefix + b':*')} "
                              "(a langgraph-checkpoint-redis store in another database, or with another key_prefix?)")

    # --- commands ---------------------------------------------------------------------

    def _scan(self, prefix: bytes) -> Iterator[list[bytes]]:
        """The keys under `prefix:`, in SCAN batches (a key may come twice: SCAN's guarantee)."""
        cursor = 0
        while True:
            cursor, keys = self.con.scan(cursor, match=_GLOB.sub(rb"\\\1", prefix) + b":*", count=SCAN_COUNT)
            if keys:
                yield keys
            if int(cursor) == 0:
                return

    def _mget(self, keys: list[bytes], path: str = "$") -> list[Any]:
        """`JSON.MGET` of `keys` at `path`, in batches: per key, the list of matches
        (`$` gives `[document]`), or None (no such key, or not a JSON document).

        Whole documents (`$`) are measured first (`_sizes`): one over the per-value limit
        (`records.max_blob_bytes()`) is never fetched, `[Unreadable(why)]` in its place, and
        a batch holds at most `FETCH_BYTES` of them (at least one document)."""
        out: list[Any] = []
        for i in range(0, len(keys), MGET_KEYS):
            batch = keys[i:i + MGET_KEYS]
            if path != "$":
                out += self._fetch(batch, path)
                continue
            cap = max_blob_bytes()
            held: list[tuple[int, bytes]] = []  # (place in `batch`, key) of the next fetch
            got: list[Any] = [None] * len(batch)
            total = 0
            for j, (key, size) in enumerate(zip(batch, self._sizes(batch))):
                if size > cap:
                    got[j] = [Unreadable(oversized_reason(f"{OVERSIZED_TAG}{size}"))]
                    continue
                if held and total + size > FETCH_BYTES:
                    for (k, _), value in zip(held, self._fetch([key for _, key in held], path)):
                        got[k] = value
                    held, total = [], 0
                held.append((j, key))
                total += size
            for (k, _), value in zip(held, self._fetch([key for _, key in held], path) if held else ()):
                got[k] = value
            out += got
        return out

    def _measure_command(self) -> tuple[str, str] | None:
        """The first of `MEASURES` the server runs for this user (asked of a key never written).
        Neither: refused in one line naming what to grant, unless `UNMEASURED_ENV` allows
        fetching unmeasured (None)."""
        for command in MEASURES:
            try:
                self.con.execute_command(*command, self.cp_prefix + b":")
                return command
            except self._reply_error as exc:
                if not _not_run(exc):
                    return command  # (refused for that key, WRONGTYPE say: the command runs)
        if os.environ.get(UNMEASURED_ENV, "") not in ("", "0"):
            return None
        raise SourceError(
            f"{self.where}: the server will not measure a document for this user (JSON.DEBUG MEMORY and "
            "MEMORY USAGE refused), so the per-value limit cannot hold: grant it +json.debug (or +memory|usage), "
            f"or set {UNMEASURED_ENV}=1 to fetch documents unmeasured")

    def _sizes(self, keys: list[bytes]) -> list[int]:
        """What each document takes on the server (`JSON.DEBUG MEMORY` or `MEMORY USAGE`, 0 for a
        missing key or one that is no JSON document), in one round trip: at least its size as
        JSON, more for tiny values (a list of empty objects takes about six times its JSON), so a
        flood of tiny values is refused sooner. Any other refusal is raised: never read as 0."""
        if self._measure is None:
            return [0] * len(keys)
        pipe = self.con.pipeline(transaction=False)
        for key in keys:
            pipe.execute_command(*self._measure, key)
        sizes = []
        for size in pipe.execute(raise_on_error=False):
            if isinstance(size, Exception) and (_not_run(size) or not isinstance(size, self._reply_error)):
                raise size  # (a key of another type is answered "wrong Redis type": that one is 0)
            sizes.append(size if type(size) is int else 0)
        return sizes

    def _fetch(self, keys: list[bytes], path: str) -> list[Any]:
        out: list[Any] = []
        for raw in self.con.execute_command("JSON.MGET", *keys, path):
            try:
                value = None if raw is None else orjson.loads(raw)
            except orjson.JSONDecodeError as exc:  # (deeper than orjson reads, say)
                value = [Unreadable(f"not readable JSON ({exc})")]
            out.append(value if isinstance(value, list) else None)
        return out

    def _group(self, batches: Iterator[list[bytes]], channel: bool) -> dict[str, list[bytes]]:
        """Keys by their document's thread id (writes: special channels only), each once."""
        by_thread: dict[str, dict[bytes, None]] = {}
        for keys in batches:
            threads = self._mget(keys, "$.thread_id")
            channels = self._mget(keys, "$.channel") if channel else [None] * len(keys)
            for key, tid, ch in zip(keys, threads, channels):
                if tid is None:
                    continue  # deleted since the scan, or not a JSON document
                if channel and not (ch and ch[0] in SPECIAL_CHANNELS):
                    continue
                problem = None if one_text(tid) else "has no text thread_id"
                if problem is None and (too_long := key_too_long(tid[0])):
                    problem = f"has a thread_id that {too_long}"
                if problem is not None:
                    what = "write" if channel else "checkpoint"
                    self.index_errors.append(LoadError(None, None, None, what, f"document {shown_key(key)} {problem}: skipped"))
                    continue
                by_thread.setdefault(from_storage_safe(tid[0], EMPTY_ID_SENTINEL), {})[key] = None
        return {thread_id: list(keys) for thread_id, keys in by_thread.items()}

    # --- the contract -----------------------------------------------------------------

    def describe(self) -> str:
        return self.where

    def _selected(self, only: frozenset[str] | None) -> list[str]:
        wanted = self.options.wanted(only)
        ids = sorted(self.cp_keys) if wanted is None else [t for t in wanted if t in self.cp_keys]
        return [t for t in ids if self.thread_range.contains(t)]

    def thread_count(self) -> int:
        return len(self._selected(None))

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        for thread_id in self._selected(None):
            keys = self.cp_keys[thread_id]
            for ns, cid in zip(self._mget(keys, "$.checkpoint_ns"), self._mget(keys, "$.checkpoint_id")):
                if one_text(ns) and one_text(cid):
                    yield thread_id, from_storage_safe(ns[0], EMPTY_STRING_SENTINEL), from_storage_safe(cid[0], EMPTY_ID_SENTINEL)

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        # Documents that belong to no thread: reported once, with the first thread of a whole read.
        pending: list[LoadError] = []
        if only is None and not self.options.threads:
            pending, self.index_errors = self.index_errors, []
        for thread_id in self._selected(only):
            try:
                bundle = self._thread(thread_id)
            except self._redis_errors as exc:
                raise SourceError(f"{self.where}: thread {thread_id!r}: {first_line(exc, self.spec)}") from None
            if not bundle.checkpoints and not bundle.errors:
                continue  # every document deleted since the scan: the thread is gone
            bundle.errors[:0], pending = pending, []
            yield bundle

    def close(self) -> None:
        con, self.con = getattr(self, "con", None), None
        if con is not None:
            con.close()

    # --- one thread -------------------------------------------------------------------

    def _thread(self, thread_id: str) -> ThreadBundle:
        errors: list[LoadError] = []
        cp_keys = self.cp_keys[thread_id]
        write_keys = self.write_keys.get(thread_id, ())
        chosen, skipped = self._first_checkpoints(cp_keys)
        rows: list[tuple] = []
        heads: set[tuple] = set()
        for d in self._docs(chosen):
            if isinstance(d, dict) and isinstance(d.get("thread_id"), str) and isinstance(d.get("checkpoint_ns"), str):
                heads.add((d["thread_id"], d["checkpoint_ns"], "parent_checkpoint_id" in d))
            if (row := checkpoint_row(thread_id, d, errors)) is not None:
                rows.append(row)
        # Of a thread cut short, the writes of the checkpoints past the last one read are not read.
        last = max((r[1], r[2]) for r in rows) if skipped and rows else None
        chosen_writes, dropped = self._last_writes(write_keys, last)
        write_rows = [w for w in (write_row(thread_id, d, errors) for d in self._docs(chosen_writes)) if w is not None]
        more_docs, more_writes = self._recheck(thread_id, heads, set(cp_keys), set(write_keys), errors)
        rows += [r for r in (checkpoint_row(thread_id, d, errors) for d in more_docs) if r is not None]
        write_rows += [w for w in (write_row(thread_id, d, errors) for d in more_writes) if w is not None]
        rows.sort(key=lambda r: (r[1], r[2]))
        write_rows.sort(key=lambda w: (w[1], w[2], w[3], w[4]))
        tail = SpecialWritesTail(7)  # (a write row's value)
        tail.dropped = dropped
        for w in write_rows:
            tail.add(w)
        bundle = bundle_thread(thread_id, rows, tail.rows(), skipped=skipped)
        bundle.errors[:0] = errors
        if tail.dropped:
            bundle.errors.append(tail.error(thread_id))
        return without_delta_messages(bundle) if delta.marked(bundle) else bundle

    def _docs(self, keys: list[bytes]) -> Iterator[Any]:
        """The documents of `keys` (those still there), a `JSON.MGET` batch at a time."""
        for i in range(0, len(keys), MGET_KEYS):
            yield from (d[0] for d in self._mget(keys[i:i + MGET_KEYS]) if d)

    def _ids(self, keys: list[bytes], paths: tuple[str, ...]) -> Iterator[tuple[bytes, list | None]]:
        """`(key, [value at each path])` of `keys`, a batch at a time; the values None when a
        path holds no one scalar (a document without its keys, or not an object), the whole
        entry None when the document is gone."""
        for i in range(0, len(keys), MGET_KEYS):
            batch = keys[i:i + MGET_KEYS]
            found = [self._mget(batch, path) for path in paths]
            for j, key in enumerate(batch):
                values = [f[j] for f in found]
                if all(v is None for v in values):
                    continue  # deleted since the scan
                yield key, [v[0] if v and len(v) == 1 and not isinstance(v[0], (Unreadable, dict, list)) else None
                            for v in values]

    def _first_checkpoints(self, keys: list[bytes]) -> tuple[list[bytes], int]:
        """The keys of the thread's first `records.max_thread_checkpoints()` checkpoints (by
        namespace and id) and how many more there are. Past the limit only the ids are read
        (`JSON.MGET` of two fields, in batches), and the documents of the first ones after: a
        thread of millions of tiny checkpoints costs the limit's documents, not the thread's.
        Documents without text ids (reported whole) come first, and count."""
        cap = max_thread_checkpoints()
        if len(keys) <= cap:
            return list(keys), 0
        odd: list[bytes] = []
        total = 0

        def placed():
            nonlocal total
            for key, (ns, cid) in self._ids(keys, ("$.checkpoint_ns", "$.checkpoint_id")):
                total += 1
                if type(ns) is str and type(cid) is str:
                    yield from_storage_safe(ns, EMPTY_STRING_SENTINEL), from_storage_safe(cid, EMPTY_ID_SENTINEL), key
                elif len(odd) < cap:
                    odd.append(key)

        first = heapq.nsmallest(cap, placed())
        chosen = odd + [key for _, _, key in first[:cap - len(odd)]]
        return chosen, total - len(chosen)

    def _last_writes(self, keys: list[bytes], last: tuple[str, str] | None) -> tuple[list[bytes], int]:
        """The keys of the thread's special writes to read, and how many more are left unread:
        all of them up to `records.SPECIAL_WRITES_MAX`; past it (or when the thread was cut
        short, `last` its last checkpoint read) only their keys are read first, and the last
        `SPECIAL_WRITES_MAX` (by namespace, checkpoint id, task id, idx) of those on a
        checkpoint read are fetched, as the other readers' `SpecialWritesTail` keeps them.
        Writes past `last` belong to checkpoints not read: not read, not counted.
        Documents without their keys (reported whole) are read too, as many again at most."""
        limit = records.SPECIAL_WRITES_MAX
        if len(keys) <= limit and last is None:
            return list(keys), 0
        odd: list[bytes] = []
        seen = 0  # (writes on a checkpoint read, and documents without their keys past `limit`)

        def placed():
            nonlocal seen
            for key, (ns, cid, task_id, idx) in self._ids(keys, ("$.checkpoint_ns", "$.checkpoint_id", "$.task_id", "$.idx")):
                if type(ns) is str and type(cid) is str and type(task_id) is str and type(idx) is int:
                    ns, cid = from_storage_safe(ns, EMPTY_STRING_SENTINEL), from_storage_safe(cid, EMPTY_ID_SENTINEL)
                    if last is None or (ns, cid) <= last:
                        seen += 1
                        yield ns, cid, task_id, idx, key
                elif len(odd) < limit:
                    odd.append(key)
                else:
                    seen += 1

        chosen = [key for *_, key in heapq.nlargest(limit, placed())]
        return odd + chosen, seen - len(chosen)

    def _recheck(self, thread_id: str, heads: set[tuple], known: set[bytes], known_writes: set[bytes],
                 errors: list[LoadError]) -> tuple[list, list]:
        """Checkpoints and special writes of this thread written since the scan (see the class),
        from its `heads`: `(thread_id, checkpoint_ns, full saver?)` of the documents read.
        A pointer or registry key of the wrong type is a row error; the thread loads without it."""

        def read(command, key: bytes, *args):
            try:
                return command(key, *args)
            except self._reply_error as exc:
                errors.append(LoadError(thread_id, None, None, "checkpoint",
                                        f"key {shown_key(key)} not readable ({first_line(exc, self.spec)}): not followed"))
                return None

        new_docs: list = []
        registries: list[bytes] = []
        for tid, ns, full in heads:
            if not full:  # the shallow saver: its one document was read as it is now
                registries.append(b"write_registry:%s:%s:shallow" % (tid.encode(), ns.encode()))
                continue
            # (A document holds its ids as its keys do: empty ones as their sentinels.)
            stem = b"%s:%s:%s" % (self.cp_prefix, tid.encode(), ns.encode())
            key = read(self.con.get, b"%s_latest:%s:%s" % (self.cp_prefix, tid.encode(), ns.encode()))
            head = key
            for _ in range(CHAIN_MAX):
                if not key or key in known:
                    break
                got = self._mget([key])[0]
                known.add(key)
                if not got or not isinstance(got[0], dict):
                    break
                new_docs.append(got[0])
                parent = got[0].get("parent_checkpoint_id")
                key = stem + b":" + parent.encode() if isinstance(parent, str) and parent else None
            if head:
                cid = head.rsplit(b":", 1)[-1]
                registries.append(b"write_keys_zset:%s:%s:%s" % (tid.encode(), ns.encode(), cid))
        for d in new_docs:
            tid, ns, cid = d.get("thread_id"), d.get("checkpoint_ns"), d.get("checkpoint_id")
            if isinstance(tid, str) and isinstance(ns, str) and isinstance(cid, str):
                registries.append(b"write_keys_zset:%s:%s:%s" % (tid.encode(), ns.encode(), cid.encode()))
        # (The registries are not under the saver's prefixes: another store's keys may be listed.)
        mine = self.write_prefix + b":"
        fresh = [k for r in dict.fromkeys(registries) for k in read(self.con.zrange, r, 0, -1) or ()
                 if k.startswith(mine) and k not in known_writes]
        new_writes = [d[0] for d in self._mget(fresh) if d and isinstance(d[0], dict) and d[0].get("channel") in SPECIAL_CHANNELS]
        return new_docs, new_writes


