"""Restart-resume fidelity QA (SPEC §5): resume points, expected windows, store-only risks.

On the first turn after a restart a runtime rebuilds its recency window from
the durable transcript: the last `cap` user/assistant messages of
`state['messages']` at the checkpoint it resumes from (tool, system and other
rows skipped), each tagged `source = "resume_rehydrate"`. This module answers,
from the database alone:

- `resume_points`: where a thread was resumed — an idle gap between consecutive
  root checkpoints of the current branch above a threshold, or a change of a
  run / process identifier in checkpoint metadata (`PROCESS_KEYS`);
- `expected_window`: the window a resume from a given root checkpoint rebuilds;
- `resume_windows`: that window at every resume point of many threads (the CSV report);
- `risks` / `thread_risks`: what in the store makes a faithful rebuild doubtful.

Comparing an *observed* window (JSONL) with the expected one is
`analytics.observed.compare`. The workflow, the formats and every column are
in docs/resume_qa.md.

Ordering. `ts` is the writer's wall clock: it ties within a step and goes
backwards across processes with skewed clocks, so checkpoints are ordered by
their parent chain, never by `ts`; gaps are *measured* on `ts` between a
checkpoint and its parent. In SQL the chain order on the current branch is
`metadata.step` (it grows by one per checkpoint along a branch, FORMATS §5);
the query checks that every checkpoint's predecessor in that order is its
parent, and walks the parent links recursively for any thread where it is not.

>>> import analytics
>>> analytics.resume_points("lens.duckdb", "acme:web:sess-restart")  # doctest: +SKIP
>>> analytics.expected_window("lens.duckdb", "acme:web:sess-restart", cap=10)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import math
import numbers
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from analytics._pandas import pandas_dtype, pd, types_mapper
from analytics.db import ConOrPath, connection, query_fingerprint, table_comments, write_derived_table
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters

#: The tag a runtime puts on rehydrated entries (`metadata["source"]`).
RESUME_SOURCE = "resume_rehydrate"
#: Window size of the runtime's recency deque (`max_entries`).
DEFAULT_CAP = 50
#: Idle time between consecutive root checkpoints that counts as a restart.
DEFAULT_GAP_MINUTES = 30.0
#: Speakers the rehydrate keeps; every other role is skipped.
SPEAKERS = ("user", "assistant")

#: Top-level checkpoint-metadata keys that name a run, a process or a host.
#: LangGraph copies every scalar `config["configurable"]` / `config["metadata"]`
#: entry into checkpoint metadata (FORMATS §5), so these are whatever the
#: runtime put in its config. A change of any of them between a checkpoint and
#: the nearest ancestor carrying the same key is a resume point.
PROCESS_KEYS: tuple[str, ...] = (
    "run_id",
    "process_id",
    "pid",
    "writer",
    "writer_pid",
    "worker",
    "worker_id",
    "host",
    "hostname",
)


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
NO_FILTERS = Filters()  # frozen, so one shared default is safe

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

#: Columns of `expected_window()`.
WINDOW_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_id": "str",
    "position": "Int64",
    "speaker": "str",
    "content": "str",
    "message_id": "str",
    "ts": "datetime64[us, UTC]",
    "source": "str",
    "ordinal": "Int64",
    "version": "Int64",
}

#: Columns of `resume_windows()` (the `report resume` CSV without --observed).
RESUME_WINDOW_COLUMNS: dict[str, str] = {
    **{k: v for k, v in RESUME_COLUMNS.items() if k != "before_message_count"},
    **{k: v for k, v in WINDOW_COLUMNS.items() if k not in ("thread_id", "checkpoint_id")},
}

#: Columns of `timeline()`.
TIMELINE_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_id": "str",
    "parent_checkpoint_id": "str",
    "ts": "datetime64[us, UTC]",
    "step": "Int64",
    "source": "str",
    "message_count": "Int64",
    "on_current_branch": "boolean",
    "chain_position": "Int64",
    "is_latest": "boolean",
    "is_leaf": "boolean",
    "has_interrupt": "boolean",
    "branch_root_id": "str",
    "process": "str",
    "resume": "str",
    "resume_no": "Int64",
}

#: Columns of `risks()`.
RISK_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "tenant_id": "str",
    "sub_tenant_id": "str",
    "session_id": "str",
    "risk_score": "Int64",
    "flags": "str",
    "conversational_messages": "Int64",
    "window_size": "Int64",
    "truncated_by": "Int64",
    "window_no_id": "Int64",
    "window_no_ts": "Int64",
    "edited_messages": "Int64",
    "edited_in_window": "Int64",
    "removed_messages": "Int64",
    "branches": "Int64",
    "forks": "Int64",
    "latest_not_leaf": "boolean",
    "interrupt_pending": "boolean",
    "undecodable_messages": "Int64",
    "load_errors": "Int64",
    "latest_checkpoint_id": "str",
    "last_ts": "datetime64[us, UTC]",
}

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


# ---------------------------------------------------------------------------
# argument checks and frame plumbing


def check_cap(cap: object) -> int:
    """The window size: an integer >= 0 (0 rehydrates nothing).

    >>> check_cap(3)
    3
    """
    if isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or cap < 0:
        raise BadRequest(f"cap must be an integer >= 0, got {cap!r}")
    return int(cap)


def check_gap(gap_minutes: object) -> float:
    """The idle-gap threshold in minutes: a positive finite number.

    >>> check_gap(30)
    30.0
    """
    if isinstance(gap_minutes, bool) or not isinstance(gap_minutes, numbers.Real):
        raise BadRequest(f"gap_minutes must be a number, got {gap_minutes!r}")
    value = float(gap_minutes)
    if not math.isfinite(value) or value <= 0:
        raise BadRequest(f"gap_minutes must be > 0, got {gap_minutes!r}")
    return value


def _process_paths(keys: Sequence[str]) -> list[str]:
    if isinstance(keys, str):
        raise BadRequest("process_keys must be a sequence of key names, not one string")
    paths = []
    for key in keys:
        # The key becomes a JSON path value (bound, never SQL); a quote would break the path.
        if not isinstance(key, str) or not key or '"' in key or "\\" in key:
            raise BadRequest(f"process key {key!r} must be a non-empty name without quotes or backslashes")
        paths.append(f'$."{key}"')
    return paths


# Arrow → pandas keeps integers nullable and strings as `str` whatever the rows hold.
_ARROW_TO_PANDAS = types_mapper(lambda: {
    pa.int8(): pd.Int64Dtype(),
    pa.int16(): pd.Int64Dtype(),
    pa.int32(): pd.Int64Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
    pa.float64(): pd.Float64Dtype(),
})


def _fetch(con, sql: str, params, dtypes: dict[str, str]) -> pd.DataFrame:
    frame = con.sql(sql, params=params).to_arrow_table().to_pandas(types_mapper=_ARROW_TO_PANDAS)
    return _typed(frame, dtypes)


def _typed(frame: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    """`frame` with exactly `dtypes`' columns, in order, with those dtypes (empty frames too)."""
    out = {}
    for name, dtype in dtypes.items():
        col = (
            frame[name] if name in frame.columns else pd.Series([None] * len(frame), index=frame.index, dtype="object")
        )
        if dtype.startswith("datetime64"):
            # A caller's connection may use another session time zone; answers are UTC.
            col = pd.to_datetime(col, utc=True).dt.as_unit("us")
        elif col.dtype != pandas_dtype(dtype):
            col = col.astype(dtype)
        out[name] = col
    return pd.DataFrame(out, index=frame.index).reset_index(drop=True)


