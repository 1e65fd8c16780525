"""One exported row (text values as COPY writes them) → a staged row, or `Problem`.

A row that COPY or pg_dump could not have written (a NULL key, malformed bytea
or JSON) is a `Problem`: the file is damaged (see `loaders.pg_export`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from loaders.pg_rows import MESSAGES, MIGRATIONS, SPECIAL_CHANNELS, since_key

_PG_JSON_TYPE = {list: "array", str: "string", bool: "boolean", type(None): "null", int: "number", float: "number"}


class Problem(Exception):
    """A row that COPY / pg_dump could not have written; becomes a `SourceError`."""


def _text(value: str | None, column: str) -> str:
    if value is None:
        raise Problem(f"{column} is NULL")
    return value


def _bytea(value: str | bytes | None, column: str) -> bytes | None:
    if value is None or isinstance(value, bytes):  # (bytes: a source that reads them as bytes, `loaders.mysql_source`)
        return value
    if not value.startswith("\\x"):
        raise Problem(f"{column} is not bytea hex output (expected \\x followed by hex digits; was bytea_output = escape?)")
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        raise Problem(f"{column} is malformed bytea (\\x followed by {len(value) - 2} characters that are not pairs of hex digits)") from None


def _json(value: str | None, column: str) -> Any:
    if value is None:
        raise Problem(f"{column} is NULL")
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise Problem(f"{column} is not valid JSON ({exc})") from None


def stage_checkpoint(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, checkpoint_id, parent, checkpoint, metadata)` text → a staged `cp` row.

    >>> stage_checkpoint(("t", "", "c1", None, '{"ts": "2025-01-01T00:00:00+00:00", "channel_versions": {"messages": "2.1"}}', "{}"), False)[:7]
    ('t', '', 'c1', None, '2025-01-01T00:00:00+00:00', '2.1', None)
    """
    thread_id, ns, cid, parent, checkpoint_text, metadata = raw
    thread_id, ns = _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns")
    checkpoint = _json(checkpoint_text, "checkpoint")
    _json(metadata, "metadata")
    ts = version = shape = None
    if isinstance(checkpoint, dict):
        ts = checkpoint.get("ts")
        if ts is not None and not isinstance(ts, str):
            ts = json.dumps(ts)  # as its JSON text: the transform reports it as unreadable, like the live source
        versions = checkpoint.get("channel_versions")
        if shallow:
            cid = checkpoint.get("id") if isinstance(checkpoint.get("id"), str) else None
            version = "" if isinstance(versions, dict) and MESSAGES in versions else None
        elif isinstance(versions, dict):
            version = _json_text(versions.get(MESSAGES))
    else:
        shape = _PG_JSON_TYPE.get(type(checkpoint), "value")
    if not shallow:
        cid = _text(cid, "checkpoint_id")
    return (thread_id, ns, cid, parent, ts, version, shape, metadata, since_key(ts))


def _json_text(value: Any) -> str | None:
    # What Postgres' `->>` gives for the value: strings as-is, scalars as JSON text.
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def stage_blob(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, version, type, blob)` text → a staged `bl` row (messages channel only)."""
    thread_id, ns, version, type_, blob = raw
    return (
        _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns"),
        "" if shallow else _text(version, "version"), _text(type_, "type"), _bytea(blob, "blob"),
    )


def stage_write(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)` text → a staged
    `wr` row (a `messages` write: a `dw` row, read for DeltaChannel threads only)."""
    thread_id, ns, cid, task_id, idx, channel, type_, blob, task_path = raw
    try:
        idx_value = int(_text(idx, "idx"))
    except ValueError:
        raise Problem(f"idx {idx!r} is not an integer") from None
    blob_value = _bytea(blob, "blob")
    if blob_value is None:
        raise Problem("blob is NULL")
    return (
        _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns"), _text(cid, "checkpoint_id"),
        _text(task_id, "task_id"), idx_value, _text(channel, "channel"), type_, blob_value, task_path or "",
    )


# Per export table: its staging table, the function that stages one row, and
# the staged row's width.
STAGED = {
    "checkpoints": ("cp", stage_checkpoint, 9),
    "checkpoint_blobs": ("bl", stage_blob, 5),
    "checkpoint_writes": ("wr", stage_write, 9),
}


def source_columns(table: str, shallow: bool) -> tuple[str | None, ...]:
    """The export columns a table's stager reads, in its order (None: the schema lacks it)."""
    if table == "checkpoints":
        if shallow:
            return ("thread_id", "checkpoint_ns", None, None, "checkpoint", "metadata")
        return ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata")
    if table == "checkpoint_blobs":
        return ("thread_id", "checkpoint_ns", None if shallow else "version", "type", "blob")
    return ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob", "task_path")


# Columns an export may lack (a table from before the saver's migration that added it): staged as NULL.
OPTIONAL_COLUMNS = frozenset({"task_path"})


def expected_columns(table: str) -> tuple[str, ...]:
    """The columns an export of `table` holds (for messages about a wrong header)."""
    return ("v",) if table == MIGRATIONS else tuple(c for c in source_columns(table, False) if c and c not in OPTIONAL_COLUMNS)


def channel_filter(table: str) -> tuple[str, ...] | None:
    """Only these channels are staged: the transcript needs no other blob or write."""
    if table == "checkpoint_blobs":
        return (MESSAGES,)
    if table == "checkpoint_writes":
        return (*SPECIAL_CHANNELS, MESSAGES)  # (messages writes: DeltaChannel threads, `loaders.delta.read`)
    return None


def row_key(table: str, raw: tuple) -> str:
    """The key columns of a row, to name it in a message (they lead every stager's input)."""
    names = source_columns(table, False)[:3]
    return ", ".join(f"{n}={v!r}" for n, v in zip(names, raw[:3]) if v is not None)
