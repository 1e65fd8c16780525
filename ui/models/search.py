"""The Search page: a page of messages matching a text, each with where it is and its snippet
split around the match (for highlighting), and a link to the message in its conversation.

>>> search_page("demo.duckdb", "refund", speaker="user").hits[0].match  # doctest: +SKIP
'refund'
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from analytics.db import ConOrPath
from analytics.errors import AnalyticsError
from analytics.filters import Filters
from analytics.reporting.writer import write_report
from analytics.searching import SEARCH_IN, SEARCH_SPEAKERS, SearchQuery, search
from ui.formats import header, unmarked
from ui.models.chat import speaker as speaker_label
from ui.models.problems import Problem, problem_of
from ui.models.report_csv import readable_report

#: Hits per page (each drawn with its snippet).
PAGE_SIZE = 25
SPEAKER_LABELS = {"all": "Anyone", "user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System",
                  "other": "Other"}
IN_LABELS = {"messages": "Message text", "tool_calls": "Tool calls"}
SPEAKERS, WHERE = SEARCH_SPEAKERS, SEARCH_IN


@dataclass(frozen=True)
class Hit:
    """One matching message: where it is, who said it when, and its snippet cut around the match."""

    thread_id: str
    tenant_id: str | None
    number: int  # "Message 5" (ordinal + 1): the transcript's `msg`
    speaker: str
    ts: datetime | None
    before: str  # snippet text before the match
    match: str  # the matching text as stored (empty when it could not be placed)
    after: str


@dataclass(frozen=True)
class SearchPage:
    hits: tuple[Hit, ...] = ()
    total: int = 0  # matching messages
    threads: int = 0  # threads with one
    page: int = 1
    pages: int = 1
    offset: int = 0
    problem: Problem | None = None
    searched: bool = False  # False before any text is given


def _hit(row) -> Hit:
    text = row.snippet or ""
    if pd.isna(row.match_start):
        before, match, after = unmarked(text), "", ""
    else:
        a, b = int(row.match_start), int(row.match_end)
        # The snippet loses its Markdown marks as a whole, the match held between two sentinels,
        # so a mark around the match ("**ledger**-svc") pairs up across it.
        marked = unmarked(f"{text[:a]}\x00{text[a:b]}\x01{text[b:]}")
        if marked.count("\x00") == 1 and marked.count("\x01") == 1:
            before, rest = marked.split("\x00")
            match, after = rest.split("\x01")
        else:  # (a snippet holding a sentinel itself: as it is)
            before, match, after = text[:a], text[a:b], text[b:]
    ts = None if pd.isna(row.ts) else row.ts.to_pydatetime()
    tenant = None if pd.isna(row.tenant_id) else str(row.tenant_id)
    name = None if pd.isna(row.name) else row.name
    return Hit(row.thread_id, tenant, int(row.ordinal) + 1, speaker_label(str(row.role), name), ts, before, match, after)


def search_page(
    con_or_path: ConOrPath, text: str, speaker: str = "all", in_: str = "messages", filters: Filters = Filters(),
    page: int = 1, page_size: int = PAGE_SIZE,
) -> SearchPage:
    """Page `page` of the hits for `text` (nothing searched for an empty text); a bad request is `problem`."""
    if not (text or "").strip():
        return SearchPage()
    page = max(1, int(page))
    try:
        query = SearchQuery(text, speaker, in_, filters, page_size, (page - 1) * page_size)
        result = search(con_or_path, query)
        pages = max(1, -(-result.total // page_size))
        if page > pages:  # an old link past the end: the last page
            return search_page(con_or_path, text, speaker, in_, filters, pages, page_size)
    except AnalyticsError as exc:
        return SearchPage(problem=problem_of(exc), searched=True)
    hits = tuple(_hit(r) for r in result.hits.itertuples())
    return SearchPage(hits, result.total, result.threads, page, pages, result.offset, searched=True)


def search_csv(con_or_path: ConOrPath, text: str, speaker: str, in_: str, filters: Filters) -> bytes:
    """Every hit: the rows of the `search` CSV report (what `transcript-lens report search` writes)
    as an app download holds them (`report_csv`): human headers, times to the second in UTC, each
    message by its number ("Message N", not its 0-based ordinal); built on a click."""
    scope = dataclasses.replace(filters, text=text)  # the report takes the text to find as --text
    with tempfile.TemporaryDirectory(prefix="tl-search-") as tmp:
        out = write_report(con_or_path, "search", Path(tmp) / "search.csv", scope, {"speaker": speaker, "search_in": in_})
        with out.open(encoding="utf-8") as report:  # (its header: the report's column names, plain identifiers)
            columns = report.readline().strip().split(",")
        return readable_report(out, [(c, header(c), "time" if c == "ts" else "text") for c in columns if c != "ordinal"])
