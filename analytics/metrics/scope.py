"""Which rows a metric reads: `Filters` as SQL over messages, checkpoints and the load-time
tables, and the UTC day numbers the day-bucketed tables use.

>>> in_scope(Filters(tenants=("acme",)), "m")  # doctest: +SKIP
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from analytics.catalog import DERIVED_TABLES
from analytics.errors import BadRequest
from analytics.filters import Filters
from loaders import catalog as loader_catalog


# --- SQL building blocks -------------------------------------------------------

#: The columns of the tables `in_scope` filters (a row carrying the scope's key parts is compared on them).
MESSAGE_COLUMNS = loader_catalog.MESSAGES.names
DERIVED_COLUMNS = {t.name: t.names for t in DERIVED_TABLES if "thread_id" in t.names}  # (`topics` is the store's)

# Fragments below are code constants; every value reaches DuckDB as a bound parameter.


def is_scoped(filters: Filters) -> bool:
    """Whether `filters` restricts threads at all (when not, skip the semi-joins)."""
    return filters.thread_where("t")[0] != "TRUE"


def in_scope(filters: Filters, alias: str, columns: tuple[str, ...] = ("thread_id",)) -> str:
    """`alias`'s row belongs to a thread of the `scope` CTE; `columns`: the row's columns.

    When the scope is some tenants / sub-tenants and the row carries those key parts
    (`Filters.key_parts`), its own values are compared with the scope's few: at 10M messages
    a semi-join of a derived table's thread ids with a tenant's 680k took 0.1-0.2 s of CPU
    per query, this a few ms (row groups of other tenants are skipped on their zone maps).
    """
    if not is_scoped(filters):
        return "TRUE"
    if getattr(filters, "rows_table", None) is not None:
        # A view's threads found once (`scope.scoped_rows`): its table read here, without copying
        # every row of it into the `scope` CTE when nothing else reads that.
        return filters.thread_where(alias)[0]
    parts = filters.key_parts()
    if parts and set(parts) <= set(columns):
        return " AND ".join(f"{alias}.{c} IN (SELECT {c} FROM scope)" for c in parts)
    return f"{alias}.thread_id IN (SELECT thread_id FROM scope)"


def scope_clause(filters: Filters, window: bool) -> tuple[str, list]:
    """CTEs `scope` (threads that pass), `thread_msgs` (all their messages) and
    `msgs` (those messages, cut by the time window when `window`)."""
    # (A view's scope computed once, `scope.scoped_rows`, is read as it is, not joined again.)
    threads, params = filters.threads_sql()
    # The message CTEs are inlined (NOT MATERIALIZED) so each use reads only the
    # columns it needs; materializing them would copy every message's content.
    sql = f"""
    scope AS MATERIALIZED ({threads}),
    thread_msgs AS NOT MATERIALIZED (SELECT m.* FROM messages m WHERE {in_scope(filters, "m", MESSAGE_COLUMNS)})"""
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

# A UTC day as a number of days since 1970-01-01, from integer epoch arithmetic:
# converting a million TIMESTAMPTZ values with AT TIME ZONE costs several times
# more (ICU). Rows are grouped by the number; only the result rows become DATEs.
DAY_NUMBER = "CAST(floor(epoch_us({col}) / 86400000000) AS BIGINT)"
AS_DATE = "DATE '1970-01-01' + CAST({col} AS INTEGER)"


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ONE_DAY = timedelta(days=1)


def day_range(filters: Filters) -> tuple[int | None, int | None, bool]:
    """The UTC days wholly inside the window, as day numbers (first, last; None: that side is open),
    and whether the window also cuts into a day at either end (the app's date picker gives whole
    days: `since` at 00:00:00, `until` at 23:59:59.999999)."""
    lo = hi = None
    cut = False
    if filters.since is not None:
        n, rest = divmod(filters.since - EPOCH, ONE_DAY)
        lo, cut = (n + 1, True) if rest else (n, cut)
    if filters.until is not None:
        n, rest = divmod(filters.until - EPOCH, ONE_DAY)
        hi, cut = (n, cut) if rest == ONE_DAY - timedelta(microseconds=1) else (n - 1, True)
    return lo, hi, cut


def day_where(alias: str, lo: int | None, hi: int | None) -> str:
    """`alias.day_n` within the day numbers (ints computed above, never user text)."""
    clauses = []
    if lo is not None:
        clauses.append(f"{alias}.day_n >= {int(lo)}")
    if hi is not None:
        clauses.append(f"{alias}.day_n <= {int(hi)}")
    return " AND ".join(clauses) or "TRUE"


def column_list(columns: tuple[str, ...], known: tuple[str, ...]) -> str:
    unknown = [c for c in columns if c not in known]
    if unknown or not columns:
        raise BadRequest(f"columns must be some of {known}, got {columns!r}")
    return ", ".join(columns)  # names checked against the constants above
