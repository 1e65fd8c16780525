"""Per-conversation metrics (contract §8; docs/metrics.md): `conversations()` and
`conversation()`, one set-based DuckDB query over every thread that passes the filters (each
describes its whole transcript), and `conversation_metrics`, the table a load writes from it.

>>> conversations("demo.duckdb").head()  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TypedDict

from analytics import _pandas as pd
from analytics.catalog import CONVERSATION_METRICS, ROLES
from analytics.db import ConOrPath, connection, query_fingerprint, table_comments, write_derived_table
from analytics.errors import NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame, fetch_rows
from analytics.metrics.scope import column_list, in_scope, scope_clause
from analytics.resume.gap import DEFAULT_GAP_MINUTES, gap_us


#: Column order of `conversations()` (and of the `conversations` CSV report): the
#: columns of `conversation_metrics` (`analytics.catalog.CONVERSATION_METRICS`).
CONVERSATION_COLUMNS = CONVERSATION_METRICS.names


class ConversationMetrics(TypedDict):
    """One row of `conversations()` as plain Python values (see docs/metrics.md); its keys and
    types are `CONVERSATION_METRICS`' (tests/analytics/test_catalog.py)."""

    thread_id: str
    tenant_id: str | None
    sub_tenant_id: str | None
    session_id: str | None
    messages: int
    user_messages: int
    assistant_messages: int
    tool_messages: int
    system_messages: int
    other_messages: int
    user_turns: int
    first_ts: datetime | None
    last_ts: datetime | None
    duration_s: float | None
    first_checkpoint_ts: datetime | None
    last_checkpoint_ts: datetime | None
    root_checkpoints: int
    subgraph_checkpoints: int
    latency_pairs: int
    latency_median_s: float | None
    latency_p90_s: float | None
    latency_max_s: float | None
    tool_calls: int
    distinct_tools: int
    tool_errors: int
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    models: str | None
    forks: int
    branches: int
    interrupt_pending: bool
    transcript_checkpoint_id: str | None
    stale_reason: str | None
    removed_messages: int
    edited_messages: int
    resume_points: int
    mean_chars_user: float | None
    mean_chars_assistant: float | None


# A user message pairs with the first later assistant message that has a ts.
# Users come from `msgs` (the window), replies from the whole thread, so a
# question asked just before `until` still gets its answer. Nearly every reply
# sits right after its question, so an equi-join on ordinal + 1 answers most
# pairs without a sort; only the rest (back-to-back questions, replies without
# ts) go through the ASOF join, which sorts.
PAIRS_SQL = """
    pair_users AS NOT MATERIALIZED (
        SELECT thread_id, tenant_id, ordinal, ts FROM msgs WHERE role = 'user' AND ts IS NOT NULL),
    pair_replies AS NOT MATERIALIZED (
        SELECT thread_id, ordinal, ts, model FROM thread_msgs WHERE role = 'assistant' AND ts IS NOT NULL),
    next_row AS MATERIALIZED (
        SELECT u.thread_id, u.tenant_id, u.ordinal AS user_ordinal, r.ordinal AS assistant_ordinal,
               u.ts AS user_ts, r.ts AS assistant_ts, r.model
        FROM pair_users u LEFT JOIN pair_replies r ON r.thread_id = u.thread_id AND r.ordinal = u.ordinal + 1),
    unanswered AS MATERIALIZED (SELECT * FROM next_row WHERE assistant_ordinal IS NULL),
    later AS (
        SELECT u.thread_id, u.tenant_id, u.user_ordinal, r.ordinal AS assistant_ordinal,
               u.user_ts, r.ts AS assistant_ts, r.model
        FROM unanswered u
        ASOF JOIN (SELECT * FROM pair_replies WHERE thread_id IN (SELECT thread_id FROM unanswered)) r
          ON u.thread_id = r.thread_id AND u.user_ordinal < r.ordinal),
    pairs AS (
        SELECT *, (epoch_us(assistant_ts) - epoch_us(user_ts)) / 1e6 AS latency_s
        FROM (SELECT * FROM next_row WHERE assistant_ordinal IS NOT NULL UNION ALL SELECT * FROM later))"""

