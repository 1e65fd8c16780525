"""A runtime with a recency window over a real graph: it restarts, rehydrates and logs what it put back.

The runtime Resume QA is about (contract §5.1): an in-process window (a
deque) of the last `cap` user/assistant turns of each thread. A fresh process
has an empty window; on the first turn of a thread whose durable checkpoint
exists, it rebuilds the window from `graph.get_state()` (the store through
the real saver) before running the turn, tags each entry
`metadata.source = "resume_rehydrate"`, and writes one log line per entry in
its own words: `recorded_at` (the time the window was rebuilt), `speaker`,
`content`, `position` and `metadata.turn_id` (the message id).

Each `RecencyRuntime` is one process: its `worker` name (if any) goes into
checkpoint metadata (`writer`), as a real deployment's config would put it there.

Example:
    >>> import sqlite3
    >>> from langgraph.checkpoint.sqlite import SqliteSaver
    >>> from storegen import Clock, Reply, ScriptedChatModel
    >>> saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    >>> model = ScriptedChatModel(replies=[Reply("one"), Reply("two")])
    >>> log = []
    >>> with Clock() as clock:
    ...     RecencyRuntime(saver, model, "worker-1", log, clock).turn("t", "hi")
    ...     _ = clock.advance(hours=2)
    ...     RecencyRuntime(saver, model, "worker-2", log, clock).turn("t", "again")
    >>> [(line["position"], line["speaker"], line["content"]) for line in log]
    [(0, 'user', 'hi'), (1, 'assistant', 'one')]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from storegen.clock import Clock
from storegen.graphs import build_chat_graph
from storegen.scenarios import say, thread_config

#: The tag on rehydrated entries.
RESUME_SOURCE = "resume_rehydrate"
_SPEAKERS = {"human": "user", "ai": "assistant"}


def iso_time(clock: Clock) -> str:
    return clock.now().isoformat()


class RecencyRuntime:
    """One runtime process serving threads through a chat graph, with a recency window per thread.

    `log` receives one dict per rehydrated entry (what the runtime would write as
    a JSONL line); `stamp(clock)` writes its time (ISO 8601 by default).
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver,
        model: BaseChatModel,
        worker: str | None,
        log: list[dict[str, Any]],
        clock: Clock,
        cap: int = 50,
        stamp: Callable[[Clock], Any] = iso_time,
    ) -> None:
        self.graph = build_chat_graph(model, saver)
        self.worker = worker
        self.log = log
        self.clock = clock
        self.cap = cap
        self.stamp = stamp
        self.windows: dict[str, deque] = {}

    def _rehydrate(self, thread_id: str, config: dict) -> None:
        state = self.graph.get_state(config)
        messages: list[BaseMessage] = list((state.values or {}).get("messages", []))
        turns = [m for m in messages if m.type in _SPEAKERS][-self.cap :] if self.cap else []
        window: deque = deque(maxlen=self.cap or None)
        at = self.stamp(self.clock)
        for position, m in enumerate(turns):
            window.append(m)
            self.log.append({
                "thread_id": thread_id,
                "position": position,
                "speaker": _SPEAKERS[m.type],
                "content": m.text if isinstance(m.content, list) else m.content,
                "recorded_at": at,
                "metadata": {"source": RESUME_SOURCE, "turn_id": m.id},
            })  # fmt: skip
        self.windows[thread_id] = window

    def turn(self, thread_id: str, text: str, think: float = 45.0) -> None:
        """The user writes after `think` seconds; a thread new to this process is rehydrated first."""
        config = thread_config(thread_id, **({"writer": self.worker} if self.worker else {}))
        self.clock.advance(think)
        if thread_id not in self.windows and self.graph.get_state(config).values:
            self._rehydrate(thread_id, config)
        self.windows.setdefault(thread_id, deque(maxlen=self.cap or None))
        out = say(self.graph, config, text, self.clock, think=0)
        self.windows[thread_id].extend(m for m in out["messages"][-2:] if m.type in _SPEAKERS)
