"""Databases for the metrics and report tests, built without the loader.

`build()` writes transcripts through `tests/analytics/dbutil.py` (messages,
threads, one root checkpoint per distinct message ts) and adds what metrics
also read: extra checkpoints (subgraph, off-branch) and thread-level facts
(forks, branches, pending interrupt, removed/edited counts).

`CORPUS` is the small hand-made corpus the tests compute their expectations
from. `synthetic()` writes a large generated corpus, and `--time` times the
metrics calls on it (a million messages by default):

    .venv/bin/python -m tests.analytics.metrics_db /tmp/m1.duckdb --time
    .venv/bin/python -m tests.analytics.metrics_db /tmp/m1.duckdb --materialize --time  # as after a load
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb

from tests.analytics.dbutil import Msg, build_db, create_schema

T0 = datetime(2025, 3, 1, 9, 0, 0, tzinfo=timezone.utc)
D2 = datetime(2025, 3, 2, 0, 0, 0, tzinfo=timezone.utc)


def at(seconds: float, base: datetime = T0) -> datetime:
    """base + seconds: test timestamps read as offsets."""
    return base + timedelta(seconds=seconds)


@dataclass(frozen=True)
class Ckpt:
    """A checkpoint beyond the linear root history dbutil writes."""

    thread_id: str
    checkpoint_id: str
    ts: datetime
    ns: str = ""
    on_current_branch: bool = False


@dataclass(frozen=True)
class Corpus:
    transcripts: Mapping[str, Sequence[Msg]]
    checkpoints: Sequence[Ckpt] = ()
    thread_facts: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # column → value, per thread

    def root_ts(self, thread_id: str, current_branch_only: bool = True) -> list[datetime]:
        """Sorted ts of the thread's root checkpoints (dbutil writes one per distinct message ts)."""
        stamps = {m.ts for m in self.transcripts[thread_id] if m.ts is not None}
        stamps |= {
            c.ts
            for c in self.checkpoints
            if c.thread_id == thread_id and c.ns == "" and (c.on_current_branch or not current_branch_only)
        }
        return sorted(stamps)


def _call(name: str, call_id: str) -> dict:
    return {"name": name, "args": {}, "id": call_id, "type": "tool_call"}


# Thread A: two turns an hour apart (one resume point), three tool calls of two
# tools, one failing; two models; a trailing user message without id.
# Thread B (next day): back-to-back questions, a reply without id, an `other` row.
# Thread C: across UTC midnight; no usage, no model; CSV-hostile content.
# Thread D: no tenant (id outside the key pattern), two days before T0.
# Thread E: no messages at all.
CORPUS = Corpus(
    transcripts={
        "acme:web:s1": [
            Msg("system", "You are a helpful agent.", ts=at(0)),
            Msg("user", "Reset my password, please", ts=at(10)),
            Msg("assistant", "", ts=at(12.5), tool_calls=[_call("lookup_user", "c1")],
                model="gpt-4o", input_tokens=100, output_tokens=20),
            Msg("tool", "user found", ts=at(13), name="lookup_user", tool_call_id="c1", tool_status="success"),
            Msg("assistant", "Done — check your inbox.", ts=at(15), model="gpt-4o", input_tokens=150, output_tokens=30),
            Msg("user", "Thanks! And my billing address?", ts=at(3600)),
            Msg("assistant", "", ts=at(3604), tool_calls=[_call("get_billing", "c2"), _call("lookup_user", "c3")],
                model="claude-3", input_tokens=200, output_tokens=10),
            Msg("tool", "error: timeout", ts=at(3605), name="get_billing", tool_call_id="c2", tool_status="error"),
            Msg("tool", "ok", ts=at(3605), name="lookup_user", tool_call_id="c3", tool_status="success"),
            Msg("assistant", "Your billing address is 1 Main St.", ts=at(3611), model="claude-3",
                input_tokens=300, output_tokens=40),
            Msg("user", "one more thing", message_id=None),
        ],
        "acme:mobile:s2": [
            Msg("user", "hi", ts=at(3600 * 10, D2)),
            Msg("user", "anyone there?", ts=at(3600 * 10 + 30, D2)),
            Msg("assistant", "Hello!", ts=at(3600 * 10 + 40, D2), model="gpt-4o", input_tokens=10, output_tokens=5),
            Msg("user", "?", ts=at(3600 * 10 + 100, D2)),
            Msg("assistant", "...", message_id=None, model="gpt-4o", input_tokens=1, output_tokens=1),
            Msg("assistant", "sorry", ts=at(3600 * 10 + 160, D2), model="gpt-4o-mini",
                input_tokens=20, output_tokens=8),
            Msg("other", "custom role", ts=at(3600 * 10 + 170, D2), chat_role="critic"),
        ],
        "globex::s3": [
            Msg("user", "Bonjour — ça va ?", ts=at(86400 - 10, D2)),
            Msg("assistant", 'He said "hi", then left,\nfor good', ts=at(86400 + 10, D2)),
            Msg("user", "ok", ts=at(86400 + 30, D2)),
        ],
        "legacy-thread": [
            Msg("user", "old question", ts=at(-2 * 86400)),
            Msg("assistant", "old answer", ts=at(-2 * 86400 + 5), model="gpt-4o", input_tokens=5, output_tokens=5),
        ],
        "acme:web:empty": [],
    },
    checkpoints=[
        # Neither may count as a resume point: one is off the current branch, one is a subgraph's.
        Ckpt("acme:web:s1", "cp-offbranch", at(20000)),
        Ckpt("acme:web:s1", "sub-1", at(9000), ns="tools:abc"),
        Ckpt("acme:web:s1", "sub-2", at(9001), ns="tools:abc"),
    ],
    thread_facts={
        "acme:web:s1": dict(fork_count=1, branch_count=2, interrupt_pending=True,
                            removed_message_count=1, edited_message_count=2),
    },
)  # fmt: skip


