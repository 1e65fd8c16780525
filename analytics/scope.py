"""Thread conditions beyond `Filters`: a minimum of user turns, a pending interrupt, forks,
ranges on metric columns (`metrics.RANGE_COLUMNS`).

`ThreadConditions` is a `Filters` whose `thread_where` adds them as thread-level
SQL, so every metrics function takes it as it is and a table and its charts
describe exactly the same threads without shipping a list of ids.
`thread_scope` builds one for a set of queries over the same threads.

>>> scope = thread_scope("lens.duckdb", Filters(text="refund"), min_user_turns=2)  # doctest: +SKIP
>>> metrics.conversations("lens.duckdb", scope.conditions)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from analytics import metrics
from analytics.catalog import THREAD_COLUMNS_IN_METRICS
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters, Range, range_where
from analytics.text_index import text_grams


@dataclass(frozen=True)
class ThreadConditions(Filters):
    """`Filters` plus thread conditions, as thread-level SQL.

    >>> ThreadConditions(forks_only=True).thread_where()[0]
    '(t.fork_count > 0)'
    """

    min_user_turns: int = 0
    pending_only: bool = False
    forks_only: bool = False
    #: Per-thread metric ranges (`Range` over `metrics.RANGE_COLUMNS`).
    ranges: tuple[Range, ...] = ()
    #: Read user turns and ranged metrics from the load-time `conversation_metrics` (same values)
    #: instead of computing them.
    turns_from_table: bool = False
    #: A temporary table of the ids of the threads that pass (`scoped_rows`), or with `rows_out`,
    #: of those that do not: queries read it instead of applying the conditions again. Only valid
    #: on the connection that made it, while it exists.
    rows_table: str | None = None
    rows_out: bool = False

    def key_parts(self) -> tuple[str, ...]:
        if self.min_user_turns > 0 or self.pending_only or self.forks_only or self.ranges:
            return ()
        return super().key_parts()  # (a scope table holds the same threads)

    def thread_where(self, alias: str = "t") -> tuple[str, list]:
        if self.rows_table is not None:  # found once (`scoped_rows`): read, not applied again
            member = "NOT IN" if self.rows_out else "IN"
            return f"{alias}.thread_id {member} (SELECT thread_id FROM {_table_name(self.rows_table)})", []
        return self._conditions(alias, on_metrics=False)

    def metrics_where(self, alias: str = "cm") -> tuple[str, list]:
        """The conditions over a `conversation_metrics` row: every one is a column of it (no join,
        no scope table: the same threads).

        >>> ThreadConditions(min_user_turns=2, forks_only=True).metrics_where()
        ('(cm.user_turns >= ?) AND (cm.forks > 0)', [2])
        """
        if self.rows_table is not None and (self.thread_ids or self.within is not None):
            # A list of ids is bound (and hashed) once, into the scope table; bound again per query,
            # a text filter's 227k ids took 0.2-0.4 s each at 10M messages.
            return self.thread_where(alias)
        return self._conditions(alias, on_metrics=True)

    def _figures(self, cm: str) -> tuple[list[str], list]:
        """The conditions on metric figures, over a `conversation_metrics` row aliased `cm`:
        user_turns is the thread's count of user messages; ranges are over the whole-thread
        metrics, like the list rows themselves (`metrics.conversations_query`)."""
        clauses, params = [], []
        if self.min_user_turns > 0:
            clauses.append(f"{cm}.user_turns >= ?")
            params.append(self.min_user_turns)
        if self.ranges:
            range_sql, range_params = range_where(self.ranges, metrics.RANGE_COLUMNS, cm)
            clauses.append(range_sql)
            params += range_params
        return clauses, params

    def _conditions(self, alias: str, on_metrics: bool) -> tuple[str, list]:
        sql, params = (Filters.metrics_where if on_metrics else Filters.thread_where)(self, alias)
        clauses = [] if sql == "TRUE" else [sql]
        if on_metrics:  # the row's own figures
            figures, figure_params = self._figures(alias)
            clauses += figures
            params = [*params, *figure_params]
        elif self.turns_from_table and (self.min_user_turns > 0 or self.ranges):
            figures, figure_params = self._figures("cm")
            where = " AND ".join(figures)
            table = metrics.MATERIALIZED_TABLE
            clauses.append(f"{alias}.thread_id IN (SELECT cm.thread_id FROM {table} cm WHERE {where})")
            params = [*params, *figure_params]
        else:  # no current table: the figures computed live
            if self.min_user_turns > 0:
                clauses.append(
                    f"{alias}.thread_id IN (SELECT thread_id FROM messages WHERE role = 'user' "
                    "GROUP BY thread_id HAVING count(*) >= ?)"
                )
                params = [*params, self.min_user_turns]
            if self.ranges:
                range_sql, range_params = range_where(self.ranges, metrics.RANGE_COLUMNS, "cm")
                live, source_params = metrics.conversations_sql(Filters())
                clauses.append(f"{alias}.thread_id IN (SELECT cm.thread_id FROM ({live}) cm WHERE {range_sql})")
                params = [*params, *source_params, *range_params]
        if self.pending_only:
            clauses.append(f"coalesce({alias}.interrupt_pending, false)")
        if self.forks_only:
            clauses.append(f"{alias}.{THREAD_COLUMNS_IN_METRICS['fork_count'] if on_metrics else 'fork_count'} > 0")
        if not clauses:
            return "TRUE", params
        return " AND ".join(c if c == sql else f"({c})" for c in clauses), params


_ROWS_TABLE = re.compile(r"_tl_scope_[0-9a-f]{32}")


def _new_table() -> str:
    return f"_tl_scope_{uuid.uuid4().hex}"


def _table_name(name: str) -> str:
    """`name` when it is one `scoped_rows` makes (it goes into SQL as an identifier)."""
    if not _ROWS_TABLE.fullmatch(name):
        raise BadRequest(f"not a scope table: {name!r}")
    return name


@contextlib.contextmanager
def scoped_rows(con, conditions: ThreadConditions) -> Iterator[ThreadConditions]:
    """`conditions` with the threads that pass them found once, into a temporary table of thread
    ids on `con` that every query of a view reads as its scope (dropped on exit): the ids of the
    passing threads, or of the others when they are fewer (`rows_out`: a query then keeps the rows
    whose thread is not in it).

    A view of several queries otherwise applies its conditions in each (at 10M messages, 0.35-0.45 s
    of a `min_turns` scope per query); and a semi-join with the 1.25M threads of `min_turns=2`
    hashes twice the ids an anti-join with the other 0.5M does. Conditions that keep every thread
    and those of some tenants alone are given back as they are.

    >>> with scoped_rows(con, scope.conditions) as scoped:  # doctest: +SKIP
    ...     daily = metrics.daily(con, scoped)
    """
    where, params = conditions.thread_where("t")
    if where == "TRUE" or conditions.rows_table is not None or conditions.key_parts():
        # (Some tenants alone: every query compares its rows' own tenant, `metrics.in_scope`.)
        yield conditions
        return
    name = _new_table()
    # The SQL is the conditions' own, with placeholders; the name is ours.
    source, rows_out = f"threads t WHERE {where}", False
    if metrics.materialized(con) and not (conditions.thread_ids or conditions.within is not None or conditions.text):
        # Each condition is a column of the load-time table: both sides counted in one scan, no join.
        # (A list of ids is bound, or a text scanned, once, below: it keeps at most its own threads.)
        where, params = conditions.metrics_where("cm")
        table = metrics.MATERIALIZED_TABLE
        ((passing, every),) = con.execute(f"SELECT count(*) FILTER (WHERE {where}), count(*) FROM {table} cm",
                                          params).fetchall()  # fmt: skip
        rows_out = 2 * passing > every
        source = f"{table} cm WHERE ({where}) IS {'NOT TRUE' if rows_out else 'TRUE'}"
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT thread_id FROM {source}", params)
    try:
        yield dataclasses.replace(conditions, rows_table=name, rows_out=rows_out)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {name}")


@dataclass(frozen=True)
class ThreadScope:
    """The conditions to hand every query of one view, and how many threads the filters alone pass."""

    conditions: ThreadConditions
    total: int  # threads passing `filters`, before the turn / interrupt / fork conditions


def thread_scope(
    con_or_path: ConOrPath,
    filters: Filters = Filters(),
    min_user_turns: int = 0,
    pending_only: bool = False,
    forks_only: bool = False,
    ranges: tuple[Range, ...] = (),
) -> ThreadScope:
    """`filters` narrowed by the thread conditions, ready for several queries over the same threads.

    A text filter scans every message's content; it is resolved to thread ids
    here, once, instead of once per query (the same threads: the ids pass the
    whole filter). User turns are read from `conversation_metrics` when the
    database has a current one.
    """
    _check_turns(min_user_turns)
    with connection(con_or_path) as con:
        where, params = filters.thread_where("t", text_grams(con, filters.text))
        if filters.text:
            rows = con.execute(f"SELECT t.thread_id FROM threads t WHERE {where}", params).fetchall()
            ids = tuple(r[0] for r in rows)
            return _scope_of(con, filters, ids, len(ids), min_user_turns, pending_only, forks_only, ranges)
        total = con.execute(f"SELECT count(*) FROM threads t WHERE {where}", params).fetchall()[0][0]
        return _scope_of(con, filters, (), total, min_user_turns, pending_only, forks_only, ranges)


def _check_turns(min_user_turns) -> None:
    if isinstance(min_user_turns, bool) or not isinstance(min_user_turns, int) or min_user_turns < 0:
        raise BadRequest(f"min_turns must be an integer >= 0, got {min_user_turns!r}")


def _scope_of(con, filters: Filters, ids: tuple[str, ...], total: int, min_user_turns: int, pending_only: bool,
              forks_only: bool, ranges: tuple[Range, ...]) -> ThreadScope:  # fmt: skip
    """The scope of `filters` whose text (if any) matched the threads `ids` (none: the text stays)."""
    if ids:
        filters = dataclasses.replace(filters, thread_ids=ids, text=None)
    conditions = ThreadConditions(
        **{f.name: getattr(filters, f.name) for f in dataclasses.fields(Filters)},
        min_user_turns=min_user_turns,
        pending_only=bool(pending_only),
        forks_only=bool(forks_only),
        ranges=tuple(ranges),
        turns_from_table=(min_user_turns > 0 or bool(ranges)) and metrics.materialized(con),
    )
    return ThreadScope(conditions, total)


@contextlib.contextmanager
def scoped_view(
    con,
    filters: Filters = Filters(),
    min_user_turns: int = 0,
    pending_only: bool = False,
    forks_only: bool = False,
    ranges: tuple[Range, ...] = (),
) -> Iterator[tuple[ThreadScope, ThreadConditions]]:
    """`thread_scope` and `scoped_rows` of it on `con`, for a view of several queries: the scope
    (its conditions hold no table: valid on any connection) and the conditions to query with.

    A text filter's threads are found by one scan into the scope table itself, and read from it
    as the scope's ids; the ids bound back into a table took 0.15-0.2 s more (227k at 10M messages).

    >>> with scoped_view(con, Filters(text="refund"), min_user_turns=2) as (scope, scoped):  # doctest: +SKIP
    ...     daily = metrics.daily(con, scoped)
    """
    if not filters.text:
        scope = thread_scope(con, filters, min_user_turns, pending_only, forks_only, ranges)
        with scoped_rows(con, scope.conditions) as scoped:
            yield scope, scoped
        return
    _check_turns(min_user_turns)
    where, params = filters.thread_where("t", text_grams(con, filters.text))
    found = _new_table()
    con.execute(f"CREATE TEMP TABLE {found} AS SELECT t.thread_id FROM threads t WHERE {where}", params)
    rows = None
    try:
        ids = tuple(r[0] for r in con.execute(f"SELECT thread_id FROM {found}").fetchall())
        scope = _scope_of(con, filters, ids, len(ids), min_user_turns, pending_only, forks_only, ranges)
        # The conditions beyond `filters`, on the threads found.
        extra = ThreadConditions(min_user_turns=min_user_turns, pending_only=bool(pending_only),
                                 forks_only=bool(forks_only), ranges=tuple(ranges),
                                 turns_from_table=scope.conditions.turns_from_table)  # fmt: skip
        extra_where, extra_params = extra.thread_where("t")
        if ids and extra_where != "TRUE":
            rows = _new_table()
            con.execute(f"CREATE TEMP TABLE {rows} AS SELECT t.thread_id FROM threads t "
                        f"WHERE t.thread_id IN (SELECT thread_id FROM {found}) AND {extra_where}",
                        extra_params)  # fmt: skip
        yield scope, dataclasses.replace(scope.conditions, rows_table=rows or found)
    finally:
        for table in (rows, found):
            if table is not None:
                con.execute(f"DROP TABLE IF EXISTS {table}")
