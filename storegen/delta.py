"""DeltaChannel threads: real graphs whose messages channel is
`Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=N)]` (contract §7.16).

Such a channel is stored only every N-th update (a `_DeltaSnapshot`); the runtime
rebuilds the rest from the writes along the parent chain, and `graph.get_state()` /
`get_state_history()` return what it rebuilt: the oracle of the loader's rebuild.
Each scenario exercises one thing the rebuild must get right: turns across
snapshots, a step whose parallel tasks (Send) write in task-path order, tool calls,
`RemoveMessage` and `__remove_all__`, an edit by id (`update_state`), a fork from an
old checkpoint, an `Overwrite`, a subgraph, a pending interrupt.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "d.sqlite")
    >>> sorted(write_delta_store(path, ["chat"]))
    ['delta:chat']
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Iterable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, _messages_delta_reducer
from langgraph.types import Command, Overwrite, Send, interrupt

from storegen.clock import DEFAULT_START, Clock


class DeltaState(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=3)]


class RareSnapshotState(TypedDict):
    """The default cadence (a snapshot every 100 updates): every list is replayed from writes."""

    messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]


def _n(state: dict) -> int:
    return len(state["messages"])


def chat_graph(saver: BaseCheckpointSaver):
    """One node: replies to the last message."""
    def chat(state: DeltaState) -> dict:
        return {"messages": [AIMessage(content=f"reply to {state['messages'][-1].content!s:.40} ({_n(state)})")]}

    return StateGraph(DeltaState).add_node("chat", chat).add_edge(START, "chat").add_edge("chat", END).compile(checkpointer=saver)


def fanout_graph(saver: BaseCheckpointSaver):
    """A planner asks two tools at once, each run as its own Send task in one step (their
    writes replay in task-path order), then a summary."""
    def plan(state: RareSnapshotState) -> dict:
        calls = [{"name": "lookup", "args": {"q": f"part {i}"}, "id": f"call-{_n(state)}-{i}", "type": "tool_call"} for i in range(3)]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    def route(state: RareSnapshotState) -> list[Send]:
        return [Send("tool", call) for call in state["messages"][-1].tool_calls]

    def tool(call: dict) -> dict:
        return {"messages": [ToolMessage(content=f"result for {call['args']['q']}", tool_call_id=call["id"], name="lookup")]}

    def summary(state: RareSnapshotState) -> dict:
        return {"messages": [AIMessage(content=f"summary of {_n(state)} messages")]}

    g = StateGraph(RareSnapshotState)
    g.add_node("plan", plan).add_node("tool", tool).add_node("summary", summary)
    g.add_edge(START, "plan").add_conditional_edges("plan", route, ["tool"]).add_edge("tool", "summary").add_edge("summary", END)
    return g.compile(checkpointer=saver)


def gate_graph(saver: BaseCheckpointSaver):
    """Asks for approval (`interrupt`) before replying."""
    def ask(state: DeltaState) -> dict:
        answer = interrupt({"question": "send the reply?"})
        return {"messages": [AIMessage(content=f"approved: {answer}")]}

    return StateGraph(DeltaState).add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END).compile(checkpointer=saver)


def subgraph_graph(saver: BaseCheckpointSaver):
    """A research subgraph (its own namespace, same delta channel) inside a chat."""
    def research(state: DeltaState) -> dict:
        return {"messages": [AIMessage(content=f"found {_n(state)} notes")]}

    inner = StateGraph(DeltaState).add_node("research", research).add_edge(START, "research").add_edge("research", END).compile()

    def answer(state: DeltaState) -> dict:
        return {"messages": [AIMessage(content=f"answer after {_n(state)}")]}

    g = StateGraph(DeltaState).add_node("sub", inner).add_node("answer", answer)
    return g.add_edge(START, "sub").add_edge("sub", "answer").add_edge("answer", END).compile(checkpointer=saver)


def _config(thread_id: str, **more: Any) -> dict:
    return {"configurable": {"thread_id": thread_id, **more}}


def _turns(graph, thread_id: str, texts: Iterable[str], clock: Clock) -> None:
    for text in texts:
        clock.advance(seconds=40)
        graph.invoke({"messages": [HumanMessage(content=text)]}, _config(thread_id))


def scenario_chat(saver, thread_id: str, clock: Clock) -> None:
    """Four turns over snapshots every third update (FORMATS §8)."""
    _turns(chat_graph(saver), thread_id, [f"question {i}" for i in range(4)], clock)


def scenario_fanout(saver, thread_id: str, clock: Clock) -> None:
    graph = fanout_graph(saver)
    for i in range(2):
        clock.advance(seconds=30)
        graph.invoke({"messages": [HumanMessage(content=f"research topic {i}")]}, _config(thread_id))


def scenario_remove_edit(saver, thread_id: str, clock: Clock) -> None:
    """Removals by id, an edit in place (`update_state` with an existing id), then `__remove_all__`."""
    graph = chat_graph(saver)
    _turns(graph, thread_id, ["first", "second", "third"], clock)
    cfg = _config(thread_id)
    msgs = graph.get_state(cfg).values["messages"]
    clock.advance(seconds=10)
    graph.update_state(cfg, {"messages": [RemoveMessage(id=msgs[1].id)]})
    clock.advance(seconds=10)
    graph.update_state(cfg, {"messages": [HumanMessage(content="second, edited", id=msgs[2].id)]})
    _turns(graph, thread_id, ["fourth"], clock)
    clock.advance(seconds=10)
    graph.update_state(cfg, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="fresh start")]})
    _turns(graph, thread_id, ["after the reset"], clock)


def scenario_fork(saver, thread_id: str, clock: Clock) -> None:
    """A replay from an old checkpoint: a branch whose first checkpoint snapshots."""
    graph = chat_graph(saver)
    _turns(graph, thread_id, ["one", "two", "three"], clock)
    history = list(graph.get_state_history(_config(thread_id)))
    old = next(s for s in history if len(s.values.get("messages", [])) == 2)
    clock.advance(seconds=20)
    graph.invoke({"messages": [HumanMessage(content="two, asked again")]}, old.config)


def scenario_overwrite(saver, thread_id: str, clock: Clock) -> None:
    """`update_state` with an `Overwrite`: the value is replaced, not reduced."""
    graph = chat_graph(saver)
    _turns(graph, thread_id, ["keep me?", "and me?"], clock)
    clock.advance(seconds=10)
    graph.update_state(_config(thread_id), {"messages": Overwrite([HumanMessage(content="only this", id="kept-1")])})
    _turns(graph, thread_id, ["go on"], clock)


def scenario_subgraph(saver, thread_id: str, clock: Clock) -> None:
    graph = subgraph_graph(saver)
    for i in range(2):
        clock.advance(seconds=30)
        graph.invoke({"messages": [HumanMessage(content=f"look into {i}")]}, _config(thread_id))


def scenario_interrupt(saver, thread_id: str, clock: Clock) -> None:
    """One approval given, the next one pending."""
    graph = gate_graph(saver)
    cfg = _config(thread_id)
    clock.advance(seconds=10)
    graph.invoke({"messages": [HumanMessage(content="draft one")]}, cfg)
    clock.advance(seconds=60)
    graph.invoke(Command(resume="yes"), cfg)
    clock.advance(seconds=10)
    graph.invoke({"messages": [HumanMessage(content="draft two")]}, cfg)


SCENARIOS = {
    "chat": scenario_chat,
    "fanout": scenario_fanout,
    "remove_edit": scenario_remove_edit,
    "fork": scenario_fork,
    "overwrite": scenario_overwrite,
    "subgraph": scenario_subgraph,
    "interrupt": scenario_interrupt,
}
GRAPHS = {"chat": chat_graph, "fanout": fanout_graph, "remove_edit": chat_graph, "fork": chat_graph,
          "overwrite": chat_graph, "subgraph": subgraph_graph, "interrupt": gate_graph}


def write_delta_threads(saver: BaseCheckpointSaver, names: Iterable[str] | None = None,
                        start: dt.datetime = DEFAULT_START) -> dict[str, str]:
    """Each scenario as thread `delta:<name>` through `saver`; returns `{thread_id: scenario}`."""
    out = {}
    for i, name in enumerate(names or SCENARIOS):
        thread_id = f"delta:{name}"
        with Clock(start + dt.timedelta(hours=i)) as clock:
            SCENARIOS[name](saver, thread_id, clock)
        out[thread_id] = name
    return out


def write_delta_store(path: str | os.PathLike[str], names: Iterable[str] | None = None) -> dict[str, str]:
    """A SqliteSaver file of the DeltaChannel scenarios (closed: its WAL checkpointed)."""
    conn = sqlite3.connect(os.fspath(path), check_same_thread=False)
    try:
        return write_delta_threads(SqliteSaver(conn), names)
    finally:
        conn.close()