ROLE_COUNTS = ",\n".join(f"count(*) FILTER (WHERE role = '{r}') AS {r}_messages" for r in ROLES)

TOKEN_SUMS = """CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
        CAST(sum(total_tokens) AS BIGINT) AS total_tokens"""

# Every tool call (one row per entry of `tool_calls`, at the calling message's ts) and every
# tool result (a tool message, named by the call it answers anywhere in its thread, else by
# its own name) of the scope's threads: what `top_tools` and `trends.tool_calls` count, a
# window then keeping the rows whose ts is in it. Also the body of `tool_rows`.
TOOL_ROWS_SQL = """SELECT * FROM (
        WITH calls AS MATERIALIZED (
            SELECT thread_id, tenant_id, ts,
                   unnest(json_extract_string(tool_calls, '$[*].id')) AS call_id,
                   unnest(json_extract_string(tool_calls, '$[*].name')) AS tool
            FROM thread_msgs WHERE tool_call_count > 0),
        names AS (SELECT thread_id, call_id, min(tool) AS tool FROM calls WHERE call_id IS NOT NULL GROUP BY ALL)
        SELECT thread_id, tenant_id, ts, 'call' AS kind, tool, FALSE AS error FROM calls
        UNION ALL
        SELECT m.thread_id, m.tenant_id, m.ts, 'result' AS kind, coalesce(n.tool, m.name) AS tool,
               coalesce(m.tool_status = 'error', FALSE) AS error
        FROM thread_msgs m LEFT JOIN names n ON n.thread_id = m.thread_id AND n.call_id = m.tool_call_id
        WHERE m.role = 'tool')"""


