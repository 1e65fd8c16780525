"""Per-conversation metrics and corpus trends (contract §8).

Every figure is defined in docs/metrics.md. Each function is one set-based
DuckDB query (no per-thread Python); docs/metrics.md has their timings on a
million messages.

Two scopes, both from `Filters`:
- thread-level figures (`conversations`, `conversation`, thread counts) take
  the threads that pass `Filters.thread_where` and describe their *whole*
  transcript;
- message-level figures (`daily`, `by_model`, `overview` message and token
  totals, `latency_distribution`, `top_*`) take the messages that pass
  `Filters.message_where` (so `since`/`until` also cut messages by `ts`).

>>> import analytics
>>> analytics.conversations("demo.duckdb").head()  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from typing import TypedDict

from analytics._pandas import pd
from analytics.catalog import (
    CONVERSATION_METRICS, DERIVED_TABLES, LATENCY_PAIR_ROWS, ROLES, THREAD_COLUMNS_IN_METRICS, THREAD_DAY_METRICS,
    THREAD_MODEL_METRICS, TOOL_ROWS,
)
from analytics.db import ConOrPath, connection, query_fingerprint, table_comments, write_derived_table
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame, fetch_rows
from analytics.paging import check_limit, check_offset
from analytics.resume.gap import DEFAULT_GAP_MINUTES, gap_us
from loaders import catalog as loader_catalog


#: Column order of `conversations()` (and of the `conversations` CSV report): the
#: columns of `conversation_metrics` (`analytics.catalog.CONVERSATION_METRICS`).
CONVERSATION_COLUMNS = CONVERSATION_METRICS.names

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


# --- SQL building blocks -------------------------------------------------------

#: The columns of the tables `_in_scope` filters (a row carrying the scope's key parts is compared on them).
_MESSAGE_COLUMNS = loader_catalog.MESSAGES.names
_DERIVED_COLUMNS = {t.name: t.names for t in DERIVED_TABLES if "thread_id" in t.names}  # (`topics` is the store's)

# Fragments below are code constants; every value reaches DuckDB as a bound parameter.


def _scoped(filters: Filters) -> bool:
    """Whether `filters` restricts threads at all (when not, skip the semi-joins)."""
    return filters.thread_where("t")[0] != "TRUE"


def _in_scope(filters: Filters, alias: str, columns: tuple[str, ...] = ("thread_id",)) -> str:
    """`alias`'s row belongs to a thread of the `scope` CTE; `columns`: the row's columns.

    When the scope is some tenants / sub-tenants and the row carries those key parts
    (`Filters.key_parts`), its own values are compared with the scope's few: at 10M messages
    a semi-join of a derived table's thread ids with a tenant's 680k took 0.1-0.2 s of CPU
    per query, this a few ms (row groups of other tenants are skipped on their zone maps).
    """
    if not _scoped(filters):
        return "TRUE"
    if getattr(filters, "rows_table", None) is not None:
        # A view's threads found once (`scope.scoped_rows`): its table read here, without copying
        # every row of it into the `scope` CTE when nothing else reads that.
        return filters.thread_where(alias)[0]
    parts = filters.key_parts()
    if parts and set(parts) <= set(columns):
        return " AND ".join(f"{alias}.{c} IN (SELECT {c} FROM scope)" for c in parts)
    return f"{alias}.thread_id IN (SELECT thread_id FROM scope)"


def _scope(filters: Filters, window: bool) -> tuple[str, list]:
    """CTEs `scope` (threads that pass), `thread_msgs` (all their messages) and
    `msgs` (those messages, cut by the time window when `window`)."""
    # (A view's scope computed once, `scope.scoped_rows`, is read as it is, not joined again.)
    threads, params = filters.threads_sql()
    # The message CTEs are inlined (NOT MATERIALIZED) so each use reads only the
    # columns it needs; materializing them would copy every message's content.
    sql = f"""
    scope AS MATERIALIZED ({threads}),
    thread_msgs AS NOT MATERIALIZED (SELECT m.* FROM messages m WHERE {_in_scope(filters, "m", _MESSAGE_COLUMNS)})"""
    if window and (filters.since is not None or filters.until is not None):
        # `scope` already applies the thread part of Filters.message_where; this is its ts part.
        window_sql, window_params = filters.window_where("m.ts")
        sql += f""",
    msgs AS NOT MATERIALIZED (SELECT m.* FROM thread_msgs m WHERE {window_sql})"""
        params = params + window_params
    else:
        sql += """,
    msgs AS NOT MATERIALIZED (SELECT * FROM thread_msgs)"""
    return sql, params


# A user message pairs with the first later assistant message that has a ts.
# Users come from `msgs` (the window), replies from the whole thread, so a
# question asked just before `until` still gets its answer. Nearly every reply
# sits right after its question, so an equi-join on ordinal + 1 answers most
# pairs without a sort; only the rest (back-to-back questions, replies without
# ts) go through the ASOF join, which sorts.
_PAIRS = """
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

