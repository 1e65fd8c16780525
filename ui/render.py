"""Drawing helpers shared by the pages: chat messages, downloads, charts, headline numbers."""

from __future__ import annotations

import html
import re
from datetime import datetime  # noqa: F401  (date_span's doctest)
from typing import Any

import pandas as pd
import streamlit as st

from ui import flow, formats
from ui import markup
from ui.markup import inert
from ui.models.frames import is_missing
from ui.models.problems import Problem
from ui.models.transcript import CHAT_MAX  # noqa: F401  (the one cap on messages drawn at once)
from ui.models.transcript import stale_text

def ts_text(ts: Any) -> str:
    """A checkpoint time in UTC, or "time unknown" (the store has no per-message clock)."""
    return formats.clock(ts)


def download(frame: pd.DataFrame, file_name: str, key: str, label: str = "Download CSV", headers=None) -> None:
    """A CSV of exactly `frame` (what the table next to it shows) under the table's headers
    (`headers`: the table's column_config, else each column's `formats.header`), times in the
    one format of downloads (`formats.readable`); in a masking session every text column masked
    (`analytics.reporting.writer.frame_csv`), ids included, as reports are."""

    download_data(lambda: csv_bytes(frame, headers), file_name, key, label, rows=len(frame))


def csv_bytes(frame: pd.DataFrame, headers=None) -> bytes:
    """`frame` as the CSV a download gives (`formats.readable`): in a masking session every text
    column masked (built under the session's policy: ui.downloads)."""
    from analytics.policy import effective
    from analytics.reporting.writer import frame_csv, frame_text_csv

    shown = formats.readable(frame, headers)
    if effective().redact:
        return frame_csv(shown)
    return frame_text_csv(shown).encode("utf-8")


def download_data(build, file_name: str, key: str, label: str = "Download CSV", *, rows: int | None = None,
                  mime: str = "text/csv", icon: str = ":material/download:", help: str | None = None) -> None:
    """A download whose bytes `build()` makes on click (e.g. DuckDB writing every row of a report),
    under this session's policy, recorded in the export log first (`ui.downloads`)."""
    from analytics.masking import file_name as masked_name
    from ui import downloads, session, state

    db = state.current_db()
    file_name = masked_name(file_name, None if db is None else db.policy)  # a name leaves the tool too
    origin = downloads.Origin(None if db is None else db.path, None if db is None else db.policy,
                              session.user(), st.query_params.to_dict())
    refused = downloads.refusal(origin)
    st.download_button(
        label,
        # Deferred: the CSV of a 100k-row table is built on click, not on every rerun.
        data=downloads.deferred(build, file_name, origin, rows),
        file_name=file_name,
        mime=mime,
        key=key,
        icon=icon,
        on_click="ignore",  # a download must not rerun (and recompute) the page
        # Nothing matches: a file of headers only is no answer, so the button says so and is off.
        disabled=refused is not None or rows == 0,
        help=refused.capitalize() + "." if refused else "Nothing in this view to download." if rows == 0 else help,
    )


def chart(option: dict, key: str) -> None:
    """Draw a chart: an ECharts option dict (`ui.charts`)."""
    from ui.charts import height

    st.echarts_chart(option, key=key, height=height(option))


def thread_label(thread_id: str) -> str:
    """A thread id as a label shows it: masked in a masking session (a thread key can hold an email).

    >>> thread_label("acme:web:s1")
    'acme:web:s1'
    """
    from analytics.masking import mask_text

    return mask_text(thread_id)


def file_name(kind: str, thread_id: str, *parts: object) -> str:
    """A CSV download's name for one thread (`:` is not welcome in file names everywhere); in a
    masking session the thread id masked (`analytics.masking.file_name`).

    >>> file_name("expected_window", "acme:web:s1", 2)
    'expected_window-acme_web_s1-2.csv'
    """
    from analytics.masking import file_name as masked_name, mask_text

    return masked_name("-".join([kind, mask_text(thread_id).replace(":", "_"), *map(str, parts)]) + ".csv")


