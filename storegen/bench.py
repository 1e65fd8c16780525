"""A large store for benchmarks: many threads × turns of a tool-using support agent.

Every checkpoint is written by a real compiled graph through a real
``SqliteSaver``; only the chat model is scripted (a seeded responder).

Example:
    >>> import tempfile, os
    >>> stats = build_bench_store(os.path.join(tempfile.mkdtemp(), "b.sqlite"), threads=2, turns=3, progress=False)
    >>> stats["threads"], stats["turns"]
    (2, 6)
"""

from __future__ import annotations

import datetime as dt
import os
import random
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage, ToolMessage

from storegen.build import open_sqlite_saver, remove_store
from storegen.clock import UTC, Clock
from storegen.graphs import build_agent_graph
from storegen.ids import deterministic
from storegen.models import CLAUDE, GPT, Reply, ScriptedChatModel
from storegen.tools import lookup_order, search_docs, track_shipment

BENCH_START = dt.datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
TENANTS = [("acme", ["web", "mobile", "api"]), ("globex", ["web", ""]), ("initech", ["support"]),
           ("umbrella", ["eu", "us"]), ("hooli", ["web"])]
_TENANT_WEIGHTS = [5, 3, 2, 2, 1]

_PRODUCTS = ["wireless headphones", "standing desk", "espresso machine", "4K monitor", "trail running shoes",
             "smart thermostat", "mechanical keyboard", "air purifier"]
_ORDER_IDS = ["A-1043", "A-9989", "B-2211", "C-3307"]
_ASKS = [
    "Hi, I ordered a {p} last week (order {o}) and it still hasn't arrived. The tracking page hasn't updated in three days. Can you tell me what's going on?",
    "My {p} stopped working after two weeks. The power light blinks orange and nothing happens when I press the button. Is this covered by the warranty?",
    "Can I change the delivery address for order {o}? I'm moving next week and won't be at the old address anymore.",
    "How do I connect the {p} to the mobile app? The app keeps saying 'device not found' even though Bluetooth is on.",
    "I was charged twice for order {o}. Could you check and refund the duplicate charge please?",
    "What's the difference between the standard and the pro version of the {p}? I mostly need it for home office use.",
    "Is the {p} back in stock? I'd like two of them, shipped to Berlin if possible.",
    "The invoice for {o} has the wrong company name on it. We need it corrected for our accounting department.",
    "ok thanks",
    "Could you also tell me how long returns are accepted for?",
]
_SENTENCES = [
    "Thanks for reaching out, I'm happy to help with that.",
    "I've checked the details on our side.",
    "Your order is currently with the carrier and moving normally.",
    "According to our records, the item is covered by the 24-month manufacturer warranty.",
    "You can update the delivery address from the order page until the parcel leaves our warehouse.",
    "I've opened a support case so our logistics team can follow up directly with the carrier.",
    "Returns are accepted within 30 days of delivery, free of charge for defective items.",
    "A refund usually shows up on your statement within 3–5 business days.",
    "If the issue persists, a factory reset (hold the power button for 10 seconds) often helps.",
    "Let me know if there's anything else I can do for you.",
    "I've sent a confirmation email with the details to the address on your account.",
]


@dataclass
class _Plan:
    """What the scripted model does on the current turn (set before each invoke)."""

    rng: random.Random = field(default_factory=random.Random)
    tool: tuple[str, dict[str, Any]] | None = None
    model: str = GPT

    def respond(self, messages: list[BaseMessage]) -> Reply:
        last = messages[-1]
        if self.tool is not None and not isinstance(last, ToolMessage):
            return Reply("", [self.tool], model=self.model)
        n = self.rng.randint(2, 5)
        return Reply(" ".join(self.rng.sample(_SENTENCES, n)), model=self.model)


def _thread_ids(threads: int, rng: random.Random) -> list[str]:
    out = []
    for i in range(threads):
        tenant, subs = rng.choices(TENANTS, weights=_TENANT_WEIGHTS)[0]
        out.append(f"{tenant}:{rng.choice(subs)}:bench-{i:05d}")
    return out