_ROLE_COUNTS = ",\n".join(f"count(*) FILTER (WHERE role = '{r}') AS {r}_messages" for r in ROLES)

_TOKEN_SUMS = """CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
        CAST(sum(total_tokens) AS BIGINT) AS total_tokens"""

# A UTC day as a number of days since 1970-01-01, from integer epoch arithmetic:
# converting a million TIMESTAMPTZ values with AT TIME ZONE costs several times
# more (ICU). Rows are grouped by the number; only the result rows become DATEs.
_DAY_NUMBER = "CAST(floor(epoch_us({col}) / 86400000000) AS BIGINT)"
_AS_DATE = "DATE '1970-01-01' + CAST({col} AS INTEGER)"




# Per thread and UTC day (day_n NULL: messages without ts): what `daily()` sums per
# tenant and `overview()` per scope. Also the body of the load-time `thread_day_metrics`.
# (`msgs`: the messages summed, a CTE or subquery of the `msgs` columns.)
def _thread_days(msgs: str = "msgs") -> str:
    return f"""SELECT {_DAY_NUMBER.format(col="ts")} AS day_n, thread_id, any_value(tenant_id) AS tenant_id,
               count(*) AS messages,
               {_ROLE_COUNTS.replace(chr(10), chr(10) + "               ")},
               CAST(coalesce(sum(tool_call_count), 0) AS BIGINT) AS tool_calls,
               {_TOKEN_SUMS},
               min(ts) AS first_ts, max(ts) AS last_ts
        FROM {msgs} GROUP BY 1, thread_id"""


# Per UTC day, thread and model (messages naming a model): what `by_model()` and the
# `models` count of `overview()` aggregate. Also the body of `thread_model_metrics`.
def _thread_models(msgs: str = "msgs") -> str:
    return f"""SELECT {_DAY_NUMBER.format(col="ts")} AS day_n, thread_id, any_value(tenant_id) AS tenant_id, model,
               count(*) AS messages,
               {_TOKEN_SUMS}
        FROM {msgs} WHERE model IS NOT NULL GROUP BY 1, thread_id, model"""


_THREAD_DAYS = _thread_days()
_THREAD_MODELS = _thread_models()

# Every tool call (one row per entry of `tool_calls`, at the calling message's ts) and every
# tool result (a tool message, named by the call it answers anywhere in its thread, else by
# its own name) of the scope's threads: what `top_tools` and `trends.tool_calls` count, a
# window then keeping the rows whose ts is in it. Also the body of `tool_rows`.
_TOOL_ROWS = """SELECT * FROM (
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
    scope_sql, params = _scope(filters, window=False)
    role_counts = _ROLE_COUNTS.replace("\n", "\n        ")
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
        {_TOKEN_SUMS},
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
    {_PAIRS},
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
              WHERE is_root AND on_current_branch AND ts IS NOT NULL AND {_in_scope(filters, 'c')}
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
def _fingerprint() -> str:
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
    write_derived_table(con, MATERIALIZED_TABLE, *conversations_sql(Filters(), DEFAULT_GAP_MINUTES), _fingerprint(), threads)


def _materialized(con) -> bool:
    """Whether `con`'s database holds a `conversation_metrics` table written by the current query."""
    return table_comments(con, [MATERIALIZED_TABLE]).get(MATERIALIZED_TABLE) == _fingerprint()


