"""The corpus figures of the Overview: daily sums, per model, top models / tools / tenants,
latency distribution and the headline totals, over the messages that pass the filters
(`since`/`until` also cut messages by `ts`).

>>> overview("demo.duckdb")["threads"]  # doctest: +SKIP
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from analytics import _pandas as pd
from analytics.catalog import ROLES, THREAD_COLUMNS_IN_METRICS
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.metrics.per_conversation import MATERIALIZED_TABLE, TOKEN_SUMS, materialized
from analytics.metrics.scope import AS_DATE, DAY_NUMBER, scope_clause
from analytics.metrics.trend_tables import (
    NO_PAIRS, THREAD_DAYS_TABLE, THREAD_MODELS_TABLE, aggregate_source, current_trend_tables, latency_distribution_sql,
    pairs_cte, tool_rows_cte,
)
from analytics.paging import check_limit


#: Column order of `daily()` (and of the `daily` CSV report).
DAILY_COLUMNS = (
    "day",
    "tenant_id",
    "conversations_started",
    "active_conversations",
    "messages",
    "user_messages",
    "assistant_messages",
    "tool_messages",
    "system_messages",
    "other_messages",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "latency_pairs",
    "latency_median_s",
)


class Overview(TypedDict):
    """Headline numbers of `overview()` (see docs/metrics.md)."""

    threads: int
    tenants: int
    messages: int
    user_turns: int
    assistant_messages: int
    tool_calls: int
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    models: int
    first_ts: datetime | None
    last_ts: datetime | None
    latency_pairs: int
    latency_median_s: float | None
    stale_threads: int  # threads whose transcript is not their latest root checkpoint's (docs/contract.md §3.11)

DAILY_LATENCY = ("latency_pairs", "latency_median_s")
MODEL_LATENCY = ("latency_pairs", "latency_median_s", "latency_p90_s")


def latency_distribution(
    con_or_path: ConOrPath, filters: Filters = Filters(), columns: tuple[str, ...] | None = None
) -> pd.DataFrame:
    """One row per user→assistant pair: thread_id, tenant_id, user_ordinal,
    assistant_ordinal, user_ts, assistant_ts, latency_s, model (of the reply).

    A pair is kept when its user message passes `filters.message_where`. With
    `columns`, only those columns, rows in no particular order (a histogram's input).

    >>> latency_distribution("demo.duckdb")["latency_s"].describe()  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *latency_distribution_sql(filters, current_trend_tables(con), columns))


