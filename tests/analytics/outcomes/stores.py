"""Stores for the outcome tests, written by the real agent graph (ToolNode, `interrupt()` approval)
through the real SQLite saver, with scripted models and a controlled clock.

A thread is a `Script`: the assistant's replies in order and the user's steps (`User`: a
message after `think` seconds; `Resume`: a human's answer to the pending approval after
`wait` seconds). `write_store` writes several, each from its own start time.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from langgraph.types import Command

from storegen import ALL_TOOLS, Clock, Reply, ScriptedChatModel, build_agent_graph, open_sqlite_saver, say, thread_config

START = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class User:
    """The user sends `text`; with `ends`, the run stops where the script of replies runs out
    (the model call fails: the last checkpoint is the one before it, e.g. a failed tool result)."""

    text: str
    think: float = 30.0
    ends: bool = False


@dataclass(frozen=True)
class Unanswered:
    """The user's message is written (`update_state`) and no graph step answers it."""

    text: str
    think: float = 30.0


@dataclass(frozen=True)
class Resume:
    answer: dict
    wait: float = 60.0


@dataclass(frozen=True)
class Script:
    replies: list[Reply]
    steps: list[User | Unanswered | Resume]
    start: dt.datetime = START
    approve: tuple[str, ...] = field(default=("issue_refund",))


def write_thread(saver, thread_id: str, script: Script) -> None:
    model = ScriptedChatModel(replies=list(script.replies), base_latency=1.0, seconds_per_char=0.0)
    graph = build_agent_graph(model, ALL_TOOLS, saver, approve_tools=list(script.approve))
    cfg = thread_config(thread_id)
    with Clock(script.start) as clock:
        for step in script.steps:
            if isinstance(step, User) and step.ends:
                try:
                    say(graph, cfg, step.text, clock, think=step.think)
                except RuntimeError as exc:  # (the scripted model has no reply left)
                    assert "script exhausted" in str(exc)
            elif isinstance(step, User):
                say(graph, cfg, step.text, clock, think=step.think)
            elif isinstance(step, Unanswered):
                clock.advance(step.think)
                graph.update_state(cfg, {"messages": [{"role": "user", "content": step.text}]})
            else:
                clock.advance(step.wait)
                graph.invoke(Command(resume=step.answer), cfg, durability="sync")


def write_store(path, threads: dict[str, Script]) -> None:
    saver = open_sqlite_saver(str(path))
    try:
        for thread_id, script in threads.items():
            write_thread(saver, thread_id, script)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()