# --- message-level tables written at load time (analytics.derived) ----------------------
# The corpus trends' heavy parts are the same for every scope: the latency pairs
# (a join of every question with its reply) and per-thread sums over every message.
# A load writes them once (analytics.derived), from the live queries' own SQL:
# - `latency_pair_rows` = `latency_distribution_sql(Filters())`: a pair belongs to a
#   `Filters` exactly when its thread passes `thread_where` and its question's ts is in
#   the window (replies come from the whole thread either way), so every filter reads it;
# - `thread_day_metrics` (`_THREAD_DAYS`) and `thread_model_metrics` (`_THREAD_MODELS`):
#   per thread × UTC day (× model) sums. Thread conditions apply to their threads; a
#   window's whole UTC days are read (`ts` in the window is `day_n` in its days), and a
#   day it cuts into (a `since` after 00:00:00, an `until` before 23:59:59.999999) is
#   summed live from that day's messages in the window (`_aggregate_source`).
# Each table carries the fingerprint of its query, like `conversation_metrics`.

PAIRS_TABLE = LATENCY_PAIR_ROWS.name
THREAD_DAYS_TABLE = THREAD_DAY_METRICS.name
THREAD_MODELS_TABLE = THREAD_MODEL_METRICS.name
TOOL_ROWS_TABLE = TOOL_ROWS.name


def _aggregate_sql(body: str) -> tuple[str, list]:
    scope_sql, params = _scope(Filters(), window=True)
    return f"WITH {scope_sql}\n    {body}", params


@functools.cache
def _trend_tables() -> dict[str, tuple[str, list, str]]:
    """{table: (sql, params, fingerprint)} of the message-level tables."""
    out = {}
    for table, (sql, params) in (
        (PAIRS_TABLE, latency_distribution_sql(Filters())),
        (THREAD_DAYS_TABLE, _aggregate_sql(_THREAD_DAYS)),
        (THREAD_MODELS_TABLE, _aggregate_sql(_THREAD_MODELS)),
        (TOOL_ROWS_TABLE, _aggregate_sql(_TOOL_ROWS)),
    ):
        out[table] = (sql, params, query_fingerprint(table, sql, params))
    return out


def materialize_trends(con, threads: list[str] | None = None) -> None:
    """(Re)create `latency_pair_rows`, `thread_day_metrics`, `thread_model_metrics` and
    `tool_rows` (`threads`: only these threads' rows).

    Called at load time next to `materialize_conversations` (`analytics.derived`).
    """
    for table, (sql, params, fingerprint) in _trend_tables().items():
        write_derived_table(con, table, sql, params, fingerprint, threads)


def _current_trend_tables(con) -> frozenset[str]:
    """The message-level tables of `con`'s database written by the current queries."""
    tables = _trend_tables()
    return frozenset(name for name, comment in table_comments(con, list(tables)).items() if comment == tables[name][2])


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DAY = timedelta(days=1)


def _day_range(filters: Filters) -> tuple[int | None, int | None, bool]:
    """The UTC days wholly inside the window, as day numbers (first, last; None: that side is open),
    and whether the window also cuts into a day at either end (the app's date picker gives whole
    days: `since` at 00:00:00, `until` at 23:59:59.999999)."""
    lo = hi = None
    cut = False
    if filters.since is not None:
        n, rest = divmod(filters.since - _EPOCH, _DAY)
        lo, cut = (n + 1, True) if rest else (n, cut)
    if filters.until is not None:
        n, rest = divmod(filters.until - _EPOCH, _DAY)
        hi, cut = (n, cut) if rest == _DAY - timedelta(microseconds=1) else (n - 1, True)
    return lo, hi, cut


def _day_where(alias: str, lo: int | None, hi: int | None) -> str:
    """`alias.day_n` within the day numbers (ints computed above, never user text)."""
    clauses = []
    if lo is not None:
        clauses.append(f"{alias}.day_n >= {int(lo)}")
    if hi is not None:
        clauses.append(f"{alias}.day_n <= {int(hi)}")
    return " AND ".join(clauses) or "TRUE"


