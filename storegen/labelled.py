"""A labelled set for the outcome signals: conversations with known outcomes, written by real graphs.

Every conversation is a support agent (agent ⇄ ToolNode, with a human approval step that
calls `interrupt()`) run through a real `SqliteSaver` with a scripted chat model and tools
that succeed or fail by their arguments (`region` "us-east"/"apac"/"legacy" fails). Its
first user question is on one of six topics, in English, German, French or Spanish; its
run config carries `app_version` "1.0" or "1.1" (copied into checkpoint metadata), and
the two versions have different signal rates. Patterns include decoys that look like a
signal and are not (paging, a single tool error, "no need to talk to a person", "sorry for
the wait, here it is", "I couldn't find it at first, but here it is", "thanks, but I also
need the invoice" left unanswered, a repeated greeting…). Restarts: a pause of over 30 minutes before a
user turn (Resume QA's idle gap), after a turn that pages through 48 to 60 pages of order
history or before it, and a graph that trims its own state (`lost_context` and its decoys).

The labels are written beside the store (`labels_path`): for each thread the expected
booleans, `outcome`, `topic`, language, version, the pattern that wrote it and the message
ordinals each true signal points at. Idle times are measured to the store's latest
checkpoint (as the signal definitions say): every conversation ends at least six hours
before the last block of "recent" ones, which end within twenty minutes of the store's end,
so no label sits near the 30-minute or 4-hour thresholds.

Outcome rule of the labels: waiting (an interrupt pending) > failed (dropped after a failure)
> abandoned > resolved (a closing, or the assistant answered last) > unknown (the user spoke
last within the idle window).

Example:
    >>> import tempfile, os
    >>> labels = build_labelled_store(os.path.join(tempfile.mkdtemp(), "l.sqlite"), scale=0.05)
    >>> sorted(labels["threads"].values(), key=lambda t: t["pattern"])[0]["pattern"]
    'abandoned'
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from storegen import labelled_text as T
from storegen.build import open_sqlite_saver, remove_store
from storegen.clock import UTC, Clock, advance_active
from storegen.ids import deterministic
from storegen.models import Reply, ScriptedChatModel
from storegen.scenarios import thread_config

SIGNALS = ("abandoned", "resolved_closing", "dropped_after_failure", "agent_loop", "tool_error_cascade",
           "user_frustration", "repetition", "slow_hitl", "lost_context")
OUTCOMES = ("resolved", "abandoned", "failed", "waiting", "unknown")
LABELLED_START = dt.datetime(2025, 5, 5, 7, 0, tzinfo=UTC)
IDLE = dt.timedelta(minutes=30)
HITL_SLA = dt.timedelta(hours=4)
#: A pause longer than this between two checkpoints is a restart (Resume QA's idle gap).
RESTART_GAP = dt.timedelta(minutes=30)
#: A restart rebuilds the last this many user/assistant messages (Resume QA's window cap).
REBUILT_WINDOW = 50
FAILING_REGIONS = ("us-east", "apac", "legacy")
LOOKUP = {"refund": "lookup_order", "shipping": "track_parcel", "password": "find_account", "billing": "get_invoice",
          "cancel": "find_subscription", "product": "check_stock"}
ACTION = {"refund": "issue_refund", "shipping": "reship_order", "password": "reset_password", "billing": "correct_invoice",
          "cancel": "cancel_subscription", "product": "reserve_item"}
_ERRORS = {"us-east": "TimeoutError: upstream {name} timed out after 30 s",
           "apac": "ConnectionError: {name} backend refused the connection (503)", "legacy": "KeyError: {ref} unknown to the legacy system"}
SILENT = None  # in a script: the agent does not answer this turn


def labels_path(store: str | os.PathLike[str]) -> Path:
    """Where the labels of `store` are written: `x.sqlite` → `x.labels.json`."""
    p = Path(store)
    return p.with_name(p.stem + ".labels.json")


# --------------------------------------------------------------------------- tools and graph


def _lookup_tool(name: str) -> StructuredTool:
    def look(ref: str, region: str = "eu") -> str:
        advance_active(0.4)
        if region in FAILING_REGIONS:
            raise RuntimeError(_ERRORS[region].format(name=name, ref=ref))
        return f"{name}({ref}): found, status ok"

    return StructuredTool.from_function(look, name=name, description=f"Look up a record ({name}).")


def _action_tool(name: str) -> StructuredTool:
    def act(ref: str) -> str:
        advance_active(0.6)
        return f"{name}({ref}): done"

    return StructuredTool.from_function(act, name=name, description=f"Act on a record ({name}); needs approval.")


def _list_items(ref: str, page: int = 1) -> str:
    advance_active(0.3)
    return f"items for {ref}, page {page} of 4: " + ", ".join(f"item-{(page - 1) * 5 + i}" for i in range(1, 6))


def _order_history(ref: str, page: int = 1) -> str:
    advance_active(0.3)
    return f"orders of {ref}, page {page}: " + ", ".join(f"order-{page}{i:02d} delivered" for i in range(1, 4))


TOOLS = [_lookup_tool(n) for n in LOOKUP.values()] + [_action_tool(n) for n in ACTION.values()] + [
    StructuredTool.from_function(_list_items, name="list_items", description="List a customer's items, one page at a time."),
    StructuredTool.from_function(_order_history, name="order_history", description="A customer's order history, one page at a time.")]


def _trim(state: MessagesState) -> dict[str, list[BaseMessage]]:
    """Keep the first user message (it states the task) and the latest user turn, as an app that
    bounds its context does: every message between them is removed from the state."""
    messages = state["messages"]
    last_user = max(i for i, m in enumerate(messages) if m.type == "human")
    return {"messages": [RemoveMessage(id=m.id) for m in messages[1:last_user]]}


def build_labelled_graph(script: list[Reply | None], checkpointer: Any, trim: bool = False) -> Any:
    """agent ⇄ tools, action tools through an approval node that calls `interrupt()`.

    The agent plays `script` in order; a `SILENT` entry makes it return no message (the
    user's or the tool's message stays the last one). `trim`: after each answer a node
    removes every message between the first user message and the latest one (`RemoveMessage`).
    """
    model = ScriptedChatModel(responder=lambda _messages: script.pop(0))

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        if script and script[0] is SILENT:
            script.pop(0)
            return {"messages": []}
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> Literal["tools", "approval", "trim", "__end__"]:
        if tools_condition(state) == END:
            return "trim" if trim else END
        calls = getattr(state["messages"][-1], "tool_calls", [])
        return "approval" if any(c["name"] in ACTION.values() for c in calls) else "tools"

    def approval(state: MessagesState) -> Command[Literal["tools"]]:
        call = state["messages"][-1].tool_calls[0]
        interrupt({"question": "Approve this action?", "action": call["name"], "args": call["args"]})
        return Command(goto="tools")

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    g.add_node("approval", approval)
    g.add_edge(START, "agent")
    if trim:
        g.add_node("trim", _trim)
        g.add_edge("trim", END)
    g.add_conditional_edges("agent", route, ["tools", "approval", END, *(["trim"] if trim else [])])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


# --------------------------------------------------------------------------- conversation plans


@dataclass
class Step:
    """A user message (or, with `resume`, a human's approval after `think` seconds) and the agent's replies to it.

    `marks` names the signals whose ordinals come from this step's messages.
    """

    text: str | None
    replies: list[Reply | None]
    marks: tuple[str, ...] = ()
    think: float = 60.0
    resume: bool = False


@dataclass
class Plan:
    steps: list[Step]
    labels: dict[str, bool] = field(default_factory=dict)
    greeting_turns: int = 0  # user turns before the first question
    trim: bool = False  # the graph keeps only the first user message and the latest turn in its state


@dataclass
class Ctx:
    lang: str
    topic: str
    ref: str
    rng: random.Random

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def user(self, text: str) -> str:
        """Some user messages arrive decomposed (NFD), as some keyboards and browsers send them."""
        return unicodedata.normalize("NFD", text) if self.rng.random() < 0.2 else text

    def question(self) -> str:
        return self.user(self.pick(T.TOPIC_QUESTIONS[self.topic][self.lang]).format(ref=self.ref))

    def answer(self) -> Reply:
        return Reply(T.ANSWERS[self.topic][self.lang].format(ref=self.ref))

    def lookup(self, region: str = "eu") -> Reply:
        args: dict[str, Any] = {"ref": self.ref} if region == "eu" else {"ref": self.ref, "region": region}
        return Reply("", [(LOOKUP[self.topic], args)])

    def failing(self) -> Reply:
        return self.lookup(self.pick(list(FAILING_REGIONS)))

    def closing(self) -> str:
        return self.user(self.pick(T.CLOSINGS[self.lang]))

    def follow_up(self) -> str:
        return self.user(self.pick(T.FOLLOW_UPS[self.lang]))

    def styled(self, text: str) -> str:
        """A frustration phrase as users type it: as is, in capitals, or decomposed."""
        style = self.rng.randrange(3)
        return text.upper() if style == 1 else unicodedata.normalize("NFD", text) if style == 2 else text


def _answered(c: Ctx, reply: Reply | None = None) -> Step:
    return Step(c.question(), [c.lookup(), reply or c.answer()], think=0)


def _closing_silent(c: Ctx) -> Step:
    return Step(c.closing(), [SILENT], ("resolved_closing",))


def p_closing(c: Ctx) -> Plan:
    return Plan([_answered(c), _closing_silent(c)], {"resolved_closing": True})


def p_closing_goodbye(c: Ctx) -> Plan:
    return Plan([_answered(c), Step(c.closing(), [Reply(T.GOODBYES[c.lang])], ("resolved_closing",))], {"resolved_closing": True})


def p_answered(c: Ctx) -> Plan:
    return Plan([_answered(c)])


def _every_other(c: Ctx) -> bool:
    """Half the conversations of a pattern, chosen by their reference (no draw: the rest stay as they are)."""
    return sum(map(ord, c.ref)) % 2 == 1


def p_abandoned(c: Ctx) -> Plan:
    text = c.follow_up()
    if _every_other(c):  # thanks, then a contrast and a new request: not a closing
        text = T.THANKS_BUT[c.lang]
    return Plan([_answered(c), Step(text, [SILENT], ("abandoned",))], {"abandoned": True})


def p_abandoned_first(c: Ctx) -> Plan:
    return Plan([Step(c.question(), [SILENT], ("abandoned",), think=0)], {"abandoned": True})


p_recent_user_last = p_abandoned  # in the recent block: the idle window has not passed


def p_dropped_tool_error(c: Ctx) -> Plan:
    return Plan([Step(c.question(), [c.failing(), SILENT], ("dropped_after_failure",), think=0)], {"dropped_after_failure": True})


def p_dropped_give_up(c: Ctx) -> Plan:
    give_up = Reply(c.pick(T.GIVE_UPS[c.lang]))
    return Plan([Step(c.question(), [c.failing(), give_up], ("dropped_after_failure",), think=0)], {"dropped_after_failure": True})


def p_dropped_cascade(c: Ctx) -> Plan:
    give_up = Reply(c.pick(T.GIVE_UPS[c.lang]))
    step = Step(c.question(), [c.lookup("us-east"), c.lookup("apac"), give_up], ("dropped_after_failure", "tool_error_cascade"), think=0)
    return Plan([step], {"dropped_after_failure": True, "tool_error_cascade": True})


def p_give_up_recovered(c: Ctx) -> Plan:
    """The assistant gives up, the user asks again and is helped: a failure the conversation did not end on."""
    first = Step(c.question(), [c.failing(), Reply(c.pick(T.GIVE_UPS[c.lang]))], think=0)
    retry = Step(c.user(T.TRY_AGAIN[c.lang]), [c.lookup(), c.answer()], think=90)
    return Plan([first, retry, _closing_silent(c)], {"resolved_closing": True})


def p_apology_answer(c: Ctx) -> Plan:
    prefix = T.RECOVERED_PREFIX if _every_other(c) else T.APOLOGY_PREFIX
    reply = Reply(prefix[c.lang] + T.ANSWERS[c.topic][c.lang].format(ref=c.ref))
    return Plan([_answered(c, reply)])


def p_single_error(c: Ctx) -> Plan:
    return Plan([Step(c.question(), [c.failing(), c.lookup(), c.answer()], think=0), _closing_silent(c)], {"resolved_closing": True})


def p_cascade_recovered(c: Ctx) -> Plan:
    errors = [c.lookup(r) for r in c.rng.sample(FAILING_REGIONS, c.rng.choice([2, 3]))]
    step = Step(c.question(), [*errors, c.lookup(), c.answer()], ("tool_error_cascade",), think=0)
    return Plan([step, Step(c.closing(), [Reply(T.GOODBYES[c.lang])], ("resolved_closing",))],
                {"tool_error_cascade": True, "resolved_closing": True})


def p_errors_apart(c: Ctx) -> Plan:
    """Two tool errors with a success between them: not consecutive, not a cascade."""
    first = Step(c.question(), [c.failing(), c.lookup(), c.answer()], think=0)
    second = Step(c.follow_up(), [c.failing(), Reply(T.FOLLOW_UP_ANSWERS[c.lang])])
    return Plan([first, second, _closing_silent(c)], {"resolved_closing": True})


def p_loop(c: Ctx) -> Plan:
    repeats = c.rng.choice([3, 3, 4, 5])
    step = Step(c.question(), [c.lookup() for _ in range(repeats)] + [c.answer()], ("agent_loop",), think=0)
    return Plan([step, _closing_silent(c)], {"agent_loop": True, "resolved_closing": True})


def p_retry_twice(c: Ctx) -> Plan:
    """The same call twice in one turn: under the three a loop needs."""
    return Plan([Step(c.question(), [c.lookup(), c.lookup(), c.answer()], think=0), _closing_silent(c)], {"resolved_closing": True})


def p_paging(c: Ctx) -> Plan:
    pages = [Reply("", [("list_items", {"ref": c.ref, "page": n})]) for n in range(1, c.rng.choice([4, 5]))]
    return Plan([Step(c.question(), [*pages, c.answer()], think=0), _closing_silent(c)], {"resolved_closing": True})


def p_same_call_each_turn(c: Ctx) -> Plan:
    """The same look-up in three user turns: once per turn is not a loop (two different follow-ups: no repeated request)."""
    ask, ask_again = (c.user(t) for t in c.rng.sample(T.FOLLOW_UPS[c.lang], 2))
    second = Step(ask, [c.lookup(), Reply(T.FOLLOW_UP_ANSWERS[c.lang])])
    third = Step(ask_again, [c.lookup(), Reply(T.FINAL_CHECKS[c.lang].format(ref=c.ref))])
    return Plan([_answered(c), second, third])


def p_frustration_human(c: Ctx) -> Plan:
    ask = Step(c.styled(c.pick(T.ASK_HUMAN[c.lang])), [Reply(T.FOLLOW_UP_ANSWERS[c.lang])], ("user_frustration",))
    return Plan([_answered(c), ask], {"user_frustration": True})


def p_frustration_wrong(c: Ctx) -> Plan:
    wrong = Step(c.styled(c.pick(T.SAYS_WRONG[c.lang])), [c.lookup("eu"), Reply(T.FOLLOW_UP_ANSWERS[c.lang])], ("user_frustration",))
    return Plan([_answered(c), wrong, _closing_silent(c)], {"user_frustration": True, "resolved_closing": True})


def p_frustration_repeat(c: Ctx) -> Plan:
    first = _answered(c)
    again = first.text.rstrip(" ?!.").lower() + " ??"
    second = Step(again, [Reply(T.FOLLOW_UP_ANSWERS[c.lang])], ("user_frustration",))
    return Plan([first, second], {"user_frustration": True})


def p_frustration_decoy(c: Ctx) -> Plan:
    decoy = Step(c.user(c.pick(T.FRUSTRATION_DECOYS[c.lang])), [Reply(T.ACKNOWLEDGE[c.lang])])
    return Plan([_answered(c), decoy, _closing_silent(c)], {"resolved_closing": True})


def p_greeting_decoy(c: Ctx) -> Plan:
    hello, (g1, g2) = T.GREETINGS[c.lang], T.ASSISTANT_GREETINGS[c.lang]
    steps = [Step(hello, [Reply(g1)], think=0), Step(hello, [Reply(g2)], think=40), _answered(c),
             Step(c.closing(), [Reply(T.GOODBYES[c.lang])], ("resolved_closing",))]
    steps[2].think = 30
    return Plan(steps, {"resolved_closing": True}, greeting_turns=2)


def p_repetition(c: Ctx) -> Plan:
    first = _answered(c)
    first.marks = ("repetition",)
    again = Step(c.follow_up(), [c.answer()], ("repetition",))
    return Plan([first, again, _closing_silent(c)], {"repetition": True, "resolved_closing": True})


def p_repetition_decoy(c: Ctx) -> Plan:
    """Two replies that open alike and say different things: not a repetition."""
    opener = T.APOLOGY_PREFIX[c.lang]
    first = _answered(c, Reply(opener + T.ANSWERS[c.topic][c.lang].format(ref=c.ref)))
    second = Step(c.follow_up(), [Reply(opener + T.FOLLOW_UP_ANSWERS[c.lang])])
    return Plan([first, second])


def _hitl(c: Ctx, wait_minutes: float | None) -> Plan:
    """An action that needs approval; resumed after `wait_minutes`, or left pending (None)."""
    ask = Step(c.question(), [Reply(T.HANDOFF[c.lang], [(ACTION[c.topic], {"ref": c.ref})])], ("slow_hitl",), think=0)
    if wait_minutes is None:
        return Plan([ask])
    resume = Step(None, [c.answer()], think=wait_minutes * 60, resume=True)
    return Plan([ask, resume, _closing_silent(c)], {"resolved_closing": True})


def p_hitl_fast(c: Ctx) -> Plan:
    return _hitl(c, c.rng.choice([8, 20, 45, 90, 150]))


def p_hitl_slow(c: Ctx) -> Plan:
    return _hitl(c, c.rng.choice([300, 420, 560]))


def p_hitl_pending(c: Ctx) -> Plan:
    return _hitl(c, None)


p_hitl_pending_recent = p_hitl_pending


def _history(c: Ctx) -> Step:
    """The agent pages through the whole order history: 48 to 60 tool calls in one user turn,
    so the conversation holds more user/assistant messages than a restart rebuilds."""
    pages = c.rng.choice([48, 54, 60])
    calls = [Reply("", [("order_history", {"ref": c.ref, "page": n})]) for n in range(1, pages + 1)]
    return Step(c.user(T.HISTORY_REQUEST[c.lang]), [*calls, Reply(T.HISTORY_SUMMARY[c.lang].format(pages=pages))])


def _back(c: Ctx, pause: bool, marks: tuple[str, ...] = ()) -> Step:
    """A follow-up after a pause of 1.5 to 4 hours (the runtime restarted) or of a minute."""
    minutes = c.rng.choice([90, 150, 240]) if pause else 1
    return Step(c.follow_up(), [Reply(T.FOLLOW_UP_ANSWERS[c.lang])], marks, think=minutes * 60)


def p_lost_context(c: Ctx) -> Plan:
    """A long conversation, then a pause: the restart rebuilds a window without the first turns."""
    return Plan([_answered(c), _history(c), _back(c, True, ("lost_context",)), _closing_silent(c)],
                {"lost_context": True, "resolved_closing": True})


def p_long_no_pause(c: Ctx) -> Plan:
    """As long, with no restart: nothing was rebuilt."""
    return Plan([_answered(c), _history(c), _back(c, False), _closing_silent(c)], {"resolved_closing": True})


def p_pause_short(c: Ctx) -> Plan:
    """A restart that rebuilds the whole (short) history."""
    return Plan([_answered(c), _back(c, True), _closing_silent(c)], {"resolved_closing": True})


def p_pause_then_long(c: Ctx) -> Plan:
    """A restart while the history was short; it grows past the window later, with no restart after."""
    return Plan([_answered(c), _back(c, True), _history(c), _closing_silent(c)], {"resolved_closing": True})


def p_trimmed_no_pause(c: Ctx) -> Plan:
    """The graph drops all but the first question and the latest turn from its state after each answer; no restart."""
    return Plan([_answered(c), _history(c), _back(c, False)], trim=True)

PATTERNS: dict[str, Callable[[Ctx], Plan]] = {
    name[2:]: fn for name, fn in dict(globals()).items() if name.startswith("p_") and callable(fn)}

#: Conversations per pattern in app versions 1.0 and 1.1: 1.1 loops, fails and frustrates more, closes less.
COUNTS: dict[str, tuple[int, int]] = {
    "closing": (14, 8), "closing_goodbye": (8, 5), "answered": (10, 8), "abandoned": (8, 12), "abandoned_first": (4, 6),
    "dropped_tool_error": (3, 6), "dropped_give_up": (4, 7), "dropped_cascade": (2, 5), "give_up_recovered": (3, 4),
    "apology_answer": (6, 5), "single_error": (6, 5), "cascade_recovered": (3, 6), "errors_apart": (4, 4), "loop": (3, 8),
    "retry_twice": (3, 3), "paging": (6, 5), "same_call_each_turn": (4, 3), "frustration_human": (3, 6),
    "frustration_wrong": (3, 6), "frustration_repeat": (3, 5), "frustration_decoy": (8, 7), "greeting_decoy": (4, 4),
    "repetition": (3, 6), "repetition_decoy": (3, 3), "hitl_fast": (6, 4), "hitl_slow": (3, 6), "hitl_pending": (3, 4),
}
#: Restarts, written after the conversations above with draws of their own (so those stay as they are).
RESTART_COUNTS: dict[str, tuple[int, int]] = {
    "lost_context": (4, 6), "long_no_pause": (3, 3), "pause_short": (3, 3), "pause_then_long": (3, 3), "trimmed_no_pause": (2, 2),
}
VERSIONS = ("1.0", "1.1")
MIX = {v: {name: n[i] for name, n in COUNTS.items()} for i, v in enumerate(VERSIONS)}
RESTART_MIX = {v: {name: n[i] for name, n in RESTART_COUNTS.items()} for i, v in enumerate(VERSIONS)}
#: Written last, within twenty minutes of the store's end.
RECENT_MIX = {"recent_user_last": 3, "hitl_pending_recent": 2}


def _ref(topic: str, rng: random.Random) -> str:
    n = rng.randint(1000, 9999)
    return {"refund": f"A-{n}", "shipping": f"A-{n}", "password": f"user{n}@example.com", "billing": f"INV-{n}",
            "cancel": f"SUB-{n}", "product": rng.choice(T.PRODUCTS)}[topic]


# --------------------------------------------------------------------------- writing


def _ordinals(mark: str, new: list[BaseMessage], start: int) -> list[int]:
    """The ordinals a signal points at among the messages one step appended (from ordinal `start`)."""
    at = list(enumerate(new, start))
    ai = [(i, m) for i, m in at if isinstance(m, AIMessage)]
    if mark in ("abandoned", "resolved_closing", "user_frustration"):
        return [start] if new and new[0].type == "human" else []
    if mark == "tool_error_cascade":
        return [i for i, m in at if isinstance(m, ToolMessage) and m.status == "error"]
    if mark == "agent_loop":
        keys = Counter(json.dumps(m.tool_calls[0]["args"], sort_keys=True) for _, m in ai if m.tool_calls)
        return [i for i, m in ai if m.tool_calls and keys[json.dumps(m.tool_calls[0]["args"], sort_keys=True)] >= 3]
    if mark == "slow_hitl":
        return [i for i, m in ai if m.tool_calls and m.tool_calls[0]["name"] in ACTION.values()]
    if mark == "repetition":
        return [i for i, m in ai if m.text][-1:]
    if mark == "dropped_after_failure":
        return [at[-1][0]] if at else []
    raise KeyError(mark)


def _rebuilt_from(state: list[BaseMessage], pause: float) -> list[int]:
    """The first message of the window a restart rebuilds from `state` (the last `REBUILT_WINDOW`
    user/assistant messages), when it leaves older ones out; the pause must be a restart."""
    if dt.timedelta(seconds=pause) <= RESTART_GAP:
        raise RuntimeError(f"a pause of {pause} s is no restart")
    kept = [i for i, m in enumerate(state) if m.type in ("human", "ai")]
    if len(kept) <= REBUILT_WINDOW:
        raise RuntimeError(f"{len(kept)} user/assistant messages all fit in the rebuilt window")
    return [kept[-REBUILT_WINDOW]]


def _write(saver: Any, thread_id: str, version: str, plan: Plan, clock: Clock) -> dict[str, Any]:
    """Run `plan` through a fresh graph; return what was written (times, ordinals, the last message)."""
    script: list[Reply | None] = [r for s in plan.steps for r in s.replies]
    graph = build_labelled_graph(script, saver, trim=plan.trim)
    cfg = thread_config(thread_id, app_version=version)
    marks: dict[str, list[int]] = {}
    interrupted_at = resumed_at = None
    before: list[BaseMessage] = []
    for step in plan.steps:
        clock.advance(step.think)
        if step.resume:
            resumed_at = clock.now()
            graph.invoke(Command(resume={"approved": True, "reviewer": "supervisor-3"}), cfg, durability="sync")
        else:
            graph.invoke({"messages": [{"role": "user", "content": step.text}]}, cfg, durability="sync")
        state = graph.get_state(cfg)
        after = list(state.values["messages"])
        if state.interrupts and interrupted_at is None:
            interrupted_at = clock.now()
        for mark in step.marks:
            found = _rebuilt_from(before, step.think) if mark == "lost_context" else _ordinals(mark, after[len(before):], len(before))
            marks.setdefault(mark, []).extend(found)
        before = after
    if script:
        raise RuntimeError(f"{thread_id}: {len(script)} scripted replies left over")
    pending = bool(graph.get_state(cfg).interrupts)
    return {"end": clock.now(), "last_role": before[-1].type, "marks": marks, "pending": pending,
            "interrupted_at": interrupted_at, "resumed_at": resumed_at, "message_count": len(before)}


def _labels(plan: Plan, written: dict[str, Any], store_end: dt.datetime) -> dict[str, Any]:
    """The expected signals and outcome, from what the plan meant and the times it was written at."""
    want = {s: bool(plan.labels.get(s)) for s in SIGNALS}
    idle = store_end - written["end"]
    if want["abandoned"] or (written["last_role"] == "human" and not want["resolved_closing"]):
        if dt.timedelta(minutes=25) < idle < dt.timedelta(minutes=45):
            raise RuntimeError(f"idle {idle} too close to the {IDLE} window")
        want["abandoned"] = idle > IDLE
    if written["interrupted_at"] is not None:
        wait = (written["resumed_at"] or store_end) - written["interrupted_at"]
        if dt.timedelta(hours=3) < wait < dt.timedelta(hours=5):
            raise RuntimeError(f"HITL wait {wait} too close to the {HITL_SLA} service level")
        want["slow_hitl"] = wait > HITL_SLA
    if written["pending"]:
        outcome = "waiting"
    elif want["dropped_after_failure"]:
        outcome = "failed"
    elif want["abandoned"]:
        outcome = "abandoned"
    elif want["resolved_closing"] or written["last_role"] == "ai":
        outcome = "resolved"
    else:
        outcome = "unknown"
    ordinals = {s: sorted(set(written["marks"].get(s, []))) for s in SIGNALS if want[s]}
    return {**want, "outcome": outcome, "ordinals": ordinals}


def build_labelled_store(path: str | os.PathLike[str], seed: int = 0, scale: float = 1.0,
                         restarts: bool = True) -> dict[str, Any]:
    """Write a FRESH labelled store at `path` and its labels at `labels_path(path)`; return the labels.

    `scale` multiplies every pattern's count (at least one of each when > 0): 1.0 writes ~320
    conversations, 0.05 one per pattern and version. `restarts=False` leaves out the
    `RESTART_COUNTS` patterns (the others are written the same either way).
    """
    rng, restart_rng = random.Random(f"labelled:{seed}"), random.Random(f"labelled:{seed}:restarts")

    def each(mix: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
        return [(version, name) for version, counts in mix.items() for name, n in counts.items() for _ in range(max(1, round(n * scale)))]

    jobs, restarts = each(MIX), each(RESTART_MIX) if restarts else []
    rng.shuffle(jobs)
    restart_rng.shuffle(restarts)
    recent = [(version, name) for version in MIX for name, n in RECENT_MIX.items() for _ in range(max(1, round(n * scale)))]
    # (pattern, version, draws, thread number, start slot): the restarts follow the main block, numbered apart.
    plan_of = [(v, n, rng, f"{i:04d}", i) for i, (v, n) in enumerate(jobs)]
    plan_of += [(v, n, restart_rng, f"r{j:03d}", len(jobs) + j) for j, (v, n) in enumerate(restarts)]
    plan_of += [(v, n, rng, f"{len(jobs) + k:04d}", None) for k, (v, n) in enumerate(recent)]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    remove_store(path)
    saver = open_sqlite_saver(path)
    threads: dict[str, dict[str, Any]] = {}
    lang_turn = Counter()
    try:
        main_end, recent_start = LABELLED_START, None
        for version, name, draw, number, slot in plan_of:
            if slot is None and recent_start is None:
                recent_start = main_end + dt.timedelta(hours=6)
            start = LABELLED_START + dt.timedelta(minutes=47 * slot) if slot is not None else recent_start
            lang = T.LANGS[(lang_turn[name] + list(PATTERNS).index(name)) % len(T.LANGS)]
            lang_turn[name] += 1
            topic = draw.choice(T.TOPICS)
            tenant = draw.choice(["acme", "globex", "initech"])
            thread_id = f"{tenant}:{lang}:lab-{number}"
            c = Ctx(lang, topic, _ref(topic, draw), random.Random(f"{seed}:{thread_id}"))
            plan = PATTERNS[name](c)
            with deterministic(f"{seed}:{thread_id}"), Clock(start) as clock:
                written = _write(saver, thread_id, version, plan, clock)
            if slot is None:
                recent_start += dt.timedelta(minutes=2)
            else:
                main_end = max(main_end, written["end"])
            threads[thread_id] = {"pattern": name, "lang": lang, "topic": topic, "app_version": version,
                                  "first_question_ordinal": 2 * plan.greeting_turns, "written": written, "plan": plan}
    finally:
        saver.conn.close()
    store_end = max(t["written"]["end"] for t in threads.values())
    out: dict[str, Any] = {"store": Path(path).name, "seed": seed, "scale": scale, "store_end": store_end.isoformat(),
                           "idle_minutes": IDLE.total_seconds() / 60, "hitl_hours": HITL_SLA.total_seconds() / 3600,
                           "signals": list(SIGNALS), "outcomes": list(OUTCOMES), "threads": {}}
    for thread_id, t in threads.items():
        written, plan = t.pop("written"), t.pop("plan")
        out["threads"][thread_id] = {**t, **_labels(plan, written, store_end), "last_message_at": written["end"].isoformat(),
                                     "message_count": written["message_count"]}
    labels_path(path).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return out


def composition(labels: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Counts per signal (true), outcome, language, version and topic.

    >>> composition({"signals": ["repetition"], "threads": {"t": {"repetition": True, "outcome": "resolved",
    ...     "lang": "en", "app_version": "1.0", "topic": "refund"}}})["signal"]
    {'repetition': 1}
    """
    rows = labels["threads"].values()
    return {
        "signal": {s: sum(bool(r[s]) for r in rows) for s in labels["signals"]},
        "outcome": dict(sorted(Counter(r["outcome"] for r in rows).items())),
        "lang": dict(sorted(Counter(r["lang"] for r in rows).items())),
        "app_version": dict(sorted(Counter(r["app_version"] for r in rows).items())),
        "topic": dict(sorted(Counter(r["topic"] for r in rows).items())),
    }
