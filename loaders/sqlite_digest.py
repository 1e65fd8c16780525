"""The SQLite reader's compiled path: whole threads digested in C (`loaders/_digest.c`).

For a thread whose every row is in the shape real SqliteSaver stores have, the
C digester reads the rows itself (no Python object per checkpoint), numbers
the message payloads and does the per-checkpoint half of the transform; here
each distinct payload is decoded once (`loaders.decode`, the one decoder), and
the digester stages every table but `threads` and `load_errors` as Arrow
columns from the decoded messages, rows made as `transform_thread` makes them
(the thread's row comes from the same `make_thread_row` here). A thread it is
not sure of goes through the Python path
(`SqliteReader` rows, `transform_thread`), row errors and all; so does the
rest of the store after a thread id that is not UTF-8 text. Both paths give
the same rows (tests/loaders/test_digest.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from loaders.parts import BATCH_ROWS
from loaders.records import ColumnBuffers, LoadError
from loaders.transform import decode_versions, interrupts_of, make_thread_row, parse_thread_key, thread_batches

try:
    from loaders import _digest
except ImportError:  # not built (no compiler or no SQLite header): the Python path does the same work
    _digest = None

ENABLED = True  # tests turn it off to compare with the Python path

# Staged columns as `_digest.Digester.take` hands them over (schema.sql order;
# checkpoints' step, source and run_id are derived by DuckDB at ingest, staged NULL).
CHECKPOINT_COLUMNS = (
    "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "ts", "message_count", "message_versions",
    "is_root", "is_latest", "is_leaf", "on_current_branch", "branch_root_id", "has_interrupt", "metadata",
)
EVENT_COLUMNS = (
    "thread_id", "checkpoint_id", "parent_checkpoint_id", "ts", "event", "message_id", "position", "version", "previous_version",
)
MESSAGE_COLUMNS = (
    "thread_id", "tenant_id", "sub_tenant_id", "session_id", "ordinal", "role", "lc_type", "chat_role", "name", "content",
    "content_chars", "non_text_blocks", "message_id", "ts", "checkpoint_id", "tool_calls", "tool_call_count", "tool_call_id",
    "tool_status", "input_tokens", "output_tokens", "total_tokens", "model", "usage_metadata", "response_metadata",
    "additional_kwargs", "version",
)
VERSION_COLUMNS = (
    "thread_id", "version", "message_id", "lc_type", "role", "name", "content", "content_chars", "non_text_blocks", "tool_calls",
    "tool_call_count", "tool_call_id", "tool_status", "first_checkpoint_id", "first_ts",
)
STAGED = {"checkpoints": CHECKPOINT_COLUMNS, "message_events": EVENT_COLUMNS, "messages": MESSAGE_COLUMNS,
          "message_versions": VERSION_COLUMNS}
# Staged rows are handed to the part writer as often as it writes its own batches.
FLUSH_ROWS = BATCH_ROWS
FLUSH_BYTES = 64 << 20


def usable() -> bool:
    return _digest is not None and ENABLED


def batches(reader, key_regex, only: frozenset[str] | None = None) -> Iterator[tuple[str, object]]:
    """`(table, rows)` for the threads `reader` (a `SqliteReader`) selects, `only` too.

    SQLite errors propagate as `sqlite3.DatabaseError` (the reader names the file).
    """
    # Local import: sqlite_source imports this module when asked for batches.
    from loaders.sqlite_source import _CHECKPOINTS_SQL, _text, bundle_thread, decode_writes

    where, params, wanted = reader._thread_filter(only)
    sql = _CHECKPOINTS_SQL.format(where=f"WHERE {where}" if where else "")
    digester = _digest.Digester(reader.uri, sql, list(params), wanted, sqlite3.DatabaseError)
    # Python reads only what the digester leaves to it (special writes, threads it is not
    # sure of): with the decoder that reports text which is not UTF-8 instead of failing.
    reader.con.text_factory = _text
    writes = reader.special_writes(only, where, params, wanted)
    last: str | None = None
    try:
        while (item := digester.next()) is not None:
            if item[0] == "stop":
                # A thread id that is not UTF-8 text: the Python path reads from there on.
                yield from _staged(digester)
                for _, bundle in reader._threads(only, last):
                    yield from thread_batches(bundle, key_regex)
                return
            thread_id = item[1]
            write_rows = writes.take(thread_id)
            if item[0] == "fallback":
                yield from _staged(digester)  # the staged tables keep thread order
                yield from thread_batches(bundle_thread(thread_id, reader.checkpoint_rows(thread_id), write_rows), key_regex)
            else:
                errors: list[LoadError] = []
                yield from _thread_rows(digester, item, decode_writes(write_rows, errors), errors, key_regex)
                rows, size = digester.pending()
                if rows >= FLUSH_ROWS or size >= FLUSH_BYTES:
                    yield from _staged(digester)
            last = thread_id
        yield from _staged(digester)
    finally:
        digester.close()


def _thread_rows(digester, item: tuple, writes, errors: list[LoadError], key_regex) -> Iterator[tuple[str, object]]:
    """Decode a digested thread's messages; the digester stages every row but the thread's."""
    _, thread_id, payloads, first_cids, figures = item
    t_first, t_last, n_checkpoints, n_roots, n_namespaces, latest_root, latest_is_leaf, branches, forks = figures
    decoded = decode_versions(thread_id, payloads, first_cids, errors)
    interrupts = interrupts_of(writes)
    key = parse_thread_key(thread_id, key_regex)
    removed, edited, transcript = digester.finish(decoded, (key.tenant_id, key.sub_tenant_id, key.session_id),
                                                  set(interrupts) if interrupts else None)
    pending = interrupts.get(("", latest_root)) if latest_root is not None else None
    yield "threads", [make_thread_row(
        thread_id, key, t_first, t_last, n_checkpoints, n_roots, n_namespaces, transcript, latest_root,
        latest_is_leaf, branches, forks, pending, removed, edited,
    )]
    yield "load_errors", errors


def _staged(digester) -> Iterator[tuple[str, ColumnBuffers]]:
    for table, names in STAGED.items():
        columns = digester.take(table)
        if columns is not None:
            yield table, ColumnBuffers(columns[0][0], dict(zip(names, columns)))