def _pairs_cte(filters: Filters, fast: frozenset[str]) -> str:
    """The `pairs` CTE(s): `latency_pair_rows` cut to `filters` when current, else `_PAIRS`.

    Needs the `scope` CTE; adds no parameter (window bounds are epoch-microsecond literals).
    """
    if PAIRS_TABLE not in fast:
        return _PAIRS
    clauses = [_in_scope(filters, "p", LATENCY_PAIR_ROWS.names)]
    if filters.since is not None:
        clauses.append(f"epoch_us(p.user_ts) >= {int((filters.since - _EPOCH) // timedelta(microseconds=1))}")
    if filters.until is not None:
        clauses.append(f"epoch_us(p.user_ts) <= {int((filters.until - _EPOCH) // timedelta(microseconds=1))}")
    return f"""
    pairs AS (SELECT * FROM {PAIRS_TABLE} p WHERE {" AND ".join(clauses)})"""


# No pair at all, typed like `pairs`: for callers that do not show latency (`latency=False`).
_NO_PAIRS = """
    pairs AS (SELECT NULL::VARCHAR AS thread_id, NULL::VARCHAR AS tenant_id, NULL::TIMESTAMPTZ AS user_ts,
                     NULL::DOUBLE AS latency_s, NULL::VARCHAR AS model WHERE FALSE)"""

_DAILY_LATENCY = ("latency_pairs", "latency_median_s")
_MODEL_LATENCY = ("latency_pairs", "latency_median_s", "latency_p90_s")


def tool_rows_cte(filters: Filters, fast: frozenset[str]) -> tuple[str, list]:
    """The `tool_rows` CTE (`_TOOL_ROWS`'s columns) for `filters`, window included: `tool_rows`
    cut to the scope when current, else the live query. Needs the `scope` and `thread_msgs` CTEs.

    A result is named from its whole thread and a window keeps rows by their own ts, so the
    table answers every window (parsing every call's JSON and joining every result to its
    call took ~1.2 s of the Overview at 10M messages).
    """
    window, params = filters.window_where("r.ts")
    source = (
        f"{TOOL_ROWS_TABLE} r WHERE {_in_scope(filters, 'r', TOOL_ROWS.names)}" if TOOL_ROWS_TABLE in fast
        else f"({_TOOL_ROWS}) r WHERE TRUE"
    )
    return f"""
    tool_rows AS (SELECT r.* FROM {source} AND {window})""", params


#: The live query of each per-day table, over the messages it is given.
_PER_DAY_BODIES = {THREAD_DAYS_TABLE: _thread_days, THREAD_MODELS_TABLE: _thread_models}


def _aggregate_source(table: str, filters: Filters, fast: frozenset[str]) -> str:
    """A subquery giving the rows of `table`'s query (`_THREAD_DAYS`, `_THREAD_MODELS`) for `filters`:
    the table's rows of the days wholly in the window, and, when the window cuts into a day at
    either end, that day's rows computed live from its messages in the window. Each row sums one
    thread's messages of one day, so the two parts are exactly the live query's rows. Without a
    current table, the live query. Needs the `_scope` CTEs (window cut included).
    """
    body = _PER_DAY_BODIES[table]
    if table not in fast:
        return body()
    lo, hi, cut = _day_range(filters)
    in_scope = _in_scope(filters, "d", _DERIVED_COLUMNS[table])
    whole = f"SELECT * FROM {table} d WHERE {in_scope} AND {_day_where('d', lo, hi)}"
    if not cut:
        return whole
    # The messages of the window outside its whole days: those of the day `since` or `until` cuts
    # (the bounds are day numbers computed here; a window within one day has no whole day).
    day_us = 86_400_000_000
    inside = [f"epoch_us(m.ts) >= {int(lo) * day_us}" if lo is not None else "TRUE",
              f"epoch_us(m.ts) < {(int(hi) + 1) * day_us}" if hi is not None else "TRUE"]  # fmt: skip
    edges = f"(SELECT * FROM msgs m WHERE NOT ({' AND '.join(inside)}))"
    return f"{whole}\n        UNION ALL\n        {body(edges)}"