def _rows(con, sql: str, params: list) -> list[tuple]:
    # fetchall() finishes the result; a half-read one (fetchone) blocks the caller's connection.
    return con.sql(sql, params=params).fetchall()


def _require_thread(con, thread_id: str) -> None:
    if not isinstance(thread_id, str) or not thread_id:
        raise BadRequest(f"thread_id must be a non-empty string, got {thread_id!r}")
    if not _rows(con, "SELECT 1 FROM threads WHERE thread_id = ?", [thread_id]):
        raise NotFound(f"no thread {thread_id!r} in this database")


# ---------------------------------------------------------------------------
# resume points


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
# the key's index, see `_points_sql`); the key names themselves are bound.
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
    SELECT p.*, len(b.message_versions) AS before_message_count,
           row_number() OVER (PARTITION BY p.thread_id ORDER BY p.chain_position) AS resume_no
    FROM points AS p
    JOIN checkpoints AS b ON b.thread_id = p.thread_id AND b.checkpoint_id = p.before_checkpoint_id AND b.is_root
)"""


def _points_sql(filters: Filters, gap_minutes: float, process_keys: Sequence[str]) -> tuple[str, list]:
    """CTEs ending in `numbered` (resume points with `resume_no`) and their parameters."""
    where, params = filters.thread_where("t")
    gap_us = round(check_gap(gap_minutes) * 60e6)
    keys = list(process_keys)
    paths = _process_paths(keys)
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
    return sql, [*params, paths, keys, gap_us, gap_us, gap_us]


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
            _require_thread(con, thread_id)
            filters = Filters(thread_ids=(thread_id,))
        sql, params = _points_sql(filters, gap_minutes, process_keys)
        return _fetch(con, sql + _POINTS_SELECT, params, RESUME_COLUMNS)


def resume_counts_sql(
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> tuple[str, list]:
    """`(sql, params)` of `thread_id, resume_points` for threads with at least one resume point.

    The same points as `resume_points()`, counted; for a metrics query to join.

    >>> sql, params = resume_counts_sql(Filters(tenants=("acme",)))
    >>> params[0]
    ['acme']
    """
    sql, params = _points_sql(filters, gap_minutes, process_keys)
    return sql + "\nSELECT thread_id, count(*) AS resume_points FROM points GROUP BY thread_id", params


# ---------------------------------------------------------------------------
# expected windows

# The rehydrate rule over a set of (thread, root checkpoint) targets: unnest the
# checkpoint's message list, keep user/assistant versions, keep the last `cap`.
# `ts` follows SPEC §3 (oldest root checkpoint of any branch holding the id).
_WINDOW_CTES = """
lists AS (
    SELECT c.thread_id, c.checkpoint_id,
           unnest(c.message_versions) AS version,
           generate_subscripts(c.message_versions, 1) - 1 AS ordinal
    FROM checkpoints AS c
    JOIN targets AS g ON g.thread_id = c.thread_id AND g.checkpoint_id = c.checkpoint_id
    WHERE c.is_root
),
conv AS (
    SELECT l.thread_id, l.checkpoint_id, l.ordinal, l.version, v.role AS speaker, v.content, v.message_id,
           row_number() OVER (PARTITION BY l.thread_id, l.checkpoint_id ORDER BY l.ordinal DESC) AS from_end
    FROM lists AS l
    JOIN message_versions AS v ON v.thread_id = l.thread_id AND v.version = l.version
    WHERE v.role IN ('user', 'assistant')
),
win AS (SELECT * FROM conv WHERE from_end <= ?),
first_seen AS (
    SELECT v.thread_id, v.message_id,
           min_by(v.first_ts, (v.first_ts IS NULL, v.first_ts, v.first_checkpoint_id)) AS ts
    FROM message_versions AS v
    JOIN (SELECT DISTINCT thread_id, message_id FROM win WHERE message_id IS NOT NULL) AS k
      ON k.thread_id = v.thread_id AND k.message_id = v.message_id
    GROUP BY v.thread_id, v.message_id
),
windows AS (
    SELECT w.thread_id, w.checkpoint_id,
           row_number() OVER (PARTITION BY w.thread_id, w.checkpoint_id ORDER BY w.ordinal) - 1 AS position,
           w.speaker, w.content, w.message_id, f.ts, ? AS source, w.ordinal, w.version
    FROM win AS w
    LEFT JOIN first_seen AS f ON f.thread_id = w.thread_id AND f.message_id = w.message_id
)"""

_WINDOW_SELECT = """
SELECT thread_id, checkpoint_id, position, speaker, content, message_id, ts, source, ordinal, version
FROM windows
ORDER BY thread_id, checkpoint_id, position
"""


def _latest_root(con, thread_id: str) -> str | None:
    return _rows(con, "SELECT latest_checkpoint_id FROM threads WHERE thread_id = ?", [thread_id])[0][0]


def latest_root(con_or_path: ConOrPath, thread_id: str) -> str | None:
    """The root checkpoint a restart now resumes from (the greatest id); None for a thread without one.

    Raises `NotFound` for an unknown thread.

    >>> latest_root("lens.duckdb", "acme:web:sess-001")  # doctest: +SKIP
    '1eff…'
    """
    with connection(con_or_path) as con:
        _require_thread(con, thread_id)
        return _latest_root(con, thread_id)


def expected_window(
    con_or_path: ConOrPath,
    thread_id: str,
    checkpoint_id: str | None = None,
    cap: int = DEFAULT_CAP,
) -> pd.DataFrame:
    """The window a resume from `checkpoint_id` rebuilds (SPEC §5). Columns: `WINDOW_COLUMNS`.

    The last `cap` user/assistant messages of the message list at that root
    checkpoint (tool, system and other rows skipped), oldest first:
    `position` 0.. within the window, `ordinal` in the transcript at that
    checkpoint, `source` always `resume_rehydrate`. `checkpoint_id=None` is the
    latest root checkpoint, i.e. the `messages` table. Raises `NotFound` for an
    unknown thread or a checkpoint that is not one of its root checkpoints.

    >>> expected_window("lens.duckdb", "acme:web:sess-001", cap=2).speaker.tolist()  # doctest: +SKIP
    ['user', 'assistant']
    """
    cap = check_cap(cap)
    with connection(con_or_path) as con:
        _require_thread(con, thread_id)
        if checkpoint_id is None:
            checkpoint_id = _latest_root(con, thread_id)
            if checkpoint_id is None:
                return _typed(pd.DataFrame(), WINDOW_COLUMNS)
        elif not _rows(
            con,
            "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ? AND is_root",
            [thread_id, checkpoint_id],
        ):
            raise NotFound(f"no root checkpoint {checkpoint_id!r} in thread {thread_id!r}")
        sql = "WITH targets AS (SELECT ? AS thread_id, ? AS checkpoint_id)," + _WINDOW_CTES + _WINDOW_SELECT
        return _fetch(con, sql, [thread_id, checkpoint_id, cap, RESUME_SOURCE], WINDOW_COLUMNS)


def windows_at(con_or_path: ConOrPath, targets: Sequence[tuple[str, str]], cap: int = DEFAULT_CAP) -> pd.DataFrame:
    """Expected windows at many `(thread_id, checkpoint_id)` root checkpoints in one query.

    Unknown pairs simply give no rows. Columns: `WINDOW_COLUMNS`.

    >>> windows_at("lens.duckdb", [("acme:web:sess-001", "1eff…")], cap=3)  # doctest: +SKIP
    """
    cap = check_cap(cap)
    threads = [str(t) for t, _ in targets]
    checkpoints = [str(c) for _, c in targets]
    sql = (
        "WITH targets AS (SELECT DISTINCT unnest(?) AS thread_id, unnest(?) AS checkpoint_id),"
        + _WINDOW_CTES
        + _WINDOW_SELECT
    )
    with connection(con_or_path) as con:
        return _fetch(con, sql, [threads, checkpoints, cap, RESUME_SOURCE], WINDOW_COLUMNS)


_RESUME_WINDOWS_SELECT = """
SELECT n.thread_id, n.resume_no, n.before_checkpoint_id, n.before_ts, n.after_checkpoint_id, n.after_ts,
       n.gap_s, n.reason, n.process_change,
       w.position, w.speaker, w.content, w.message_id, w.ts, w.source, w.ordinal, w.version
