"""Scenario functions: each writes ONE thread through any checkpointer.

Signature: ``scenario_x(checkpointer, thread_id, clock=None) -> None``. ``clock``
is a :class:`~storegen.clock.Clock` (or a start ``datetime``; ``None`` = the
default start). Scenarios run every graph with ``durability="sync"`` so the
write order (and an SQLite file's bytes) do not depend on thread scheduling.

Example:
    >>> import sqlite3
    >>> from langgraph.checkpoint.sqlite import SqliteSaver
    >>> saver = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    >>> scenario_simple_chat(saver, "acme:web:sess-001")
    >>> len(saver.get_tuple({"configurable": {"thread_id": "acme:web:sess-001"}}).checkpoint["channel_values"]["messages"])
    6
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from storegen.clock import Clock, clock_scope
from storegen.graphs import (
    build_agent_graph,
    build_chat_graph,
    build_delegating_graph,
    build_operator_add_graph,
    build_research_graph,
)
from storegen.ids import current_ids
from storegen.models import CLAUDE, Reply, ScriptedChatModel
from storegen.tools import SUPPORT_TOOLS

Scenario = Callable[..., None]

# Whether checkpoints of the two-process scenario record the writer's OS pid in
# metadata. The demo turns it off so regenerating it gives identical bytes.
RECORD_PID = True


def thread_config(thread_id: str, checkpoint_id: str | None = None, **configurable: Any) -> RunnableConfig:
    """``{"configurable": {"thread_id": ..., [checkpoint_id], **extra}}``.

    Extra str/int/float/bool configurable keys are copied into checkpoint metadata.
    """
    conf: dict[str, Any] = {"thread_id": thread_id, **configurable}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def say(
    graph: CompiledStateGraph,
    config: RunnableConfig,
    content: str | list[Any] | list[BaseMessage],
    clock: Clock,
    *,
    think: float = 45.0,
    as_dict: bool = True,
) -> dict[str, Any]:
    """The user waits ``think`` seconds, then sends ``content`` (text, blocks or messages).

    Text goes in as an API-style dict ``{"role": "user", "content": ...}`` by
    default. With ``as_dict=False`` it is a ``HumanMessage`` object; LangGraph then
    serializes the ``__start__`` write in a background thread while
    ``add_messages`` assigns the id to that same object, so whether the stored
    write carries the id is a race (the checkpoints are unaffected).
    """
    clock.advance(think)
    messages: list[Any]
    if isinstance(content, list) and content and isinstance(content[0], (BaseMessage, dict)) and (
        isinstance(content[0], BaseMessage) or "role" in content[0]
    ):
        messages = content
    elif as_dict:
        messages = [{"role": "user", "content": content}]
    else:
        messages = [HumanMessage(content=content)]
    return graph.invoke({"messages": messages}, config, durability="sync")


# ---------------------------------------------------------------------------
# scenarios


def scenario_simple_chat(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """Three user/assistant turns; zero model latency so a turn's checkpoints share one ts."""
    model = ScriptedChatModel(
        base_latency=0.0,
        seconds_per_char=0.0,
        replies=[
            Reply("Of course. Go to Settings → Security and click “Reset password”. The email arrives within a few minutes."),
            Reply("Please check your spam folder first. If it is not there, tell me the address on file and I'll resend it."),
            Reply("Thanks! I've queued a new reset email to j***@example.com. The link is valid for 30 minutes."),
        ],
    )
    with clock_scope(clock) as c:
        graph = build_chat_graph(model, checkpointer)
        cfg = thread_config(thread_id)
        say(graph, cfg, "Hi! Can you help me reset my password?", c, think=0)
        say(graph, cfg, "I didn't get the email.", c, think=170)
        say(graph, cfg, "It's jane@example.com", c, think=35)