def conversations_query(
    con, filters: Filters = Filters(), gap_minutes: float = DEFAULT_GAP_MINUTES
) -> tuple[str, list]:
    """What `conversations()` runs on `con`: `(sql, params)`, columns in `CONVERSATION_COLUMNS` order.

    A read of `conversation_metrics` when the database has a current one and
    `gap_minutes` is the default; otherwise `conversations_sql(filters, gap_minutes)`.
    Same rows, column types and order either way.
    """
    if gap_us(gap_minutes) != gap_us(DEFAULT_GAP_MINUTES) or not _materialized(con):
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
            sql = f"SELECT {_columns(columns, CONVERSATION_COLUMNS)} FROM ({sql}) ORDER BY thread_id"
        return fetch_frame(con, sql, params)


# --- the conversations list: any sort, pages, a preview (the page and the CSV report) --------

#: A conversation's list row: `CONVERSATION_COLUMNS` and a preview of its first user message.
PREVIEW_COLUMN = "first_user_message"
LIST_COLUMNS = (*CONVERSATION_COLUMNS, PREVIEW_COLUMN)
#: Characters of the preview (whitespace runs folded to one space; a cut one ends in "…").
PREVIEW_CHARS = 160
#: Columns the list sorts by: every metric column, and the preview (computed for every listed
#: thread first when it is the sort, else only for the rows of the page).
SORT_COLUMNS = (*CONVERSATION_COLUMNS, PREVIEW_COLUMN)
#: Columns a range filter applies to (`analytics.filters.Range`; `analytics.scope.ThreadConditions`).
RANGE_COLUMNS = (
    "messages", "user_turns", "duration_s", "input_tokens", "output_tokens", "total_tokens",
    "tool_calls", "tool_errors", "latency_median_s", "latency_p90_s",
)  # fmt: skip
DEFAULT_SORT = "last_ts"

_PREVIEW = f"""
        SELECT thread_id, CASE WHEN length(text) > {PREVIEW_CHARS} THEN left(text, {PREVIEW_CHARS - 1}) || '…'
                               ELSE text END AS {PREVIEW_COLUMN}
        FROM (SELECT thread_id,
                     trim(regexp_replace(arg_min(left(content, {4 * PREVIEW_CHARS}), ordinal), '\\s+', ' ', 'g'))
                       AS text
              FROM messages
              WHERE role = 'user' AND content_chars > 0 AND {{listed_only}}
              GROUP BY thread_id)"""


def _unordered_conversations(con, filters: Filters, gap_minutes: float, live: bool) -> tuple[str, list]:
    """`conversations_query` (or, `live`, `conversations_sql`) without its final thread-id ORDER BY:
    a list sorts by its own column, and a sort of 176k thread ids first costs ~0.2 s for nothing."""
    sql, params = conversations_sql(filters, gap_minutes) if live else conversations_query(con, filters, gap_minutes)
    for order in (" ORDER BY cm.thread_id", "\n    ORDER BY t.thread_id"):
        if sql.endswith(order):
            return sql.removesuffix(order), params
    raise AssertionError("conversations query without its thread-id order")  # the two queries above changed


def sort_column(sort: str) -> str:
    """`sort` when it names a `SORT_COLUMNS` column (the constant's own string), else `BadRequest`.

    >>> sort_column("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    analytics.errors.BadRequest: cannot sort by 'nope'; sort columns: thread_id, ...
    """
    if sort not in SORT_COLUMNS:
        raise BadRequest(f"cannot sort by {sort!r}; sort columns: {', '.join(SORT_COLUMNS)}")
    return SORT_COLUMNS[SORT_COLUMNS.index(sort)]


def list_order(alias: str, sort: str, descending: bool) -> str:
    """The conversation list's ORDER BY over rows aliased `alias`.

    >>> list_order("l", "duration_s", True)
    'l.duration_s DESC NULLS LAST, l.thread_id'
    """
    # NULLs last either way (a thread without latency is not the fastest one); ties by thread id.
    column = sort_column(sort)
    direction = "DESC" if descending else "ASC"
    tie = "" if column == "thread_id" else f", {alias}.thread_id"
    return f"{alias}.{column} {direction} NULLS LAST{tie}"