def conversations_sql(filters: Filters = Filters(), gap_minutes: float = DEFAULT_GAP_MINUTES) -> tuple[str, list]:
    """The query behind `conversations()`: `(sql, params)`, columns in `CONVERSATION_COLUMNS` order.

    >>> sql, params = conversations_sql(Filters(tenants=("acme",)))
    >>> params[0]
    ['acme']
    """
    gap = gap_us(gap_minutes)
    scope_sql, params = scope_clause(filters, window=False)
    role_counts = ROLE_COUNTS.replace("\n", "\n        ")
    sql = f"""
    WITH {scope_sql},
    per_thread AS (
        SELECT thread_id,
        count(*) AS messages,
        {role_counts},
        min(ts) AS first_ts,
        max(ts) AS last_ts,
        CAST(coalesce(sum(tool_call_count), 0) AS BIGINT) AS tool_calls,
        count(*) FILTER (WHERE role = 'tool' AND tool_status = 'error') AS tool_errors,
        {TOKEN_SUMS},
        avg(content_chars) FILTER (WHERE role = 'user') AS mean_chars_user,
        avg(content_chars) FILTER (WHERE role = 'assistant') AS mean_chars_assistant
        FROM msgs GROUP BY thread_id),
    models AS (
        -- Distinct first, then a per-thread list sort: cheaper than string_agg(DISTINCT … ORDER BY …).
        SELECT thread_id, array_to_string(list_sort(list(model)), ',') AS models
        FROM (SELECT DISTINCT thread_id, model FROM msgs WHERE model IS NOT NULL)
        GROUP BY thread_id),
    tools AS (
        SELECT thread_id, count(*) AS distinct_tools
        FROM (SELECT DISTINCT thread_id, unnest(json_extract_string(tool_calls, '$[*].name')) AS tool
              FROM msgs WHERE tool_call_count > 0)
        WHERE tool IS NOT NULL
        GROUP BY thread_id),
    {PAIRS_SQL},
    latency AS (
        SELECT thread_id, count(*) AS latency_pairs,
               quantile_cont(latency_s, [0.5, 0.9]) AS q,  -- one aggregate state for both
               max(latency_s) AS latency_max_s
        FROM pairs GROUP BY thread_id),
    resumes AS (
        -- Per-thread list sorts instead of a window: sorting a million checkpoints
        -- globally costs several times more than many short sorts.
        SELECT thread_id, len(list_filter(range(1, len(t)), lambda i: t[i + 1] - t[i] > ?)) AS resume_points
        FROM (SELECT thread_id, list_sort(list(epoch_us(ts))) AS t
              FROM checkpoints c
              WHERE is_root AND on_current_branch AND ts IS NOT NULL AND {in_scope(filters, 'c')}
              GROUP BY thread_id))
    SELECT t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id,
           coalesce(p.messages, 0) AS messages,
           coalesce(p.user_messages, 0) AS user_messages,
           coalesce(p.assistant_messages, 0) AS assistant_messages,
           coalesce(p.tool_messages, 0) AS tool_messages,
           coalesce(p.system_messages, 0) AS system_messages,
           coalesce(p.other_messages, 0) AS other_messages,
           coalesce(p.user_messages, 0) AS user_turns,
           p.first_ts, p.last_ts,
           (epoch_us(p.last_ts) - epoch_us(p.first_ts)) / 1e6 AS duration_s,
           t.first_ts AS first_checkpoint_ts, t.last_ts AS last_checkpoint_ts,
           t.root_checkpoint_count AS root_checkpoints,
           t.subgraph_checkpoint_count AS subgraph_checkpoints,
           coalesce(l.latency_pairs, 0) AS latency_pairs,
           l.q[1] AS latency_median_s, l.q[2] AS latency_p90_s, l.latency_max_s,
           coalesce(p.tool_calls, 0) AS tool_calls,
           coalesce(tl.distinct_tools, 0) AS distinct_tools,
           coalesce(p.tool_errors, 0) AS tool_errors,
           p.input_tokens, p.output_tokens, p.total_tokens,
           mo.models,
           t.fork_count AS forks, t.branch_count AS branches,
           t.interrupt_pending,
           t.transcript_checkpoint_id,
           t.stale_reason,
           t.removed_message_count AS removed_messages,
           t.edited_message_count AS edited_messages,
           coalesce(r.resume_points, 0) AS resume_points,
           p.mean_chars_user, p.mean_chars_assistant
    FROM scope t
    LEFT JOIN per_thread p USING (thread_id)
    LEFT JOIN models mo USING (thread_id)
    LEFT JOIN tools tl USING (thread_id)
    LEFT JOIN latency l USING (thread_id)
    LEFT JOIN resumes r USING (thread_id)
    ORDER BY t.thread_id"""
    return sql, params + [gap]


# --- the per-thread table written at load time (analytics.derived) -------------------------
# `conversations_sql(Filters())` is a few passes over every message and checkpoint
# (~0.7 s on a million messages). A load runs it once (analytics.derived), into the staged
# database (`materialize_conversations`), and `conversations()` / `conversation()` /
# the conversations report then read that table instead. Every `Filters` field is a
# thread-level predicate for these figures (`thread_where`; `text` is a semi-join on
# messages, `since`/`until` compare the thread's checkpoint span), so applying it to
# the table's threads gives exactly the live query's rows. Only a non-default
# resume gap needs the live query.

#: Table written at the end of every load by analytics.derived (docs/schema.md).
MATERIALIZED_TABLE = CONVERSATION_METRICS.name


@functools.cache
def conversations_fingerprint() -> str:
    """Identifies the query that fills `MATERIALIZED_TABLE` (stored as the table's comment).

    A database written before a metric definition changed carries another
    fingerprint, so its table is ignored (live query) rather than read stale.
    """
    return query_fingerprint("conversations_sql", *conversations_sql(Filters(), DEFAULT_GAP_MINUTES))