def scenario_tool_calls(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """Support agent with ToolNode: chained and parallel calls, one tool error, two models."""
    model = ScriptedChatModel(
        replies=[
            Reply("", [("lookup_order", {"order_id": "A-1043"})]),
            Reply("", [("track_shipment", {"tracking": "1Z999AA10123456784"})]),
            Reply("Your order A-1043 shipped with UPS and is in transit; it should arrive Thursday by 8pm."),
            Reply("Let me check that order.", [("lookup_order", {"order_id": "A-9999"})], model=CLAUDE),
            Reply("I couldn't find an order A-9999. Could you double-check the number on your confirmation email?", model=CLAUDE),
            Reply(
                "",
                [("lookup_order", {"order_id": "A-9989"}), ("track_shipment", {"tracking": "JD014600006281230"})],
                model=CLAUDE,
            ),
            Reply("", [("issue_refund", {"order_id": "A-9989", "amount": 42.5, "reason": "late delivery"})], model=CLAUDE),
            Reply(
                "Order A-9989 is held in customs and is 6 days late, so I refunded the full $42.50 to your card. "
                "It should show up within 3–5 business days.",
                model=CLAUDE,
            ),
        ],
    )
    with clock_scope(clock) as c:
        graph = build_agent_graph(model, SUPPORT_TOOLS, checkpointer)
        cfg = thread_config(thread_id, user_id="u-4471")
        # Message objects as input (see ``say``): the __start__ writes race, as in live apps.
        say(graph, cfg, "Where is my order A-1043?", c, think=0, as_dict=False)
        say(graph, cfg, "Great. Can you also check order A-9999 and refund it if it's late?", c, think=95, as_dict=False)
        say(graph, cfg, "Sorry, typo: it's A-9989.", c, think=60, as_dict=False)


def scenario_subgraph(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """Coding assistant whose ``research`` node is a subgraph containing another (two levels)."""
    model = ScriptedChatModel(
        replies=[
            # turn 1: triage, plan, search, summarize, answer
            Reply("This is a how-to question about streaming; researching."),
            Reply("Plan: 1) find the streaming docs 2) extract the stream_mode options."),
            Reply("Found: graph.stream(inputs, stream_mode='messages') yields (token, metadata) tuples."),
            Reply("Summary: stream_mode='messages' streams LLM tokens; 'updates' streams node outputs."),
            Reply(
                "Use `for token, meta in graph.stream(inputs, stream_mode=\"messages\"):` and print `token.content`. "
                "Use stream_mode=\"updates\" if you want whole node outputs instead of tokens."
            ),
            # turn 2
            Reply("Follow-up on persistence; researching.", model=CLAUDE),
            Reply("Plan: look up checkpointer setup for SQLite.", model=CLAUDE),
            Reply("Found: SqliteSaver.from_conn_string('checkpoints.sqlite').", model=CLAUDE),
            Reply("Summary: pass checkpointer=SqliteSaver(conn) to compile() and a thread_id in config.", model=CLAUDE),
            Reply(
                "Compile with `graph.compile(checkpointer=SqliteSaver(sqlite3.connect(\"chat.sqlite\")))` and pass "
                "`{\"configurable\": {\"thread_id\": \"...\"}}` on every call; the thread then survives restarts.",
                model=CLAUDE,
            ),
        ]
    )
    with clock_scope(clock) as c:
        graph = build_research_graph(model, checkpointer)
        cfg = thread_config(thread_id)
        say(graph, cfg, "How do I stream tokens from a LangGraph agent?", c, think=0)
        say(graph, cfg, "And how do I make the conversation persist across restarts?", c, think=240)


def scenario_tool_subgraph(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """An agent delegates a question to a research sub-agent run inside a tool (its own namespace and state)."""
    model = ScriptedChatModel(
        replies=[
            Reply("", [("ask_researcher", {"question": "Which LangGraph savers support Postgres?"})]),
            Reply("PostgresSaver (sync) and AsyncPostgresSaver both store checkpoints in Postgres."),
        ]
    )
    researcher = ScriptedChatModel(
        replies=[Reply("Postgres: langgraph-checkpoint-postgres ships PostgresSaver and AsyncPostgresSaver.", model=CLAUDE)]
    )
    with clock_scope(clock) as c:
        graph = build_delegating_graph(model, researcher, checkpointer)
        say(graph, thread_config(thread_id), "Which savers can I use with Postgres?", c, think=0)


def scenario_edit(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """``update_state`` replaces an assistant message by id (same id, new content)."""
    model = ScriptedChatModel(
        replies=[
            Reply("The quarterly review is on Tuesday at 10:00 in room Atlas."),
            Reply("Yes — the agenda covers Q1 revenue, hiring and the office move."),
            Reply("You're welcome! I've added it to your calendar."),
        ]
    )
    with clock_scope(clock) as c:
        graph = build_chat_graph(model, checkpointer)
        cfg = thread_config(thread_id)
        say(graph, cfg, "When is the quarterly review?", c, think=0)
        say(graph, cfg, "Is there an agenda?", c, think=50)
        # An operator corrects the first answer in place: add_messages replaces by id.
        c.advance(minutes=12)
        wrong = graph.get_state(cfg).values["messages"][1]
        fixed = wrong.model_copy(update={"content": "Correction: the quarterly review is on Wednesday at 10:00 in room Atlas."})
        graph.update_state(cfg, {"messages": [fixed]}, as_node="chat")
        say(graph, cfg, "Thanks!", c, think=120)


def scenario_replay_branch(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """Time travel: a replay of an old checkpoint (``source: fork``) and a new input from an old one."""
    model = ScriptedChatModel(
        replies=[
            Reply("Kyoto in April is lovely: cherry blossoms peak early in the month."),
            Reply("Book a ryokan near Gion; three nights is a good length."),
            Reply("Budget about ¥25,000 per night for a mid-range ryokan."),
            Reply("Plan for roughly ¥30,000 a night in peak sakura season.", model=CLAUDE),
            Reply("Osaka is 15 minutes away by Shinkansen — great for a food-focused day trip.", model=CLAUDE),
        ]
    )
    with clock_scope(clock) as c:
        graph = build_chat_graph(model, checkpointer)
        cfg = thread_config(thread_id)
        say(graph, cfg, "I'm planning a trip to Kyoto in April. Good idea?", c, think=0)
        say(graph, cfg, "Where should I stay?", c, think=80)
        say(graph, cfg, "What should I budget?", c, think=65)
        history = list(graph.get_state_history(cfg))  # newest first
        before_budget = next(s for s in history if s.next == ("chat",) and len(s.values.get("messages", [])) == 5)
        after_first = next(s for s in history if not s.next and len(s.values.get("messages", [])) == 2)
        # 1) Replay: regenerate the last answer from the checkpoint before it.
        c.advance(minutes=7)
        graph.invoke(None, before_budget.config, durability="sync")
        # 2) Branch: the user goes back to the first answer and asks something else.
        c.advance(minutes=4)
        graph.invoke({"messages": [HumanMessage("Actually, what about a day trip to Osaka instead?")]}, after_first.config, durability="sync")


def scenario_remove_message(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """A ``trim`` node returns ``RemoveMessage``s: old messages vanish from later checkpoints."""
    model = ScriptedChatModel(
        replies=[
            Reply("Hello! I'm the Initech IT helpdesk bot. What's the issue?"),
            Reply("Try unplugging the printer for 30 seconds, then plug it back in."),
            Reply("Then the fuser may be jammed. I've opened ticket IT-5531 for facilities."),
            Reply("The technician is scheduled for 14:00 today."),
        ]
    )
    with clock_scope(clock) as c:
        graph = build_chat_graph(model, checkpointer, trim_to=4)
        cfg = thread_config(thread_id)
        say(graph, cfg, "hi", c, think=0)
        say(graph, cfg, "The printer on floor 3 says PC LOAD LETTER.", c, think=30)
        say(graph, cfg, "Still broken after the power cycle.", c, think=300)
        say(graph, cfg, "When will someone come?", c, think=90)


_REFUND_REPLIES = [
    Reply(
        "I'm sorry it arrived damaged. I can refund the full amount once a supervisor approves.",
        [("issue_refund", {"order_id": "B-2211", "amount": 89.0, "reason": "arrived broken"})],
    ),
    Reply("The refund of $89.00 for B-2211 is approved and submitted; expect it in 3–5 business days."),
    Reply("You're welcome — sorry again for the trouble!"),
]


def scenario_interrupt_pending(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """A refund waits for human approval: ``interrupt()`` left pending."""
    model = ScriptedChatModel(replies=list(_REFUND_REPLIES))
    with clock_scope(clock) as c:
        graph = build_agent_graph(model, SUPPORT_TOOLS, checkpointer, approve_tools=["issue_refund"])
        say(graph, thread_config(thread_id), "My order B-2211 arrived broken. I want a refund.", c, think=0)


def scenario_interrupt_resumed(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """The same approval, resumed 25 minutes later with ``Command(resume=...)``."""
    model = ScriptedChatModel(replies=list(_REFUND_REPLIES))
    with clock_scope(clock) as c:
        graph = build_agent_graph(model, SUPPORT_TOOLS, checkpointer, approve_tools=["issue_refund"])
        cfg = thread_config(thread_id)
        say(graph, cfg, "My order B-2211 arrived broken. I want a refund.", c, think=0)
        c.advance(minutes=25)
        graph.invoke(Command(resume={"approved": True, "reviewer": "supervisor-7"}), cfg, durability="sync")
        say(graph, cfg, "Thank you!", c, think=40)


def scenario_operator_add(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """Legacy ``Annotated[list, operator.add]`` state: no message carries an id."""
    model = ScriptedChatModel(
        replies=[
            Reply("Our opening hours are 9:00–17:00, Monday to Friday."),
            Reply("Yes, on Saturdays we open 10:00–14:00."),
        ]
    )
    with clock_scope(clock) as c:
        graph = build_operator_add_graph(model, checkpointer)
        cfg = thread_config(thread_id)
        # Message objects, not dicts: operator.add would store a dict input verbatim.
        say(graph, cfg, "What are your opening hours?", c, think=0, as_dict=False)
        say(graph, cfg, "Are you open on weekends?", c, think=20, as_dict=False)


def scenario_list_content(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock | dt.datetime | None = None) -> None:
    """List-of-blocks content (text + image), a SystemMessage and a ChatMessage with role ``critic``."""
    model = ScriptedChatModel(
        replies=[
            Reply(
                [
                    {"type": "text", "text": "The photo shows a cracked phone screen."},
                    {"type": "text", "text": "That is covered by the 12-month warranty."},
                ]
            ),
            Reply("Drop it at any Acme store; the repair takes about two hours."),
        ]
    )
    pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    with clock_scope(clock) as c:
        graph = build_chat_graph(model, checkpointer, critic=True)
        cfg = thread_config(thread_id)
        first = [
            {"role": "system", "content": "You are Acme's device-support assistant. Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Is this covered by warranty?"},
                    {"type": "image_url", "image_url": {"url": pixel}},
                ],
            },
        ]
        say(graph, cfg, first, c, think=0)
        say(graph, cfg, "Where can I get it repaired?", c, think=75)


# --- two processes ----------------------------------------------------------

_RESTART_PART1 = [
    Reply("Sure. Paste the failing test and the function under test."),
    Reply("The off-by-one comes from using local time: convert with `.astimezone(timezone.utc)` before taking `.date()`."),
]
_RESTART_PART2 = [
    Reply("Welcome back! Last time we found the timezone bug in parse_dates; did the UTC fix work?", model=CLAUDE),
    Reply("Then add a regression test with a timestamp just after midnight UTC, e.g. 2025-03-01T00:30:00Z.", model=CLAUDE),
]


def _restart_graph(checkpointer: BaseCheckpointSaver, replies: list[Reply]) -> CompiledStateGraph:
    return build_chat_graph(ScriptedChatModel(replies=replies), checkpointer)


def store_location(checkpointer: BaseCheckpointSaver) -> str:
    """Where a second process can open the same store: an SQLite path or a Postgres DSN."""
    conn = getattr(checkpointer, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        for _, name, path in conn.execute("PRAGMA database_list").fetchall():
            if name == "main" and path:
                return str(path)
        raise ValueError("an in-memory SQLite saver cannot be shared with another process")
    info = getattr(conn, "info", None)
    if info is not None:  # psycopg Connection: info.dsn omits the password
        from psycopg.conninfo import make_conninfo

        return make_conninfo(info.dsn, password=info.password) if info.password else info.dsn
    conninfo = getattr(conn, "conninfo", None)  # psycopg_pool.ConnectionPool
    if isinstance(conninfo, str):
        return conninfo
    raise ValueError(f"cannot tell where {type(checkpointer).__name__} stores its data; pass location=")


def continue_restart_thread(checkpointer: BaseCheckpointSaver, thread_id: str, clock: Clock) -> None:
    """Part two of :func:`scenario_second_process` (runs in the second process)."""
    graph = _restart_graph(checkpointer, list(_RESTART_PART2))
    meta: dict[str, Any] = {"writer": "worker-2"}
    if RECORD_PID:
        meta["writer_pid"] = os.getpid()
    cfg = thread_config(thread_id, **meta)
    say(graph, cfg, "I'm back — my dev container restarted while I was in meetings. Where were we?", clock, think=0)
    say(graph, cfg, "Yes, the fix works. What else should I do?", clock, think=70)


def scenario_second_process(
    checkpointer: BaseCheckpointSaver,
    thread_id: str,
    clock: Clock | dt.datetime | None = None,
    *,
    location: str | None = None,
    idle_hours: float = 3.0,
) -> None:
    """Two turns here, then (after ``idle_hours``) two more in a SECOND OS process.

    The child is ``python -m storegen.second_process``; it opens ``location``
    (SQLite path or Postgres DSN; derived from the checkpointer when omitted).
    Checkpoint metadata names the writer (``writer``, ``writer_pid``).
    """
    location = location or store_location(checkpointer)
    from storegen.second_process import is_postgres_dsn

    if not isinstance(getattr(checkpointer, "conn", None), sqlite3.Connection) and not is_postgres_dsn(location):
        raise ValueError(f"second_process: {location!r} is neither an SQLite path nor a Postgres DSN")
    with clock_scope(clock) as c:
        graph = _restart_graph(checkpointer, list(_RESTART_PART1))
        meta: dict[str, Any] = {"writer": "worker-1"}
        if RECORD_PID:
            meta["writer_pid"] = os.getpid()
        cfg = thread_config(thread_id, **meta)
        say(graph, cfg, "Can you help me debug a failing date test?", c, think=0)
        say(graph, cfg, "test_parse_dates expects 2025-03-01 but gets 2025-02-28.", c, think=110)
        resume_at = c.advance(hours=idle_hours)
        cmd = [
            sys.executable, "-m", "storegen.second_process",
            "--store", location, "--thread", thread_id,
            "--at", resume_at.isoformat(), "--seed", current_ids().hex(16),
        ]
        if not RECORD_PID:
            cmd.append("--no-pid")
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
        # Keep this process's clock after the child's last checkpoint.
        c.move_to(dt.datetime.fromisoformat(json.loads(out.stdout.strip().splitlines()[-1])["end"]))


SCENARIOS: dict[str, Scenario] = {
    "simple_chat": scenario_simple_chat,
    "tool_calls": scenario_tool_calls,
    "subgraph": scenario_subgraph,
    "edit": scenario_edit,
    "replay_branch": scenario_replay_branch,
    "remove_message": scenario_remove_message,
    "interrupt_pending": scenario_interrupt_pending,
    "interrupt_resumed": scenario_interrupt_resumed,
    "operator_add": scenario_operator_add,
    "list_content": scenario_list_content,
    "second_process": scenario_second_process,
    "tool_subgraph": scenario_tool_subgraph,
}

# thread id → scenario. Covers the thread-key shapes of contract §3: empty sub-tenant,
# no colons, two parts, and a session that itself contains colons.
DEFAULT_THREADS: dict[str, str] = {
    "acme:web:sess-001": "simple_chat",
    "acme:web:sess-002": "tool_calls",
    "acme:api:sess-003": "subgraph",
    "globex::s2": "edit",
    "globex:mobile:sess-010": "replay_branch",
    "initech:support:sess-020": "remove_message",
    "initech:support:sess-021": "interrupt_pending",
    "initech:support:sess-022": "interrupt_resumed",
    "support-bot-7": "operator_add",
    "acme:web:a:b": "list_content",
    "acme:web:sess-restart": "second_process",
    "beta:sess-9": "simple_chat",
    "acme:api:sess-004": "tool_subgraph",
}