def conversation_list_sql(
    con,
    filters: Filters = Filters(),
    sort: str = DEFAULT_SORT,
    descending: bool = True,
    limit: int | None = None,
    offset: int = 0,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    live: bool = False,
) -> tuple[str, list]:
    """Rows of `conversations()` in `LIST_COLUMNS`, sorted by `sort` over every matching
    thread (ties by thread_id, NULLs last), then `offset`/`limit` (a page): `(sql, params)`.
    `live`: from `conversations_sql` even when the load-time table could answer.

    >>> sql, params = conversation_list_sql(con, sort="duration_s", limit=50, offset=100)  # doctest: +SKIP
    """
    base, params = _unordered_conversations(con, filters, gap_minutes, live)
    page = ""
    if limit is not None:
        page = " LIMIT ? OFFSET ?"
        params = [*params, check_limit(limit), check_offset(offset)]
    elif offset:
        page = " OFFSET ?"
        params = [*params, check_offset(offset)]
    if sort_column(sort) == PREVIEW_COLUMN:
        # The preview is the key: made for every listed thread, then sorted and cut.
        listed_only = "thread_id IN (SELECT thread_id FROM listed)" if _scoped(filters) else "TRUE"
        sql = f"""
    WITH listed AS ({base}),
    preview AS ({_PREVIEW.format(listed_only=listed_only)})
    SELECT {", ".join(f"l.{c}" for c in CONVERSATION_COLUMNS)}, p.{PREVIEW_COLUMN}
    FROM listed l LEFT JOIN preview p USING (thread_id)
    ORDER BY p.{PREVIEW_COLUMN} {"DESC" if descending else "ASC"} NULLS LAST, l.thread_id{page}"""
        return sql, params
    # A page: sort, cut, then previews of its rows only. Every row of every thread (the whole
    # CSV): previews in one pass over the user messages and one sort at the end (sorting
    # before and after held the rows twice: 500 MB against 430 MB for 176k threads).
    page_order = f" ORDER BY {list_order('c', sort, descending)}{page}" if page else ""
    narrow = bool(page) or _scoped(filters)
    listed_only = "thread_id IN (SELECT thread_id FROM listed)" if narrow else "TRUE"
    sql = f"""
    WITH listed AS {"MATERIALIZED" if narrow else "NOT MATERIALIZED"} (SELECT * FROM ({base}) c{page_order}),
    preview AS ({_PREVIEW.format(listed_only=listed_only)})
    SELECT {", ".join(f"l.{c}" for c in CONVERSATION_COLUMNS)}, p.{PREVIEW_COLUMN}
    FROM listed l LEFT JOIN preview p USING (thread_id)
    ORDER BY {list_order("l", sort, descending)}"""
    return sql, params


def conversation_count_sql(con, filters: Filters = Filters()) -> tuple[str, list]:
    """How many rows `conversation_list_sql(con, filters)` has, before any page."""
    base, params = _unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT count(*) AS threads FROM ({base})", params


def conversation_ids_sql(
    con, filters: Filters = Filters(), sort: str = DEFAULT_SORT, descending: bool = True
) -> tuple[str, list]:
    """The thread ids of `conversation_list_sql(con, filters, sort, descending)`, in its order
    (column thread_id; no metrics shipped, no previews computed): a review queue's threads."""
    base, params = _unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT c.thread_id FROM ({base}) c ORDER BY {list_order('c', sort, descending)}", params


def turns_histogram_sql(con, filters: Filters = Filters()) -> tuple[str, list]:
    """Threads per number of user turns (columns user_turns, threads) over the same rows."""
    base, params = _unordered_conversations(con, filters, DEFAULT_GAP_MINUTES, live=False)
    return f"SELECT user_turns, count(*) AS threads FROM ({base}) GROUP BY user_turns ORDER BY user_turns", params


