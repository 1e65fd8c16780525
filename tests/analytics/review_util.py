"""Real checkpoint stores that change between loads, for the review workspace's tests.

`LiveStore` is a SqliteSaver file that tests write to as an application would —
real LangGraph graphs, a scripted (fake) chat model — and keep writing to
between loads: more turns (a trimming graph then removes the oldest messages),
or a legacy `operator.add` thread rewritten with `Overwrite` (its messages have
no ids, so it is how an id-less message moves or changes).

    store = LiveStore(tmp_path / "app.sqlite")
    store.chat("acme:web:1", "hello", "and then?")          # 2 turns, trimmed to the last 4 messages
    store.legacy("legacy:kiosk:1", "What are your hours?")  # no message ids
    transcript_lens.load(store.path, db)
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.types import Overwrite

from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, build_operator_add_graph, open_sqlite_saver
from storegen.scenarios import say, thread_config

START = dt.datetime(2025, 5, 5, 9, 0, tzinfo=dt.timezone.utc)


def _echo(messages: list[BaseMessage]) -> Reply:
    return Reply(f"Reply to: {messages[-1].text}")


class LiveStore:
    """A SqliteSaver file written turn by turn; each call opens the saver, writes, and closes it."""

    def __init__(self, path: Path, trim_to: int = 4) -> None:
        self.path = Path(path)
        self.trim_to = trim_to
        self._clock = START

    def _run(self, write) -> None:
        saver = open_sqlite_saver(self.path)
        try:
            with Clock(self._clock) as clock:
                write(saver, clock)
                self._clock = clock.position + dt.timedelta(minutes=1)
        finally:
            saver.conn.close()

    def chat(self, thread_id: str, *turns: str) -> None:
        """User turns of a chat graph that keeps the last `trim_to` messages (RemoveMessage)."""
        def write(saver, clock):
            graph = build_chat_graph(ScriptedChatModel(responder=_echo), saver, trim_to=self.trim_to)
            for text in turns:
                say(graph, thread_config(thread_id), text, clock, think=30)

        self._run(write)

    def legacy(self, thread_id: str, *turns: str) -> None:
        """User turns of a legacy `operator.add` graph: no message has an id."""
        def write(saver, clock):
            graph = build_operator_add_graph(ScriptedChatModel(responder=_echo), saver)
            for text in turns:
                say(graph, thread_config(thread_id), text, clock, think=30, as_dict=False)

        self._run(write)

    def rewrite_legacy(self, thread_id: str, contents: list[tuple[str, str]]) -> None:
        """Replace a legacy thread's whole message list (`Overwrite`: the reducer is bypassed),
        as (role, text) pairs, role `user` or `assistant`."""
        def write(saver, clock):
            graph = build_operator_add_graph(ScriptedChatModel(responder=_echo), saver)
            clock.advance(30)
            messages = [HumanMessage(text) if role == "user" else AIMessage(text) for role, text in contents]
            graph.update_state(thread_config(thread_id), {"messages": Overwrite(messages)})

        self._run(write)
