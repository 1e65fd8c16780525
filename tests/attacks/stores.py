"""Small hostile stores written by a real saver (SqliteSaver) with crafted values."""

from __future__ import annotations

import sqlite3

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver


def store_with_messages(path, messages, thread_id: str = "flood") -> None:
    """One thread whose only checkpoint's `messages` channel holds `messages`, written by SqliteSaver."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": messages}
        cp["channel_versions"] = {"messages": 1}
        saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, cp, {"source": "input", "step": -1},
                  {"messages": 1})
    finally:
        conn.close()


def store_with_long_thread(path, checkpoints: int, thread_id: str = "long") -> None:
    """A thread of `checkpoints` checkpoints in a chain: SqliteSaver writes the first (one
    message), SQL copies its row on under later ids (each the child of the one before)."""
    store_with_messages(path, [{"role": "user", "content": "the first question", "id": "m1"}], thread_id=thread_id)
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) "
                "SELECT thread_id, checkpoint_ns, printf('%s-%07d', checkpoint_id, i), "
                "CASE WHEN i = 1 THEN checkpoint_id ELSE printf('%s-%07d', checkpoint_id, i - 1) END, type, checkpoint, metadata "
                "FROM checkpoints, k WHERE thread_id = ?", [checkpoints - 1, thread_id])
    finally:
        conn.close()