def conversation_list(con_or_path: ConOrPath, filters: Filters = Filters(), **options) -> pd.DataFrame:
    """`conversation_list_sql` as a frame (`options`: its sort, descending, limit, offset, gap_minutes).

    >>> conversation_list("demo.duckdb", sort="duration_s", limit=10)["thread_id"]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *conversation_list_sql(con, filters, **options))


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
        return fetch_frame(con, *latency_distribution_sql(filters, _current_trend_tables(con), columns))


_PAIR_COLUMNS = LATENCY_PAIR_ROWS.names


def _columns(columns: tuple[str, ...], known: tuple[str, ...]) -> str:
    unknown = [c for c in columns if c not in known]
    if unknown or not columns:
        raise BadRequest(f"columns must be some of {known}, got {columns!r}")
    return ", ".join(columns)  # names checked against the constants above


def latency_distribution_sql(
    filters: Filters = Filters(), fast: frozenset[str] = frozenset(), columns: tuple[str, ...] | None = None
) -> tuple[str, list]:
    """The query behind `latency_distribution()`; the live one unless `PAIRS_TABLE` is in `fast`."""
    scope_sql, params = _scope(filters, window=True)
    sql = f"""
    WITH {scope_sql},
    {_pairs_cte(filters, fast)}"""
    if columns is not None:
        return sql + f"\n    SELECT {_columns(columns, _PAIR_COLUMNS)} FROM pairs", params
    sql += f"""
    SELECT {", ".join(_PAIR_COLUMNS)}
    FROM pairs ORDER BY thread_id, user_ordinal"""
    return sql, params


def daily_sql(filters: Filters = Filters(), fast: frozenset[str] = frozenset(), latency: bool = True) -> tuple[str, list]:
    """The query behind `daily()`: `(sql, params)`, columns in `DAILY_COLUMNS` order.

    The per-thread-day and pair rows come from the load-time tables named in `fast`
    (`_current_trend_tables(con)`) where they can answer `filters`; else the live query.
    The threads started per day come from `conversation_metrics` when `fast` names it.

    >>> daily_sql()[1]
    []
    """
    scope_sql, params = _scope(filters, window=True)
    started_sql, started_params = filters.window_where("first_ts")
    started_from, from_params = "scope", []
    if MATERIALIZED_TABLE in fast:
        # A thread's first checkpoint ts and tenant are columns of its `conversation_metrics` row, which
        # the conditions select with no join (`metrics_where`): the scope's threads are not copied into
        # the `scope` CTE for this (0.17 s of CPU for the 1.25M threads of `min_turns=2` at 10M messages).
        where, from_params = filters.metrics_where("cm")
        first_ts = THREAD_COLUMNS_IN_METRICS["first_ts"]
        started_from = f"(SELECT cm.{first_ts} AS first_ts, cm.tenant_id FROM {MATERIALIZED_TABLE} cm WHERE {where})"
    thread_days = _aggregate_source(THREAD_DAYS_TABLE, filters, fast)
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
        SELECT {_DAY_NUMBER.format(col="first_ts")} AS day_n, tenant_id, count(*) AS conversations_started
        FROM {started_from} WHERE first_ts IS NOT NULL AND {started_sql} GROUP BY ALL),
    {_pairs_cte(filters, fast) if latency else _NO_PAIRS},
    latency AS (
        SELECT {_DAY_NUMBER.format(col="user_ts")} AS day_n, tenant_id,
               count(*) AS latency_pairs, quantile_cont(latency_s, 0.5) AS latency_median_s
        FROM pairs GROUP BY ALL),
    days AS (SELECT day_n, tenant_id FROM activity UNION SELECT day_n, tenant_id FROM started)
    SELECT {_AS_DATE.format(col="d.day_n")} AS day, d.tenant_id,
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
        fast = _current_trend_tables(con) | ({MATERIALIZED_TABLE} if _materialized(con) else set())
        frame = fetch_frame(con, *daily_sql(filters, fast, latency))
    return frame if latency else frame.drop(columns=list(_DAILY_LATENCY))


def _by_model_sql(
    filters: Filters, limit: int | None, fast: frozenset[str] = frozenset(), latency: bool = True,
    conversations: bool = True,
) -> tuple[str, list]:
    scope_sql, params = _scope(filters, window=True)
    thread_models = _aggregate_source(THREAD_MODELS_TABLE, filters, fast)
    # The distinct threads of each model: most of the query's work at 10M messages (~0.2 s of CPU).
    threads = "count(DISTINCT thread_id)" if conversations else "NULL::BIGINT"
    sql = f"""
    WITH {scope_sql},
    thread_models AS ({thread_models}),
    per_model AS (
        SELECT model, CAST(sum(messages) AS BIGINT) AS messages, {threads} AS conversations,
               {_TOKEN_SUMS}
        FROM thread_models GROUP BY model),
    {_pairs_cte(filters, fast) if latency else _NO_PAIRS},
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
        frame = fetch_frame(con, *_by_model_sql(filters, None, _current_trend_tables(con), latency, conversations))
    dropped = [*([] if latency else _MODEL_LATENCY), *([] if conversations else ["conversations"])]
    return frame.drop(columns=dropped) if dropped else frame


