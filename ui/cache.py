"""Every st.cache_* wrapper of the app, in one place.

Convention for pages (the Resume QA page included): get the open database with
`ui.state.current_db()` (a `DbRef`), then make ONE data call through this
module, e.g. `cache.overview(db, filters, by)` or `cache.thread_qa(db, thread, …)`, or,
for a function that has no named wrapper yet, `cache.call(analytics.resume.something, db, *args)`.

Keys include the database file's version (`DbRef`: path, mtime, size, inode),
so a reload that replaces the file invalidates every cached answer without an
explicit clear. Each call opens its own read-only connection and closes it
(DuckDB connections are not shared between Streamlit's script threads), on a
path that names that very file version (`database.version_path`, handed out by
`reading`); one idle connection per version stays open so those opens reuse the
loaded database instead of reading its catalog again (~200 ms on a 1M-message file).
Arguments must be hashable by Streamlit (Filters and other frozen dataclasses,
strings, numbers, datetimes); results are pickled, so return plain data or frames.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from analytics import contents, workspace
from analytics.db import connect, connection
from analytics.filters import Filters
from analytics.masking import holds_placeholder, mask_text, stored_keys
from analytics.policy import effective, set_session_policy
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

@dataclass
class _Version:
    """One version of a database file as the app reads it: the path naming it, one idle
    connection that keeps DuckDB's instance for that path loaded, and the calls still using it."""

    db: DbRef
    path: str
    con: duckdb.DuckDBPyConnection
    users: int = 0
    #: Its link was removed under the app: closed when its last call ends, its link not dropped.
    gone: bool = False


# Per file path, the version the latest call read; per file version, every version a call may still
# be opening. Both under `_held_lock`.
_held: dict[str, _Version] = {}
_versions: dict[tuple[str, int, int, int], _Version] = {}
_held_lock = threading.Lock()


@contextmanager
def reading(db: DbRef) -> Iterator[str]:
    """The path to open for this version of the file, valid until the block ends.

    Also puts this thread under the session's policy (`DbRef.policy`), so the connection the
    call opens on that path masks and scopes as that session may see: every data call runs
    right after this, on the thread that runs it (a script thread, a prewarm or a download's).
    A version a newer one replaced keeps its link and idle connection while any block still
    reads it: a prewarm of the old version and a page of the new one run side by side during
    a reload, and neither may pull the path from under the other before it connects.

    >>> with cache.reading(db) as path:  # doctest: +SKIP
    ...     workspace.annotate(path, thread_id, label="lost context")
    """
    set_session_policy(db.policy)
    with _held_lock:
        version = _versions.get(db.version)
        if version is not None and not os.path.exists(version.path):
            # Its link went with the cache folder (a temp cleaner, a user clearing `.cache/`): the
            # next call opens this version on a new link; calls still reading the old one finish.
            del _versions[db.version]
            version.gone = True
            _close_if_unused(version)
            version = None
        if version is None:
            keep = {v.path for v in _versions.values()}
            path = str(database.version_path(db, keep=keep))
            version = _versions[db.version] = _Version(db, path, connect(path))
        previous = _held.get(db.path)
        _held[db.path] = version
        version.users += 1
        if previous is not None and previous is not version:
            _close_if_unused(previous)
    try:
        yield version.path
    finally:
        with _held_lock:
            version.users -= 1
            if _held.get(db.path) is not version:
                _close_if_unused(version)


def _close_if_unused(version: _Version) -> None:
    """Close a replaced version and forget its link once no call reads it (under `_held_lock`)."""
    if version.users == 0 and version.gone:
        version.con.close()
    elif version.users == 0 and _versions.get(version.db.version) is version:
        del _versions[version.db.version]
        version.con.close()
        database.drop_version_path(version.db)


