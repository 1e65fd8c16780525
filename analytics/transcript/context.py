"""One thread's whole transcript in context: each message with its reply latency, and
what happened between messages — long pauses, detected restarts, removed messages,
edits and interrupts — placed where they happened.

`in_context(con, thread_id)` answers a `TranscriptContext`: `messages` (the whole
transcript, `read()`'s columns plus `latency_s` for the reply a user message pairs
with under the metrics rule, docs/metrics.md, and `since_question_s` for every
assistant message) and `markers`, one row per event, `MARKER_COLUMNS`.

Where a marker goes: `after_ordinal` is the ordinal of the message it follows (-1:
before the first message). A removed message goes after the nearest message that
preceded it in the list it was removed from and is still in the transcript; an
edit, a restart and an interrupt after the last message stamped at or before the
moment they happened (message `ts` is its first checkpoint's time, contract §3.5);
a pause between the two messages it separates; the pending interrupt at the end.
Only events of the current branch count (the transcript's own history).

>>> ctx = in_context("lens.duckdb", "initech:helpdesk:sess-5006")  # doctest: +SKIP
>>> ctx.markers[["kind", "after_ordinal"]].drop_duplicates().values.tolist()  # doctest: +SKIP
[['removed', -1]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analytics import metrics
from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.frames import UTC_MICROS, fetch_frame, typed
from analytics.resume.chain import resume_points
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap
from analytics.transcript.reading import TRANSCRIPT_COLUMNS, TranscriptQuery, read

#: Kinds of marker, in the order they are drawn when several share a place.
MARKER_KINDS = ("removed", "pause", "interrupt", "restart", "edited", "pending")

#: Columns of `TranscriptContext.markers`.
MARKER_COLUMNS: dict[str, str] = {
    "kind": "str",  # one of MARKER_KINDS
    "after_ordinal": "int64",  # the message it follows; -1: before the first one
    "ts": UTC_MICROS,  # when it happened (a pause, restart or interrupt: when it began)
    "until_ts": UTC_MICROS,  # when a pause, restart or interrupt ended (NULL: still pending)
    "gap_s": "float64",  # how long that was, seconds
    "ordinal": "Int64",  # an edit: the edited message
    "message_id": "str",  # removed / edited: the message's id
    "role": "str",  # removed / edited: its role
    "content": "str",  # removed: its text; edited: the text before the edit
    "reason": "str",  # restart: idle_gap, process_change or idle_gap+process_change (`resume_points`)
    "detail": "str",  # restart: what changed (`writer: worker-1 → worker-2`); pending: the interrupt's value (JSON)
}

#: Columns of `TranscriptContext.messages`: `read()`'s, then the reply timings.
CONTEXT_COLUMNS: dict[str, str] = {
    **TRANSCRIPT_COLUMNS,
    "version": "Int64",  # message_versions.version of the payload shown
    "latency_s": "float64",  # this reply's latency under the metrics pairing rule (NULL: not a paired reply)
    "since_question_s": "float64",  # assistant messages: seconds since the latest earlier user message with a ts
}


@dataclass(frozen=True)
class TranscriptContext:
    """The whole transcript of one thread and the events between its messages."""

    thread_id: str
    messages: pd.DataFrame  # CONTEXT_COLUMNS, in ordinal order
    markers: pd.DataFrame  # MARKER_COLUMNS, in drawing order (after_ordinal, then MARKER_KINDS order, then ts)
    gap_minutes: float


_CURRENT = """
    JOIN checkpoints AS c
      ON c.thread_id = e.thread_id AND c.checkpoint_id = e.checkpoint_id AND c.is_root AND c.on_current_branch"""

# A removed message, with the ordinal of the nearest earlier message of the list it was
# removed from (the parent checkpoint's) that is still in the transcript.
_REMOVED_SQL = f"""
WITH ev AS (
    SELECT e.checkpoint_id, e.parent_checkpoint_id, e.ts, e.message_id, e.position, e.previous_version
    FROM message_events AS e {_CURRENT}
    WHERE e.thread_id = $thread_id AND e.event = 'removed'
),
parent_lists AS (
    SELECT checkpoint_id, unnest(message_versions) AS version, generate_subscripts(message_versions, 1) - 1 AS pos
    FROM checkpoints
    WHERE thread_id = $thread_id AND is_root AND checkpoint_id IN (SELECT parent_checkpoint_id FROM ev)
),
survivors AS (
    SELECT p.checkpoint_id, p.pos, m.ordinal
    FROM parent_lists AS p
    JOIN message_versions AS v ON v.thread_id = $thread_id AND v.version = p.version
    JOIN messages AS m ON m.thread_id = $thread_id AND m.message_id = v.message_id
),
anchors AS (
    SELECT ev.checkpoint_id, ev.position, arg_max(s.ordinal, s.pos) AS after_ordinal
    FROM ev JOIN survivors AS s ON s.checkpoint_id = ev.parent_checkpoint_id AND s.pos < ev.position
    GROUP BY ALL
)
SELECT 'removed' AS kind, coalesce(a.after_ordinal, -1) AS after_ordinal, ev.ts, ev.message_id, v.role, v.content
FROM ev
LEFT JOIN anchors AS a USING (checkpoint_id, position)
LEFT JOIN message_versions AS v ON v.thread_id = $thread_id AND v.version = ev.previous_version
ORDER BY after_ordinal, ev.ts, ev.position
"""

# An edit of a message still in the transcript: its ordinal and the text it had before.
_EDITED_SQL = f"""
SELECT 'edited' AS kind, e.ts, m.ordinal, e.message_id, before.role, before.content
FROM message_events AS e {_CURRENT}
JOIN messages AS m ON m.thread_id = e.thread_id AND m.message_id = e.message_id
LEFT JOIN message_versions AS before ON before.thread_id = e.thread_id AND before.version = e.previous_version
WHERE e.thread_id = $thread_id AND e.event = 'edited'
ORDER BY e.ts, m.ordinal
"""

# Interrupts of the current branch: the checkpoint the interrupted task ran from, and when the
# next checkpoint of the branch was written (the resume); none yet while it is pending.
_INTERRUPTS_SQL = """
SELECT c.ts, nxt.ts AS until_ts,
       c.checkpoint_id = t.transcript_checkpoint_id AND t.interrupt_pending AS pending,
       CASE WHEN c.checkpoint_id = t.transcript_checkpoint_id THEN CAST(t.interrupt_value AS VARCHAR) END AS detail