def build(path: str | os.PathLike | None, corpus: Corpus = CORPUS) -> duckdb.DuckDBPyConnection:
    """Write `corpus` (in memory when `path` is None); returns the open read-write connection."""
    con = build_db(path, corpus.transcripts)
    for c in corpus.checkpoints:
        con.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, ts, is_root, is_latest, is_leaf,"
            " on_current_branch, has_interrupt) VALUES (?, ?, ?, ?, ?, FALSE, TRUE, ?, FALSE)",
            [c.thread_id, c.ns, c.checkpoint_id, c.ts, c.ns == "", c.on_current_branch],
        )
    # Thread counts and first/last ts follow the checkpoints, as the loader derives them.
    con.execute(
        """
        UPDATE threads SET
            checkpoint_count = c.n, root_checkpoint_count = c.roots, subgraph_checkpoint_count = c.n - c.roots,
            first_ts = c.first_ts, last_ts = c.last_ts
        FROM (SELECT thread_id, count(*) AS n, count(*) FILTER (WHERE is_root) AS roots,
                     min(ts) FILTER (WHERE is_root) AS first_ts, max(ts) FILTER (WHERE is_root) AS last_ts
              FROM checkpoints GROUP BY thread_id) c
        WHERE threads.thread_id = c.thread_id
        """
    )
    for thread_id, facts in corpus.thread_facts.items():
        columns = list(facts)  # column names come from this module, values are bound
        assignments = ", ".join(f"{c} = ?" for c in columns)
        con.execute(f"UPDATE threads SET {assignments} WHERE thread_id = ?", [*facts.values(), thread_id])
    return con


def write(path: str | os.PathLike, corpus: Corpus = CORPUS) -> Path:
    """Like `build`, but close the file and return its path (for path-based and CLI tests)."""
    build(path, corpus).close()
    return Path(path)


