"""Checkpoint rows → a `ThreadBundle`: the row decoding every source kind reuses.

A source that can give its rows in SqliteSaver's shape hands them to `bundle_thread`:
`checkpoints` rows as (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
type, checkpoint, metadata), special `writes` rows as (thread_id, checkpoint_ns,
checkpoint_id, task_id, idx, channel, type, value), a thread's rows in key order. Damage
is reported as `load_errors` rows, never raised (docs/sources.md, contract §3).

>>> bundle = bundle_thread("t", [("t", "", "1", None, "json", b'{"ts": "2024-01-01", '
...                         b'"channel_values": {"messages": []}}', b'{"step": 0}')], [])
>>> (bundle.thread_id, [c.checkpoint_id for c in bundle.checkpoints], bundle.errors)
('t', ['1'], [])
"""

from __future__ import annotations

import json

import ormsgpack

from loaders import _native, delta
from loaders.decode import EXT_DELTA_SNAPSHOT, UNPACK_OPT, DecodeError, Ext, decode_typed, outer_hook, plain, without_undefined
from loaders.elements import count as count_elements, max_elements
from loaders.records import (
    KEY_MAX_BYTES, CappedRows, LoadError, Payloads, RawCheckpoint, RawWrite, ThreadBundle, checkpoint_cap_error,
    key_size_problem, max_thread_checkpoints, second_copy,
)

# The compiled scan (None: the ormsgpack path of `fast_checkpoint`; tests switch it off).
native_scan = _native.scan
_unpackb = ormsgpack.unpackb


class BadText(str):
    """A TEXT value that is not valid UTF-8, decoded with U+FFFD replacements: only ever
    shown in `load_errors`, never loaded as a key. It equals only a `BadText` of the same
    `raw` bytes (as SQLite gave them): a valid id that looks alike is another thread."""

    raw: bytes

    def __eq__(self, other: object) -> bool:
        return type(other) is BadText and self.raw == other.raw

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def key_problem(value) -> str | None:
    """Why a key column value (thread_id, checkpoint_ns, checkpoint_id) cannot be loaded, if it cannot."""
    if type(value) is str:
        return None
    if isinstance(value, BadText):
        return "is not valid UTF-8 text"
    return f"is {'NULL' if value is None else 'a ' + type(value).__name__}, not text"


def parent_problem(parent) -> str | None:
    """`key_problem` of a parent id; the checkpoints query gives one over the size cap
    as minus its size (`loaders.sqlite.reader`: it is never fetched), so a stored integer
    below that reads as one too: both are taken as none."""
    if type(parent) is int and parent < -KEY_MAX_BYTES:
        return key_size_problem(-parent)
    return key_problem(parent)


def shown(value) -> str | None:
    """A key as `load_errors` can hold it (text; a BLOB as hex)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return f"x'{value.hex()}'"
    return str(value)


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
            errors.append(LoadError(shown(row[0]), shown(row[1]), shown(row[2]), "checkpoint", second_copy("checkpoints")))
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
        problem = key_problem(value)
        if problem is not None:
            errors.append(LoadError(shown(row[0]), shown(row[1]), shown(row[2]), stage, f"{name} {problem}; row skipped"))
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
    problem = None if parent is None else parent_problem(parent)
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
