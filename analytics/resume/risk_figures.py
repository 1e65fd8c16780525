"""Store-only risks to a faithful rehydrate (contract §5): per thread ranked, and every instance of one.

Risks are judged on what a restart *now* would rehydrate: the window of the
latest root checkpoint. `RISK_FLAGS` names each risk and its weight in
`risk_score`; docs/resume_qa.md explains each. A load writes `risks()` of
every thread with the default cap into `risk_figures` (`materialize_risks`).

>>> risks("lens.duckdb").head(10)[["thread_id", "risk_score", "flags"]]  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

from analytics import _pandas as pd
from analytics.catalog import RISK_FIGURES
from analytics.db import ConOrPath, connection, query_fingerprint, table_comments, write_derived_table
from analytics.filters import Filters
from analytics.errors import BadRequest
from analytics.frames import fetch_frame, fetch_rows, typed
from analytics.paging import check_limit, check_offset
from analytics.resume.chain import resume_counts_sql
from analytics.resume.common import DEFAULT_CAP, NO_FILTERS, check_cap, require_thread
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap
from analytics.resume.rehydrate import expected_window

__all__ = [
    "DEFAULT_RISK_SORT",
    "RISKS_TABLE",
    "RISK_COLUMNS",
    "RISK_FLAGS",
    "THREAD_RISK_COLUMNS",
    "RiskFlag",
    "RISK_SORT_COLUMNS",
    "materialize_risks",
    "risk_count_sql",
    "risk_list_sql",
    "risks",
    "risks_sql",
    "thread_risks",
]


@dataclass(frozen=True)
class RiskFlag:
    """One store-only risk to a faithful rehydrate, with its weight in `risk_score`."""

    name: str
    weight: int
    meaning: str


#: Every risk flag, most severe first (docs/resume_qa.md explains each).
RISK_FLAGS: tuple[RiskFlag, ...] = (
    RiskFlag(
        "latest_not_leaf",
        5,
        "the latest checkpoint (greatest id) has children: writers with skewed clocks; a resume "
        "rehydrates from the greatest id, which is not the newest turn",
    ),
    RiskFlag("undecodable", 4, "transcript entries the loader could not decode: the window cannot be checked"),
    RiskFlag("no_id_in_window", 3, "window messages without an id: no turn id, cannot be deduplicated or traced"),
    RiskFlag(
        "edited_in_window",
        3,
        "a window message changed content between checkpoints: windows rebuilt before and after differ",
    ),
    RiskFlag("removed", 2, "messages removed from the transcript (RemoveMessage): older windows held them"),
    RiskFlag("forked", 2, "the thread has branches: which one is current is decided by the greatest checkpoint id"),
    RiskFlag(
        "interrupt_pending",
        2,
        "the latest checkpoint waits on an interrupt: the pending request is not a message, so not in the window",
    ),
    RiskFlag("load_errors", 2, "rows of this thread were skipped at load (see load_errors)"),
    RiskFlag("edited", 1, "a message changed content between checkpoints (outside the window too)"),
    RiskFlag("no_ts_in_window", 1, "window messages without a timestamp: they cannot be placed in time"),
    RiskFlag("truncated", 1, "more user/assistant messages than the cap: older turns are not rehydrated"),
)
_WEIGHT = {f.name: f.weight for f in RISK_FLAGS}

#: Columns of `risks()`: those of the `risk_figures` table, typed as the catalogue says.
RISK_COLUMNS: dict[str, str] = RISK_FIGURES.dtypes()

#: Columns of `thread_risks()`.
THREAD_RISK_COLUMNS: dict[str, str] = {
    "flag": "str",
    "weight": "Int64",
    "checkpoint_id": "str",
    "message_id": "str",
    "ordinal": "Int64",
    "position": "Int64",
    "detail": "str",
}


_RISKS_SQL = """
WITH scope AS (SELECT t.* FROM threads AS t WHERE {where}),
restarts AS ({restarts}),
edits AS (
    -- Edits on the current branch only: another branch's edits are not in this transcript.
    SELECT DISTINCT e.thread_id, e.message_id
    FROM message_events AS e
    JOIN checkpoints AS c
      ON c.thread_id = e.thread_id AND c.checkpoint_id = e.checkpoint_id AND c.is_root AND c.on_current_branch
    WHERE e.event = 'edited' AND e.message_id IS NOT NULL AND e.thread_id IN (SELECT thread_id FROM scope)
),
conv AS (
    -- One pass over the transcript rows: position from the end, and whether the message was edited.
    SELECT m.thread_id, m.message_id, m.ts, d.message_id IS NOT NULL AS edited,
           row_number() OVER (PARTITION BY m.thread_id ORDER BY m.ordinal DESC) AS from_end
    FROM messages AS m
    LEFT JOIN edits AS d ON d.thread_id = m.thread_id AND d.message_id = m.message_id
    WHERE m.role IN ('user', 'assistant') AND m.thread_id IN (SELECT thread_id FROM scope)
),
win AS (
    SELECT thread_id,
           count(*) AS conversational_messages,
           count(*) FILTER (WHERE from_end <= ?) AS window_size,
           count(*) FILTER (WHERE from_end <= ? AND message_id IS NULL) AS window_no_id,
           count(*) FILTER (WHERE from_end <= ? AND ts IS NULL) AS window_no_ts,
           count(*) FILTER (WHERE from_end <= ? AND edited) AS edited_in_window
    FROM conv GROUP BY thread_id
),
latest AS (
    SELECT c.thread_id, len(c.message_versions) AS list_length
    FROM checkpoints AS c JOIN scope AS t
      ON t.thread_id = c.thread_id AND c.checkpoint_id = t.transcript_checkpoint_id AND c.is_root
),
errs AS (
    SELECT thread_id, count(*) AS load_errors FROM load_errors
    WHERE thread_id IN (SELECT thread_id FROM scope) GROUP BY thread_id
),
figures AS (
    SELECT t.thread_id, t.tenant_id, t.sub_tenant_id, t.session_id,
           coalesce(w.conversational_messages, 0) AS conversational_messages,
           coalesce(w.window_size, 0) AS window_size,
           greatest(coalesce(w.conversational_messages, 0) - ?, 0) AS truncated_by,
           coalesce(w.window_no_id, 0) AS window_no_id,
           coalesce(w.window_no_ts, 0) AS window_no_ts,
           t.edited_message_count AS edited_messages,
           coalesce(w.edited_in_window, 0) AS edited_in_window,
           t.removed_message_count AS removed_messages,
           t.branch_count AS branches,
           t.fork_count AS forks,
           coalesce(NOT t.latest_is_leaf, FALSE) AS latest_not_leaf,
           t.interrupt_pending,
           greatest(coalesce(l.list_length, 0) - t.message_count, 0) AS undecodable_messages,
           coalesce(x.load_errors, 0) AS load_errors,
           t.transcript_checkpoint_id AS latest_checkpoint_id,
           t.last_ts,
           coalesce(rp.resume_points, 0) AS resume_points
    FROM scope AS t
    LEFT JOIN restarts AS rp USING (thread_id)
    LEFT JOIN win AS w USING (thread_id)
    LEFT JOIN latest AS l USING (thread_id)
    LEFT JOIN errs AS x USING (thread_id)
),
flagged AS (
    SELECT *, list_filter([{flag_cases}], lambda f: f IS NOT NULL) AS flag_list, {score} AS risk_score
    FROM figures
)
SELECT thread_id, tenant_id, sub_tenant_id, session_id, risk_score,
       array_to_string(flag_list, ',') AS flags,
       conversational_messages, window_size, truncated_by, window_no_id, window_no_ts,
       edited_messages, edited_in_window, removed_messages, branches, forks,
       latest_not_leaf, interrupt_pending, undecodable_messages, load_errors, latest_checkpoint_id, last_ts,
       resume_points
