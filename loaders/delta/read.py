"""What `loaders.delta.replay` needs of a DeltaChannel thread, read from each kind of store.

The readers call one function here for a thread `delta.marked` says has delta
channels (rare: every other thread costs one metadata check). Each returns the
thread's bundle with its messages rebuilt (`delta.rebuild`, `delta.apply`):

- `sqlite_thread`: the thread's checkpoints decoded again (their `channel_versions`)
  and its `messages` writes, by key, from a SqliteSaver file;
- `postgres_thread`: the checkpoint rows and `messages` blobs the reader already
  holds, and the `messages` writes a callable fetches (live database, staged export).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from loaders.decode import DecodeError, decode_typed
from loaders.delta import replay as delta
from loaders.delta.replay import CHANNEL, FAILED, NOTHING, DeltaCheckpoint, DeltaWrite
from loaders.records import Deferred, LoadError, ThreadBundle, blob_bytes

# `(checkpoint_ns, checkpoint_id, task_path, task_id, idx, type, blob)` of one `messages` write,
# in the store's order; a reader may hand a large blob as a `records.Deferred` of known size.
WriteRows = Iterable[tuple[str, str, str, str, int, str | None, bytes | Deferred | None]]

# The most bytes of stored `messages` write values one thread's rebuild reads: every write is
# held, decoded, until the lists are rebuilt (30 writes of 30 MB, 19 MB in Postgres's TOAST,
# took 1.9 GB). The writes past it are not read (a Deferred one is never fetched): their value
# is FAILED, so only the lists that need one of them are not rebuilt, and one error says so.
DELTA_WRITES_MAX_BYTES = 64 << 20


def _writes(thread_id: str, rows: WriteRows, errors: list[LoadError]) -> list[DeltaWrite]:
    """The thread's writes decoded as they stream by, their bytes read up to `DELTA_WRITES_MAX_BYTES`."""
    out = []
    held, unread = 0, 0
    for ns, cid, task_path, task_id, idx, type_, blob in rows:
        size = blob.size if type(blob) is Deferred else len(blob) if isinstance(blob, (bytes, memoryview)) else 0
        if unread or held + size > DELTA_WRITES_MAX_BYTES:
            unread += 1
            value = FAILED
        else:
            held += size
            try:
                value = decode_typed(type_, blob_bytes(blob), deep=True)  # (its payloads are unpacked here)
            except DecodeError as exc:
                errors.append(LoadError(thread_id, ns, cid, "write", f"{CHANNEL}: {exc}"))
                value = FAILED  # (what depends on it is not rebuilt)
        out.append(DeltaWrite(ns, cid, task_path or "", task_id, idx, value))
    if unread:
        errors.append(LoadError(thread_id, None, None, "write", (
            f"{CHANNEL}: {unread} DeltaChannel writes not read: a thread's are read up to {DELTA_WRITES_MAX_BYTES >> 20} MiB "
            "of values, in the store's order; the lists that need one of them are not rebuilt")))
    return out


def _rebuilt(bundle: ThreadBundle, checkpoints: list[DeltaCheckpoint], writes: list[DeltaWrite],
             errors: list[LoadError]) -> ThreadBundle:
    lists, problems = delta.rebuild(bundle.thread_id, checkpoints, writes)
    return delta.apply(bundle, lists, [*errors, *problems])


def sqlite_thread(con: sqlite3.Connection, bundle: ThreadBundle, checkpoint_fits: str, write_fits: str,
                  checkpoint_value: str = "type, checkpoint", write_value: str = "type, value") -> ThreadBundle:
    """`bundle` of a SqliteSaver file rebuilt; `*_fits`: the reader's SQL of keys within the size cap;
    `*_value`: its SQL of the type and value columns (a value over the size limit as its marker)."""
    thread_id = bundle.thread_id
    errors: list[LoadError] = []
    has_path = any(r[1] == "task_path" for r in con.execute("SELECT * FROM pragma_table_info('writes')"))
    try:
        rows = con.execute(
            f"SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, {checkpoint_value} FROM checkpoints "
            f"WHERE thread_id = ? AND {checkpoint_fits}", (thread_id,)).fetchall()
        writes = _writes(thread_id, con.execute(  # (streamed, in the table's key order: decoded a row at a time)
            f"SELECT checkpoint_ns, checkpoint_id, {'task_path' if has_path else chr(39) * 2}, task_id, idx, {write_value} "
            f"FROM writes WHERE thread_id = ? AND channel = ? AND {write_fits}", (thread_id, CHANNEL)), errors)
    except sqlite3.DatabaseError as exc:
        reason = f"DeltaChannel {CHANNEL} not rebuilt: SQLite could not read the thread again ({exc})"
        return ThreadBundle(thread_id, bundle.checkpoints, bundle.writes, [*bundle.errors, LoadError(thread_id, None, None, "messages", reason)], bundle.payloads)
    checkpoints = []
    for ns, cid, parent, type_, blob in rows:
        if not (isinstance(ns, str) and isinstance(cid, str)):
            continue
        stored, versioned = FAILED, True  # (a checkpoint that does not decode was reported by the reader)
        try:
            cp = decode_typed(type_, blob)
            values, versions = cp.get("channel_values") or {}, cp.get("channel_versions") or {}
            stored, versioned = delta.stored_value(values.get(CHANNEL, NOTHING)), CHANNEL in versions
        except (DecodeError, AttributeError):
            pass
        checkpoints.append(DeltaCheckpoint(ns, cid, parent if isinstance(parent, str) else None, stored, versioned))
    return _rebuilt(bundle, checkpoints, writes, errors)


def postgres_thread(bundle: ThreadBundle, rows: list, blobs: list, fetch_writes: Callable[[str], WriteRows]) -> ThreadBundle:
    """`bundle` of a PostgresSaver thread rebuilt from its `pg_rows.CheckpointRow`s and
    `BlobRow`s (a blob stands for every checkpoint whose channel version it has)."""
    thread_id = bundle.thread_id
    errors: list[LoadError] = []
    stored_blobs = {(b.checkpoint_ns, b.version): (b.type, b.blob) for b in blobs}
    decoded: dict[Any, Any] = {}
    checkpoints = []
    for row in rows:
        if row.checkpoint_id is None or row.shape is not None:
            continue
        ver = row.messages_version
        stored = NOTHING
        blob = stored_blobs.get((row.checkpoint_ns, ver)) if ver is not None else None
        if blob is not None and blob[0] != "empty" and blob[1] is not None:
            key = (row.checkpoint_ns, ver)
            if key not in decoded:
                try:
                    decoded[key] = delta.stored_value(decode_typed(blob[0], blob_bytes(blob[1]), deep=True))
                except DecodeError:
                    decoded[key] = FAILED  # (reported by the reader)
            stored = decoded[key]
        checkpoints.append(DeltaCheckpoint(row.checkpoint_ns, row.checkpoint_id, row.parent_checkpoint_id, stored, ver is not None))
    return _rebuilt(bundle, checkpoints, _writes(thread_id, fetch_writes(thread_id), errors), errors)
