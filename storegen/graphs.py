"""Graph builders: small but real LangGraph graphs over ``MessagesState``.

Every builder takes a chat model and an optional checkpointer and returns a
compiled graph. Subgraphs are compiled *without* a checkpointer so they inherit
the parent's and write their own ``checkpoint_ns``.

Example:
    >>> from storegen.models import ScriptedChatModel, Reply
    >>> g = build_chat_graph(ScriptedChatModel(replies=[Reply("hi")]))
    >>> sorted(g.get_graph().nodes)
    ['__end__', '__start__', 'chat']
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from storegen.clock import advance_active

Checkpointer = BaseCheckpointSaver[Any] | None


def _reply_node(model: BaseChatModel):
    def node(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    return node


def _critic(state: MessagesState) -> dict[str, list[BaseMessage]]:
    # A reviewer agent speaking with a custom chat role (lands as role "other").
    last = state["messages"][-1]
    words = len(str(last.text).split())
    advance_active(0.25)
    verdict = "concise and on-topic" if words < 60 else "long; consider trimming"
    return {"messages": [ChatMessage(role="critic", content=f"Review: reply is {words} words, {verdict}. No policy issues.")]}


def _trimmer(keep: int):
    def trim(state: MessagesState) -> dict[str, list[BaseMessage]]:
        # Classic context-window trimming: drop the oldest non-system messages.
        msgs = [m for m in state["messages"] if not isinstance(m, SystemMessage)]
        excess = msgs[: max(0, len(msgs) - keep)]
        return {"messages": [RemoveMessage(id=m.id) for m in excess if m.id]}

    return trim


def build_chat_graph(
    model: BaseChatModel,
    checkpointer: Checkpointer = None,
    *,
    critic: bool = False,
    trim_to: int | None = None,
) -> CompiledStateGraph:
    """START → chat [→ critic] [→ trim] → END.

    ``trim_to`` keeps the last N non-system messages by emitting ``RemoveMessage``s.
    """
    g = StateGraph(MessagesState)
    g.add_node("chat", _reply_node(model))
    chain = ["chat"]
    if critic:
        g.add_node("critic", _critic)
        chain.append("critic")
    if trim_to is not None:
        g.add_node("trim", _trimmer(trim_to))
        chain.append("trim")
    g.add_edge(START, chain[0])
    for a, b in zip(chain, chain[1:]):
        g.add_edge(a, b)
    g.add_edge(chain[-1], END)
    return g.compile(checkpointer=checkpointer)


def build_agent_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: Checkpointer = None,
    *,
    approve_tools: Sequence[str] = (),
) -> CompiledStateGraph:
    """A ReAct loop: agent ⇄ tools (ToolNode), with optional human approval.

    Tool calls to a name in ``approve_tools`` go through an ``approval`` node
    that calls ``interrupt()``; resume with ``Command(resume={"approved": bool})``.
    """
    g = StateGraph(MessagesState)
    g.add_node("agent", _reply_node(model))
    g.add_node("tools", ToolNode(list(tools), handle_tool_errors=True))

    def route(state: MessagesState) -> Literal["tools", "approval", "__end__"]:
        if tools_condition(state) == END:
            return END
        last = state["messages"][-1]
        if any(c["name"] in approve_tools for c in getattr(last, "tool_calls", [])):
            return "approval"
        return "tools"

    def approval(state: MessagesState) -> Command[Literal["tools", "agent"]]:
        last = state["messages"][-1]
        calls = [c for c in last.tool_calls if c["name"] in approve_tools]
        decision = interrupt(
            {
                "question": "Approve this action?",
                "action": calls[0]["name"],
                "args": calls[0]["args"],
            }
        )
        if isinstance(decision, dict) and decision.get("approved"):
            return Command(goto="tools")
        rejected = [
            ToolMessage(
                content=f"Rejected by reviewer: {decision}",
                tool_call_id=c["id"],
                name=c["name"],
                status="error",
            )
            for c in last.tool_calls
        ]
        return Command(goto="agent", update={"messages": rejected})

    g.add_edge(START, "agent")
    if approve_tools:
        g.add_node("approval", approval)
        g.add_conditional_edges("agent", route, ["tools", "approval", END])
    else:
        g.add_conditional_edges("agent", tools_condition, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def build_research_graph(model: BaseChatModel, checkpointer: Checkpointer = None) -> CompiledStateGraph:
    """Root → ``research`` (subgraph) → ``fetch`` (sub-subgraph): nested namespaces.

    root:     START → triage → research → answer → END
    research: START → plan → fetch → END
    fetch:    START → search → summarize → END
    """
    fetch = StateGraph(MessagesState)
    fetch.add_node("search", _reply_node(model))
    fetch.add_node("summarize", _reply_node(model))
    fetch.add_edge(START, "search")
    fetch.add_edge("search", "summarize")
    fetch.add_edge("summarize", END)

    research = StateGraph(MessagesState)
    research.add_node("plan", _reply_node(model))
    research.add_node("fetch", fetch.compile())
    research.add_edge(START, "plan")
    research.add_edge("plan", "fetch")
    research.add_edge("fetch", END)

    root = StateGraph(MessagesState)
    root.add_node("triage", _reply_node(model))
    root.add_node("research", research.compile())
    root.add_node("answer", _reply_node(model))
    root.add_edge(START, "triage")
    root.add_edge("triage", "research")
    root.add_edge("research", "answer")
    root.add_edge("answer", END)
    return root.compile(checkpointer=checkpointer)


def build_delegating_graph(
    model: BaseChatModel, researcher: BaseChatModel, checkpointer: Checkpointer = None
) -> CompiledStateGraph:
    """An agent whose ``ask_researcher`` tool runs a sub-agent graph with a state of its own.

    root:       START → agent ⇄ tools (ToolNode) → END
    researcher: START → think → END, invoked inside the tool with the question only

    The sub-agent's checkpoints land in ``tools:<task_id>`` (a second call within
    the same task in ``tools:<task_id>|1``); its messages are never handed back:
    the tool returns only the last one's text, as a ``ToolMessage``.
    """
    sub = StateGraph(MessagesState)
    sub.add_node("think", _reply_node(researcher))
    sub.add_edge(START, "think")
    sub.add_edge("think", END)
    sub_graph = sub.compile()

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the research sub-agent one question; returns its answer."""
        out = sub_graph.invoke({"messages": [HumanMessage(question)]})
        return str(out["messages"][-1].content)

    g = StateGraph(MessagesState)
    g.add_node("agent", _reply_node(model))
    g.add_node("tools", ToolNode([ask_researcher]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


class LegacyState(TypedDict):
    """Pre-``add_messages`` style state: a plain list concatenated with ``operator.add``."""

    messages: Annotated[list, operator.add]


def build_operator_add_graph(model: BaseChatModel, checkpointer: Checkpointer = None) -> CompiledStateGraph:
    """START → bot → END over :class:`LegacyState`; messages are stored without ids."""

    def bot(state: LegacyState) -> dict[str, list[Any]]:
        reply = model.invoke(state["messages"])
        # Legacy bots built messages by hand: no id, so none is ever assigned.
        return {"messages": [AIMessage(content=reply.content, response_metadata=reply.response_metadata, usage_metadata=reply.usage_metadata)]}

    g = StateGraph(LegacyState)
    g.add_node("bot", bot)
    g.add_edge(START, "bot")
    g.add_edge("bot", END)
    return g.compile(checkpointer=checkpointer)