def daily_sql(filters: Filters = Filters(), fast: frozenset[str] = frozenset(), latency: bool = True) -> tuple[str, list]:
    """The query behind `daily()`: `(sql, params)`, columns in `DAILY_COLUMNS` order.

    The per-thread-day and pair rows come from the load-time tables named in `fast`
    (`current_trend_tables(con)`) where they can answer `filters`; else the live query.
    The threads started per day come from `conversation_metrics` when `fast` names it.

    >>> daily_sql()[1]
    []
    """
    scope_sql, params = scope_clause(filters, window=True)
    started_sql, started_params = filters.window_where("first_ts")
    started_from, from_params = "scope", []
    if MATERIALIZED_TABLE in fast:
        # A thread's first checkpoint ts and tenant are columns of its `conversation_metrics` row, which
        # the conditions select with no join (`metrics_where`): the scope's threads are not copied into
        # the `scope` CTE for this (0.17 s of CPU for the 1.25M threads of `min_turns=2` at 10M messages).
        where, from_params = filters.metrics_where("cm")
        first_ts = THREAD_COLUMNS_IN_METRICS["first_ts"]
        started_from = f"(SELECT cm.{first_ts} AS first_ts, cm.tenant_id FROM {MATERIALIZED_TABLE} cm WHERE {where})"
    thread_days = aggregate_source(THREAD_DAYS_TABLE, filters, fast)
    thread_days = f"SELECT * FROM ({thread_days}) WHERE day_n IS NOT NULL"
    role_sums = ", ".join(f"CAST(sum({r}_messages) AS BIGINT) AS {r}_messages" for r in ROLES)
    sql = f"""
    WITH {scope_sql},
    thread_days AS (
        -- Per thread first, then per tenant: counting threads this way is cheaper than count(DISTINCT).
        {thread_days}),
    activity AS (
        SELECT day_n, tenant_id,
               count(*) AS active_conversations,
               CAST(sum(messages) AS BIGINT) AS messages,
               {role_sums},
               CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
               CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
               CAST(sum(total_tokens) AS BIGINT) AS total_tokens
        FROM thread_days GROUP BY ALL),
    started AS (
        SELECT {DAY_NUMBER.format(col="first_ts")} AS day_n, tenant_id, count(*) AS conversations_started
        FROM {started_from} WHERE first_ts IS NOT NULL AND {started_sql} GROUP BY ALL),
    {pairs_cte(filters, fast) if latency else NO_PAIRS},
    latency AS (
        SELECT {DAY_NUMBER.format(col="user_ts")} AS day_n, tenant_id,
               count(*) AS latency_pairs, quantile_cont(latency_s, 0.5) AS latency_median_s
        FROM pairs GROUP BY ALL),
    days AS (SELECT day_n, tenant_id FROM activity UNION SELECT day_n, tenant_id FROM started)
    SELECT {AS_DATE.format(col="d.day_n")} AS day, d.tenant_id,
           coalesce(s.conversations_started, 0) AS conversations_started,
           coalesce(a.active_conversations, 0) AS active_conversations,
           coalesce(a.messages, 0) AS messages,
           {", ".join(f"coalesce(a.{r}_messages, 0) AS {r}_messages" for r in ROLES)},
           a.input_tokens, a.output_tokens, a.total_tokens,
           coalesce(l.latency_pairs, 0) AS latency_pairs,
           l.latency_median_s
    FROM days d
    -- tenant_id is NULL for thread ids outside the key pattern; those rows still group together
    LEFT JOIN started s ON s.day_n = d.day_n AND s.tenant_id IS NOT DISTINCT FROM d.tenant_id
    LEFT JOIN activity a ON a.day_n = d.day_n AND a.tenant_id IS NOT DISTINCT FROM d.tenant_id
    LEFT JOIN latency l ON l.day_n = d.day_n AND l.tenant_id IS NOT DISTINCT FROM d.tenant_id
    ORDER BY d.day_n, d.tenant_id NULLS LAST"""
    return sql, params + from_params + started_params


