"""Expected windows (contract §5): what a resume from a root checkpoint rebuilds.

The rehydrate rule: the last `cap` user/assistant messages of the message list
at that root checkpoint (tool, system and other rows skipped), oldest first,
each tagged `source = "resume_rehydrate"`; at one checkpoint
(`expected_window`), at many (`windows_at`, for `analytics.observed`) or at
every resume point of many threads (`resume_windows`, the `report resume` CSV).

>>> expected_window("lens.duckdb", "acme:web:sess-001", cap=2).speaker.tolist()  # doctest: +SKIP
['user', 'assistant']
"""

from __future__ import annotations

from collections.abc import Sequence

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame, fetch_rows, typed
from analytics.resume.common import (
    DEFAULT_CAP,
    NO_FILTERS,
    PROCESS_KEYS,
    RESUME_SOURCE,
    check_cap,
    require_thread,
)
from analytics.resume.chain import RESUME_COLUMNS, points_query
from analytics.resume.gap import DEFAULT_GAP_MINUTES

__all__ = [
    "RESUME_WINDOW_COLUMNS",
    "WINDOW_COLUMNS",
    "expected_window",
    "latest_root",
    "resume_windows",
    "resume_windows_sql",
    "windows_at",
]

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


# The rehydrate rule over a set of (thread, root checkpoint) targets: unnest the
# checkpoint's message list, keep user/assistant versions, keep the last `cap`.
# `ts` follows contract §3 (oldest root checkpoint of any branch holding the id).
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
    return fetch_rows(con, "SELECT transcript_checkpoint_id FROM threads WHERE thread_id = ?", [thread_id])[0][0]


def latest_root(con_or_path: ConOrPath, thread_id: str) -> str | None:
    """The root checkpoint a restart now resumes from (the greatest id); None for a thread without one.

    Raises `NotFound` for an unknown thread.

    >>> latest_root("lens.duckdb", "acme:web:sess-001")  # doctest: +SKIP
    '1eff…'
    """
    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        return _latest_root(con, thread_id)


def expected_window(
    con_or_path: ConOrPath,
    thread_id: str,
    checkpoint_id: str | None = None,
    cap: int = DEFAULT_CAP,
) -> pd.DataFrame:
    """The window a resume from `checkpoint_id` rebuilds (contract §5). Columns: `WINDOW_COLUMNS`.

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
        require_thread(con, thread_id)
        if checkpoint_id is None:
            checkpoint_id = _latest_root(con, thread_id)
            if checkpoint_id is None:
                return typed(pd.DataFrame(), WINDOW_COLUMNS)
        elif not fetch_rows(
            con,
            "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ? AND is_root",
            [thread_id, checkpoint_id],
        ):
            raise NotFound(f"no root checkpoint {checkpoint_id!r} in thread {thread_id!r}")
        sql = "WITH targets AS (SELECT ? AS thread_id, ? AS checkpoint_id)," + _WINDOW_CTES + _WINDOW_SELECT
        return fetch_frame(con, sql, [thread_id, checkpoint_id, cap, RESUME_SOURCE], WINDOW_COLUMNS)


def windows_at(
    con_or_path: ConOrPath, targets: Sequence[tuple[str, str]], cap: int = DEFAULT_CAP, *, mask: bool = True
) -> pd.DataFrame:
    """Expected windows at many `(thread_id, checkpoint_id)` root checkpoints in one query.

    Unknown pairs simply give no rows. Columns: `WINDOW_COLUMNS`. `mask=False` (the
    observed-log comparison, which masks what it answers): the text as stored, whatever
    the connection masks (`analytics.frames.fetch_frame`).

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
        return fetch_frame(con, sql, [threads, checkpoints, cap, RESUME_SOURCE], WINDOW_COLUMNS, mask=mask)


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
    points_sql, params = points_query(filters, gap_minutes, process_keys)
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
        return fetch_frame(con, sql, params, RESUME_WINDOW_COLUMNS)