def thread_caption(t: dict[str, Any]) -> str:
    """One line about a thread (its `conversations()` row) in plain words: who, how much, when, flags.

    >>> thread_caption({"tenant_id": "acme", "sub_tenant_id": None, "session_id": "s1", "messages": 8,
    ...     "user_messages": 2, "assistant_messages": 4, "tool_messages": 2, "duration_s": 65.2, "first_ts": None,
    ...     "last_ts": None, "interrupt_pending": True, "forks": 0, "removed_messages": 2, "edited_messages": 0})
    'tenant **acme** · no sub-tenant · session **s1** · 8 messages (2 from the user, 4 from the assistant, 2 tool results) · time unknown · waiting for human input · 2 removed'
    """
    from analytics.masking import mask_text

    def value(v: Any) -> str:  # masked before it is escaped: an escaped address no longer reads as one
        return markup.text(mask_text(str(v)))

    tenant = f"tenant **{value(t['tenant_id'])}**" if not is_missing(t.get("tenant_id")) else "no tenant"
    sub = f"sub-tenant **{value(t['sub_tenant_id'])}**" if not is_missing(t.get("sub_tenant_id")) else "no sub-tenant"
    parts = [tenant, sub, f"session **{value(t.get('session_id'))}**"]
    counts = [f"{t.get('user_messages', 0)} from the user", f"{t.get('assistant_messages', 0)} from the assistant"]
    counts += [plural(int(t["tool_messages"]), "tool result")] if t.get("tool_messages") else []
    parts.append(f"{plural(int(t.get('messages', 0)), 'message')} ({', '.join(counts)})")
    first, last = t.get("first_ts"), t.get("last_ts")
    if is_missing(first) or is_missing(last):
        parts.append("time unknown")
    else:
        parts.append(f"{minute_text(first)} → {minute_text(last)} UTC ({duration(t.get('duration_s'))})")
    if not is_missing(t.get("total_tokens")):
        parts.append(f"{number(t['total_tokens'])} tokens")
    flags = ["stale transcript"] if not is_missing(t.get("stale_reason")) and t.get("stale_reason") else []
    flags += ["waiting for human input"] if t.get("interrupt_pending") else []
    flags += [plural(t["forks"], "fork")] if t.get("forks") else []
    flags += [f"{t['removed_messages']} removed"] if t.get("removed_messages") else []
    flags += [f"{t['edited_messages']} edited"] if t.get("edited_messages") else []
    return mask_text(" · ".join(parts + flags))  # a label leaves the tool: its ids masked in a masking session


def highlighted(before: str, match: str, after: str) -> str:
    """A snippet as HTML with the match marked (the text escaped: it is data, never markup).

    >>> highlighted("a <b> ", "refund", " c")
    '<span class="tl-snippet">a &lt;b&gt; <mark>refund</mark> c</span>'
    """
    mark = f"<mark>{html.escape(match)}</mark>" if match else ""
    return f'<span class="tl-snippet">{html.escape(before)}{mark}{html.escape(after)}</span>'


#: Where a search hit drawn as a button leaves its link when pressed (`search_hit`, `opened_hit`).
_OPENED_HIT = "search.opened"


def opened_hit() -> dict[str, Any] | None:
    """The link of the search hit pressed in the run before this one, if any (once)."""
    return st.session_state.pop(_OPENED_HIT, None)


def search_hit(hit, link: dict[str, Any], button_key: str | None = None) -> None:
    """One search hit: a link to the message in its conversation, who and when, the snippet.
    With `button_key` (a masking session) the hit is a button instead, which leaves `link` for
    `opened_hit` when pressed: a link's address would carry the stored thread key (which can
    hold an e-mail) to the browser for every hit, opened or not; the caller opens the pressed
    one from the server."""
    from analytics.masking import mask_text

    label = inert(mask_text(f"{hit.thread_id} · Message {hit.number}"))
    with st.container(border=True, gap="xsmall"):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            if button_key is None:
                st.page_link("pages/transcript.py", label=label, icon=":material/forum:", query_params=link)
            else:
                st.button(label, key=button_key, icon=":material/forum:", type="tertiary",
                          on_click=st.session_state.__setitem__, args=(_OPENED_HIT, link))
            tenant = f" · tenant {markup.text(hit.tenant_id)}" if hit.tenant_id else ""
            st.caption(f"{markup.text(hit.speaker)} · {ts_text(hit.ts)}{tenant}")
        st.html(highlighted(hit.before, hit.match, hit.after))


def problem(found: Problem) -> None:
    """What a page shows instead of a traceback (`ui.models.problems`): a request that
    cannot be answered is an error, a missing or unsupported thing a warning."""
    if found.kind == "bad_request":
        st.error(f"That request cannot be answered: {markup.text(found.message)}", icon=":material/error:")
    else:
        st.warning(markup.text(found.message), icon=":material/warning:")


def stale_warning(t: dict[str, Any]) -> None:
    """Warn, above a transcript, that it is not its thread's latest root checkpoint's (`stale_text`)."""
    said = stale_text(t)
    if said is not None:
        st.warning(said, icon=":material/history:")


def no_data(what: str) -> None:
    st.info(f"No {what} for these filters.", icon=":material/filter_alt_off:")


def chart_panel(title: str, frame, empty_what: str, build, key: str, caption: str | None = None) -> bool:
    """A titled chart of `frame`, or a "no data" note when it is empty; True when drawn.

    `build(frame)` makes the figure, so nothing is built for an empty frame.
    """
    st.subheader(title)
    if frame.empty:
        no_data(empty_what)
        return False
    if caption:
        st.caption(caption)
    chart(build(frame), key=key)
    return True


