"""The Failure patterns page: what led conversations to fail, grouped by signature, with the conversations of each.

>>> patterns_page("lens.duckdb").table.head()  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analytics.db import ConOrPath
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.topic_mining.patterns import PERIODS, failure_views
from ui.models.outcomes import OUTCOME_LABELS

#: Columns of the pattern table the page shows (the CSV has every `PATTERN_COLUMNS` column).
TABLE_COLUMNS = ("label", "threads", "failed", "abandoned", "tenants", "first_seen", "last_seen")
#: Patterns drawn in the trend chart (the most frequent).
TREND_PATTERNS = 5


@dataclass(frozen=True)
class PatternsPage:
    """`patterns`: `patterns()` (the CSV); `table`: what the page shows; `threads`: every failed
    conversation with its signature; `trend`: the top patterns' conversations per period, one column each,
    the most frequent first."""

    patterns: pd.DataFrame
    table: pd.DataFrame
    threads: pd.DataFrame
    trend: pd.DataFrame

    def of(self, signature: str) -> pd.DataFrame:
        """The conversations of one pattern, the earliest first, with the failing message's number in the
        transcript explorer (`message`, ordinal + 1) and ordinal."""
        rows = self.threads[self.threads["signature"] == signature]
        rows = rows.assign(message=rows["failing_ordinal"] + 1, outcome=rows["outcome"].map(OUTCOME_LABELS))
        rows = rows.sort_values(["first_ts", "thread_id"])
        return rows[["thread_id", "tenant_id", "outcome", "message", "failing_ordinal", "first_ts"]].reset_index(drop=True)


def patterns_page(con_or_path: ConOrPath, filters: Filters = Filters(), period: str = "week") -> PatternsPage:
    """The page's pattern table, conversations and trend for `filters`."""
    if period not in PERIODS:
        raise BadRequest(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    frame, threads, per_period = failure_views(con_or_path, filters, period)
    top = dict(zip(frame["signature"].head(TREND_PATTERNS), frame["label"].head(TREND_PATTERNS)))
    rows = per_period[per_period["signature"].isin(top)]
    trend = pd.DataFrame({"period_start": []})
    if not rows.empty:
        trend = (rows.assign(pattern=rows["signature"].map(top))
                 .pivot_table(index="period_start", columns="pattern", values="threads", aggfunc="sum", fill_value=0)
                 .reset_index())
        trend.columns.name = None
        # The legend lists the columns in order: the most frequent first, as the table (pivot sorts them by name).
        trend = trend[["period_start", *(c for c in dict.fromkeys(top.values()) if c in trend.columns)]]
    return PatternsPage(frame, frame[list(TABLE_COLUMNS)], threads, trend)