def _write_threads(
    path: str,
    jobs: list[tuple[str, dt.datetime]],
    *,
    seed: int,
    turns: int,
    tool_rate: float,
    durability: Literal["sync", "async", "exit"],
    progress: bool,
    label: str = "",
) -> int:
    """Write ``jobs`` (thread id, start time) into the store at ``path``; return turns."""
    plan = _Plan()
    model = ScriptedChatModel(responder=plan.respond)
    saver = open_sqlite_saver(path)
    graph = build_agent_graph(model, [lookup_order, track_shipment, search_docs], saver)
    t0 = time.monotonic()
    done_turns = 0
    try:
        with Clock(jobs[0][1] if jobs else BENCH_START) as clock:
            for i, (thread_id, t_start) in enumerate(jobs):
                # Seeded per thread: a thread's content does not depend on the worker split.
                trng = random.Random(f"bench:{seed}:{thread_id}")
                plan.rng = trng
                plan.model = CLAUDE if trng.random() < 0.35 else GPT
                cfg = {"configurable": {"thread_id": thread_id}}
                with deterministic(f"bench:{seed}:{thread_id}"):
                    clock.move_to(t_start)
                    for _ in range(turns):
                        clock.advance(trng.uniform(20, 360))
                        ask = trng.choice(_ASKS).format(p=trng.choice(_PRODUCTS), o=trng.choice(_ORDER_IDS))
                        plan.tool = None
                        if trng.random() < tool_rate:
                            kind = trng.randrange(3)
                            if kind == 0:
                                plan.tool = ("lookup_order", {"order_id": trng.choice(_ORDER_IDS + ["Z-0000"])})
                            elif kind == 1:
                                plan.tool = ("track_shipment", {"tracking": trng.choice(["1Z999AA10123456784", "JD014600006281230"])})
                            else:
                                plan.tool = ("search_docs", {"query": ask[:60]})
                        graph.invoke({"messages": [{"role": "user", "content": ask}]}, cfg, durability=durability)
                        done_turns += 1
                if progress and ((i + 1) % max(1, len(jobs) // 20) == 0 or i + 1 == len(jobs)):
                    el = time.monotonic() - t0
                    eta = el / (i + 1) * (len(jobs) - i - 1)
                    print(f"[bench{label}] {i + 1}/{len(jobs)} threads, {done_turns} turns, {el:.0f}s elapsed, ~{eta:.0f}s left",
                          file=sys.stderr, flush=True)
    finally:
        saver.conn.close()
    return done_turns


def build_bench_store(
    path: str | os.PathLike[str],
    threads: int = 300,
    turns: int = 40,
    seed: int = 0,
    *,
    start: dt.datetime = BENCH_START,
    days: float = 28.0,
    tool_rate: float = 0.3,
    durability: Literal["sync", "async", "exit"] = "sync",
    progress: bool = True,
) -> dict[str, Any]:
    """Write ``threads`` × ``turns`` of a support agent into a fresh SQLite store at ``path``.

    Threads start at random times over ``days`` days; turns are 20 s–6 min
    apart; ``tool_rate`` of turns call a tool (lookup / tracking / docs).
    About 0.7 s and 3.5 MB per 40-turn thread (the saver re-serializes the whole
    message list at every step, so size grows quadratically with turns); a
    second process does not help on a 2-core machine. Progress goes to stderr. ``durability="exit"`` writes one checkpoint per turn instead of one
    per step (smaller, less realistic).
    Returns ``{"threads", "turns", "checkpoints", "bytes", "seconds"}``.
    """
    path = os.fspath(path)
    remove_store(path)
    rng = random.Random(f"bench:{seed}")
    ids = _thread_ids(threads, rng)
    starts = sorted(start + dt.timedelta(seconds=rng.uniform(0, days * 86400)) for _ in ids)
    jobs = list(zip(ids, starts))
    opts: dict[str, Any] = dict(seed=seed, turns=turns, tool_rate=tool_rate, durability=durability, progress=progress)
    t0 = time.monotonic()
    done = _write_threads(path, jobs, **opts)
    conn = sqlite3.connect(path)
    try:
        checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    finally:
        conn.close()
    return {
        "threads": threads,
        "turns": done,
        "checkpoints": checkpoints,
        "bytes": os.path.getsize(path),
        "seconds": round(time.monotonic() - t0, 2),
    }