def headline(items: list[tuple[str, Any, str | None]]) -> None:
    """A row of st.metric tiles: (label, value, help), wrapping onto more rows when the page is
    too narrow to show each whole (`ui.flow`)."""
    key = re.sub(r"[^a-z0-9]+", "-", "-".join(str(label) for label, _, _ in items).lower())
    with flow.tiles(key):
        for label, value, help_text in items:
            st.metric(label, value, help=help_text, border=True)


def date_span(first: Any, last: Any) -> tuple[str, str]:
    """A metric tile's (label, value) for a day range; the year is always shown, in the label when
    both ends share it (the value must fit a narrow tile).

    >>> date_span(datetime(2025, 3, 3), datetime(2025, 3, 15))
    ('Date range 2025', 'Mar 3 → Mar 15')
    >>> date_span(datetime(2024, 12, 30), datetime(2025, 1, 2))
    ('Date range', 'Dec 2024 → Jan 2025')
    """
    if is_missing(first) or is_missing(last):
        return "Date range", "—"
    if first.year != last.year:
        return "Date range", f"{first:%b %Y} → {last:%b %Y}"
    return f"Date range {last.year}", f"{first:%b} {first.day} → {last:%b} {last.day}"


def rows_caption(offset: int, shown: int, matching: int, total: int, in_database: int) -> str:
    """Which rows of how many a page of a table shows, and of how many threads before the conditions.

    >>> rows_caption(50, 50, 176142, 176142, 176142)
    'rows 51–100 of 176,142 threads'
    >>> rows_caption(0, 12, 12, 12, 31)
    'rows 1–12 of 12 threads (31 in the database)'
    >>> rows_caption(0, 6, 6, 12, 31)
    'rows 1–6 of 6 threads (12 before the flags and metric ranges, 31 in the database)'
    >>> rows_caption(0, 0, 0, 0, 31), rows_caption(0, 0, 0, 31, 31)
    ('no thread matches (31 in the database)', 'no thread matches (31 in the database)')
    """
    if not matching:
        head = "no thread matches"
    else:
        head = f"rows {offset + 1:,}–{offset + shown:,} of {plural(matching, 'thread')}"
    notes = [f"{total:,} before the flags and metric ranges"] if matching != total != in_database else []
    notes += [f"{in_database:,} in the database"] if in_database != matching else []
    return head + (f" ({', '.join(notes)})" if notes else "")


number, seconds, duration, minute_text, text, plural, download_label = (
    formats.number, formats.seconds, formats.duration, formats.minute_text, formats.text, formats.plural,
    formats.download_label)
SECONDS_FORMAT = formats.SECONDS_FORMAT
PERCENT_FORMAT = formats.PERCENT_FORMAT


def table(data, *, fit_px: float | None = None, keep: tuple[str, ...] = (), **kwargs):
    """`st.dataframe` with missing values drawn as empty cells (Streamlit writes "None" otherwise),
    and no column beyond the page's right edge: a table wider than the page (`fit_px`, default
    `columns.FIT_PX`: narrower in a page column) shows the columns that fit at first, the others
    in its Show/hide columns chooser, named in a caption beneath (`columns.fit`); the columns in
    `keep` (the one the rows are sorted by) always show; of a `column_order`, the columns it names
    fit so, in its order. A column `column_config` does not name
    shows under its human header (`columns.headers`). A frame numbered 0, 1, 2… by pandas shows
    no index column (the app numbers what it shows from 1: "Message N", "rows 1–50")."""
    from ui import columns

    kwargs.setdefault("placeholder", "")
    frame = data.data if isinstance(getattr(data, "data", None), pd.DataFrame) else data  # (a Styler's frame)
    if isinstance(frame, pd.DataFrame) and isinstance(frame.index, pd.RangeIndex):
        kwargs.setdefault("hide_index", True)  # pandas' 0-based row numbers mean nothing to a reader
    fitted = None
    if isinstance(frame, pd.DataFrame):  # every column under its human header unless configured
        given = kwargs.get("column_config") or {}
        kwargs["column_config"] = {**given, **columns.headers(frame, **given)}
    if isinstance(frame, pd.DataFrame):  # (the columns a page orders fit too: none is cut at the right edge)
        order = kwargs.get("column_order")
        chosen = frame if order is None else frame[[c for c in order if c in frame.columns]]
        fitted = columns.fit(chosen, kwargs.get("column_config") or {}, budget=fit_px or columns.FIT_PX,
                             selectable=kwargs.get("on_select", "ignore") != "ignore", keep=keep)
        if fitted.hidden:
            kwargs["column_order"] = fitted.order
    shown = st.dataframe(data, **kwargs)
    if fitted is not None and fitted.caption():
        st.caption(fitted.caption())
    return shown