def materialize_conversations(con, threads: list[str] | None = None) -> None:
    """(Re)create `conversation_metrics` = `conversations(con)` (every thread, default resume gap).

    Called at load time (`analytics.derived`, through `transcript_lens.load`) on the staged database before it is swapped in, after
    full and incremental loads alike (a rebuild costs one unfiltered query). Sets
    the connection's time zone to UTC, as `analytics.connect` does for readers.
    `threads`: only these threads' rows (`write_derived_table`).
    """
    write_derived_table(con, MATERIALIZED_TABLE, *conversations_sql(Filters(), DEFAULT_GAP_MINUTES), conversations_fingerprint(), threads)


def materialized(con) -> bool:
    """Whether `con`'s database holds a `conversation_metrics` table written by the current query."""
    return table_comments(con, [MATERIALIZED_TABLE]).get(MATERIALIZED_TABLE) == conversations_fingerprint()


def conversations_query(
    con, filters: Filters = Filters(), gap_minutes: float = DEFAULT_GAP_MINUTES
) -> tuple[str, list]:
    """What `conversations()` runs on `con`: `(sql, params)`, columns in `CONVERSATION_COLUMNS` order.

    A read of `conversation_metrics` when the database has a current one and
    `gap_minutes` is the default; otherwise `conversations_sql(filters, gap_minutes)`.
    Same rows, column types and order either way.
    """
    if gap_us(gap_minutes) != gap_us(DEFAULT_GAP_MINUTES) or not materialized(con):
        return conversations_sql(filters, gap_minutes)
    # Every condition is a column of the row (`Filters.metrics_where`: a window compares the
    # checkpoint span, as the live query's `threads` filter does; the table's first_ts/last_ts are
    # message times): no join with `threads` or a view's scope table (at 10M messages, semi-joining
    # 1.25M thread ids took 0.35-0.45 s of CPU per query).
    where, params = filters.metrics_where("cm")
    columns = ", ".join(f"cm.{c}" for c in CONVERSATION_COLUMNS)
    return f"SELECT {columns} FROM {MATERIALIZED_TABLE} cm WHERE {where} ORDER BY cm.thread_id", params


def conversations(
    con_or_path: ConOrPath,
    filters: Filters = Filters(),
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    columns: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """One row per thread that passes `filters`, columns `CONVERSATION_COLUMNS`, by thread_id.

    Figures describe each thread's whole transcript (a time window selects
    threads, it does not cut their messages). Read from the loader's
    `conversation_metrics` table when possible (`conversations_query`). With
    `columns`, only those columns (same rows and order).

    >>> df = conversations("demo.duckdb", Filters(tenants=("acme",)))  # doctest: +SKIP
    >>> df[["thread_id", "user_turns", "latency_median_s"]]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        sql, params = conversations_query(con, filters, gap_minutes)
        if columns is not None:
            sql = f"SELECT {column_list(columns, CONVERSATION_COLUMNS)} FROM ({sql}) ORDER BY thread_id"
        return fetch_frame(con, sql, params)


def conversation(
    con_or_path: ConOrPath, thread_id: str, gap_minutes: float = DEFAULT_GAP_MINUTES
) -> ConversationMetrics:
    """The `conversations()` row of one thread as a dict of plain values; `NotFound` if absent.

    >>> conversation("demo.duckdb", "acme:web:s1")["latency_median_s"]  # doctest: +SKIP
    2.0
    """
    with connection(con_or_path) as con:
        sql, params = conversations_query(con, Filters(thread_ids=(thread_id,)), gap_minutes)
        rows = fetch_rows(con, sql, params)
    if not rows:
        raise NotFound(f"no thread {thread_id!r} in the database")
    return ConversationMetrics(**dict(zip(CONVERSATION_COLUMNS, rows[0])))