def daily(con_or_path: ConOrPath, filters: Filters = Filters(), latency: bool = True) -> pd.DataFrame:
    """Per UTC day and tenant: conversations started and active, messages by role,
    tokens, latency; columns `DAILY_COLUMNS`.

    With `latency=False`, without the latency columns (and without pairing questions
    with replies); the other columns are the same.

    >>> daily("demo.duckdb").groupby("day")["messages"].sum()  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        fast = current_trend_tables(con) | ({MATERIALIZED_TABLE} if materialized(con) else set())
        frame = fetch_frame(con, *daily_sql(filters, fast, latency))
    return frame if latency else frame.drop(columns=list(DAILY_LATENCY))


def by_model_sql(
    filters: Filters, limit: int | None, fast: frozenset[str] = frozenset(), latency: bool = True,
    conversations: bool = True,
) -> tuple[str, list]:
    scope_sql, params = scope_clause(filters, window=True)
    thread_models = aggregate_source(THREAD_MODELS_TABLE, filters, fast)
    # The distinct threads of each model: most of the query's work at 10M messages (~0.2 s of CPU).
    threads = "count(DISTINCT thread_id)" if conversations else "NULL::BIGINT"
    sql = f"""
    WITH {scope_sql},
    thread_models AS ({thread_models}),
    per_model AS (
        SELECT model, CAST(sum(messages) AS BIGINT) AS messages, {threads} AS conversations,
               {TOKEN_SUMS}
        FROM thread_models GROUP BY model),
    {pairs_cte(filters, fast) if latency else NO_PAIRS},
    latency AS (
        SELECT model, count(*) AS latency_pairs,
               quantile_cont(latency_s, 0.5) AS latency_median_s,
               quantile_cont(latency_s, 0.9) AS latency_p90_s
        FROM pairs WHERE model IS NOT NULL GROUP BY model)
    SELECT p.model, p.messages, p.conversations, p.input_tokens, p.output_tokens, p.total_tokens,
           coalesce(l.latency_pairs, 0) AS latency_pairs, l.latency_median_s, l.latency_p90_s
    FROM per_model p LEFT JOIN latency l USING (model)
    ORDER BY p.messages DESC, p.model"""
    if limit is not None:
        sql += "\n    LIMIT ?"
        params = params + [check_limit(limit)]
    return sql, params


def by_model(
    con_or_path: ConOrPath, filters: Filters = Filters(), latency: bool = True, conversations: bool = True
) -> pd.DataFrame:
    """Per model (messages with a known model): model, messages, conversations,
    input/output/total_tokens, latency_pairs, latency_median_s, latency_p90_s;
    most messages first. With `latency=False`, without the three latency columns; with
    `conversations=False`, without that column (the other columns are the same).

    >>> by_model("demo.duckdb")  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        frame = fetch_frame(con, *by_model_sql(filters, None, current_trend_tables(con), latency, conversations))
    dropped = [*([] if latency else MODEL_LATENCY), *([] if conversations else ["conversations"])]
    return frame.drop(columns=dropped) if dropped else frame


def top_models(con_or_path: ConOrPath, filters: Filters = Filters(), limit: int = 10) -> pd.DataFrame:
    """The first `limit` rows of `by_model()`.

    >>> top_models("demo.duckdb", limit=3)["model"].tolist()  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *by_model_sql(filters, limit, current_trend_tables(con)))


def top_tools(con_or_path: ConOrPath, filters: Filters = Filters(), limit: int = 10) -> pd.DataFrame:
    """Most-called tools: tool, calls, conversations, results (tool messages
    answering it), errors (those with tool_status 'error'); most calls first.

    >>> top_tools("demo.duckdb", limit=5)  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *top_tools_sql(filters, limit, current_trend_tables(con)))


def top_tools_sql(filters: Filters = Filters(), limit: int = 10, fast: frozenset[str] = frozenset()) -> tuple[str, list]:
    """The query behind `top_tools()` (`fast`: the current load-time tables it may read)."""
    scope_sql, params = scope_clause(filters, window=True)
    rows_sql, rows_params = tool_rows_cte(filters, fast)
    sql = f"""
    WITH {scope_sql},{rows_sql},
    calls AS (
        SELECT tool, count(*) AS calls, count(DISTINCT thread_id) AS conversations
        FROM tool_rows WHERE kind = 'call' AND tool IS NOT NULL
        GROUP BY tool),
    results AS (
        SELECT tool, count(*) AS results, count(*) FILTER (WHERE error) AS errors
        FROM tool_rows WHERE kind = 'result'
        GROUP BY ALL)
    SELECT coalesce(c.tool, r.tool) AS tool,
           coalesce(c.calls, 0) AS calls,
           coalesce(c.conversations, 0) AS conversations,
           coalesce(r.results, 0) AS results,
           coalesce(r.errors, 0) AS errors
    FROM calls c FULL JOIN results r ON c.tool = r.tool
    WHERE coalesce(c.tool, r.tool) IS NOT NULL
    ORDER BY calls DESC, errors DESC, tool
    LIMIT ?"""
    return sql, params + rows_params + [check_limit(limit)]