FROM numbered AS n
LEFT JOIN windows AS w ON w.thread_id = n.thread_id AND w.checkpoint_id = n.before_checkpoint_id
ORDER BY n.thread_id, n.resume_no, w.position
"""


def resume_windows_sql(
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    cap: int = DEFAULT_CAP,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> tuple[str, list]:
    """The query behind `resume_windows()`: `(sql, params)`, columns `RESUME_WINDOW_COLUMNS`.

    >>> sql, params = resume_windows_sql(Filters(thread_ids=("t",)), 30, 5)
    >>> params[0]
    ['t']
    """
    cap = check_cap(cap)
    points_sql, params = _points_sql(filters, gap_minutes, process_keys)
    sql = (
        points_sql
        + ", targets AS (SELECT DISTINCT thread_id, before_checkpoint_id AS checkpoint_id FROM numbered),"
        + _WINDOW_CTES
        + _RESUME_WINDOWS_SELECT
    )
    return sql, [*params, cap, RESUME_SOURCE]


def resume_windows(
    con_or_path: ConOrPath,
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    cap: int = DEFAULT_CAP,
    *,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> pd.DataFrame:
    """The expected window at every resume point of every thread in `filters`, one row per entry.

    Columns: `RESUME_WINDOW_COLUMNS` (the resume point, then the window entry).
    A resume whose window is empty (nothing to rehydrate yet) still has one
    row, with NULL entry columns, so every resume point is listed.

    >>> resume_windows("lens.duckdb", cap=10).groupby("thread_id").resume_no.nunique()  # doctest: +SKIP
    """
    sql, params = resume_windows_sql(filters, gap_minutes, cap, process_keys)
    with connection(con_or_path) as con:
        return _fetch(con, sql, params, RESUME_WINDOW_COLUMNS)


# ---------------------------------------------------------------------------
# one thread's timeline


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
        rows = _rows(con, _CURRENT_SQL, [thread_id])
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


_TIMELINE_SQL = """
SELECT thread_id, checkpoint_id, parent_checkpoint_id, ts, step, source,
       len(message_versions) AS message_count, on_current_branch, is_latest, is_leaf, has_interrupt,
       branch_root_id, json_extract_string(metadata, ?) AS process_values
