"""Every st.cache_* wrapper of the app, in one place.

Convention for pages (the Resume QA page included): get the open database with
`ui.state.current_db()` (a `DbRef`), then make ONE data call through this
module, e.g. `cache.overview(db, filters, by)` or `cache.thread_qa(db, thread, …)`, or,
for a function that has no named wrapper yet, `cache.call(analytics.resume.something, db, *args)`.

Keys include the database file's version (`DbRef`: path, mtime, size, inode),
so a reload that replaces the file invalidates every cached answer without an
explicit clear. Each call opens its own read-only connection and closes it
(DuckDB connections are not shared between Streamlit's script threads), on a
path that names that very file version (`database.version_path`); one idle
connection per version stays open so those opens reuse the loaded database
instead of reading its catalog again (~200 ms on a 1M-message file).
Arguments must be hashable by Streamlit (Filters and other frozen dataclasses,
strings, numbers, datetimes); results are pickled, so return plain data or frames.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from analytics import contents, workspace
from analytics.db import connect, connection
from analytics.filters import Filters
from analytics.policy import set_session_policy
from ui import database
from ui.database import DbRef, WsRef
from ui.models import conversations as conversations_model
from ui.models import overview as overview_model
from ui.models import resume_qa as resume_qa_model
from ui.models import review as review_model
from ui.models import search as search_model
from ui.models import transcript as transcript_model

T = TypeVar("T")

# Enough for a few filter combinations per page without holding a million-row
# frame per keystroke forever.
_ENTRIES = 64

_held: dict[str, tuple[DbRef, str, duckdb.DuckDBPyConnection]] = {}
_held_lock = threading.Lock()


def _warm(db: DbRef) -> str:
    """Keep one connection to this version of the file open; return the path to open per call.

    Also puts this thread under the session's policy (`DbRef.policy`), so the connection the
    call opens on that path masks and scopes as that session may see: every data call runs
    right after this, on the thread that runs it (a script thread, or a download's)."""
    set_session_policy(db.policy)
    with _held_lock:
        held = _held.get(db.path)
        if held is None or held[0].version != db.version:
            if held is not None:
                held[2].close()
                database.drop_version_path(held[0])
            path = str(database.version_path(db))
            _held[db.path] = (db, path, connect(path))
        return _held[db.path][1]


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def database_info(db: DbRef) -> contents.DatabaseInfo:
    return contents.database_info(_warm(db))


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def facets(db: DbRef) -> contents.Facets:
    return contents.facets(_warm(db))


@st.cache_data(show_spinner="Computing the overview…", max_entries=_ENTRIES)
def overview(db: DbRef, filters: Filters, by: str) -> overview_model.OverviewPage:
    return overview_model.overview_page(_warm(db), filters, by)


@st.cache_data(show_spinner="Computing conversation metrics…", max_entries=_ENTRIES)
def conversations(
    db: DbRef, filters: Filters, pending_only: bool, forks_only: bool, ranges: tuple, sort: str, descending: bool,
    page: int,
) -> conversations_model.ConversationsPage:
    return conversations_model.conversations_page(
        _warm(db), filters, 0, pending_only, forks_only, ranges, sort, descending, page
    )


def conversations_csv(db: DbRef, conditions: Filters, sort: str, descending: bool) -> bytes:
    """Not cached: built on a download click, every row, by DuckDB."""
    return conversations_model.conversations_csv(_warm(db), conditions, sort, descending)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_choices(db: DbRef, text: str, selected: str | None) -> pd.DataFrame:
    return transcript_model.thread_choices(_warm(db), text, selected)


@st.cache_data(show_spinner="Reading the conversation…", max_entries=_ENTRIES)
def conversation(db: DbRef, thread_id: str, gap_minutes: float) -> transcript_model.Conversation:
    return transcript_model.conversation(_warm(db), thread_id, gap_minutes)


@st.cache_data(show_spinner="Reading the transcript…", max_entries=_ENTRIES)
def transcript(
    db: DbRef,
    thread_id: str,
    speaker: str,
    index: int | None,
    since: str | datetime | None,
    until: str | datetime | None,
    limit: int | None,
) -> transcript_model.TranscriptPage:
    return transcript_model.transcript_page(_warm(db), thread_id, speaker, index, since, until, limit)


@st.cache_data(show_spinner="Searching…", max_entries=_ENTRIES)
def search(
    db: DbRef, text: str, speaker: str, in_: str, filters: Filters, page: int
) -> search_model.SearchPage:
    return search_model.search_page(_warm(db), text, speaker, in_, filters, page)


def search_csv(db: DbRef, text: str, speaker: str, in_: str, filters: Filters) -> bytes:
    """Not cached: built on a download click, every hit, by DuckDB."""
    return search_model.search_csv(_warm(db), text, speaker, in_, filters)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def risk_overview(
    db: DbRef, filters: Filters, cap: int, gap: float, restarted: bool, sort: str, descending: bool, page: int
) -> resume_qa_model.RiskOverview:
    return resume_qa_model.risk_overview(_warm(db), filters, cap, gap, restarted, sort, descending, page)


def risk_table(
    db: DbRef, filters: Filters, cap: int, gap: float, restarted: bool, sort: str, descending: bool
) -> pd.DataFrame:
    """Not cached: built on a download click, every row."""
    return resume_qa_model.risk_table(_warm(db), filters, cap, gap, restarted, sort, descending)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_qa(db: DbRef, thread_id: str, gap_minutes: float, cap: int, at: str | None) -> resume_qa_model.ThreadQA:
    return resume_qa_model.thread_qa(_warm(db), thread_id, gap_minutes, cap, at)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def observed_check(db: DbRef, data: bytes, cap: int, gap: float) -> resume_qa_model.ObservedCheck:
    return resume_qa_model.observed_check(_warm(db), data, cap, gap)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def _call(name: str, db: DbRef, args: tuple, kwargs: tuple, _fn: Callable[..., Any]) -> Any:
    # `name` stands in for `_fn` in the cache key (leading underscore: not hashed).
    return _fn(_warm(db), *args, **dict(kwargs))


def call(fn: Callable[..., T], db: DbRef, *args: Any, **kwargs: Any) -> T:
    """Cache `fn(db.path, *args, **kwargs)` for an analytics function that has no named wrapper.

    >>> cache.call(analytics.metrics.top_tools, db, Filters(), limit=5)  # doctest: +SKIP
    """
    name = f"{fn.__module__}.{fn.__qualname__}"
    return _call(name, db, args, tuple(sorted(kwargs.items())), _fn=fn)


# --- the review workspace: keyed by its revision as well (`database.WsRef`) -----------------


def db_path(db: DbRef) -> str:
    """The path a write that reads the database (an annotation: its message's id and excerpt) opens."""
    return _warm(db)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_annotations(db: DbRef, ws: WsRef, thread_id: str) -> review_model.ThreadAnnotations:
    with connection(_warm(db)) as con:
        return review_model.thread_annotations(con, ws.workspace, thread_id)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def review_columns(ws: WsRef, thread_ids: tuple[str, ...]) -> pd.DataFrame:
    return review_model.review_columns(ws.workspace, thread_ids)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def review_counts(db: DbRef, ws: WsRef, filters: Filters) -> workspace.ReviewCounts:
    with connection(_warm(db)) as con:
        return workspace.review_counts(con, ws.workspace, filters)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def threads_with(ws: WsRef, labels: tuple[str, ...], failed: bool) -> tuple[str, ...]:
    return workspace.threads_with(ws.workspace, labels, failed)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def orphaned(db: DbRef, ws: WsRef, thread_id: str | None = None) -> pd.DataFrame:
    with connection(_warm(db)) as con:
        return review_model.orphaned(con, ws.workspace, thread_id)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def labels(ws: WsRef) -> list[workspace.Label]:
    return workspace.labels(ws.workspace)


_prewarmed: set[DbRef] = set()
_prewarm_threads: list[threading.Thread] = []


def _finish_prewarm(timeout: float = 60.0) -> None:
    """At exit, wait for the prewarm threads: a daemon thread still inside DuckDB while the
    interpreter finalizes aborts the process ("terminate called … exception not rethrown")."""
    for thread in _prewarm_threads:
        thread.join(timeout)


def prewarm(db: DbRef) -> None:
    """Compute the default overview and conversations views in the background, once per file version.

    On a large database these take seconds; started when the database is first
    opened, they are usually ready by the time a page asks (Streamlit makes a
    page that asks meanwhile wait for the same computation, not repeat it).
    """
    with _held_lock:
        if db in _prewarmed:
            return
        _prewarmed.add(db)

    def work() -> None:
        try:
            found = facets(db)
            overview(db, Filters(), overview_model.resolve_bucket(overview_model.AUTO, found, Filters()))
            conversations(db, Filters(), False, False, (), "last_ts", True, 1)  # the page's default view
        except Exception:  # noqa: BLE001 — best effort: the page computes (and reports) it anyway
            pass

    thread = threading.Thread(target=work, name=f"prewarm-{db.name}", daemon=True)
    with _held_lock:
        if not _prewarm_threads:
            atexit.register(_finish_prewarm)
        _prewarm_threads.append(thread)
    thread.start()


def clear() -> None:
    """Forget every cached answer (the file version already keys them; this only frees memory)."""
    st.cache_data.clear()
