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
