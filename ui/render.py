"""Drawing helpers shared by the pages: chat messages, downloads, charts, headline numbers."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pandas as pd
import streamlit as st

from ui.models.problems import Problem

#: Messages longer than this (characters or lines) show a preview and fold the rest.
LONG_CHARS = 1500
LONG_LINES = 25
PREVIEW_CHARS = 600
#: Chat view draws at most this many messages (the table view and the CSV have all of them).
CHAT_MAX = 300

_AVATARS = {
    "user": "user",
    "assistant": "assistant",
    "tool": ":material/build:",
    "system": ":material/settings:",
    "other": ":material/help:",
}


def is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def ts_text(ts: Any) -> str:
    """A checkpoint time in UTC, or "time unknown" (the store has no per-message clock)."""
    if is_missing(ts):
        return "time unknown"
    if isinstance(ts, datetime):
        return pd.Timestamp(ts).tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(ts)


def download(frame: pd.DataFrame, file_name: str, key: str, label: str = "Download CSV") -> None:
    """A CSV of exactly `frame` (what the table next to it shows)."""
    download_data(lambda: frame.to_csv(index=False).encode("utf-8"), file_name, key, label)


def download_data(build, file_name: str, key: str, label: str = "Download CSV") -> None:
    """A CSV download whose bytes `build()` makes on click (e.g. DuckDB writing every row of a report)."""
    st.download_button(
        label,
        # Deferred: the CSV of a 100k-row table is built on click, not on every rerun.
        data=build,
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
        on_click="ignore",  # a download must not rerun (and recompute) the page
    )


def chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, width="stretch")


def file_name(kind: str, thread_id: str, *parts: object) -> str:
    """A CSV download's name for one thread (`:` is not welcome in file names everywhere).

    >>> file_name("expected_window", "acme:web:s1", 2)
    'expected_window-acme_web_s1-2.csv'
    """
    return "-".join([kind, thread_id.replace(":", "_"), *map(str, parts)]) + ".csv"


def thread_caption(t: dict[str, Any]) -> str:
    """One line about a thread (its `conversations()` row): key parts, counts, time span, flags."""
    flags = [f"{t['forks']} fork(s)"] if t.get("forks") else []
    flags += ["pending interrupt"] if t.get("interrupt_pending") else []
    return (
        f"tenant `{t.get('tenant_id')}` · sub-tenant `{t.get('sub_tenant_id')}` · session `{t.get('session_id')}` · "
        f"{t.get('messages')} messages ({t.get('user_messages')} user, {t.get('assistant_messages')} assistant) · "
        f"{ts_text(t.get('first_ts'))} → {ts_text(t.get('last_ts'))}" + (" · " + " · ".join(flags) if flags else "")
    )


def problem(found: Problem) -> None:
    """What a page shows instead of a traceback (`ui.models.problems`): a request that
    cannot be answered is an error, a missing or unsupported thing a warning."""
    if found.kind == "bad_request":
        st.error(f"That request cannot be answered: {found.message}", icon=":material/error:")
    else:
        st.warning(found.message, icon=":material/warning:")


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


def _number(value: Any, fmt: str = "{:,}") -> str:
    return "—" if is_missing(value) else fmt.format(value)


def headline(items: list[tuple[str, Any, str | None]], widths: list[int] | None = None) -> None:
    """A row of st.metric tiles: (label, value, help)."""
    for col, (label, value, help_text) in zip(st.columns(widths or len(items)), items):
        col.metric(label, value, help=help_text, border=True)


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
    """
    head = f"rows {offset + 1:,}–{offset + shown:,}" if shown else "no rows"
    notes = [f"{total:,} before the flags and metric ranges"] if total != matching else []
    notes += [f"{in_database:,} in the database"] if in_database != matching else []
    return f"{head} of {matching:,} threads" + (f" ({', '.join(notes)})" if notes else "")


def number(value: Any) -> str:
    return _number(value)


def seconds(value: Any) -> str:
    return _number(value, "{:.1f} s")


