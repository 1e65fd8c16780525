"""Resume points: where a thread was resumed, along the chain of its current branch (contract §5).

A resume point is a pair of consecutive root checkpoints of the current branch
(`before` → `after`, parent → child) with an idle gap above a threshold
between them, or a change of a run / process identifier in checkpoint
metadata (`PROCESS_KEYS`).

Ordering. `ts` is the writer's wall clock: it ties within a step and goes
backwards across processes with skewed clocks, so checkpoints are ordered by
their parent chain, never by `ts`; gaps are *measured* on `ts` between a
checkpoint and its parent. In SQL the chain order on the current branch is
`metadata.step` (it grows by one per checkpoint along a branch, contract §7.13);
the query checks that every checkpoint's predecessor in that order is its
parent, and walks the parent links recursively for any thread where it is not.
`current_chain` walks them in Python for one thread.

>>> resume_points("lens.duckdb", "acme:web:sess-restart")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import fetch_frame, fetch_rows
from analytics.resume.common import NO_FILTERS, PROCESS_KEYS, process_paths, require_thread
from analytics.resume.gap import DEFAULT_GAP_MINUTES, gap_us

__all__ = ["RESUME_COLUMNS", "current_chain", "points_ctes", "resume_counts_sql", "resume_points"]

#: Columns of `resume_points()`.
RESUME_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "resume_no": "Int64",
    "before_checkpoint_id": "str",
    "before_ts": "datetime64[us, UTC]",
    "after_checkpoint_id": "str",
    "after_ts": "datetime64[us, UTC]",
    "gap_s": "Float64",
    "reason": "str",
    "process_change": "str",
    "before_message_count": "Int64",
}


# The current branch of every thread in scope, in parent-chain order, with each
# checkpoint's predecessor. `by_step` orders by metadata.step (one window pass
# over narrow rows: carrying the JSON metadata through the sort would cost more
# than the sort); `unsure` lists threads where some checkpoint's predecessor in
# that order is not its parent (no step, foreign writers), and for those alone
# the recursive `walk` follows the parent links.
_CHAIN_CTES = """
scope AS (SELECT t.thread_id FROM threads AS t WHERE {where}),
cp AS (
    SELECT c.thread_id, c.checkpoint_id, c.parent_checkpoint_id, c.ts, c.step
    FROM checkpoints AS c
    WHERE c.is_root AND c.on_current_branch AND c.thread_id IN (SELECT thread_id FROM scope)
),
by_step AS (
    SELECT *, row_number() OVER w AS seq, lag(checkpoint_id) OVER w AS prev_id, lag(ts) OVER w AS prev_ts
    FROM cp
    WINDOW w AS (PARTITION BY thread_id ORDER BY step NULLS FIRST, ts NULLS FIRST, checkpoint_id)
),
unsure AS (
    SELECT DISTINCT thread_id FROM by_step
    WHERE seq > 1 AND prev_id IS DISTINCT FROM parent_checkpoint_id
),
unsure_cp AS (SELECT * FROM cp WHERE thread_id IN (SELECT thread_id FROM unsure)),
walk(thread_id, checkpoint_id, depth) AS (
    SELECT c.thread_id, c.checkpoint_id, 1
    FROM unsure_cp AS c
    WHERE NOT EXISTS (SELECT 1 FROM unsure_cp AS p
                      WHERE p.thread_id = c.thread_id AND p.checkpoint_id = c.parent_checkpoint_id)
    UNION ALL
    SELECT c.thread_id, c.checkpoint_id, w.depth + 1
    FROM walk AS w
    JOIN unsure_cp AS c ON c.thread_id = w.thread_id AND c.parent_checkpoint_id = w.checkpoint_id
),
chain AS (
    SELECT thread_id, checkpoint_id, ts, seq AS chain_position, prev_id, prev_ts
    FROM by_step
    WHERE thread_id NOT IN (SELECT thread_id FROM unsure)
    UNION ALL
    -- A checkpoint the walk cannot reach (a parent cycle) has no place, so no resume point.
    SELECT w.thread_id, w.checkpoint_id, c.ts, w.depth,
           lag(w.checkpoint_id) OVER v, lag(c.ts) OVER v
    FROM walk AS w JOIN unsure_cp AS c USING (thread_id, checkpoint_id)
    WINDOW v AS (PARTITION BY w.thread_id ORDER BY w.depth)
)"""

# `{carry}` / `{changes}` hold one fixed expression per process key (built from
# the key's index, see `points_query`); the key names themselves are bound.
_POINTS_CTES = """
meta AS (
    SELECT thread_id, checkpoint_id, vals
    FROM (SELECT c.thread_id, c.checkpoint_id, json_extract_string(c.metadata, ?) AS vals
          FROM checkpoints AS c
          WHERE c.is_root AND c.on_current_branch AND c.thread_id IN (SELECT thread_id FROM scope))
    WHERE list_count(vals) > 0
),
carried AS (
    -- Only checkpoints carrying a key take part, and each key is compared with its own
    -- last value (IGNORE NULLS): a checkpoint without it (an operator's update_state)
    -- neither starts nor hides a change.
    SELECT m.thread_id, m.checkpoint_id, m.vals, [{carry}] AS prev_vals
    FROM meta AS m JOIN chain AS c USING (thread_id, checkpoint_id)
    WINDOW w AS (PARTITION BY m.thread_id ORDER BY c.chain_position
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
changed AS (
    SELECT thread_id, checkpoint_id, array_to_string(changes, '; ') AS process_change
    FROM (SELECT c.thread_id, c.checkpoint_id,
                 list_filter([{changes}], lambda x: x IS NOT NULL) AS changes
          FROM carried AS c, (SELECT ?::VARCHAR[] AS names) AS k)
    WHERE len(changes) > 0
),
points AS (
    SELECT c.thread_id, c.prev_id AS before_checkpoint_id, c.prev_ts AS before_ts,
           c.checkpoint_id AS after_checkpoint_id, c.ts AS after_ts,
           (epoch_us(c.ts) - epoch_us(c.prev_ts)) / 1e6 AS gap_s,
           CASE
               WHEN (epoch_us(c.ts) - epoch_us(c.prev_ts)) > ? AND ch.checkpoint_id IS NOT NULL
                   THEN 'idle_gap+process_change'
               WHEN (epoch_us(c.ts) - epoch_us(c.prev_ts)) > ? THEN 'idle_gap'
               ELSE 'process_change'
           END AS reason,
           ch.process_change,
           c.chain_position
    FROM chain AS c
    LEFT JOIN changed AS ch USING (thread_id, checkpoint_id)
    WHERE c.prev_id IS NOT NULL
      AND ((epoch_us(c.ts) - epoch_us(c.prev_ts)) > ? OR ch.checkpoint_id IS NOT NULL)
),
numbered AS (
    -- A human wait: an idle gap alone, begun at a checkpoint waiting on an interrupt (a person
    -- taking their time to answer, the runtime unchanged). A resume point, never a restart.
    SELECT p.*, len(b.message_versions) AS before_message_count,
           coalesce(b.has_interrupt AND p.reason = 'idle_gap', FALSE) AS human_wait,
           row_number() OVER (PARTITION BY p.thread_id ORDER BY p.chain_position) AS resume_no
    FROM points AS p
    JOIN checkpoints AS b ON b.thread_id = p.thread_id AND b.checkpoint_id = p.before_checkpoint_id AND b.is_root
)"""


def points_query(filters: Filters, gap_minutes: float, process_keys: Sequence[str]) -> tuple[str, list]:
    """CTEs ending in `numbered` (resume points with `resume_no`) and their parameters."""
    where, params = filters.thread_where("t")
    return points_ctes(where, params, gap_minutes, process_keys)


def points_ctes(where: str, params: list, gap_minutes: float, process_keys: Sequence[str]) -> tuple[str, list]:
    """`WITH RECURSIVE` CTEs ending in `numbered` over the threads `threads AS t WHERE where`.

    `where` is SQL built by the caller with placeholders (a `Filters.thread_where("t")`), its
    values in `params`; the caller may add CTEs after these."""
    gap = gap_us(gap_minutes)
    keys = list(process_keys)
    paths = process_paths(keys)
    if not keys:
        raise BadRequest("process_keys must name at least one key (pass a key no checkpoint has to ignore metadata)")
    # One expression per key, differing only in the list index (an int, never data).
    carry = ", ".join(f"last_value(m.vals[{i}] IGNORE NULLS) OVER w" for i in range(1, len(keys) + 1))
    changes = ", ".join(
        f"CASE WHEN c.vals[{i}] <> c.prev_vals[{i}] THEN k.names[{i}] || ': ' || c.prev_vals[{i}] || ' → ' || c.vals[{i}] END"
        for i in range(1, len(keys) + 1)
    )
    # `where` is Filters' own SQL with placeholders; values stay bound.
    sql = "WITH RECURSIVE" + _CHAIN_CTES.format(where=where) + "," + _POINTS_CTES.format(carry=carry, changes=changes)
    return sql, [*params, paths, keys, gap, gap, gap]


_POINTS_SELECT = """
SELECT thread_id, resume_no, before_checkpoint_id, before_ts, after_checkpoint_id, after_ts,
       gap_s, reason, process_change, before_message_count
FROM numbered
ORDER BY thread_id, resume_no
"""


def resume_points(
    con_or_path: ConOrPath,
    thread_id: str | None = None,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    *,
    filters: Filters = NO_FILTERS,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> pd.DataFrame:
    """Where a thread was resumed after a restart, in chain order. Columns: `RESUME_COLUMNS`.

    A point is a pair of consecutive root checkpoints of the current branch
    (`before` → `after`, parent → child) where the idle gap `after_ts -
    before_ts` exceeds `gap_minutes`, or where a `process_keys` value in
    metadata differs from the nearest earlier checkpoint carrying that key.
    `before_checkpoint_id` is the transcript the runtime rehydrates from.
    `reason` is `idle_gap`, `process_change` or `idle_gap+process_change`;
    `process_change` says what changed (`writer: worker-1 → worker-2`).

    `thread_id=None` answers for every thread passing `filters`.

    >>> resume_points("lens.duckdb", "acme:web:sess-restart")[["reason", "gap_s"]]  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        if thread_id is not None:
            require_thread(con, thread_id)
            filters = Filters(thread_ids=(thread_id,))
        sql, params = points_query(filters, gap_minutes, process_keys)
        return fetch_frame(con, sql + _POINTS_SELECT, params, RESUME_COLUMNS)


def resume_counts_sql(
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> tuple[str, list]:
    """`(sql, params)` of `thread_id, resume_points` for threads with at least one restart.

    The points of `resume_points()` that are restarts, counted (a human wait, an idle gap alone
    that began waiting on an interrupt, is not one); for a metrics query to join.

    >>> sql, params = resume_counts_sql(Filters(tenants=("acme",)))
    >>> params[0]
    ['acme']
    """
    sql, params = points_query(filters, gap_minutes, process_keys)
    counted = "\nSELECT thread_id, count(*) AS resume_points FROM numbered WHERE NOT human_wait GROUP BY thread_id"
    return sql + counted, params


# ---------------------------------------------------------------------------
# the current branch of one thread, walked in Python


_CURRENT_SQL = """
SELECT checkpoint_id, parent_checkpoint_id, ts FROM checkpoints
WHERE thread_id = ? AND is_root AND on_current_branch
"""


def current_chain(con_or_path: ConOrPath, thread_id: str) -> list[tuple[str, object]]:
    """The current branch of one thread as `[(checkpoint_id, ts), ...]`, first checkpoint first.

    Walks the parent links back from the latest root checkpoint, so the order
    holds whatever `ts` or the ids say.

    >>> current_chain("lens.duckdb", "acme:web:s1")[-1]  # doctest: +SKIP
    ('1eff…', datetime.datetime(2025, 3, 3, 9, 3, 25, tzinfo=...))
    """
    with connection(con_or_path) as con:
        rows = fetch_rows(con, _CURRENT_SQL, [thread_id])
    parent_of = {cid: parent for cid, parent, _ in rows}
    ts_of = {cid: ts for cid, _, ts in rows}
    chain: list[str] = []
    seen: set[str] = set()
    node = max(parent_of, default=None)  # the latest root checkpoint heads the current branch
    while node is not None and node in parent_of and node not in seen:  # `seen`: a parent cycle ends the walk
        chain.append(node)
        seen.add(node)
        node = parent_of[node]
    return [(cid, ts_of[cid]) for cid in reversed(chain)]