FROM checkpoints AS c
JOIN threads AS t ON t.thread_id = c.thread_id
LEFT JOIN checkpoints AS nxt
  ON nxt.thread_id = c.thread_id AND nxt.parent_checkpoint_id = c.checkpoint_id AND nxt.is_root AND nxt.on_current_branch
WHERE c.thread_id = $thread_id AND c.is_root AND c.on_current_branch AND c.has_interrupt
ORDER BY c.ts
"""

# Consecutive stamped messages (in transcript order) further apart than the gap.
_PAUSES_SQL = """
SELECT 'pause' AS kind, ordinal AS after_ordinal, ts, next_ts AS until_ts, (epoch_us(next_ts) - epoch_us(ts)) / 1e6 AS gap_s
FROM (SELECT ordinal, ts, lead(ts) OVER (ORDER BY ordinal) AS next_ts
      FROM messages WHERE thread_id = $thread_id AND ts IS NOT NULL)
WHERE epoch_us(next_ts) - epoch_us(ts) > $gap_us
ORDER BY ordinal
"""

_VERSIONS_SQL = "SELECT ordinal, version FROM messages WHERE thread_id = $thread_id"


def removed_sql(thread_id: str) -> tuple[str, list | dict]:
    """`(sql, params)`: one row per message removed on the current branch, placed (see the module docstring).

    >>> removed_sql("t")[1]
    {'thread_id': 't'}
    """
    return _REMOVED_SQL, {"thread_id": thread_id}


def edited_sql(thread_id: str) -> tuple[str, dict]:
    """`(sql, params)`: one row per edit, on the current branch, of a message still in the transcript."""
    return _EDITED_SQL, {"thread_id": thread_id}


def interrupts_sql(thread_id: str) -> tuple[str, dict]:
    """`(sql, params)`: the interrupts of the current branch, resumed (`until_ts`) or pending."""
    return _INTERRUPTS_SQL, {"thread_id": thread_id}


def pauses_sql(thread_id: str, gap_minutes: float = DEFAULT_GAP_MINUTES) -> tuple[str, dict]:
    """`(sql, params)`: consecutive stamped messages more than `gap_minutes` apart.

    >>> pauses_sql("t", 1)[1]
    {'thread_id': 't', 'gap_us': 60000000}
    """
    return _PAUSES_SQL, {"thread_id": thread_id, "gap_us": round(check_gap(gap_minutes) * 60e6)}


def place_after(messages: pd.DataFrame, moments: pd.Series) -> np.ndarray:
    """For each moment, the greatest ordinal of a message stamped at or before it (-1: none).

    >>> ms = pd.DataFrame({"ordinal": [0, 1, 2], "ts": pd.to_datetime(["2025-01-01 10:00", None, "2025-01-01 11:00"], utc=True)})
    >>> place_after(ms, pd.Series(pd.to_datetime(["2025-01-01 09:00", "2025-01-01 10:30", "2025-01-01 12:00"], utc=True))).tolist()
    [-1, 0, 2]
    """
    stamped = messages.loc[messages["ts"].notna(), ["ordinal", "ts"]]
    out = np.full(len(moments), -1, dtype="int64")
    if stamped.empty:
        return out
    ts = stamped["ts"].to_numpy(dtype="datetime64[us]")  # UTC wall clock, comparable with the moments'
    ordinals = stamped["ordinal"].to_numpy(dtype="int64")
    for i, moment in enumerate(moments):
        if pd.isna(moment):
            continue
        at_or_before = ordinals[ts <= np.datetime64(pd.Timestamp(moment).tz_convert("UTC").tz_localize(None), "us")]
        if len(at_or_before):
            out[i] = at_or_before.max()
    return out


def _reply_timings(con, thread_id: str, messages: pd.DataFrame) -> pd.DataFrame:
    pairs = metrics.latency_distribution(
        con, Filters(thread_ids=(thread_id,)), columns=("user_ordinal", "assistant_ordinal", "latency_s")
    )
    # Back-to-back questions pair with the same reply: it shows the latency from the last of them.
    latest = pairs.sort_values("user_ordinal").drop_duplicates("assistant_ordinal", keep="last")
    latency = dict(zip(latest["assistant_ordinal"].astype(int), latest["latency_s"].astype(float)))
    out = messages.assign(latency_s=messages["ordinal"].map(latency).astype("float64"))
    asked = messages["ts"].where(messages["role"].eq("user") & messages["ts"].notna()).ffill()
    since = (messages["ts"] - asked).dt.total_seconds()
    out["since_question_s"] = since.where(messages["role"].eq("assistant")).astype("float64")
    return out


def in_context(
    con_or_path: ConOrPath, thread_id: str, gap_minutes: float = DEFAULT_GAP_MINUTES
) -> TranscriptContext:
    """The whole transcript of `thread_id` with the events between its messages (module docstring).

    `gap_minutes`: a pause between two messages, and an idle gap between checkpoints
    that counts as a restart (`analytics.resume_points`), must be longer than this.
    Raises `NotFound` for a thread not in the database.

    >>> in_context("lens.duckdb", "globex:api:sess-2107").markers.kind.tolist()  # doctest: +SKIP
    ['restart']
    """
    gap_minutes = check_gap(gap_minutes)
    with connection(con_or_path) as con:
        rows = read(con, TranscriptQuery(thread_id))  # NotFound for an unknown thread
        versions = con.sql(_VERSIONS_SQL, params={"thread_id": thread_id}).fetchall()
        rows["version"] = rows["ordinal"].map(dict(versions))
        messages = typed(_reply_timings(con, thread_id, rows), CONTEXT_COLUMNS)
        removed = fetch_frame(con, *removed_sql(thread_id))
        edited = fetch_frame(con, *edited_sql(thread_id))
        interrupts = fetch_frame(con, *interrupts_sql(thread_id))
        pauses = fetch_frame(con, *pauses_sql(thread_id, gap_minutes))
        restarts = resume_points(con, thread_id, gap_minutes)
    parts = [removed, pauses]
    if not restarts.empty:
        parts.append(pd.DataFrame({
            "kind": "restart", "after_ordinal": place_after(messages, restarts["before_ts"]),
            "ts": restarts["before_ts"], "until_ts": restarts["after_ts"], "gap_s": restarts["gap_s"].astype("float64"),
            "reason": restarts["reason"], "detail": restarts["process_change"],
        }))  # fmt: skip
    if not interrupts.empty:
        pending = interrupts["pending"].fillna(False).astype(bool)
        gap = (interrupts["until_ts"] - interrupts["ts"]).dt.total_seconds()
        last = int(messages["ordinal"].max()) if len(messages) else -1
        parts.append(pd.DataFrame({
            "kind": np.where(pending, "pending", "interrupt"),
            "after_ordinal": np.where(pending, last, place_after(messages, interrupts["ts"])),
            "ts": interrupts["ts"], "until_ts": interrupts["until_ts"], "gap_s": gap.astype("float64"),
            "detail": interrupts["detail"].where(pending),
        }))  # fmt: skip
    if not edited.empty:
        parts.append(edited.assign(after_ordinal=place_after(messages, edited["ts"])))
    markers = pd.concat([typed(p, MARKER_COLUMNS) for p in parts], ignore_index=True)
    order = markers["kind"].map({k: i for i, k in enumerate(MARKER_KINDS)})
    markers = markers.assign(_order=order).sort_values(["after_ordinal", "_order", "ts"], kind="stable")
    return TranscriptContext(thread_id, messages, typed(markers, MARKER_COLUMNS), gap_minutes)