FROM checkpoints
WHERE thread_id = ? AND is_root
ORDER BY checkpoint_id
"""


def timeline(
    con_or_path: ConOrPath,
    thread_id: str,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    *,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> pd.DataFrame:
    """Every root checkpoint of one thread, current branch in chain order first, then the others.

    Columns: `TIMELINE_COLUMNS`. `chain_position` is 1.. along the current
    branch (NULL off it); `process` lists the `process_keys` values in the
    checkpoint's metadata; `resume` marks the two checkpoints of each resume
    point (`before #1`, `after #1`; both roles when one point follows another)
    and `resume_no` is the point a checkpoint opens (else the one it closes).

    >>> timeline("lens.duckdb", "acme:web:sess-restart").query("resume == 'after'")  # doctest: +SKIP
    """
    keys = list(process_keys)
    paths = _process_paths(keys)
    with connection(con_or_path) as con:
        _require_thread(con, thread_id)
        frame = con.sql(_TIMELINE_SQL, params=[paths, thread_id]).df()
        points = resume_points(con, thread_id, gap_minutes, process_keys=keys)
        chain = current_chain(con, thread_id)
    position = {cid: i + 1 for i, (cid, _) in enumerate(chain)}
    frame["chain_position"] = frame["checkpoint_id"].map(position).astype("Int64")
    frame["process"] = [
        None
        if vals is None or isinstance(vals, str) or all(v is None for v in vals)
        else ", ".join(f"{k}={v}" for k, v in zip(keys, vals) if v is not None)
        for vals in frame["process_values"]
    ]
    # A checkpoint can close one resume point and open the next: "after #1, before #2".
    roles: dict[str, list[str]] = defaultdict(list)
    number: dict[str, int] = {}
    for p in points.itertuples():
        roles[p.after_checkpoint_id].append(f"after #{p.resume_no}")
        roles[p.before_checkpoint_id].append(f"before #{p.resume_no}")
        number[p.before_checkpoint_id] = p.resume_no
        number.setdefault(p.after_checkpoint_id, p.resume_no)
    frame["resume"] = frame["checkpoint_id"].map(
        lambda c: ", ".join(sorted(roles[c], key=lambda r: r.split("#")[1])) if c in roles else None
    )
    frame["resume_no"] = frame["checkpoint_id"].map(number).astype("Int64")
    frame = frame.sort_values(["chain_position", "ts", "checkpoint_id"], na_position="last", kind="stable")
    return _typed(frame, TIMELINE_COLUMNS)


# ---------------------------------------------------------------------------
# risks


_RISKS_SQL = """
WITH scope AS (SELECT t.* FROM threads AS t WHERE {where}),
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
      ON t.thread_id = c.thread_id AND c.checkpoint_id = t.latest_checkpoint_id AND c.is_root
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
           t.latest_checkpoint_id,
           t.last_ts
    FROM scope AS t
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
       latest_not_leaf, interrupt_pending, undecodable_messages, load_errors, latest_checkpoint_id, last_ts