FROM flagged"""


# When each flag applies, over a `figures` row (fixed SQL; names and weights are bound).
_FLAG_CONDITIONS: dict[str, str] = {
    "latest_not_leaf": "latest_not_leaf",
    "undecodable": "undecodable_messages > 0",
    "no_id_in_window": "window_no_id > 0",
    "edited_in_window": "edited_in_window > 0",
    "removed": "removed_messages > 0",
    "forked": "(forks > 0 OR branches > 1)",
    "interrupt_pending": "interrupt_pending",
    "load_errors": "load_errors > 0",
    "edited": "edited_messages > 0",
    "no_ts_in_window": "window_no_ts > 0",
    "truncated": "truncated_by > 0",
}
assert list(_FLAG_CONDITIONS) == [f.name for f in RISK_FLAGS]


def _flag_sql() -> tuple[str, str, list, list]:
    cases = ", ".join(f"CASE WHEN {_FLAG_CONDITIONS[f.name]} THEN ? END" for f in RISK_FLAGS)
    score = "(" + " + ".join(f"CASE WHEN {_FLAG_CONDITIONS[f.name]} THEN ? ELSE 0 END" for f in RISK_FLAGS) + ")"
    return cases, score, [f.name for f in RISK_FLAGS], [f.weight for f in RISK_FLAGS]


#: `risks()`'s ranking, the end of its live query.
_LIVE_ORDER = "\nORDER BY risk_score DESC, thread_id\n"


def risks_sql(
    filters: Filters = NO_FILTERS, cap: int = DEFAULT_CAP, gap_minutes: float = DEFAULT_GAP_MINUTES
) -> tuple[str, list]:
    """The live query of `risks()`, with its parameters.

    >>> sql, params = risks_sql(Filters(tenants=("acme",)))
    """
    sql, params = _unordered_risks_sql(filters, cap, gap_minutes)
    return sql + _LIVE_ORDER, params  # (the text the load-time table's fingerprint was taken of)


def _unordered_risks_sql(filters: Filters, cap: int, gap_minutes: float) -> tuple[str, list]:
    """`risks_sql` without its ranking order (`risk_list_sql` sorts as asked)."""
    cap = check_cap(cap)
    where, params = filters.thread_where("t")
    # `where` is Filters' own SQL with placeholders; values stay bound.
    restarts, restart_params = resume_counts_sql(filters, check_gap(gap_minutes))
    cases, score, names, weights = _flag_sql()
    sql = _RISKS_SQL.format(where=where, restarts=restarts, flag_cases=cases, score=score)
    return sql, [*params, *restart_params, cap, cap, cap, cap, cap, *names, *weights]


#: Columns a ranked list can be sorted by (`risk_list_sql`): every column of a `risks()` row.
RISK_SORT_COLUMNS: tuple[str, ...] = tuple(RISK_COLUMNS)
#: The ranking of `risks()`: riskiest first.
DEFAULT_RISK_SORT = "risk_score"


def _unordered_risks(con, filters: Filters, cap: int, gap_minutes: float, restarted_only: bool) -> tuple[str, list]:
    """The rows of `risks()` without an order: the load-time table when it answers (default cap
    and gap), else the live query; `restarted_only` keeps the threads with a resume point."""
    cap = check_cap(cap)
    gap_minutes = check_gap(gap_minutes)
    if cap == DEFAULT_CAP and gap_minutes == DEFAULT_GAP_MINUTES and _risks_materialized(con):
        where, params = filters.thread_where("t")
        sql = f"SELECT r.* FROM {RISKS_TABLE} AS r"
        if where != "TRUE":  # no filter: no semi-join of every thread id (0.2 s at 1.7M threads)
            # `where` is Filters' own SQL with placeholders; the table name is ours.
            sql += f" WHERE r.thread_id IN (SELECT t.thread_id FROM threads AS t WHERE {where})"
    else:
        live, params = _unordered_risks_sql(filters, cap, gap_minutes)
        sql = f"SELECT * FROM ({live}) AS r"
    if restarted_only:
        sql = f"SELECT * FROM ({sql}) AS r WHERE r.resume_points > 0"
    return sql, params


def risk_list_sql(
    con,
    filters: Filters = NO_FILTERS,
    cap: int = DEFAULT_CAP,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    sort: str = DEFAULT_RISK_SORT,
    descending: bool = True,
    limit: int | None = None,
    offset: int = 0,
    restarted_only: bool = False,
) -> tuple[str, list]:
    """Rows of `risks()` sorted by `sort` (NULLs last, ties by thread_id), then `offset` / `limit`
    (a page, cut in DuckDB): `(sql, params)`. The default sort is `risks()`'s own ranking.

    >>> sql, params = risk_list_sql(con, sort="resume_points", limit=50, offset=100)  # doctest: +SKIP
    """
    if sort not in RISK_SORT_COLUMNS:
        raise BadRequest(f"cannot sort by {sort!r}; sort columns: {', '.join(RISK_SORT_COLUMNS)}")
    column = RISK_SORT_COLUMNS[RISK_SORT_COLUMNS.index(sort)]  # the constant's own string goes into the SQL
    base, params = _unordered_risks(con, filters, cap, gap_minutes, restarted_only)
    tie = "" if column == "thread_id" else ", r.thread_id"
    sql = f"SELECT r.* FROM ({base}) AS r ORDER BY r.{column} {'DESC' if descending else 'ASC'} NULLS LAST{tie}"
    if limit is not None:
        sql += " LIMIT ?"
        params = [*params, check_limit(limit)]
    if offset:
        sql += " OFFSET ?"
        params = [*params, check_offset(offset)]
    return sql, params


def risk_count_sql(con, filters: Filters = NO_FILTERS, cap: int = DEFAULT_CAP,
                   gap_minutes: float = DEFAULT_GAP_MINUTES, restarted_only: bool = False) -> tuple[str, list]:  # fmt: skip
    """How many rows `risk_list_sql` has before any page (column `threads`).

    >>> risk_count_sql(con, restarted_only=True)  # doctest: +SKIP
    """
    base, params = _unordered_risks(con, filters, cap, gap_minutes, restarted_only)
    return f"SELECT count(*) AS threads FROM ({base})", params


def risks(
    con_or_path: ConOrPath,
    filters: Filters = NO_FILTERS,
    cap: int = DEFAULT_CAP,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
) -> pd.DataFrame:
    """One row per thread passing `filters`, riskiest first. Columns: `RISK_COLUMNS`.

    Risks are judged on what a restart *now* would rehydrate: the window of the
    latest root checkpoint (`cap` entries). `flags` lists the `RISK_FLAGS` that
    apply (comma-separated, most severe first); `risk_score` is the sum of
    their weights; `resume_points` counts the thread's restarts at
    `gap_minutes` (`resume_points()`). One set-based query, whatever the number
    of threads; with the default cap and gap, a read of the load-time
    `risk_figures` table when the database has a current one (its rows are per
    thread, so `filters` only choose among them). A page of them, in any
    order: `risk_list_sql`.

    >>> risks("lens.duckdb").head(10)[["thread_id", "risk_score", "flags", "resume_points"]]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        return fetch_frame(con, *risk_list_sql(con, filters, cap, gap_minutes), RISK_COLUMNS)