def _on(db: DbRef, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(path, *args, **kwargs)` on this version of the file (`reading`), through the app's
    masking boundary (`_stored`, `_shown`)."""
    with reading(db) as path:
        if not effective().redact:
            return fn(path, *args, **kwargs)
        args, kwargs = _stored(path, args), dict(zip(kwargs, _stored(path, tuple(kwargs.values()))))
        return _shown(fn(path, *args, **kwargs))


# --- the masking boundary: what a masking session's pages hold ---------------------------------
#
# Every answer a data call gives a masking session is masked whole (`_shown`): table cells, chart
# categories, labels, picker options, dictionary keys, ids and tenants included (a thread key, a
# tenant or a model name can hold an email), as an export is. The masked key is what the page
# holds, selects, links to and puts in the address bar; a call's arguments are mapped back to the
# stored keys here (`_stored`: `analytics.masking.stored_keys`), so no page handles a stored key.

_FILTER_KEYS = (("tenants", "tenant_id", "threads"), ("sub_tenants", "sub_tenant_id", "threads"),
                ("thread_ids", "thread_id", "threads"), ("within", "thread_id", "threads"),
                ("models", "model", "messages"))


def _shown(value: Any) -> Any:
    """`value` (an answer: frames, page models, texts, containers of them) with every text masked.
    A question echoed back (`Filters`, conditions for a download) keeps its stored keys: it goes
    back to a data call, never to the page."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, pd.DataFrame):  # cells, the index and the column labels (a pivot's categories)
        out = pd.DataFrame({i: _shown_series(value.iloc[:, i]) for i in range(value.shape[1])}, index=value.index)
        out.columns = value.columns.map(_shown_cell)
        out.index = _shown_index(value.index)
        return out
    if isinstance(value, pd.Series):
        out = _shown_series(value)
        out.index = _shown_index(value.index)
        return out
    if isinstance(value, pd.Index):
        return _shown_index(value)
    if isinstance(value, Filters) or value is None or isinstance(value, (bool, int, float, bytes, datetime)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{
            f.name: _shown(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        })
    if isinstance(value, dict):
        return {_shown(k): _shown(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_shown(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_shown(v) for v in value)
    return value


def _shown_series(column: pd.Series) -> pd.Series:
    if isinstance(column.dtype, pd.CategoricalDtype):  # order kept; categories masked alike merge
        shown = [_shown_cell(c) for c in column.cat.categories]
        if len(set(shown)) == len(shown):
            return column.cat.rename_categories(shown)
        return column.astype(object).map(_shown_cell).astype("category")
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        return column.map(_shown_cell).astype(column.dtype)
    return column


def _shown_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return index.map(lambda t: tuple(_shown_cell(v) for v in t))
    if index.dtype == object or pd.api.types.is_string_dtype(index.dtype) or isinstance(index.dtype, pd.CategoricalDtype):
        return index.map(_shown_cell)
    return index


def _shown_cell(value: Any) -> Any:
    return mask_text(value) if isinstance(value, str) else _shown(value) if isinstance(value, (list, tuple, dict)) else value


def _stored(path: str, args: tuple) -> tuple:
    """`args` with every key a masking page holds (a text with a placeholder in it: a masked thread
    id, tenant, sub-tenant or model, alone or in `Filters`) mapped back to the stored key it stands
    for. A text no stored key masks to (a search for `<EMAIL_1>`) is left as it is."""
    if not any(_holds_shown(a) for a in args):
        return args
    with connection(path) as con:
        def thread(v: Any) -> Any:
            if isinstance(v, str) and holds_placeholder(v):
                found = stored_keys(con, v)
                return found[0] if found else v
            if isinstance(v, Filters):
                changed = {}
                for field, column, table in _FILTER_KEYS:
                    values = getattr(v, field, None)
                    if values and any(isinstance(x, str) and holds_placeholder(x) for x in values):
                        changed[field] = tuple(
                            k for x in values
                            for k in (stored_keys(con, x, column, table) or [x]
                                      if isinstance(x, str) and holds_placeholder(x) else [x]))
                return dataclasses.replace(v, **changed) if changed else v
            if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
                return type(v)(thread(x) for x in v)
            return v

        return tuple(thread(a) for a in args)


def _holds_shown(value: Any) -> bool:
    if isinstance(value, str):
        return holds_placeholder(value)
    if isinstance(value, Filters):
        return any(_holds_shown(tuple(getattr(value, f) or ())) for f, _c, _t in _FILTER_KEYS if hasattr(value, f))
    if isinstance(value, (list, tuple)):
        return any(_holds_shown(v) for v in value)
    return False


def _with_con(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn(con, …)` called as `fn(path, …)` (`_on`) on a connection it opens and closes."""
    def on_path(path: str, *args: Any) -> T:
        with connection(path) as con:
            return fn(con, *args)
    return on_path


def stored_thread(db: DbRef, thread_id: str) -> str:
    """The stored key of the thread a page holds (`thread_id`, masked in a masking session), for a
    write that names it (an annotation)."""
    with reading(db) as path:
        return _stored(path, (thread_id,))[0] if effective().redact else thread_id


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def database_info(db: DbRef) -> contents.DatabaseInfo:
    return _on(db, contents.database_info)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def facets(db: DbRef) -> contents.Facets:
    return _on(db, contents.facets)


@st.cache_data(show_spinner="Computing the overview…", max_entries=_ENTRIES)
def overview(db: DbRef, filters: Filters, by: str) -> overview_model.OverviewPage:
    return _on(db, overview_model.overview_page, filters, by)


@st.cache_data(show_spinner="Computing conversation metrics…", max_entries=_ENTRIES)
def conversations(
    db: DbRef, filters: Filters, pending_only: bool, forks_only: bool, ranges: tuple, sort: str, descending: bool,
    page: int,
) -> conversations_model.ConversationsPage:
    return _on(
        db, conversations_model.conversations_page, filters, 0, pending_only, forks_only, ranges, sort, descending, page
    )


def conversations_csv(db: DbRef, conditions: Filters, sort: str, descending: bool,
                      shown: tuple[tuple[str, str, str], ...] | None = None) -> bytes:
    """Not cached: built on a download click, every row, by DuckDB (`shown`: the table's columns)."""
    return _on(db, conversations_model.conversations_csv, conditions, sort, descending, shown)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_choices(db: DbRef, text: str, selected: str | None) -> pd.DataFrame:
    return _on(db, transcript_model.thread_choices, text, selected)


@st.cache_data(show_spinner="Reading the conversation…", max_entries=_ENTRIES)
def conversation(db: DbRef, thread_id: str, gap_minutes: float) -> transcript_model.Conversation:
    return _on(db, transcript_model.conversation, thread_id, gap_minutes)


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
    return _on(db, transcript_model.transcript_page, thread_id, speaker, index, since, until, limit)


@st.cache_data(show_spinner="Searching…", max_entries=_ENTRIES)
def search(
    db: DbRef, text: str, speaker: str, in_: str, filters: Filters, page: int
) -> search_model.SearchPage:
    return _on(db, search_model.search_page, text, speaker, in_, filters, page)


def search_csv(db: DbRef, text: str, speaker: str, in_: str, filters: Filters) -> bytes:
    """Not cached: built on a download click, every hit, by DuckDB."""
    return _on(db, search_model.search_csv, text, speaker, in_, filters)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def risk_overview(
    db: DbRef, filters: Filters, cap: int, gap: float, restarted: bool, sort: str, descending: bool, page: int
) -> resume_qa_model.RiskOverview:
    return _on(db, resume_qa_model.risk_overview, filters, cap, gap, restarted, sort, descending, page)


def risk_table(
    db: DbRef, filters: Filters, cap: int, gap: float, restarted: bool, sort: str, descending: bool
) -> pd.DataFrame:
    """Not cached: built on a download click, every row."""
    return _on(db, resume_qa_model.risk_table, filters, cap, gap, restarted, sort, descending)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_qa(db: DbRef, thread_id: str, gap_minutes: float, cap: int, at: str | None) -> resume_qa_model.ThreadQA:
    return _on(db, resume_qa_model.thread_qa, thread_id, gap_minutes, cap, at)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def observed_check(db: DbRef, data: bytes, cap: int, gap: float) -> resume_qa_model.ObservedCheck:
    return _on(db, resume_qa_model.observed_check, data, cap, gap)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def _call(name: str, db: DbRef, args: tuple, kwargs: tuple, _fn: Callable[..., Any]) -> Any:
    # `name` stands in for `_fn` in the cache key (leading underscore: not hashed).
    return _on(db, _fn, *args, **dict(kwargs))


def call(fn: Callable[..., T], db: DbRef, *args: Any, **kwargs: Any) -> T:
    """Cache `fn(db.path, *args, **kwargs)` for an analytics function that has no named wrapper.

    >>> cache.call(analytics.metrics.top_tools, db, Filters(), limit=5)  # doctest: +SKIP
    """
    name = f"{fn.__module__}.{fn.__qualname__}"
    return _call(name, db, args, tuple(sorted(kwargs.items())), _fn=fn)


# --- the review workspace: keyed by its revision as well (`database.WsRef`) -----------------


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def thread_annotations(db: DbRef, ws: WsRef, thread_id: str) -> review_model.ThreadAnnotations:
    return _on(db, _with_con(review_model.thread_annotations), ws.workspace, thread_id)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def review_columns(db: DbRef, ws: WsRef, thread_ids: tuple[str, ...]) -> pd.DataFrame:
    return _on(db, _review_columns, ws, thread_ids)


def _review_columns(_path: str, ws: WsRef, thread_ids: tuple[str, ...]) -> pd.DataFrame:
    return review_model.review_columns(ws.workspace, thread_ids)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def review_counts(db: DbRef, ws: WsRef, filters: Filters) -> workspace.ReviewCounts:
    return _on(db, _with_con(workspace.review_counts), ws.workspace, filters)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def threads_with(ws: WsRef, labels: tuple[str, ...], failed: bool) -> tuple[str, ...]:
    return workspace.threads_with(ws.workspace, labels, failed)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def orphaned(db: DbRef, ws: WsRef, thread_id: str | None = None) -> pd.DataFrame:
    return _on(db, _with_con(review_model.orphaned), ws.workspace, thread_id)


def labels(ws: WsRef) -> list[workspace.Label]:
    """The label set offered to this session's reader: a label defined under a tenant scope is
    offered within it only, so the scope is part of the cache key."""
    return _labels(ws, effective().tenants)


@st.cache_data(show_spinner=False, max_entries=_ENTRIES)
def _labels(ws: WsRef, tenants: frozenset[str] | None) -> list[workspace.Label]:
    return workspace.labels(ws.workspace)  # (read under the session's policy: `tenants` is its scope)


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
