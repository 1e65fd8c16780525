"""The conformance graphs: real LangGraph graphs written through any saver, the same rows every time.

`write_graphs(saver)` runs storegen's scenarios (chat, tool calls with an error,
subgraphs two levels deep, an edit, a fork, removals, an interrupt pending and
one resumed, an `operator.add` list, list content, a sub-agent in a tool) and
threads whose ids, text and metadata need every escape, under a frozen clock
with seeded ids: two savers written by it hold the same checkpoints.
`write_reference(folder)` writes them to a SqliteSaver file and loads it: the
tables every kind's load must equal.

The writing needs LangGraph (`pip install 'transcript-lens[conformance]'`); it is
imported when a graph is written, so the checks import without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import loaders
from loaders.conformance.checks import Case, Context

# Text that every escape layer meets: COPY text (\t \n \r \\ \N), CSV (" , newline), JSON (\\ \").
AWKWARD_TEXT = 'tab\there, "quoted", comma; new\nline, cr\r, back\\slash, \\N, \\x41, ✓ Ärger 😀'
# Ordered differently by Python (code points) and by an ICU collation. No two differ only by
# case or accents: the MySQL savers' keys compare under utf8mb4_general_ci, where such ids are
# one thread (the saver itself then continues one thread with the other's input).
AWKWARD_THREADS = ("a:b:Zed", "a:b:alpha", "a:b:Ärger", "a:b:_x", "a:b:Beta", 'odd:\t"sub",:new\nline\\')


def _require_writers() -> None:
    """Fail with what to install when LangGraph (or storegen, shipped with the package) is missing."""
    try:
        import langgraph.graph  # noqa: F401
        import storegen  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the conformance kit writes its graphs through real LangGraph savers and cannot import "
            f"{exc.name or exc}: pip install 'transcript-lens[conformance]'"
        ) from exc


def echo_graph(checkpointer):
    """A one-node chat graph: replies `echo: <last message>`."""
    _require_writers()
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].content}")]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    return g.compile(checkpointer=checkpointer)


def write_scenarios(saver) -> dict[str, str]:
    """storegen's default threads minus `second_process`, each at the time `run_scenarios` gives it.

    `second_process` starts a second Python process (seconds of imports) and
    only re-tests LangGraph, so it is left out; every other thread is written
    exactly as in a full `run_scenarios` run, so two savers hold the same rows.
    """
    _require_writers()
    from storegen import DEFAULT_START, DEFAULT_THREADS, run_scenarios
    from storegen.build import SPACING

    manifest = {}
    for i, (tid, scenario) in enumerate(DEFAULT_THREADS.items()):
        if scenario != "second_process":
            manifest.update(run_scenarios(saver, threads={tid: scenario}, start=DEFAULT_START + i * SPACING))
    return manifest


def write_awkward_threads(saver) -> list[str]:
    """Threads whose ids, content and metadata need every escape; returns their ids.

    Deterministic (seeded ids, frozen clock, after `write_scenarios`' threads), so
    two savers written by it hold the same rows."""
    graph = echo_graph(saver)
    from langchain_core.messages import HumanMessage
    from storegen import DEFAULT_START, DEFAULT_THREADS, Clock, deterministic
    from storegen.build import SPACING

    start = DEFAULT_START + len(DEFAULT_THREADS) * SPACING
    for i, tid in enumerate(AWKWARD_THREADS):
        cfg = {"configurable": {"thread_id": tid, "user_id": AWKWARD_TEXT}}
        with deterministic(f"awkward:{tid}"), Clock(start + i * SPACING) as clock:
            graph.invoke({"messages": [HumanMessage(content=f"{AWKWARD_TEXT} #{i}", id=f"awk-{i}")]}, cfg)
            clock.advance(seconds=30)
            graph.invoke({"messages": [HumanMessage(content=["block", {"type": "text", "text": AWKWARD_TEXT}])]}, cfg)
    return list(AWKWARD_THREADS)


def write_graphs(saver) -> dict[str, str]:
    """The conformance graphs through any LangGraph saver: `{thread_id: scenario}` ("awkward"
    for the threads that need every escape). Deterministic: two savers hold the same rows."""
    manifest = write_scenarios(saver)
    return {**manifest, **dict.fromkeys(write_awkward_threads(saver), "awkward")}


def sqlite_graphs(path: str | os.PathLike) -> dict[str, str]:
    """A SqliteSaver file of the graphs (closed: its WAL checkpointed)."""
    _require_writers()
    from storegen import open_sqlite_saver

    saver = open_sqlite_saver(path)
    try:
        return write_graphs(saver)
    finally:
        saver.conn.close()


@dataclass(frozen=True)
class Graphs:
    """The graphs in a SqliteSaver file (`store`) and that file loaded (`reference_db`)."""

    store: Path
    reference_db: Path
    threads: dict[str, str]  # {thread_id: scenario}

    @property
    def sqlite_case(self) -> Case:
        """The SqliteSaver file as a case of the built-in `sqlite` kind: a spec another kind must not claim."""
        return Case("sqlite", "sqlite", str(self.store))

    def context(self, case: Case, tmp_path: Path, monkeypatch, others: tuple[Case, ...] = ()) -> Context:
        """The `Context` a check of `case` runs in: the reference; `case`, the SqliteSaver file and
        `others` as the cases."""
        return Context([case, self.sqlite_case, *others], self.reference_db, tmp_path, monkeypatch)


def write_reference(folder: str | os.PathLike) -> Graphs:
    """Write the graphs to `folder/graphs.sqlite` through a real SqliteSaver and load it into
    `folder/reference.duckdb` (one process): what every kind's tables must equal."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    store, db = folder / "graphs.sqlite", folder / "reference.duckdb"
    threads = sqlite_graphs(store)
    loaders.load(str(store), db, workers=1)
    return Graphs(store, db, threads)
