"""Build small Transcript Lens databases for tests, without the loader.

The tables come from the loader's catalogue (`loaders.catalog`), so a schema change shows up here
too. Only what a test describes is filled in: `messages`, `threads` and one
root checkpoint per distinct message `ts` (a linear, fork-free history).

>>> from datetime import datetime, timezone
>>> con = build_db(None, {"acme:eu:s1": [Msg("user", "hi", ts=datetime(2025, 1, 1, tzinfo=timezone.utc))]})
>>> con.execute("select role, content from messages").fetchall()
[('user', 'hi')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from loaders import catalog


_ROLE_TO_LC_TYPE = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system", "other": "chat"}

MESSAGE_COLUMNS = list(catalog.MESSAGES.names)


@dataclass(frozen=True)
class Msg:
    """One transcript message as a test describes it; unset fields get plausible defaults.

    `message_id=AUTO` (the default) derives an id from the thread and ordinal;
    pass `None` for a message without id (its `ts` must then be None too, as
    the loader would leave it).
    """

    role: str
    content: str = ""
    ts: datetime | None = None
    message_id: str | None = "AUTO"
    lc_type: str | None = None
    chat_role: str | None = None
    name: str | None = None
    tool_calls: list[dict] | None = None
    tool_call_id: str | None = None
    tool_status: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    extra: dict = field(default_factory=dict)


def split_thread_key(thread_id: str) -> tuple[str | None, str | None, str]:
    """`tenant:sub:session` (session keeps any further colons); fewer parts → (None, None, thread_id)."""
    parts = thread_id.split(":", 2)
    if len(parts) < 3:
        return None, None, thread_id
    tenant, sub, session = parts
    return tenant, (sub or None), session


def _utc(ts: datetime | None) -> datetime | None:
    if ts is None or ts.tzinfo is not None:
        return ts
    return ts.replace(tzinfo=UTC)


def _checkpoint_id(thread_id: str, ts: datetime) -> str:
    # Sortable like a UUIDv6 for a fixed thread: later ts → greater id.
    return f"cp-{ts.astimezone(UTC).strftime('%Y%m%dT%H%M%S%f')}"


def message_rows(thread_id: str, msgs: Sequence[Msg]) -> list[dict]:
    """The `messages` rows the loader would write for this transcript."""
    tenant, sub, session = split_thread_key(thread_id)
    rows = []
    for ordinal, m in enumerate(msgs):
        ts = _utc(m.ts)
        message_id = f"{thread_id}/m{ordinal}" if m.message_id == "AUTO" else m.message_id
        total = None
        if m.input_tokens is not None or m.output_tokens is not None:
            total = (m.input_tokens or 0) + (m.output_tokens or 0)
        row = {
            "thread_id": thread_id,
            "tenant_id": tenant,
            "sub_tenant_id": sub,
            "session_id": session,
            "ordinal": ordinal,
            "role": m.role,
            "lc_type": m.lc_type or _ROLE_TO_LC_TYPE.get(m.role, "chat"),
            "chat_role": m.chat_role,
            "name": m.name,
            "content": m.content,
            "content_chars": len(m.content),
            "non_text_blocks": 0,
            "message_id": message_id,
            "ts": ts,
            "checkpoint_id": _checkpoint_id(thread_id, ts) if ts is not None else None,
            "tool_calls": json.dumps(m.tool_calls) if m.tool_calls else None,
            "tool_call_count": len(m.tool_calls or ()),
            "tool_call_id": m.tool_call_id,
            "tool_status": m.tool_status,
            "input_tokens": m.input_tokens,
            "output_tokens": m.output_tokens,
            "total_tokens": total,
            "model": m.model,
            "usage_metadata": None,
            "response_metadata": json.dumps({"model_name": m.model}) if m.model else None,
            "additional_kwargs": None,
            "version": ordinal,
        }
        row.update(m.extra)
        rows.append(row)
    return rows


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(catalog.ddl())


def insert_threads(con: duckdb.DuckDBPyConnection, transcripts: Mapping[str, Sequence[Msg]]) -> None:
    """Insert `messages`, `threads` and root `checkpoints` rows for each transcript."""
    msg_rows: list[dict] = []
    thread_rows: list[dict] = []
    cp_rows: list[dict] = []
    for thread_id, msgs in transcripts.items():
        rows = message_rows(thread_id, msgs)
        msg_rows.extend(rows)
        stamps = sorted({r["ts"] for r in rows if r["ts"] is not None})
        tenant, sub, session = split_thread_key(thread_id)
        cp_ids = [_checkpoint_id(thread_id, ts) for ts in stamps]
        for i, (cp, ts) in enumerate(zip(cp_ids, stamps)):
            cp_rows.append(
                {
                    "thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": cp,
                    "parent_checkpoint_id": cp_ids[i - 1] if i else None, "ts": ts, "step": i,
                    "source": "loop", "message_count": sum(1 for r in rows if r["ts"] is not None and r["ts"] <= ts),
                    "is_root": True, "is_latest": i == len(stamps) - 1, "is_leaf": i == len(stamps) - 1,
                    "on_current_branch": True, "has_interrupt": False,
                }
            )  # fmt: skip
        thread_rows.append(
            {
                "thread_id": thread_id, "tenant_id": tenant, "sub_tenant_id": sub, "session_id": session,
                "first_ts": stamps[0] if stamps else None, "last_ts": stamps[-1] if stamps else None,
                "checkpoint_count": len(stamps), "root_checkpoint_count": len(stamps),
                "subgraph_checkpoint_count": 0, "namespace_count": 1 if stamps else 0,
                "message_count": len(rows), "latest_checkpoint_id": cp_ids[-1] if cp_ids else None,
                "transcript_checkpoint_id": cp_ids[-1] if cp_ids else None,
                "latest_is_leaf": True if cp_ids else None, "branch_count": 1 if cp_ids else 0,
                "fork_count": 0, "interrupt_pending": False, "removed_message_count": 0,
                "edited_message_count": 0,
            }
        )  # fmt: skip
    _insert(con, "messages", msg_rows, MESSAGE_COLUMNS)
    _insert(con, "threads", thread_rows)
    _insert(con, "checkpoints", cp_rows)


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict], columns: list[str] | None = None) -> None:
    if not rows:
        return
    columns = columns or list(rows[0])
    # One multi-row VALUES statement with bound values: much cheaper than a
    # DataFrame round trip when a property test inserts a thread per example.
    placeholders = "(" + ", ".join("?" * len(columns)) + ")"
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([placeholders] * len(rows))
    con.execute(sql, [row.get(c) for row in rows for c in columns])


def build_db(path: str | os.PathLike | None, transcripts: Mapping[str, Sequence[Msg]]) -> duckdb.DuckDBPyConnection:
    """Create a database (in memory when `path` is None) holding these transcripts.

    Returns the open read-write connection with the session time zone at UTC;
    close it before opening the file read-only elsewhere.
    """
    con = duckdb.connect(":memory:" if path is None else str(path))
    con.execute("SET TimeZone = 'UTC'")
    create_schema(con)
    insert_threads(con, transcripts)
    return con


def write_db(path: str | os.PathLike, transcripts: Mapping[str, Sequence[Msg]]) -> Path:
    """Like `build_db`, but close the file and return its path (for CLI / path-based tests)."""
    build_db(path, transcripts).close()
    return Path(path)
