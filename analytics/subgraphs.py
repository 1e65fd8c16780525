"""Subgraph runs (contract §3.9): what each one said, under the message that started it.

A subgraph run is one namespace of a thread (`<node>:<task_id>`, nested
levels joined by `|`). Its messages (`subgraph_messages`: what the run added
to the list it was given) are never part of the transcript; this module
places them:

- `started_from` is the root checkpoint the run started from
  (`metadata.parents[""]`), and the **trigger** is the last message of that
  checkpoint's list: the message the run followed (the user's question, the
  assistant reply that called a tool). `anchor_ordinal` is the trigger's place
  in the transcript (NULL when it is not there: a run of another branch, or a
  trigger removed since);
- a trigger that calls tools names the call that started the run when it can
  be told (`tool_call_id`, `tool_call_match`): the call whose string argument
  is the run's first message (`arguments`), else the trigger's only call
  (`only call`); otherwise NULL;
- nested runs hang from their enclosing run (`parent_ns`), which the longest
  key of `metadata.parents` names.

`returned` counts the run's messages that the transcript holds too (a
subgraph over the parent's `MessagesState` hands its messages back).

>>> subgraph_runs("lens.duckdb", "globex:api:sess-2106")[["checkpoint_ns", "messages", "anchor_ordinal"]]  # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import Any

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.frames import dtypes_of, fetch_frame, typed
from analytics.resume.common import require_thread
from loaders.catalog import SUBGRAPH_MESSAGES, enclosing_namespace

__all__ = ["RUN_COLUMNS", "SUBGRAPH_MESSAGE_COLUMNS", "subgraph_messages", "subgraph_runs", "subgraph_runs_of"]

#: Columns of `subgraph_runs()`: one row per subgraph namespace.
RUN_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_ns": "str",
    "parent_ns": "str",
    "node": "str",
    "depth": "int64",
    "started_from": "str",
    "on_current_branch": "boolean",
    "trigger_message_id": "str",
    "anchor_ordinal": "Int64",
    "tool_call_id": "str",
    "tool_call_name": "str",
    "tool_call_match": "str",
    "messages": "int64",
    "returned": "int64",
    "checkpoints": "int64",
    "first_ts": "datetime64[us, UTC]",
    "last_ts": "datetime64[us, UTC]",
    "has_interrupt": "bool",
    "first_message": "str",
    "last_message": "str",
}

#: Columns of `subgraph_messages()`: the table's, plus where the transcript holds the same message.
SUBGRAPH_MESSAGE_COLUMNS: dict[str, str] = {
    **dtypes_of(SUBGRAPH_MESSAGES),
    "transcript_ordinal": "Int64",
}

_RUNS_SQL = """
WITH ns AS (
    SELECT thread_id, checkpoint_ns, count(*) AS checkpoints, min(ts) AS first_ts, max(ts) AS last_ts,
           bool_or(has_interrupt) AS has_interrupt, max(checkpoint_id) AS latest_id
    FROM checkpoints
    WHERE NOT is_root AND thread_id IN (SELECT unnest($threads))
    GROUP BY thread_id, checkpoint_ns
),
own AS (
    SELECT s.thread_id, s.checkpoint_ns, count(*) AS messages, count(m.ordinal) AS returned,
           arg_min(s.content, s.ordinal) AS first_message, arg_max(s.content, s.ordinal) AS last_message
    FROM subgraph_messages AS s
    LEFT JOIN messages AS m ON m.thread_id = s.thread_id AND m.message_id = s.message_id
    WHERE s.thread_id IN (SELECT unnest($threads))
    GROUP BY s.thread_id, s.checkpoint_ns
)
SELECT ns.*, c.metadata, coalesce(own.messages, 0) AS messages, coalesce(own.returned, 0) AS returned,
       own.first_message, own.last_message
FROM ns
JOIN checkpoints AS c ON c.thread_id = ns.thread_id AND c.checkpoint_ns = ns.checkpoint_ns AND c.checkpoint_id = ns.latest_id
LEFT JOIN own ON own.thread_id = ns.thread_id AND own.checkpoint_ns = ns.checkpoint_ns
ORDER BY ns.thread_id, ns.first_ts, ns.checkpoint_ns
"""

# The trigger of each run: the last entry of the root list it started from, and where the
# transcript holds it.
_TRIGGERS_SQL = """
WITH starts AS (SELECT unnest($threads) AS thread_id, unnest($roots) AS checkpoint_id),
last_entry AS (
    SELECT c.thread_id, c.checkpoint_id, c.on_current_branch,
           c.message_versions[len(c.message_versions)] AS version
    FROM checkpoints AS c JOIN starts USING (thread_id, checkpoint_id)
    WHERE c.is_root
)
SELECT l.thread_id, l.checkpoint_id, l.on_current_branch, v.message_id, v.tool_calls,
       (SELECT min(m.ordinal) FROM messages AS m
        WHERE m.thread_id = l.thread_id AND m.version = l.version) AS anchor_ordinal
FROM last_entry AS l
LEFT JOIN message_versions AS v ON v.thread_id = l.thread_id AND v.version = l.version
"""


def _parents(metadata: Any) -> dict:
    try:
        parents = json.loads(metadata).get("parents") if isinstance(metadata, str) else None
    except (ValueError, AttributeError):
        return {}
    return parents if isinstance(parents, dict) else {}


def _node(ns: str) -> str:
    """The node of a namespace's innermost level that names one (`fetch` of `research:a|fetch:b`)."""
    for part in reversed(ns.split("|")):
        if ":" in part:
            return part.split(":", 1)[0]
    return ns


