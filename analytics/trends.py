"""Trends over time: per day, ISO week or month (UTC), optionally split by model, tool or tenant.

Every figure is defined in docs/metrics.md ("Trends over time"). Each query is
a `(sql, params)` builder over the same scope CTEs as `analytics.metrics`, and
reads the load-time tables (`thread_day_metrics`, `thread_model_metrics`,
`latency_pair_rows`) where they can answer, like `metrics.daily()`:

- `trends_sql`: one row per period (× split value): conversations, messages by
  role, tool calls, tokens, reply latency p50/p90, tool errors, interrupts (the
  `trends` CSV report);
- `model_mix_sql`: per period × model: messages and tokens;
- `tool_calls_sql`: per period × tool: calls and error results.

>>> trends("demo.duckdb", by="week")[["period", "conversations", "reply_latency_p50_s"]].head(2)  # doctest: +SKIP
       period  conversations  reply_latency_p50_s
0  2025-03-03             12                  1.5
1  2025-03-10              9                  2.0
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from analytics import metrics
from analytics import _pandas as pd
from analytics.catalog import ROLES
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import fetch_frame

BUCKETS = ("day", "week", "month")
#: --split value → the split column's name.
SPLITS = {"model": "model", "tool": "tool", "tenant": "tenant_id"}

#: Columns of `trends()` / the `trends` report; with a split, its column comes right after `period`.
TREND_COLUMNS = (
    "period",
    "conversations",
    "messages",
    "user_messages",
    "assistant_messages",
    "tool_messages",
    "system_messages",
    "other_messages",
    "tool_calls",
    "tool_errors",
    "interrupts",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "latency_pairs",
    "reply_latency_p50_s",
    "reply_latency_p90_s",
)
MODEL_MIX_COLUMNS = ("period", "model", "messages", "input_tokens", "output_tokens")
TOOL_CALL_COLUMNS = ("period", "tool", "calls", "errors")

# A bucket's start as a DATE, from a UTC day number (days since 1970-01-01, a
# Thursday): grouping by integers is cheap; only result rows become dates.
_PERIOD_OF_DAY = {
    "day": "(DATE '1970-01-01' + CAST({n} AS INTEGER))",
    # ISO weeks start on Monday: 1970-01-01 is 3 days after one (floor modulo for days before 1970).
    "week": "(DATE '1970-01-01' + CAST({n} - ((({n}) + 3) % 7 + 7) % 7 AS INTEGER))",
    "month": "CAST(date_trunc('month', DATE '1970-01-01' + CAST({n} AS INTEGER)) AS DATE)",
}


def _period(by: str, day_n: str) -> str:
    if by not in BUCKETS:
        raise BadRequest(f"by must be one of {', '.join(BUCKETS)}, got {by!r}")
    return _PERIOD_OF_DAY[by].format(n=day_n)


def _split_column(split: str | None) -> str | None:
    if split is None:
        return None
    if split not in SPLITS:
        raise BadRequest(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    return SPLITS[split]


def columns(split: str | None = None) -> tuple[str, ...]:
    """The columns of `trends(…, split=split)`.

    >>> columns("model")[:3]
    ('period', 'model', 'conversations')
    """
    col = _split_column(split)
    return TREND_COLUMNS if col is None else (TREND_COLUMNS[0], col, *TREND_COLUMNS[1:])


def _as_date(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def default_bucket(first: date | datetime | None, last: date | datetime | None) -> str:
    """The bucket for a date range: days up to two months, ISO weeks up to a year, months beyond.

    >>> default_bucket(date(2025, 1, 1), date(2025, 6, 30))
    'week'
    """
    if first is None or last is None:
        return "day"
    span = _as_date(last) - _as_date(first)
    if span <= timedelta(days=62):
        return "day"
    return "week" if span <= timedelta(days=366) else "month"


_DAY_N = metrics.DAY_NUMBER
_ROLE_SUMS = ", ".join(f"CAST(coalesce(sum({r}_messages), 0) AS BIGINT) AS {r}_messages" for r in ROLES)
_MESSAGE_ROLES = ", ".join(f"count(*) FILTER (WHERE role = '{r}') AS {r}_messages" for r in ROLES)
_ZERO_ROLES = ", ".join(f"0 AS {r}_messages" for r in ROLES)

# Every call of the scope's threads, parsed once, with whether its message is in the window
# (a result in the window may answer a call made before it): names the tool a result answers.
_CALL_ROWS = """
    call_rows AS MATERIALIZED (
        SELECT thread_id, tenant_id, {day_n} AS day_n, ({window}) IS TRUE AS in_window,
               unnest(json_extract_string(tool_calls, '$[*].id')) AS call_id,
               unnest(json_extract_string(tool_calls, '$[*].name')) AS tool
        FROM thread_msgs m WHERE tool_call_count > 0),
    call_names AS (
        SELECT thread_id, call_id, min(tool) AS tool FROM call_rows WHERE call_id IS NOT NULL GROUP BY ALL),
    results AS (
        -- A result is named by the call it answers; its own `name` is the fallback (as in top_tools).
        SELECT m.thread_id, m.ordinal, coalesce(c.tool, m.name) AS tool
        FROM msgs m LEFT JOIN call_names c ON c.thread_id = m.thread_id AND c.call_id = m.tool_call_id
        WHERE m.role = 'tool')"""


def _units(filters: Filters, split: str | None, fast: frozenset[str]) -> tuple[str, bool]:
    """The `units` CTE body: rows (day_n, thread_id, split, messages, role counts, tool_calls,
    tool_errors, tokens) that sum to the figures; and whether it needs `_CALL_ROWS`."""
    tokens = metrics.TOKEN_SUMS
    errors = f"""
        SELECT {_DAY_N.format(col="ts")} AS day_n, thread_id, {{split}} AS split, 0 AS messages, {_ZERO_ROLES},
               0 AS tool_calls, count(*) AS tool_errors, NULL::BIGINT AS input_tokens, NULL::BIGINT AS output_tokens,
               NULL::BIGINT AS total_tokens
        FROM msgs m WHERE role = 'tool' AND tool_status = 'error' GROUP BY ALL"""
    if split in (None, "tenant"):
        # Per thread × day sums (the load-time table when it answers `filters`) plus the error rows.
        days = metrics.aggregate_source(metrics.THREAD_DAYS_TABLE, filters, fast)
        key = "tenant_id" if split else "NULL::VARCHAR"
        return f"""
        SELECT day_n, thread_id, {key} AS split, messages, {", ".join(f"{r}_messages" for r in ROLES)},
               tool_calls, 0 AS tool_errors, input_tokens, output_tokens, total_tokens
        FROM ({days}) d
        UNION ALL {errors.format(split=key)}""", False
    if split == "model":
        return f"""
        SELECT {_DAY_N.format(col="ts")} AS day_n, thread_id, model AS split, count(*) AS messages, {_MESSAGE_ROLES},
               CAST(coalesce(sum(tool_call_count), 0) AS BIGINT) AS tool_calls,
               count(*) FILTER (WHERE role = 'tool' AND tool_status = 'error') AS tool_errors, {tokens}
        FROM msgs GROUP BY ALL""", False
    # split == "tool": a tool message counts for the tool it answers, a call for its tool;
    # every other message (and every token) has no tool.
    return f"""
        SELECT {_DAY_N.format(col="m.ts")} AS day_n, m.thread_id, r.tool AS split, count(*) AS messages,
               {_MESSAGE_ROLES.replace("role", "m.role")}, 0 AS tool_calls,
               count(*) FILTER (WHERE m.role = 'tool' AND m.tool_status = 'error') AS tool_errors,
               {tokens.replace("sum(", "sum(m.")}
        FROM msgs m LEFT JOIN results r ON r.thread_id = m.thread_id AND r.ordinal = m.ordinal
        GROUP BY ALL
        UNION ALL
        SELECT day_n, thread_id, tool AS split, 0 AS messages, {_ZERO_ROLES}, count(*) AS tool_calls,
               0 AS tool_errors, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT
        FROM call_rows WHERE in_window GROUP BY ALL""", True


def _threads_of(by: str, split: str | None) -> str:
    """The `threads_of` CTE body: (period, split, conversations) over `dated`."""
    if by == "day" and split in (None, "tenant"):
        # A period is one day and the split a function of the thread: each thread has one per-day row
        # in it (the error rows, with no message, repeat one), so its rows count its threads with no
        # distinct pairs hashed (0.2 s of CPU at 10M messages).
        return "SELECT period, split, count(*) FILTER (WHERE messages > 0) AS conversations FROM dated GROUP BY ALL"
    return ("SELECT period, split, count(*) AS conversations "
            "FROM (SELECT DISTINCT period, split, thread_id FROM dated) GROUP BY ALL")


def trends_sql(
    filters: Filters = Filters(), by: str = "day", split: str | None = None, fast: frozenset[str] = frozenset()
) -> tuple[str, list]:
    """The query behind `trends()`: columns `columns(split)`, by period then split value (NULL last).

    >>> trends_sql(by="week")[1]
    []
    """
    split_col = _split_column(split)
    period = _period(by, "day_n")
    scope_sql, params = metrics.scope_clause(filters, window=True)
    units, needs_calls = _units(filters, split, fast)
    window_sql, window_params = filters.window_where("m.ts")
    calls = ""
    if needs_calls:
        calls = "," + _CALL_ROWS.format(day_n=_DAY_N.format(col="ts"), window=window_sql)
        params = params + window_params
    pair_split = {None: "NULL::VARCHAR", "tenant": "tenant_id", "model": "model", "tool": "NULL::VARCHAR"}[split]
    ck_window, ck_params = filters.window_where("c.ts")
    interrupt_split = "s.tenant_id" if split == "tenant" else "NULL::VARCHAR"
    # Every checkpoint's thread is a `threads` row: the scope is joined only for its tenant, else it
    # is a semi-join when it narrows (joining all 1.76M threads took 0.7 s of CPU at 10M messages).
    interrupt_from = (
        "checkpoints c JOIN scope s USING (thread_id) WHERE TRUE" if split == "tenant"
        else f"checkpoints c WHERE {metrics.in_scope(filters, 'c')}"
    )
    sql = f"""
    WITH {scope_sql}{calls},
    units AS ({units}),
    dated AS (SELECT {period} AS period, * EXCLUDE (day_n) FROM units WHERE day_n IS NOT NULL),
    threads_of AS (
        -- The threads of each period: distinct (period, split, thread) pairs with no sum beside them.
        -- Summing per thread first (to count its rows) grouped ~1.9M thread-day rows with ten sums:
        -- 1.0-1.5 s at 10M messages; the sums need only the few (period, split) groups.
        {_threads_of(by, split)}),
    sums AS (
        SELECT period, split, CAST(sum(messages) AS BIGINT) AS messages, {_ROLE_SUMS},
               CAST(sum(tool_calls) AS BIGINT) AS tool_calls, CAST(sum(tool_errors) AS BIGINT) AS tool_errors,
               CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
               CAST(sum(total_tokens) AS BIGINT) AS total_tokens
        FROM dated GROUP BY ALL),
    activity AS (
        SELECT s.period, s.split, c.conversations, s.* EXCLUDE (period, split)
        FROM sums s JOIN threads_of c ON c.period = s.period AND c.split IS NOT DISTINCT FROM s.split),
    {metrics.pairs_cte(filters, fast)},
    latency AS (
        SELECT {_period(by, _DAY_N.format(col="user_ts"))} AS period, {pair_split} AS split,
               count(*) AS latency_pairs, quantile_cont(latency_s, [0.5, 0.9]) AS q
        FROM pairs GROUP BY ALL),
    interrupts AS (
        -- Root checkpoints carrying an __interrupt__ write, by their own ts.
        SELECT {_period(by, _DAY_N.format(col="c.ts"))} AS period, {interrupt_split} AS split,
               count(*) AS interrupts
        FROM {interrupt_from} AND c.is_root AND c.has_interrupt AND c.ts IS NOT NULL AND {ck_window}
        GROUP BY ALL),
    keys AS (SELECT period, split FROM activity UNION SELECT period, split FROM latency
             UNION SELECT period, split FROM interrupts)
    SELECT k.period,{f" k.split AS {split_col}," if split_col else ""}
           coalesce(a.conversations, 0) AS conversations,
           coalesce(a.messages, 0) AS messages,
           {", ".join(f"coalesce(a.{r}_messages, 0) AS {r}_messages" for r in ROLES)},
           coalesce(a.tool_calls, 0) AS tool_calls,
           coalesce(a.tool_errors, 0) AS tool_errors,
           coalesce(i.interrupts, 0) AS interrupts,
           a.input_tokens, a.output_tokens, a.total_tokens,
           coalesce(l.latency_pairs, 0) AS latency_pairs,
           -- Pair latencies are whole microseconds: rounding there drops float noise, not information.
           round(l.q[1], 6) AS reply_latency_p50_s, round(l.q[2], 6) AS reply_latency_p90_s
    FROM keys k
    LEFT JOIN activity a ON a.period = k.period AND a.split IS NOT DISTINCT FROM k.split
    LEFT JOIN latency l ON l.period = k.period AND l.split IS NOT DISTINCT FROM k.split
    LEFT JOIN interrupts i ON i.period = k.period AND i.split IS NOT DISTINCT FROM k.split
    ORDER BY k.period, k.split NULLS LAST"""
    return sql, params + ck_params


def model_mix_sql(
    filters: Filters = Filters(), by: str = "day", fast: frozenset[str] = frozenset()
) -> tuple[str, list]:
    """Per period × model (messages naming one): messages, input/output tokens; by period, most messages first."""
    period = _period(by, "day_n")
    scope_sql, params = metrics.scope_clause(filters, window=True)
    source = metrics.aggregate_source(metrics.THREAD_MODELS_TABLE, filters, fast)
    sql = f"""
    WITH {scope_sql}
    SELECT {period} AS period, model, CAST(sum(messages) AS BIGINT) AS messages,
           CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens
    FROM ({source}) d WHERE day_n IS NOT NULL
    GROUP BY ALL ORDER BY period, messages DESC, model"""
    return sql, params


def tool_calls_sql(
    filters: Filters = Filters(), by: str = "day", fast: frozenset[str] = frozenset()
) -> tuple[str, list]:
    """Per period × tool: calls (by the calling message's ts) and errors (error results, by their ts);
    from the load-time `tool_rows` when current (`fast`)."""
    scope_sql, params = metrics.scope_clause(filters, window=True)
    rows_sql, rows_params = metrics.tool_rows_cte(filters, fast)
    period = _period(by, _DAY_N.format(col="ts"))
    sql = f"""
    WITH {scope_sql},{rows_sql},
    called AS (
        SELECT {period} AS period, tool, count(*) AS calls
        FROM tool_rows WHERE kind = 'call' AND ts IS NOT NULL AND tool IS NOT NULL GROUP BY ALL),
    failed AS (
        SELECT {period} AS period, tool, count(*) AS errors
        FROM tool_rows WHERE kind = 'result' AND error AND ts IS NOT NULL AND tool IS NOT NULL GROUP BY ALL)
    SELECT coalesce(c.period, f.period) AS period, coalesce(c.tool, f.tool) AS tool,
           coalesce(c.calls, 0) AS calls, coalesce(f.errors, 0) AS errors
    FROM called c FULL JOIN failed f ON c.period = f.period AND c.tool = f.tool
    ORDER BY period, calls DESC, tool"""
    return sql, params + rows_params


def trends(
    con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "day", split: str | None = None
) -> pd.DataFrame:
    """One row per period (× `split` value): columns `columns(split)`; `period` is the bucket's first UTC day.

    >>> trends("demo.duckdb", by="month", split="tenant")[["period", "tenant_id", "messages"]]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *trends_sql(filters, by, split, metrics.current_trend_tables(con)))


def model_mix(con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "day") -> pd.DataFrame:
    """`model_mix_sql`'s rows: period, model, messages, input_tokens, output_tokens."""
    with connection(con_or_path) as con:
        return fetch_frame(con, *model_mix_sql(filters, by, metrics.current_trend_tables(con)))


def tool_calls(con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "day") -> pd.DataFrame:
    """`tool_calls_sql`'s rows: period, tool, calls, errors."""
    with connection(con_or_path) as con:
        return fetch_frame(con, *tool_calls_sql(filters, by, metrics.current_trend_tables(con)))