def duration(value: Any) -> str:
    """Seconds as a short human span, two units at most ("—" when unknown).

    >>> [duration(v) for v in (0.4, 42, 605.4, 8040, 97200, None)]
    ['0.4 s', '42 s', '10 m 05 s', '2 h 14 m', '1 d 3 h', '—']
    """
    if is_missing(value):
        return "—"
    s = float(value)
    if s < 10:
        return f"{s:.1f} s"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    m, sec = divmod(s, 60)
    if m < 60:
        return f"{m} m {sec:02d} s"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h} h {m} m"
    d, h = divmod(h, 24)
    return f"{d} d {h} h"


def minute_text(ts: Any) -> str:
    """A UTC time to the minute for a table cell ("2025-03-05 19:45"; "—" when unknown)."""
    if is_missing(ts):
        return "—"
    return pd.Timestamp(ts).tz_convert("UTC").strftime("%Y-%m-%d %H:%M")


def text(value: Any) -> str:
    """A text cell: the value, or "—" (never "None")."""
    return "—" if is_missing(value) or value == "" else str(value)


# --- chat -----------------------------------------------------------------------------


def _content(text: Any, raw: bool) -> None:
    text = "" if is_missing(text) else str(text)
    if not text:
        st.caption("(no text content)")
        return
    show = st.text if raw else st.markdown
    if len(text) > LONG_CHARS or text.count("\n") > LONG_LINES:
        cut = text[:PREVIEW_CHARS].rsplit("\n", 1)[0] if "\n" in text[:PREVIEW_CHARS] else text[:PREVIEW_CHARS]
        show(cut + " …")
        with st.expander(f"Show the whole message ({len(text):,} characters)"):
            show(text)
    else:
        show(text)


def _tool_calls(value: Any) -> list[dict]:
    if is_missing(value) or value == "":
        return []
    try:
        calls = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return [{"raw": str(value)}]
    return calls if isinstance(calls, list) else [calls]


def message(row: pd.Series, raw: bool = False, footer: Callable[[pd.Series], None] | None = None) -> None:
    """One transcript row as a chat message: who, where in the view and the thread, when, which id;
    `footer(row)` draws more inside the message, last (its review annotations)."""
    role = str(row["role"])
    with st.chat_message(role, avatar=_AVATARS.get(role, _AVATARS["other"])):
        bits = [f"**{role}**"]
        if role == "other" and not is_missing(row.get("lc_type")):
            bits[0] += f" ({row['lc_type']})"
        if not is_missing(row.get("name")):
            bits.append(f"name `{row['name']}`")
        bits += [f"#{row['index']} in view", f"ordinal {row['ordinal']}", ts_text(row["ts"])]
        bits.append(f"id `{row['message_id']}`" if not is_missing(row["message_id"]) else "no message id")
        if not is_missing(row.get("model")):
            bits.append(f"model `{row['model']}`")
        if not is_missing(row.get("total_tokens")):
            bits.append(f"{row['total_tokens']:,} tokens")
        st.caption(" · ".join(bits))
        if role == "tool":
            status = "" if is_missing(row.get("tool_status")) else f" · {row['tool_status']}"
            call = "" if is_missing(row.get("tool_call_id")) else f" · answers `{row['tool_call_id']}`"
            with st.expander(f"Tool result{status}{call}", icon=":material/output:"):
                _content(row["content"], raw=True)
        else:
            _content(row["content"], raw)
        calls = _tool_calls(row.get("tool_calls"))
        if calls:
            names = ", ".join(str(c.get("name", "?")) for c in calls)
            title = f"{len(calls)} tool call{'s' if len(calls) > 1 else ''}: {names}"
            with st.expander(title, icon=":material/build:"):
                st.json(calls, expanded=True)
        blocks = row.get("non_text_blocks")
        if not is_missing(blocks) and blocks:
            st.caption(f"+ {blocks} non-text block{'s' if blocks > 1 else ''} (images, files) not shown")
        if footer is not None:
            footer(row)


def chat(rows: pd.DataFrame, raw: bool = False) -> None:
    shown = rows.head(CHAT_MAX)
    for _, row in shown.iterrows():
        message(row, raw)
    if len(rows) > CHAT_MAX:
        st.info(f"Showing the first {CHAT_MAX} of {len(rows):,} messages; set a limit or switch to the table view.")