def _tool_call(calls_json: Any, first_message: Any) -> tuple[str | None, str | None, str | None]:
    """(id, name, how) of the trigger's tool call that started the run, when it can be told."""
    try:
        calls = json.loads(calls_json) if isinstance(calls_json, str) else None
    except ValueError:
        calls = None
    calls = [c for c in calls or [] if isinstance(c, dict)]
    if not calls:
        return None, None, None
    said = first_message.strip() if isinstance(first_message, str) else None
    by_args = [
        c for c in calls
        if said and isinstance(c.get("args"), dict)
        and any(isinstance(v, str) and v.strip() == said for v in c["args"].values())
    ]  # fmt: skip
    if len(by_args) == 1:
        return by_args[0].get("id"), by_args[0].get("name"), "arguments"
    if len(calls) == 1:
        return calls[0].get("id"), calls[0].get("name"), "only call"
    return None, None, None


def _runs(con, threads: list[str]) -> pd.DataFrame:
    runs = fetch_frame(con, _RUNS_SQL, {"threads": threads})
    if runs.empty:
        return typed(runs, RUN_COLUMNS)
    parents = [_parents(m) for m in runs["metadata"].tolist()]
    outer = [enclosing_namespace(ns, p) for ns, p in zip(runs["checkpoint_ns"].tolist(), parents)]
    roots = [p.get("") if isinstance(p.get(""), str) else None for p in parents]
    runs = runs.assign(
        parent_ns=[o if o else None for o in outer],
        node=runs["checkpoint_ns"].map(_node),
        depth=runs["checkpoint_ns"].map(lambda ns: sum(":" in part for part in ns.split("|"))),
        started_from=roots,
    )
    known = runs.dropna(subset=["started_from"])
    triggers = fetch_frame(
        con, _TRIGGERS_SQL, {"threads": known["thread_id"].tolist(), "roots": known["started_from"].tolist()}
    ).drop_duplicates(["thread_id", "checkpoint_id"])
    runs = runs.merge(
        triggers.rename(columns={"checkpoint_id": "started_from", "message_id": "trigger_message_id"}),
        on=["thread_id", "started_from"],
        how="left",
    )
    calls = [_tool_call(c, f) for c, f in zip(runs["tool_calls"].tolist(), runs["first_message"].tolist())]
    runs = runs.assign(
        tool_call_id=[c[0] for c in calls], tool_call_name=[c[1] for c in calls], tool_call_match=[c[2] for c in calls]
    )
    return typed(runs, RUN_COLUMNS)


def subgraph_runs(con_or_path: ConOrPath, thread_id: str) -> pd.DataFrame:
    """Every subgraph run of a thread, in order of their first checkpoint. Columns: `RUN_COLUMNS`.

    `messages` is what the run said (`subgraph_messages` rows), `returned` how
    many of those the transcript holds too; `first_message` / `last_message`
    its first and last; see the module docstring for the trigger and tool call.
    Raises `NotFound` for an unknown thread.

    >>> subgraph_runs("lens.duckdb", "globex:api:sess-2106").checkpoint_ns.str.count("[|]").tolist()  # doctest: +SKIP
    [0, 1, 0, 1]
    """
    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        return _runs(con, [thread_id])


_WITH_RUNS_SQL = """
SELECT t.thread_id FROM threads AS t WHERE ({where}) AND t.subgraph_checkpoint_count > 0 ORDER BY t.thread_id
"""


def subgraph_runs_of(con_or_path: ConOrPath, filters: Filters = Filters()) -> pd.DataFrame:
    """`subgraph_runs()` of every thread in `filters` that has any (the `subgraphs` report)."""
    where, params = filters.thread_where("t")
    with connection(con_or_path) as con:
        # `where` is Filters' own SQL with placeholders; the values stay bound.
        threads = [r[0] for r in con.sql(_WITH_RUNS_SQL.format(where=where), params=params).fetchall()]
        return _runs(con, threads) if threads else typed(pd.DataFrame(), RUN_COLUMNS)


_MESSAGES_SQL = """
SELECT s.*, (SELECT min(m.ordinal) FROM messages AS m
             WHERE m.thread_id = s.thread_id AND m.message_id = s.message_id) AS transcript_ordinal
FROM subgraph_messages AS s
WHERE s.thread_id = $thread_id AND ($ns IS NULL OR s.checkpoint_ns = $ns)
ORDER BY s.checkpoint_ns, s.ordinal
"""


def subgraph_messages(con_or_path: ConOrPath, thread_id: str, checkpoint_ns: str | None = None) -> pd.DataFrame:
    """What the subgraph runs of a thread said (one run with `checkpoint_ns`), in list order.

    Columns: `SUBGRAPH_MESSAGE_COLUMNS` (`subgraph_messages` plus `transcript_ordinal`, where the
    transcript holds the same message, NULL when it does not).

    >>> subgraph_messages("lens.duckdb", "acme:api:sess-004").role.tolist()  # doctest: +SKIP
    ['user', 'assistant']
    """
    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        return fetch_frame(con, _MESSAGES_SQL, {"thread_id": thread_id, "ns": checkpoint_ns}, SUBGRAPH_MESSAGE_COLUMNS)
