"""What a deletion left behind in the store: a retention report and deletion manifest (contract §11).

A removed or edited message is gone from the transcript, but the store still holds
it: every older checkpoint of the thread carries the whole message list it had then
(a SqliteSaver in the checkpoint blob, a PostgresSaver in the `messages` blob that
checkpoint names), and so do abandoned branches. This tool never writes to a store,
so it tells the operator what to delete: one row per checkpoint that still holds
content no longer in the transcript, and one row per thread older than a given
age, each with the keys of the rows to delete.

    transcript-lens report retention --db lens.duckdb --older-than 365 --out manifest.csv

The answer is as of the database's last load (the checkpoints it read then).
Subgraph checkpoints are listed only by the age rule: their message lists are not
in the database (contract §3.9).

>>> retention(con, older_than_days=365).columns[:4].tolist()  # doctest: +SKIP
['thread_id', 'tenant_id', 'reason', 'checkpoint_ns']
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.reporting.spec import ReportSpec, register_report
from analytics.cli_types import number

#: The manifest's columns, in order.
COLUMNS = (
    "thread_id",
    "tenant_id",
    "reason",
    "checkpoint_ns",
    "checkpoint_id",
    "checkpoint_ts",
    "gone_messages",
    "message_ids",
    "delete",
)

#: `reason` values: content an older checkpoint holds that the transcript no longer has,
#: by how it went, and whole threads past the age limit.
REASONS = ("edited", "removed", "abandoned_branch", "older_than")

_DELETE_CHECKPOINT = (
    "checkpoints row (thread_id, checkpoint_ns, checkpoint_id) and its writes rows (same key); "
    "Postgres: also checkpoint_blobs rows of channel 'messages' that no kept checkpoint names"
)
_DELETE_THREAD = "every row of the thread in checkpoints, writes and (Postgres) checkpoint_blobs"

_SQL = """
WITH scoped AS (
    SELECT t.thread_id, t.tenant_id, t.transcript_checkpoint_id, t.last_ts FROM threads t WHERE {where}
),
latest AS (
    SELECT s.thread_id, coalesce(c.message_versions, []) AS versions
    FROM scoped s LEFT JOIN checkpoints c
      ON c.thread_id = s.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = s.transcript_checkpoint_id
),
current_ids AS (
    SELECT DISTINCT m.thread_id, m.message_id FROM messages m JOIN scoped USING (thread_id)
    WHERE m.message_id IS NOT NULL
),
removed_ids AS (
    SELECT DISTINCT e.thread_id, e.message_id FROM message_events e JOIN scoped USING (thread_id)
    WHERE e.event = 'removed' AND e.message_id IS NOT NULL
),
gone AS (   -- versions of a thread that its transcript does not hold, and how they went
    SELECT v.thread_id, v.version, v.message_id,
           CASE WHEN ci.message_id IS NOT NULL THEN 'edited'
                WHEN ri.message_id IS NOT NULL THEN 'removed'
                ELSE 'abandoned_branch' END AS reason
    FROM message_versions v
    JOIN latest l USING (thread_id)
    LEFT JOIN current_ids ci ON ci.thread_id = v.thread_id AND ci.message_id = v.message_id
    LEFT JOIN removed_ids ri ON ri.thread_id = v.thread_id AND ri.message_id = v.message_id
    WHERE NOT list_contains(l.versions, v.version)
),
held AS (   -- every root checkpoint's list, one row per version it holds
    SELECT c.thread_id, c.checkpoint_id, c.ts, unnest(c.message_versions) AS version
    FROM checkpoints c JOIN scoped USING (thread_id)
    WHERE c.checkpoint_ns = '' AND c.message_versions IS NOT NULL
),
by_checkpoint AS (
    SELECT h.thread_id, h.checkpoint_id, any_value(h.ts) AS checkpoint_ts,
           -- the most telling reason when a checkpoint holds several: removed, then edited
           CASE WHEN bool_or(g.reason = 'removed') THEN 'removed'
                WHEN bool_or(g.reason = 'edited') THEN 'edited' ELSE 'abandoned_branch' END AS reason,
           count(DISTINCT g.version) AS gone_messages,
           string_agg(DISTINCT g.message_id, ',' ORDER BY g.message_id) AS message_ids
    FROM held h JOIN gone g ON g.thread_id = h.thread_id AND g.version = h.version
    GROUP BY h.thread_id, h.checkpoint_id
)
SELECT * FROM (
    SELECT b.thread_id, s.tenant_id, b.reason, '' AS checkpoint_ns, b.checkpoint_id, b.checkpoint_ts,
           b.gone_messages, b.message_ids, ? AS "delete"
    FROM by_checkpoint b JOIN scoped s USING (thread_id)
    WHERE ?::TIMESTAMPTZ IS NULL OR s.last_ts IS NULL OR s.last_ts >= ?::TIMESTAMPTZ
    UNION ALL
    SELECT s.thread_id, s.tenant_id, 'older_than', NULL, NULL, s.last_ts,
           (SELECT count(*) FROM gone g WHERE g.thread_id = s.thread_id), NULL, ?
    FROM scoped s
    WHERE ?::TIMESTAMPTZ IS NOT NULL AND s.last_ts < ?::TIMESTAMPTZ
)
ORDER BY thread_id, checkpoint_id NULLS FIRST
"""


def retention_sql(
    filters: Filters = Filters(), older_than_days: float | None = None, as_of: datetime | None = None
) -> tuple[str, list]:
    """The manifest's query. A thread whose last checkpoint is more than `older_than_days`
    before `as_of` (default: now, UTC) is one `older_than` row (delete it whole) instead of
    its checkpoints' rows.

    >>> sql, params = retention_sql(older_than_days=30, as_of=datetime(2025, 4, 1, tzinfo=timezone.utc))
    >>> params[-1].isoformat()
    '2025-03-02T00:00:00+00:00'
    """
    cutoff = None
    if older_than_days is not None:
        if older_than_days < 0:
            raise BadRequest(f"--older-than must be a number of days ≥ 0, got {older_than_days}")
        cutoff = (as_of or datetime.now(timezone.utc)) - timedelta(days=older_than_days)
    where, params = filters.thread_where("t")
    sql = _SQL.format(where=where)
    return sql, [*params, _DELETE_CHECKPOINT, cutoff, cutoff, _DELETE_THREAD, cutoff, cutoff]


def retention(
    con_or_path: ConOrPath, filters: Filters = Filters(), older_than_days: float | None = None,
    as_of: datetime | None = None,
) -> pd.DataFrame:
    """The retention report / deletion manifest (see the module's doc) as a frame."""
    with connection(con_or_path) as con:
        return fetch_frame(con, *retention_sql(filters, older_than_days, as_of))


def _rows(con, filters: Filters, options: Mapping[str, Any]):
    days = options.get("older_than")
    sql, params = retention_sql(filters, None if days is None else float(days))
    return con.sql(sql, params=params)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--older-than", metavar="DAYS", type=number(hi=365_000),  # (1,000 years)
                        help="retention: threads whose last checkpoint is older than this many days are one "
                             "'older_than' row each (delete the whole thread)")


register_report(ReportSpec(
    "retention", "what the store still holds that the transcript does not (removed, edited, abandoned branches) "
    "and threads past --older-than: a deletion manifest", COLUMNS, _rows, arguments=_arguments,
))  # fmt: skip