FROM flagged
ORDER BY risk_score DESC, thread_id
"""


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


def risks_sql(filters: Filters = NO_FILTERS, cap: int = DEFAULT_CAP) -> tuple[str, list]:
    """The live query of `risks()`, with its parameters.

    >>> sql, params = risks_sql(Filters(tenants=("acme",)))
    """
    cap = check_cap(cap)
    where, params = filters.thread_where("t")
    # `where` is Filters' own SQL with placeholders; values stay bound.
    cases, score, names, weights = _flag_sql()
    sql = _RISKS_SQL.format(where=where, flag_cases=cases, score=score)
    return sql, [*params, cap, cap, cap, cap, cap, *names, *weights]


def risks(con_or_path: ConOrPath, filters: Filters = NO_FILTERS, cap: int = DEFAULT_CAP) -> pd.DataFrame:
    """One row per thread passing `filters`, riskiest first. Columns: `RISK_COLUMNS`.

    Risks are judged on what a restart *now* would rehydrate: the window of the
    latest root checkpoint (`cap` entries). `flags` lists the `RISK_FLAGS` that
    apply (comma-separated, most severe first); `risk_score` is the sum of
    their weights. One set-based query, whatever the number of threads; with
    the default cap, a read of the loader's `risk_figures` table when the
    database has a current one (its rows are per thread, so `filters` only
    choose among them).

    >>> risks("lens.duckdb").head(10)[["thread_id", "risk_score", "flags"]]  # doctest: +SKIP
    """
    cap = check_cap(cap)
    with connection(con_or_path) as con:
        if cap == DEFAULT_CAP and _risks_materialized(con):
            where, params = filters.thread_where("t")
            # `where` is Filters' own SQL with placeholders; the table name is ours.
            sql = (
                f"SELECT r.* FROM {RISKS_TABLE} AS r WHERE r.thread_id IN (SELECT t.thread_id FROM threads AS t WHERE {where}) "
                "ORDER BY r.risk_score DESC, r.thread_id"
            )
            return _fetch(con, sql, params, RISK_COLUMNS)
        return _fetch(con, *risks_sql(filters, cap), RISK_COLUMNS)


#: Table written by the loader at the end of every load: `risks()` of every thread
#: with the default cap (docs/schema.md), so the Resume QA overview is a scan.
RISKS_TABLE = "risk_figures"


@functools.cache
def _risks_fingerprint() -> str:
    """Identifies the query that fills `RISKS_TABLE` (stored as the table's comment);
    a table written by another definition of a figure or flag is not read."""
    return query_fingerprint("risks_sql", *risks_sql())


def materialize_risks(con) -> None:
    """(Re)create `risk_figures` = `risks(con)` for every thread (default cap).

    Called by the loader on the staged database, next to the metric tables.
    """
    write_derived_table(con, RISKS_TABLE, *risks_sql(), _risks_fingerprint())


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
        ON t.thread_id = c.thread_id AND c.checkpoint_id = t.latest_checkpoint_id AND c.is_root
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
        _require_thread(con, thread_id)
        summary = risks(con, Filters(thread_ids=(thread_id,)), cap).iloc[0]
        window = expected_window(con, thread_id, cap=cap)
        events = con.sql(_EVENTS_SQL, params=[thread_id]).df()
        forks = con.sql(_FORKS_SQL, params=[thread_id]).df()
        latest_id, interrupt_value = _rows(
            con, "SELECT latest_checkpoint_id, interrupt_value FROM threads WHERE thread_id = ?", [thread_id]
        )[0]
        children = [
            r[0]
            for r in _rows(
                con,
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND is_root AND parent_checkpoint_id = ? "
                "ORDER BY checkpoint_id",
                [thread_id, latest_id],
            )
        ]
        gaps = [r[0] for r in _rows(con, _TRANSCRIPT_GAPS_SQL, [thread_id, thread_id])]
        errors = _rows(
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
            f"the window starts at ordinal {first}",
            ordinal=first,
        )
    return _typed(pd.DataFrame(rows), THREAD_RISK_COLUMNS)
