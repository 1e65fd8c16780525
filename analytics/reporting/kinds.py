"""The built-in report kinds: `conversations`, `transcript`, `trends` and `daily`.

Each is a `ReportSpec` registered when this module is imported (it is named in
`analytics.REGISTRARS`): its columns, the function that builds its rows and, for some,
its own options of the `report` subcommand.

    python -m analytics report conversations --db lens.duckdb --sort duration_s --desc --limit 10

>>> TRANSCRIPT_COLUMNS[:4]
('thread_id', 'tenant_id', 'sub_tenant_id', 'session_id')
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from typing import Any

import duckdb

from analytics import metrics, trends
from analytics.cli_types import INT64_MAX
from analytics.errors import BadRequest
from analytics.filters import Filters, Range
from analytics.reporting.spec import ReportSpec, register_report
from analytics.resume.gap import gap_option
from analytics.scope import ThreadConditions, thread_scope
from loaders.catalog import MESSAGES

#: Columns of the `transcript` report: `messages` columns (checked against the catalogue), in this order.
TRANSCRIPT_COLUMNS = MESSAGES.pick(
    "thread_id",
    "tenant_id",
    "sub_tenant_id",
    "session_id",
    "ordinal",
    "role",
    "lc_type",
    "chat_role",
    "name",
    "message_id",
    "ts",
    "checkpoint_id",
    "content",
    "content_chars",
    "non_text_blocks",
    "tool_calls",
    "tool_call_count",
    "tool_call_id",
    "tool_status",
    "model",
    "input_tokens",
    "output_tokens",
    "total_tokens",
)


def _ranges(options: Mapping[str, Any]) -> tuple[Range, ...]:
    """`--min COLUMN=VALUE` / `--max COLUMN=VALUE` as ranges (several on one column combine).

    >>> _ranges({"min": ["duration_s=60"], "max": ["tool_errors=0", "duration_s=3600"]})
    (Range(column='duration_s', low=60.0, high=3600.0), Range(column='tool_errors', low=None, high=0.0))
    """
    bounds: dict[str, list[float | None]] = {}
    for end, flag in ((0, "min"), (1, "max")):
        for given in options.get(flag) or ():
            column, sep, value = str(given).partition("=")
            try:
                number = float(value)
            except ValueError:
                number = None
            if not sep or number is None or column.strip() not in metrics.RANGE_COLUMNS:
                raise BadRequest(f"--{flag} {given!r}: give COLUMN=NUMBER, COLUMN one of {', '.join(metrics.RANGE_COLUMNS)}")
            bounds.setdefault(column.strip(), [None, None])[end] = number
    return tuple(Range(column, low, high) for column, (low, high) in bounds.items())


def _conversation_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    # The load-time conversation_metrics table when it is current and the gap is the default;
    # sorted (and cut) in DuckDB, so the app's download and the CLI's file are the same rows.
    # Options `sort` (a column; default thread_id), `desc` (descending), `limit` (the first N rows),
    # `min` / `max` (COLUMN=VALUE ranges on the metrics, as the app's "Metric ranges").
    ranges = _ranges(options)
    if ranges and not isinstance(filters, ThreadConditions):
        filters = thread_scope(con, filters, ranges=ranges).conditions
    sort, descending = options.get("sort") or "thread_id", bool(options.get("desc"))
    sql, params = metrics.conversation_list_sql(
        con, filters, sort, descending, _limit_option(options.get("limit")), gap_minutes=gap_option(options),
    )
    return with_outcomes(con, filters, sql, params, sort, descending)


def with_outcomes(con, filters: Filters, sql: str, params: list, sort: str, descending: bool) -> duckdb.DuckDBPyRelation:
    """The conversation list's rows (`sql`, `params`) with each thread's outcome, the signals that
    fired (`;` between them, `resolved_closing` aside) and `outcome_reason` (the signal and the message
    the outcome rests on, as `report outcomes` writes it), as the app's list shows them, in the list's order."""
    from analytics.conversation_outcomes.report import outcomes_relation
    from analytics.conversation_outcomes.signals import SIGNALS

    fired = ", ".join(f"CASE WHEN {s} THEN '{s}' END" for s in SIGNALS if s != "resolved_closing")
    con.register("tl_report_outcomes", outcomes_relation(con, filters).select(
        f"thread_id, outcome, concat_ws(';', {fired}) AS signals, outcome_reason").arrow().read_all())
    return con.sql(f"WITH l AS ({sql}) SELECT l.*, o.outcome, nullif(o.signals, '') AS signals, o.outcome_reason FROM l "
                   f"LEFT JOIN tl_report_outcomes o USING (thread_id) ORDER BY {metrics.list_order('l', sort, descending)}",
                   params=params)


def _limit_option(value: Any) -> int | None:
    if value is None:
        return None
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= INT64_MAX or str(value).strip() != str(limit):
        raise BadRequest(f"--limit must be a positive integer, got {value!r}")
    return limit


def _conversation_arguments(parser: argparse.ArgumentParser) -> None:
    # Checked by the report (one `error:` line naming the valid columns), not by argparse's choices
    # (a usage block listing 37 names).
    parser.add_argument("--sort", metavar="COLUMN",
                        help="conversations: sort by this column (default thread_id; ties by thread_id, "
                             "empty values last)")
    parser.add_argument("--desc", action="store_true", help="conversations: sort descending")
    parser.add_argument("--limit", metavar="N", help="conversations: keep the first N rows of the sort")
    ranged = ", ".join(metrics.RANGE_COLUMNS)
    parser.add_argument("--min", action="append", default=[], metavar="COLUMN=VALUE",
                        help=f"conversations: keep threads whose COLUMN is at least VALUE (repeatable; {ranged})")
    parser.add_argument("--max", action="append", default=[], metavar="COLUMN=VALUE",
                        help="conversations: keep threads whose COLUMN is at most VALUE (repeatable)")


def _daily_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    sql, params = metrics.daily_sql(filters)
    return con.sql(sql, params=params)


#: About this many messages per part of a written transcript report (one sort each).
TRANSCRIPT_PART_MESSAGES = 100_000

_TRANSCRIPT_SQL = "SELECT {columns} FROM messages m WHERE {where} ORDER BY m.thread_id, m.ordinal"


def _transcript_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    where, params = filters.message_where("m")
    columns = ", ".join(f"m.{c}" for c in TRANSCRIPT_COLUMNS)
    return con.sql(_TRANSCRIPT_SQL.format(columns=columns, where=where), params=params)


def _transcript_parts(con, filters: Filters, options: Mapping[str, Any]) -> Iterator[duckdb.DuckDBPyRelation]:
    # Sorting a million messages with their content holds them all in memory;
    # consecutive thread-id ranges, each sorted alone, give the same rows in
    # the same order a bounded slice at a time.
    thread_sql, thread_params = filters.thread_where("t")
    ranges = con.execute(
        f"""
        SELECT min(thread_id), max(thread_id)
        FROM (SELECT t.thread_id, sum(t.message_count) OVER (ORDER BY t.thread_id) // ? AS part
              FROM threads t WHERE {thread_sql})
        GROUP BY part ORDER BY 1""",
        [TRANSCRIPT_PART_MESSAGES, *thread_params],
    ).fetchall()
    where, params = filters.message_where("m")
    columns = ", ".join(f"m.{c}" for c in TRANSCRIPT_COLUMNS)
    sql = _TRANSCRIPT_SQL.format(columns=columns, where=f"({where}) AND m.thread_id BETWEEN ? AND ?")
    for first, last in ranges:
        yield con.sql(sql, params=[*params, first, last])


def _trend_options(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    return options.get("by"), options.get("split")


def _trend_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    by, split = _trend_options(options)
    if by is None:  # chosen from the data range in scope, as the Overview page chooses it
        h = metrics.overview(con, filters)
        by = trends.default_bucket(h["first_ts"], h["last_ts"])
    sql, params = trends.trends_sql(filters, by, split, metrics.current_trend_tables(con))
    return con.sql(sql, params=params)


def _trend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", choices=trends.BUCKETS, help="trends: bucket by UTC day, ISO week (Monday) or month "
                        "(default: from the date range, as the Overview page)")
    parser.add_argument("--split", choices=sorted(trends.SPLITS), help="trends: one row per period and model, tool "
                        "or tenant")


# Registered in this order: the `report` subcommand adds their options in it.
register_report(ReportSpec(
    "conversations", "one row per conversation: metrics.conversation_list(), its outcome, the signals that fired "
    "and the outcome's reason", (*metrics.LIST_COLUMNS, "outcome", "signals", "outcome_reason"),
    _conversation_rows, arguments=_conversation_arguments,
))  # fmt: skip
register_report(ReportSpec(
    "transcript", "the messages of the matching threads, in transcript order", TRANSCRIPT_COLUMNS, _transcript_rows,
    parts=_transcript_parts,
))  # fmt: skip
register_report(ReportSpec(
    "trends", "per day / ISO week / month (--by), optionally --split model|tool|tenant: trends.trends()",
    trends.TREND_COLUMNS, _trend_rows, arguments=_trend_arguments,
    columns_of=lambda options: trends.columns(_trend_options(options)[1]),
))  # fmt: skip
register_report(ReportSpec(
    "daily", "per UTC day and tenant: metrics.daily()", metrics.DAILY_COLUMNS, _daily_rows,
))  # fmt: skip
