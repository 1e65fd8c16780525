"""The "Waiting on a human" page: threads waiting on an `interrupt()`, sortable, with their requests.

>>> backlog_page("lens.duckdb", sort="waited_s").table.head()  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analytics.history.backlog import backlog
from analytics.db import ConOrPath
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.materialize import DEFAULT_HITL_HOURS
from ui.models.frames import empty

#: What the table can be sorted by, and the header each column has.
SORT_LABELS: dict[str, str] = {
    "waited_s": "Waited",
    "waiting_since": "Waiting since",
    "thread_id": "Thread",
    "tenant_id": "Tenant",
    "request": "Request",
    "interrupts": "Interrupts",
    "messages": "Messages",
}
SORTABLE = tuple(SORT_LABELS)

#: Columns of the table the page shows (the CSV has every `BACKLOG_COLUMNS` column).
TABLE_COLUMNS = ("thread_id", "tenant_id", "sub_tenant_id", "waited", "over_service_level", "waiting_since", "request",
                 "last_message", "interrupts", "messages")  # fmt: skip


@dataclass(frozen=True)
class BacklogPage:
    """`frame`: `backlog()` sorted as asked, with `over_service_level` (the CSV); `table`: what the
    page shows; the headline figures. `breaches`: threads waiting longer than `service_level_h`."""

    frame: pd.DataFrame
    table: pd.DataFrame
    longest_s: float | None
    median_s: float | None
    reference_ts: pd.Timestamp | None
    breaches: int = 0
    service_level_h: float = DEFAULT_HITL_HOURS


def waited_text(seconds: object) -> str:
    """A wait as a short human span ("2 d 19 h"), "—" when unknown.

    >>> waited_text(241819.0), waited_text(None)
    ('2 d 19 h', '—')
    """
    if seconds is None or pd.isna(seconds):
        return "—"
    s = int(round(float(seconds)))
    d, rest = divmod(s, 86_400)
    h, rest = divmod(rest, 3_600)
    m = rest // 60
    return f"{d} d {h} h" if d else f"{h} h {m} m" if h else f"{m} m {rest % 60:02d} s"


def short_time(ts: object) -> str:
    """A headline tile's time: month, day and minute (the tile is narrow), "—" when unknown.

    >>> short_time(pd.Timestamp("2025-03-15 12:00:22", tz="UTC")), short_time(None)
    ('Mar 15, 12:00', '—')
    """
    if ts is None or pd.isna(ts):
        return "—"
    return pd.Timestamp(ts).tz_convert("UTC").strftime("%b %d, %H:%M")


def backlog_page(
    con_or_path: ConOrPath, filters: Filters = Filters(), until: str = "store", sort: str = "waited_s",
    descending: bool = True, over_only: bool = False, service_level_h: float = DEFAULT_HITL_HOURS,
) -> BacklogPage:
    """The waiting threads in `filters`, sorted by `sort` (ties by thread id), with the page's columns;
    `over_only`: only those waiting longer than the human-in-the-loop service level (`service_level_h`,
    the `slow_hitl` signal's, docs/outcomes.md)."""
    if sort not in SORTABLE:
        raise BadRequest(f"sort must be one of {', '.join(SORTABLE)}; got {sort!r}")
    frame = backlog(con_or_path, filters, until)
    frame = frame.assign(over_service_level=frame["waited_s"] > service_level_h * 3600)
    breaches = int(frame["over_service_level"].sum())
    if over_only:
        frame = frame[frame["over_service_level"]]
    if frame.empty:
        return BacklogPage(frame, empty({c: "str" for c in TABLE_COLUMNS}), None, None, None, breaches, service_level_h)
    frame = frame.sort_values([sort, "thread_id"], ascending=[not descending, True], na_position="last",
                              kind="stable").reset_index(drop=True)  # fmt: skip
    table = frame.assign(waited=frame["waited_s"].map(waited_text))[list(TABLE_COLUMNS)]
    return BacklogPage(frame, table, float(frame["waited_s"].max()), float(frame["waited_s"].median()),
                       frame["reference_ts"].iloc[0], breaches, service_level_h)  # fmt: skip
