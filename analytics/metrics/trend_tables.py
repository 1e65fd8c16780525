"""The load-time trend tables: latency pairs, per thread x day and x model sums, tool rows.
`analytics.derived` writes them at load; a reader finding another query's fingerprint runs the
live query instead (`current_trend_tables`).

>>> materialize_trends(con)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from datetime import timedelta

from analytics.catalog import LATENCY_PAIR_ROWS, THREAD_DAY_METRICS, THREAD_MODEL_METRICS, TOOL_ROWS
from analytics.db import query_fingerprint, table_comments, write_derived_table
from analytics.filters import Filters
from analytics.metrics.per_conversation import PAIRS_SQL, ROLE_COUNTS, TOKEN_SUMS, TOOL_ROWS_SQL
from analytics.metrics.scope import (
    DAY_NUMBER, DERIVED_COLUMNS, EPOCH, column_list, day_range, day_where, in_scope, scope_clause,
)


# Per thread and UTC day (day_n NULL: messages without ts): what `daily()` sums per
# tenant and `overview()` per scope. Also the body of the load-time `thread_day_metrics`.
# (`msgs`: the messages summed, a CTE or subquery of the `msgs` columns.)
def thread_days_sql(msgs: str = "msgs") -> str:
    return f"""SELECT {DAY_NUMBER.format(col="ts")} AS day_n, thread_id, any_value(tenant_id) AS tenant_id,
               count(*) AS messages,
               {ROLE_COUNTS.replace(chr(10), chr(10) + "               ")},
               CAST(coalesce(sum(tool_call_count), 0) AS BIGINT) AS tool_calls,
               {TOKEN_SUMS},
               min(ts) AS first_ts, max(ts) AS last_ts
        FROM {msgs} GROUP BY 1, thread_id"""


# Per UTC day, thread and model (messages naming a model): what `by_model()` and the
# `models` count of `overview()` aggregate. Also the body of `thread_model_metrics`.
def thread_models_sql(msgs: str = "msgs") -> str:
    return f"""SELECT {DAY_NUMBER.format(col="ts")} AS day_n, thread_id, any_value(tenant_id) AS tenant_id, model,
               count(*) AS messages,
               {TOKEN_SUMS}
        FROM {msgs} WHERE model IS NOT NULL GROUP BY 1, thread_id, model"""


THREAD_DAYS_SQL = thread_days_sql()
THREAD_MODELS_SQL = thread_models_sql()


# --- message-level tables written at load time (analytics.derived) ----------------------
# The corpus trends' heavy parts are the same for every scope: the latency pairs
# (a join of every question with its reply) and per-thread sums over every message.
# A load writes them once (analytics.derived), from the live queries' own SQL:
# - `latency_pair_rows` = `latency_distribution_sql(Filters())`: a pair belongs to a
#   `Filters` exactly when its thread passes `thread_where` and its question's ts is in
#   the window (replies come from the whole thread either way), so every filter reads it;
# - `thread_day_metrics` (`THREAD_DAYS_SQL`) and `thread_model_metrics` (`THREAD_MODELS_SQL`):
#   per thread × UTC day (× model) sums. Thread conditions apply to their threads; a
#   window's whole UTC days are read (`ts` in the window is `day_n` in its days), and a
#   day it cuts into (a `since` after 00:00:00, an `until` before 23:59:59.999999) is
#   summed live from that day's messages in the window (`aggregate_source`).
# Each table carries the fingerprint of its query, like `conversation_metrics`.

PAIRS_TABLE = LATENCY_PAIR_ROWS.name
THREAD_DAYS_TABLE = THREAD_DAY_METRICS.name
THREAD_MODELS_TABLE = THREAD_MODEL_METRICS.name
TOOL_ROWS_TABLE = TOOL_ROWS.name


def aggregate_sql(body: str) -> tuple[str, list]:
    scope_sql, params = scope_clause(Filters(), window=True)
    return f"WITH {scope_sql}\n    {body}", params


@functools.cache
def trend_tables() -> dict[str, tuple[str, list, str]]:
    """{table: (sql, params, fingerprint)} of the message-level tables."""
    out = {}
    for table, (sql, params) in (
        (PAIRS_TABLE, latency_distribution_sql(Filters())),
        (THREAD_DAYS_TABLE, aggregate_sql(THREAD_DAYS_SQL)),
        (THREAD_MODELS_TABLE, aggregate_sql(THREAD_MODELS_SQL)),
        (TOOL_ROWS_TABLE, aggregate_sql(TOOL_ROWS_SQL)),
    ):
        out[table] = (sql, params, query_fingerprint(table, sql, params))
    return out


def materialize_trends(con, threads: list[str] | None = None) -> None:
    """(Re)create `latency_pair_rows`, `thread_day_metrics`, `thread_model_metrics` and
    `tool_rows` (`threads`: only these threads' rows).

    Called at load time next to `materialize_conversations` (`analytics.derived`).
    """
    for table, (sql, params, fingerprint) in trend_tables().items():
        write_derived_table(con, table, sql, params, fingerprint, threads)


def current_trend_tables(con) -> frozenset[str]:
    """The message-level tables of `con`'s database written by the current queries."""
    tables = trend_tables()
    return frozenset(name for name, comment in table_comments(con, list(tables)).items() if comment == tables[name][2])


def pairs_cte(filters: Filters, fast: frozenset[str]) -> str:
    """The `pairs` CTE(s): `latency_pair_rows` cut to `filters` when current, else `PAIRS_SQL`.

    Needs the `scope` CTE; adds no parameter (window bounds are epoch-microsecond literals).
    """
    if PAIRS_TABLE not in fast:
        return PAIRS_SQL
    clauses = [in_scope(filters, "p", LATENCY_PAIR_ROWS.names)]
    if filters.since is not None:
        clauses.append(f"epoch_us(p.user_ts) >= {int((filters.since - EPOCH) // timedelta(microseconds=1))}")
    if filters.until is not None:
        clauses.append(f"epoch_us(p.user_ts) <= {int((filters.until - EPOCH) // timedelta(microseconds=1))}")
    return f"""
    pairs AS (SELECT * FROM {PAIRS_TABLE} p WHERE {" AND ".join(clauses)})"""


# No pair at all, typed like `pairs`: for callers that do not show latency (`latency=False`).
NO_PAIRS = """
    pairs AS (SELECT NULL::VARCHAR AS thread_id, NULL::VARCHAR AS tenant_id, NULL::TIMESTAMPTZ AS user_ts,
                     NULL::DOUBLE AS latency_s, NULL::VARCHAR AS model WHERE FALSE)"""


def tool_rows_cte(filters: Filters, fast: frozenset[str]) -> tuple[str, list]:
    """The `tool_rows` CTE (`TOOL_ROWS_SQL`'s columns) for `filters`, window included: `tool_rows`
    cut to the scope when current, else the live query. Needs the `scope` and `thread_msgs` CTEs.

    A result is named from its whole thread and a window keeps rows by their own ts, so the
    table answers every window (parsing every call's JSON and joining every result to its
    call took ~1.2 s of the Overview at 10M messages).
    """
    window, params = filters.window_where("r.ts")
    source = (
        f"{TOOL_ROWS_TABLE} r WHERE {in_scope(filters, 'r', TOOL_ROWS.names)}" if TOOL_ROWS_TABLE in fast
        else f"({TOOL_ROWS_SQL}) r WHERE TRUE"
    )
    return f"""
    tool_rows AS (SELECT r.* FROM {source} AND {window})""", params


#: The live query of each per-day table, over the messages it is given.
PER_DAY_BODIES = {THREAD_DAYS_TABLE: thread_days_sql, THREAD_MODELS_TABLE: thread_models_sql}


def aggregate_source(table: str, filters: Filters, fast: frozenset[str]) -> str:
    """A subquery giving the rows of `table`'s query (`THREAD_DAYS_SQL`, `THREAD_MODELS_SQL`) for `filters`:
    the table's rows of the days wholly in the window, and, when the window cuts into a day at
    either end, that day's rows computed live from its messages in the window. Each row sums one
    thread's messages of one day, so the two parts are exactly the live query's rows. Without a
    current table, the live query. Needs the `scope_clause` CTEs (window cut included).
    """
    body = PER_DAY_BODIES[table]
    if table not in fast:
        return body()
    lo, hi, cut = day_range(filters)
    scoped = in_scope(filters, "d", DERIVED_COLUMNS[table])
    whole = f"SELECT * FROM {table} d WHERE {scoped} AND {day_where('d', lo, hi)}"
    if not cut:
        return whole
    # The messages of the window outside its whole days: those of the day `since` or `until` cuts
    # (the bounds are day numbers computed here; a window within one day has no whole day).
    day_us = 86_400_000_000
    inside = [f"epoch_us(m.ts) >= {int(lo) * day_us}" if lo is not None else "TRUE",
              f"epoch_us(m.ts) < {(int(hi) + 1) * day_us}" if hi is not None else "TRUE"]  # fmt: skip
    edges = f"(SELECT * FROM msgs m WHERE NOT ({' AND '.join(inside)}))"
    return f"{whole}\n        UNION ALL\n        {body(edges)}"


PAIR_COLUMNS = LATENCY_PAIR_ROWS.names


def latency_distribution_sql(
    filters: Filters = Filters(), fast: frozenset[str] = frozenset(), columns: tuple[str, ...] | None = None
) -> tuple[str, list]:
    """The query behind `latency_distribution()`; the live one unless `PAIRS_TABLE` is in `fast`."""
    scope_sql, params = scope_clause(filters, window=True)
    sql = f"""
    WITH {scope_sql},
    {pairs_cte(filters, fast)}"""
    if columns is not None:
        return sql + f"\n    SELECT {column_list(columns, PAIR_COLUMNS)} FROM pairs", params
    sql += f"""
    SELECT {", ".join(PAIR_COLUMNS)}
    FROM pairs ORDER BY thread_id, user_ordinal"""
    return sql, params