def top_models(con_or_path: ConOrPath, filters: Filters = Filters(), limit: int = 10) -> pd.DataFrame:
    """The first `limit` rows of `by_model()`.

    >>> top_models("demo.duckdb", limit=3)["model"].tolist()  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *_by_model_sql(filters, limit, _current_trend_tables(con)))


def top_tools(con_or_path: ConOrPath, filters: Filters = Filters(), limit: int = 10) -> pd.DataFrame:
    """Most-called tools: tool, calls, conversations, results (tool messages
    answering it), errors (those with tool_status 'error'); most calls first.

    >>> top_tools("demo.duckdb", limit=5)  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *top_tools_sql(filters, limit, _current_trend_tables(con)))


def top_tools_sql(filters: Filters = Filters(), limit: int = 10, fast: frozenset[str] = frozenset()) -> tuple[str, list]:
    """The query behind `top_tools()` (`fast`: the current load-time tables it may read)."""
    scope_sql, params = _scope(filters, window=True)
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
    scope_sql, params = _scope(filters, window=True)
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
        sql, params = overview_sql(filters, _current_trend_tables(con))
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        (row,) = cur.fetchall()
    return Overview(**dict(zip(names, row)))


def overview_sql(filters: Filters = Filters(), fast: frozenset[str] = frozenset()) -> tuple[str, list]:
    """The query behind `overview()`; the load-time tables named in `fast` answer where they can."""
    scope_sql, params = _scope(filters, window=True)
    if THREAD_DAYS_TABLE in fast and THREAD_MODELS_TABLE in fast:
        days = _aggregate_source(THREAD_DAYS_TABLE, filters, fast)
        models = _aggregate_source(THREAD_MODELS_TABLE, filters, fast)
        totals = f"""
    totals AS (
        -- Sums of the per-thread-day sums: the same figures as over the messages (NULL stays NULL).
        SELECT CAST(coalesce(sum(messages), 0) AS BIGINT) AS messages,
               CAST(coalesce(sum(user_messages), 0) AS BIGINT) AS user_turns,
               CAST(coalesce(sum(assistant_messages), 0) AS BIGINT) AS assistant_messages,
               CAST(coalesce(sum(tool_calls), 0) AS BIGINT) AS tool_calls,
               {_TOKEN_SUMS},
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
               {_TOKEN_SUMS},
               count(DISTINCT model) AS models,
               min(ts) AS first_ts,
               max(ts) AS last_ts
        FROM msgs)"""
    sql = f"""
    WITH {scope_sql},
    {_pairs_cte(filters, fast)},{totals},
    latency AS (SELECT count(*) AS latency_pairs, quantile_cont(latency_s, 0.5) AS latency_median_s FROM pairs)
    SELECT (SELECT count(*) FROM scope) AS threads,
           (SELECT count(DISTINCT tenant_id) FROM scope) AS tenants,
           totals.*, latency.*,
           (SELECT count(*) FROM scope WHERE stale_reason IS NOT NULL) AS stale_threads
    FROM totals, latency"""
    return sql, params