def synthetic(path: str | os.PathLike, threads: int = 50_000, messages: int = 20) -> Path:
    """A generated corpus of `threads × messages` transcript rows, built in SQL.

    Each thread cycles user → assistant (one tool call) → tool → assistant
    (every tenth thread has back-to-back user messages), one root checkpoint
    per message with a 40-minute idle gap halfway, two subgraph checkpoints,
    50 tenants, three models, ~1 in 20 tool results an error.
    """
    path = Path(path)
    con = duckdb.connect(str(path))
    try:
        con.execute("SET TimeZone = 'UTC'")
        create_schema(con)
        con.execute(
            """
            CREATE TEMP TABLE gen AS
            SELECT t, o,
                   'tenant' || (t % 50) AS tenant_id, 'sub' || (t % 3) AS sub_tenant_id, 's' || t AS session_id,
                   'tenant' || (t % 50) || ':sub' || (t % 3) || ':s' || t AS thread_id,
                   TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(t * 60)
                     + to_seconds(o * 7 + (o * 13 + t) % 5)
                     + to_seconds(CASE WHEN o >= ? / 2 THEN 2400 ELSE 0 END) AS ts,
                   CASE WHEN o % 4 = 0 OR (t % 10 = 0 AND o % 8 = 1) THEN 'user'
                        WHEN o % 4 = 2 THEN 'tool' ELSE 'assistant' END AS role
            FROM range(?) r1(t), range(?) r2(o)
            """,
            [messages, threads, messages],
        )
        con.execute(
            """
            INSERT INTO messages (thread_id, tenant_id, sub_tenant_id, session_id, ordinal, role, lc_type,
                                  content, content_chars, non_text_blocks, message_id, ts, checkpoint_id,
                                  tool_calls, tool_call_count, tool_call_id, tool_status,
                                  input_tokens, output_tokens, total_tokens, model)
            SELECT thread_id, tenant_id, sub_tenant_id, session_id, o, role, role,
                   repeat('x', 20 + (o * 31 + t) % 200), 20 + (o * 31 + t) % 200, 0,
                   thread_id || '#' || o, ts, thread_id || '/c' || o,
                   CASE WHEN o % 4 = 1 THEN json_array(json_object('name', 'tool' || (t + o) % 7, 'args', json_object(),
                                                                  'id', 'call' || o, 'type', 'tool_call')) END,
                   CASE WHEN o % 4 = 1 THEN 1 ELSE 0 END,
                   CASE WHEN role = 'tool' THEN 'call' || (o - 1) END,
                   CASE WHEN role = 'tool' THEN CASE WHEN (t + o) % 20 = 0 THEN 'error' ELSE 'success' END END,
                   CASE WHEN role = 'assistant' THEN 100 + o END,
                   CASE WHEN role = 'assistant' THEN 20 + o END,
                   CASE WHEN role = 'assistant' THEN 120 + 2 * o END,
                   CASE WHEN role = 'assistant' THEN 'model-' || (t % 3) END
            FROM gen
            """
        )
        con.execute(
            """
            INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, step, source,
                                     is_root, is_latest, is_leaf, on_current_branch, has_interrupt)
            SELECT thread_id, '', thread_id || '/c' || o, CASE WHEN o > 0 THEN thread_id || '/c' || (o - 1) END,
                   ts, o, 'loop', TRUE, o = ? - 1, o = ? - 1, TRUE, FALSE
            FROM gen
            UNION ALL
            SELECT thread_id, 'sub:' || o, thread_id || '/s' || o, NULL, ts, o, 'loop', FALSE, TRUE, TRUE, FALSE, FALSE
            FROM gen WHERE o IN (1, 5)
            """,
            [messages, messages],
        )
        con.execute(
            """
            INSERT INTO threads
            SELECT thread_id, any_value(tenant_id), any_value(sub_tenant_id), any_value(session_id),
                   min(ts), max(ts), count(*) + 2, count(*), 2, 3, count(*),
                   thread_id || '/c' || (? - 1), thread_id || '/c' || (? - 1), NULL, TRUE, 1, 0, FALSE, NULL, 0, 0
            FROM gen GROUP BY thread_id
            """,
            [messages, messages],
        )
    finally:
        con.close()
    return path


def time_metrics(path: str | os.PathLike, runs: int = 5) -> None:
    """Print wall and CPU time (min / median of `runs`) of each metrics call on `path`."""
    import time

    import analytics
    from analytics import metrics
    from analytics.filters import Filters

    con = analytics.connect(path)
    con.execute("SET enable_progress_bar = false")
    (tenant, thread), = con.execute("SELECT min(tenant_id), min(thread_id) FROM threads").fetchall()
    (messages,), = con.execute("SELECT count(*) FROM messages").fetchall()
    print(f"{path}: {messages} messages")
    calls = {
        "conversations": lambda: metrics.conversations(con),
        "conversations tenant": lambda: metrics.conversations(con, Filters(tenants=(tenant,))),
        "conversation": lambda: metrics.conversation(con, thread),
        "daily": lambda: metrics.daily(con),
        "by_model": lambda: metrics.by_model(con),
        "overview": lambda: metrics.overview(con),
        "top_tools": lambda: metrics.top_tools(con),
        "top_tenants": lambda: metrics.top_tenants(con),
        "latency_distribution": lambda: metrics.latency_distribution(con),
    }
    for name, call in calls.items():
        wall, cpu = [], []
        for _ in range(runs):
            w, c = time.perf_counter(), time.process_time()
            call()
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
        wall.sort()
        print(f"{name:22s} wall min {wall[0] * 1e3:7.0f} ms  median {wall[runs // 2] * 1e3:7.0f} ms"
              f"  cpu min {min(cpu) * 1e3:7.0f} ms")
    con.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="write a synthetic Transcript Lens database for timing")
    parser.add_argument("path")
    parser.add_argument("--threads", type=int, default=50_000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--time", action="store_true", help="time the metrics calls (builds the file if absent)")
    parser.add_argument(
        "--materialize", action="store_true",
        help="write the derived tables (conversation_metrics, latency_pair_rows, thread_day/model_metrics) into the file, as every load does (else: the live queries are timed)",
    )  # fmt: skip
    ns = parser.parse_args()
    if not ns.time or not Path(ns.path).exists():
        print(synthetic(ns.path, ns.threads, ns.messages))
    if ns.materialize:
        from analytics.metrics import materialize_conversations, materialize_trends

        with duckdb.connect(str(ns.path)) as c:
            materialize_conversations(c)
            materialize_trends(c)
    if ns.time:
        time_metrics(ns.path)