#: Table written at the end of every load (analytics.derived): `risks()` of every thread
#: with the default cap (docs/schema.md), so the Resume QA overview is a scan.
RISKS_TABLE = RISK_FIGURES.name


@functools.cache
def _risks_fingerprint() -> str:
    """Identifies the query that fills `RISKS_TABLE` (stored as the table's comment);
    a table written by another definition of a figure or flag is not read."""
    return query_fingerprint("risks_sql", *risks_sql())


def materialize_risks(con, threads: list[str] | None = None) -> None:
    """(Re)create `risk_figures` = `risks(con)` for every thread (default cap; `threads`:
    only these threads' rows).

    Called at load time (`analytics.derived`), next to the metric tables.
    """
    write_derived_table(con, RISKS_TABLE, *risks_sql(), _risks_fingerprint(), threads)


def _risks_materialized(con) -> bool:
    return table_comments(con, [RISKS_TABLE]).get(RISKS_TABLE) == _risks_fingerprint()


def _change(old: object, new: object, width: int = 60) -> str:
    """`'old' → 'new'`, both cut to `width` around where they first differ (an edit is often deep inside)."""
    a, b = _snippet(old, 10_000), _snippet(new, 10_000)
    start = max(0, len(os.path.commonprefix([a, b])) - 20)

    def cut(s: str) -> str:
        part = s[start : start + width]
        return ("…" if start else "") + part + ("…" if start + width < len(s) else "")

    return f"{cut(a)!r} → {cut(b)!r}"


