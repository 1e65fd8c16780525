"""The transcript explorer: the thread picker's choices and one transcript read under contract §4.

>>> transcript_page("demo.duckdb", "acme:web:sess-1002", speaker="user", index=0).rows  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from analytics import metrics
from analytics.db import ConOrPath, connection
from analytics.errors import AnalyticsError, NotFound
from analytics.filters import Filters
from analytics.transcript import TRANSCRIPT_COLUMNS, TranscriptQuery, read, search_threads, threads
from ui.models.frames import empty
from ui.models.problems import Problem, problem_of

#: Columns of the transcript table view (and of its CSV download), in order.
TRANSCRIPT_TABLE_COLUMNS = (
    "index",
    "ordinal",
    "role",
    "ts",
    "content",
    "message_id",
    "checkpoint_id",
    "name",
    "tool_calls",
    "tool_call_id",
    "tool_status",
    "model",
    "input_tokens",
    "output_tokens",
    "total_tokens",
)


def thread_choices(
    con_or_path: ConOrPath, text: str = "", selected: str | None = None, limit: int = 200
) -> pd.DataFrame:
    """Threads for the picker (thread_id, label), best match first; `selected` always included.

    Empty `text` lists the most recently active threads.
    """
    with connection(con_or_path) as con:
        found = search_threads(con, text or "", limit=limit)
        if selected and selected not in set(found["thread_id"]):
            known = threads(con, Filters(thread_ids=(selected,)))
            found = pd.concat([known.assign(match_count=0), found], ignore_index=True)
    last = found["last_ts"].dt.strftime("%Y-%m-%d %H:%M").fillna("no time")
    label = found["thread_id"] + " · " + found["message_count"].astype(str) + " msgs · " + last
    if text and "snippet" in found:
        snippet = found["snippet"].fillna("").str.replace(r"\s+", " ", regex=True).str.slice(0, 60)
        label = label.where(snippet == "", label + " · “" + snippet + "”")
    return pd.DataFrame({"thread_id": found["thread_id"], "label": label})


@dataclass(frozen=True)
class TranscriptPage:
    """One transcript read, its table shape and the thread's summary; `problem` instead of a traceback."""

    rows: pd.DataFrame  # analytics.transcript.read() columns
    table: pd.DataFrame  # TRANSCRIPT_TABLE_COLUMNS: what the table view and the CSV show
    thread: dict[str, Any] = field(default_factory=dict)
    problem: Problem | None = None


def _shown_time(value: str | datetime | None) -> str | datetime | None:
    """Accept a time back in the form the chat shows it ("2025-03-03 10:05:00 UTC").

    >>> _shown_time("2025-03-03 10:05:00 UTC")
    '2025-03-03 10:05:00+00:00'
    """
    if isinstance(value, str) and value.strip().upper().endswith(" UTC"):
        return value.strip()[:-4] + "+00:00"
    return value


def transcript_page(
    con_or_path: ConOrPath,
    thread_id: str,
    speaker: str = "all",
    index: int | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    limit: int | None = None,
) -> TranscriptPage:
    """`read()` under the query contract (contract §4), plus the thread's metrics row for the header.

    A `BadRequest` / `Unsupported` / `NotFound` comes back as `problem` (and empty
    rows) so a page shows a message, not a traceback; anything else still raises.
    """
    problem = None
    thread: dict[str, Any] = {}
    with connection(con_or_path) as con:
        try:
            query = TranscriptQuery(
                thread_id, speaker=speaker, index=index, since=_shown_time(since), until=_shown_time(until), limit=limit
            )
            rows = read(con, query)
        except AnalyticsError as exc:
            problem = problem_of(exc)
            rows = empty(TRANSCRIPT_COLUMNS)
        if not (problem and problem.kind == "not_found"):
            try:
                thread = dict(metrics.conversation(con, thread_id))
            except NotFound:
                thread = {}
    return TranscriptPage(rows, rows[list(TRANSCRIPT_TABLE_COLUMNS)], thread, problem)