def top_tenants(con_or_path: ConOrPath, filters: Filters = Filters(), limit: int = 10) -> pd.DataFrame:
    """Busiest tenants: tenant_id (NULL = thread ids outside the key pattern),
    conversations, messages, user_turns, total_tokens; most conversations first.

    >>> top_tenants("demo.duckdb", limit=5)  # doctest: +SKIP
    """
    scope_sql, params = scope_clause(filters, window=True)
    sql = f"""
    WITH {scope_sql},
    per_tenant AS (
        SELECT tenant_id, count(*) AS messages, count(*) FILTER (WHERE role = 'user') AS user_turns,
               CAST(sum(total_tokens) AS BIGINT) AS total_tokens
        FROM msgs GROUP BY tenant_id),
    threads_per_tenant AS (SELECT tenant_id, count(*) AS conversations FROM scope GROUP BY tenant_id)
    SELECT t.tenant_id, t.conversations,
           coalesce(p.messages, 0) AS messages, coalesce(p.user_turns, 0) AS user_turns, p.total_tokens
    FROM threads_per_tenant t LEFT JOIN per_tenant p ON p.tenant_id IS NOT DISTINCT FROM t.tenant_id
    ORDER BY t.conversations DESC, messages DESC, t.tenant_id NULLS LAST
    LIMIT ?"""
    with connection(con_or_path) as con:
        return fetch_frame(con, sql, params + [check_limit(limit)])


def overview(con_or_path: ConOrPath, filters: Filters = Filters()) -> Overview:
    """Headline numbers: threads and tenants (thread-level), messages, turns,
    tool calls, tokens, models, latency and first/last ts (message-level).

    >>> overview("demo.duckdb")["threads"]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        sql, params = overview_sql(filters, current_trend_tables(con))
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        (row,) = cur.fetchall()
    return Overview(**dict(zip(names, row)))


def overview_sql(filters: Filters = Filters(), fast: frozenset[str] = frozenset()) -> tuple[str, list]:
    """The query behind `overview()`; the load-time tables named in `fast` answer where they can."""
    scope_sql, params = scope_clause(filters, window=True)
    if THREAD_DAYS_TABLE in fast and THREAD_MODELS_TABLE in fast:
        days = aggregate_source(THREAD_DAYS_TABLE, filters, fast)
        models = aggregate_source(THREAD_MODELS_TABLE, filters, fast)
        totals = f"""
    totals AS (
        -- Sums of the per-thread-day sums: the same figures as over the messages (NULL stays NULL).
        SELECT CAST(coalesce(sum(messages), 0) AS BIGINT) AS messages,
               CAST(coalesce(sum(user_messages), 0) AS BIGINT) AS user_turns,
               CAST(coalesce(sum(assistant_messages), 0) AS BIGINT) AS assistant_messages,
               CAST(coalesce(sum(tool_calls), 0) AS BIGINT) AS tool_calls,
               {TOKEN_SUMS},
               (SELECT count(DISTINCT model) FROM ({models})) AS models,
               min(first_ts) AS first_ts,
               max(last_ts) AS last_ts
        FROM ({days}))"""
    else:
        totals = f"""
    totals AS (
        SELECT count(*) AS messages,
               count(*) FILTER (WHERE role = 'user') AS user_turns,
               count(*) FILTER (WHERE role = 'assistant') AS assistant_messages,
               CAST(coalesce(sum(tool_call_count), 0) AS BIGINT) AS tool_calls,
               {TOKEN_SUMS},
               count(DISTINCT model) AS models,
               min(ts) AS first_ts,
               max(ts) AS last_ts
        FROM msgs)"""
    sql = f"""
    WITH {scope_sql},
    {pairs_cte(filters, fast)},{totals},
    latency AS (SELECT count(*) AS latency_pairs, quantile_cont(latency_s, 0.5) AS latency_median_s FROM pairs)
    SELECT (SELECT count(*) FROM scope) AS threads,
           (SELECT count(DISTINCT tenant_id) FROM scope) AS tenants,
           totals.*, latency.*,
           (SELECT count(*) FROM scope WHERE stale_reason IS NOT NULL) AS stale_threads
    FROM totals, latency"""
    return sql, params