def _snippet(text: object, width: int = 80) -> str:
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


_EVENTS_SQL = """
SELECT e.event, e.checkpoint_id, e.message_id, e.position,
       pv.content AS previous_content, v.content AS content
FROM message_events AS e
JOIN checkpoints AS c
  ON c.thread_id = e.thread_id AND c.checkpoint_id = e.checkpoint_id AND c.is_root AND c.on_current_branch
LEFT JOIN message_versions AS v ON v.thread_id = e.thread_id AND v.version = e.version
LEFT JOIN message_versions AS pv ON pv.thread_id = e.thread_id AND pv.version = e.previous_version
WHERE e.thread_id = ? AND e.event IN ('edited', 'removed')
ORDER BY c.step, e.checkpoint_id, e.position
"""

_FORKS_SQL = """
SELECT p.checkpoint_id, count(*) AS children, string_agg(c.checkpoint_id, ', ' ORDER BY c.checkpoint_id) AS child_ids
FROM checkpoints AS c
JOIN checkpoints AS p ON p.thread_id = c.thread_id AND p.checkpoint_id = c.parent_checkpoint_id AND p.is_root
WHERE c.thread_id = ? AND c.is_root
GROUP BY p.checkpoint_id
HAVING count(*) > 1
ORDER BY p.checkpoint_id
"""

_TRANSCRIPT_GAPS_SQL = """
SELECT o.ordinal
FROM (SELECT generate_subscripts(c.message_versions, 1) - 1 AS ordinal
      FROM checkpoints AS c JOIN threads AS t
        ON t.thread_id = c.thread_id AND c.checkpoint_id = t.transcript_checkpoint_id AND c.is_root
      WHERE t.thread_id = ?) AS o
WHERE o.ordinal NOT IN (SELECT ordinal FROM messages WHERE thread_id = ?)
ORDER BY o.ordinal
"""


def thread_risks(con_or_path: ConOrPath, thread_id: str, cap: int = DEFAULT_CAP) -> pd.DataFrame:
    """Every risk instance of one thread, one row each. Columns: `THREAD_RISK_COLUMNS`.

    E.g. each window message without id (`ordinal`, `position`), each edit and
    removal on the current branch (`checkpoint_id`, `message_id`, old → new
    content), each fork point, the children of a latest checkpoint that is not
    a leaf, a pending interrupt's value, each load error. Rows follow the
    order of `RISK_FLAGS`.

    >>> thread_risks("lens.duckdb", "globex::s2")[["flag", "detail"]]  # doctest: +SKIP
    """
    cap = check_cap(cap)
    rows: list[dict] = []

    def add(flag: str, detail: str, **where) -> None:
        rows.append({"flag": flag, "weight": _WEIGHT[flag], "detail": detail, **where})

    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        summary = risks(con, Filters(thread_ids=(thread_id,)), cap).iloc[0]
        window = expected_window(con, thread_id, cap=cap)
        events = fetch_frame(con, _EVENTS_SQL, [thread_id])
        forks = fetch_frame(con, _FORKS_SQL, [thread_id])
        latest_id, interrupt_value = fetch_rows(
            con, "SELECT transcript_checkpoint_id, interrupt_value FROM threads WHERE thread_id = ?", [thread_id]
        )[0]
        children = [
            r[0]
            for r in fetch_rows(
                con,
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND is_root AND parent_checkpoint_id = ? "
                "ORDER BY checkpoint_id",
                [thread_id, latest_id],
            )
        ]
        gaps = [r[0] for r in fetch_rows(con, _TRANSCRIPT_GAPS_SQL, [thread_id, thread_id])]
        errors = fetch_rows(
            con,
            "SELECT checkpoint_ns, checkpoint_id, stage, reason FROM load_errors WHERE thread_id = ? "
            "ORDER BY checkpoint_id, stage",
            [thread_id],
        )

    in_window = set(window["message_id"].dropna())
    if summary["latest_not_leaf"]:
        add(
            "latest_not_leaf",
            f"latest checkpoint (greatest id) has {len(children)} child checkpoint(s) with smaller ids: "
            + ", ".join(children),
            checkpoint_id=latest_id,
        )
    for ordinal in gaps:
        add(
            "undecodable",
            "the loader could not decode this transcript entry (see load_errors)",
            checkpoint_id=latest_id,
            ordinal=ordinal,
        )
    for w in window.itertuples():
        if w.message_id is None or pd.isna(w.message_id):
            add("no_id_in_window", f"{w.speaker}: {_snippet(w.content)}", ordinal=w.ordinal, position=w.position)
    for e in events.itertuples():
        if e.event == "edited" and e.message_id in in_window:
            add(
                "edited_in_window",
                _change(e.previous_content, e.content),
                checkpoint_id=e.checkpoint_id,
                message_id=e.message_id,
                ordinal=e.position,
            )
    for e in events.itertuples():
        if e.event == "removed":
            add(
                "removed",
                f"removed: {_snippet(e.previous_content)!r}",
                checkpoint_id=e.checkpoint_id,
                message_id=e.message_id,
            )
    for f in forks.itertuples():
        add("forked", f"{f.children} child checkpoints: {f.child_ids}", checkpoint_id=f.checkpoint_id)
    if summary["interrupt_pending"]:
        add("interrupt_pending", f"pending interrupt: {_snippet(interrupt_value, 200)}", checkpoint_id=latest_id)
    for ns, cid, stage, reason in errors:
        add("load_errors", f"{stage}: {reason}" + (f" (namespace {ns})" if ns else ""), checkpoint_id=cid)
    for e in events.itertuples():
        if e.event == "edited":
            add(
                "edited",
                _change(e.previous_content, e.content),
                checkpoint_id=e.checkpoint_id,
                message_id=e.message_id,
                ordinal=e.position,
            )
    for w in window.itertuples():
        if pd.isna(w.ts):
            add("no_ts_in_window", f"{w.speaker}: {_snippet(w.content)}", ordinal=w.ordinal, position=w.position)
    if summary["truncated_by"] > 0:
        first = int(window["ordinal"].min()) if len(window) else None
        add(
            "truncated",
            f"{int(summary['truncated_by'])} older user/assistant message(s) are not rehydrated (cap {cap}); "
            f"the window starts at message {first + 1}" if first is not None else "the window is empty",
            ordinal=first,
        )
    return typed(pd.DataFrame(rows), THREAD_RISK_COLUMNS)
