"""How each page's tables label and format their columns (st.column_config), in one place.

Pages pass these to `st.dataframe`; the frames themselves keep the column names of the page
models (`ui.models`) and their values: numbers and times stay numbers and times, drawn by their
column's format, so a click on a header sorts by value. A table's CSV takes the same headers
(`render.download(..., headers=config)`, `ui.formats.readable`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analytics.reporting.readable import CONVERSATION_COLUMNS, Shown
from ui import render
from ui.formats import header  # noqa: F401  (a column's header: the one way, ui.formats)
from ui.models.outcomes import OUTCOME_LABELS, signals_text, why_text
from ui.models.resume_qa import RISK_LABELS, risk_header  # noqa: F401  (Resume QA's headers: its "Sort by" too)

_TS = "YYYY-MM-DD HH:mm:ss"


#: The Conversations table's columns, in order (`analytics.reporting.readable`, which the command
#: line's text output writes too), and their widths here: what a reader scans a row for (when,
#: whose, how it ended, how long, what was asked) sized to show whole in a 1400 px window beside
#: the sidebar (`fit`, `FIT_PX`); the others wait in the table's column chooser.
CONVERSATION_TABLE = CONVERSATION_COLUMNS
WIDTHS = {"thread_id": 160, "last_ts": 135, "tenant_id": 80, "outcome": 85, "outcome_reason": 140, "messages": 80,
          "first_user_message": 170, "signals": 140, "stale_reason": "small"}
#: The Conversations table's row height: three lines, so that a first question (and a why) wraps
#: inside its column, about 70 characters of it in view, instead of running past the column's
#: right edge after 20. (Streamlit's grid wraps a cell's text only in rows taller than 64 px.)
ROW_PX = 66
#: Rows in view before the table scrolls, as many as a table of one-line rows shows.
ROWS_IN_VIEW = 10


def conversations_height(rows: int) -> int:
    """The Conversations table's height in pixels for `rows` rows: its header and up to
    `ROWS_IN_VIEW` rows of `ROW_PX`, the rest a scroll away.

    >>> conversations_height(3), conversations_height(50)
    (236, 698)
    """
    return 38 + min(max(rows, 1), ROWS_IN_VIEW) * ROW_PX  # (the header row, 36 px, and the borders)
#: What the table can be sorted by (in DuckDB, over every matching thread): every shown metric.
SORTABLE = tuple(c.column for c in CONVERSATION_TABLE if c.sortable)
SORT_LABELS = {c.column: c.label for c in CONVERSATION_TABLE if c.sortable}
#: The table's CSV: its columns in its order, (name, header, kind) (`ui.models.conversations.conversations_csv`).
CSV_COLUMNS = tuple((c.column, c.label, c.kind) for c in CONVERSATION_TABLE)
#: A minute-precise UTC time in a table (the times of `render.minute_text`).
MINUTE = "YYYY-MM-DD HH:mm"


def _config(c: Shown):
    if c.kind in ("count", "duration"):  # (a duration's text is `render.duration`'s: see `conversations_table`)
        return st.column_config.NumberColumn(c.label, help=c.help, width=WIDTHS.get(c.column),
                                             format="localized" if c.kind == "count" else None)
    if c.kind == "seconds":
        return st.column_config.NumberColumn(c.label, help=c.help, width=WIDTHS.get(c.column), format=render.SECONDS_FORMAT)
    if c.kind == "time":
        return st.column_config.DatetimeColumn(c.label, help=c.help, width=WIDTHS.get(c.column), format=MINUTE, timezone="UTC")
    if c.kind == "flag":
        return st.column_config.CheckboxColumn(c.label, help=c.help, width=WIDTHS.get(c.column))
    return st.column_config.TextColumn(c.label, help=c.help, width=WIDTHS.get(c.column))


def _cells(c: Shown, values: pd.Series) -> pd.Series:
    if c.kind == "stale":
        return values.map(lambda v: "" if render.is_missing(v) or not v else "⚠ stale").astype(object)
    if c.kind == "outcome":
        return values.map(lambda v: OUTCOME_LABELS.get(v, "") if isinstance(v, str) else "").astype(object)
    if c.kind == "signals":
        return values.map(signals_text).astype(object)
    if c.kind == "why":
        return values.map(why_text).astype(object)
    if c.kind == "flag":
        return values.map(lambda v: bool(v) if not render.is_missing(v) else False)
    if c.kind in ("count", "seconds", "duration"):
        return pd.to_numeric(values, errors="coerce")
    if c.kind == "time":
        return pd.to_datetime(values, utc=True)
    return values.astype(object).where(values.notna(), None)


def conversations_table(rows: pd.DataFrame):
    """One page of `metrics.conversation_list` rows as the table shows them, and their
    st.column_config: values kept (a header click sorts by value), drawn by each column's
    format; durations drawn as `render.duration` writes them (a Styler's display text over
    the seconds), missing values as empty cells (`render.table`'s placeholder)."""
    shown = pd.DataFrame({c.column: _cells(c, rows[c.column]) for c in CONVERSATION_TABLE}, index=rows.index)
    config = {c.column: _config(c) for c in CONVERSATION_TABLE}
    config["thread_id"] = st.column_config.TextColumn("Thread", pinned=True, width=WIDTHS["thread_id"])
    return shown, config


def sort_caption(sort: str, descending: bool) -> str:
    """What the caption over the Conversations table says of its order: the chosen sort, over every
    matching thread (a header click chooses it: `header_sort`), which the CSV keeps too.

    >>> sort_caption("duration_s", True)
    ' · sorted by Duration, high first (click a header to sort by it) · select a row to open its transcript'
    """
    order = "high first" if descending else "low first"
    return (f" · sorted by {SORT_LABELS[sort]}, {order} (click a header to sort by it)"
            " · select a row to open its transcript")


def csv_help(sort: str, descending: bool) -> str:
    """What the Conversations CSV holds, said on its button.

    >>> csv_help("duration_s", False)
    'Every matching thread, sorted by Duration, low first: the columns of the table under its headers, durations and reply times in seconds, times in UTC'
    """
    order = "high first" if descending else "low first"
    return (f"Every matching thread, sorted by {SORT_LABELS[sort]}, {order}: the columns of the table under its "
            "headers, durations and reply times in seconds, times in UTC")


#: The table's selection modes: a row opens its transcript; a header click selects its column,
#: which `header_sort` turns into the sort (the grid's own header sort would reorder the rows
#: of one page in the browser only, out of step with the pages, the caption and the CSV).
SELECTION_MODES = ("single-row", "single-column")


def table_key(sort: str, descending: bool) -> str:
    """The Conversations table's widget key: one per sort, so that a header click, once it is the
    sort, leaves no column selected in the grid (a new sort draws a new table).

    >>> table_key("duration_s", False)
    'conversations.table.duration_s.asc'
    """
    return f"conversations.table.{sort}.{'desc' if descending else 'asc'}"


def header_sort(key: str, sort_key: str, order_key: str):
    """The table's on-select callback (the table keyed `key`; the sort's and the order's widgets
    keyed `sort_key`, `order_key`): a header clicked (its column selected) becomes the sort over
    every matching thread, high first; the same header again flips the order. A column the
    pages cannot be sorted by (an outcome, the review columns) sorts nothing."""

    def on_select() -> None:
        selection = (st.session_state.get(key) or {}).get("selection") or {}
        picked = list(selection.get("columns") or [])
        if not picked or picked[0] not in SORTABLE:
            return
        same = st.session_state.get(sort_key, "last_ts") == picked[0]
        st.session_state[order_key] = ("asc" if st.session_state.get(order_key) != "asc" else "desc") if same else "desc"
        st.session_state[sort_key] = picked[0]

    return on_select


def styled(shown: pd.DataFrame):
    """The Conversations table with its durations written as `render.duration` writes them
    (the cells stay seconds: a header click sorts them by value)."""
    durations = [c.column for c in CONVERSATION_TABLE if c.kind == "duration" and c.column in shown.columns]
    return shown.style.format(render.duration, subset=durations, na_rep="")


RISK_HELP = {
    "risk_score": "The weights of the thread's flags added up (What the flags mean, above)",
    "flags": "What makes a restart of this thread doubtful, most severe first",
    "resume_points": "Restarts: idle gaps over the threshold and changes of run / process id "
                     "(a wait on a human's answer is not one)",
    "window_size": "Messages a restart now restores (at most the cap)",
    "truncated_by": "User and assistant messages too old to be restored: more than the cap",
    "window_no_id": "Restored messages without an id: they cannot be deduplicated or traced",
    "window_no_ts": "Restored messages without a time: they cannot be placed in time",
    "edited_in_window": "Restored messages whose text changed later on the current branch",
    "edited_messages": "Messages whose text changed between checkpoints",
    "removed_messages": "Messages removed from the transcript",
    "forks": "Branches of the thread (replays, edits of its state)",
    "latest_not_leaf": "The checkpoint a restart resumes from (the latest by id) is not the newest turn",
    "interrupt_pending": "The thread waits on a human's answer, which a restart does not restore as a message",
    "undecodable_messages": "Messages the loader could not read: the restored messages cannot be checked",
    "load_errors": "Rows of the thread skipped at load (the load's errors say why)",
    "last_ts": "Time of the latest checkpoint",
}


def risks(max_score: int) -> dict:
    """Resume QA's threads ranked by risk (`max_score` fills the bar), each header with what it holds."""
    header = {name: risk_header(name) for name in RISK_LABELS}
    config = {
        name: st.column_config.Column(header[name], help=RISK_HELP.get(name))
        for name in RISK_LABELS
    }
    config.update({
        "thread_id": st.column_config.TextColumn(header["thread_id"], pinned=True),
        "flags": st.column_config.TextColumn(header["flags"], width=260, help=RISK_HELP["flags"]),
        "risk_score": st.column_config.ProgressColumn(header["risk_score"], format="%d", min_value=0, width=120,
                                                      max_value=max_score, help=RISK_HELP["risk_score"]),
        "last_ts": st.column_config.DatetimeColumn(header["last_ts"], format=_TS, help=RISK_HELP["last_ts"]),
    })
    return config


def headers(frame: pd.DataFrame, **given) -> dict:
    """A table's st.column_config: `given` configs, and every other column of `frame` under its
    human header (`header`), its times in UTC to the second."""
    config = {}
    for name in frame.columns:
        if name in given:
            config[name] = given[name]
        elif pd.api.types.is_datetime64_any_dtype(frame[name]):
            config[name] = st.column_config.DatetimeColumn(header(name), format=_TS)
        else:
            config[name] = st.column_config.Column(header(name))
    return config


def window(frame: pd.DataFrame | None = None) -> dict:
    """Resume QA's expected window."""
    ts = st.column_config.DatetimeColumn("Time (UTC)", format=_TS)
    return {"ts": ts} if frame is None else headers(frame, ts=ts)


# --- Fitting a table to the page ----------------------------------------------------------

#: The width a table may take: the page's main column in a 1400 px window with the sidebar
#: open (938 px of grid), less a margin for the estimate below.
FIT_PX = 900
#: Streamlit's named column widths, in pixels.
_NAMED_PX = {"small": 75, "medium": 200, "large": 400}
#: What an auto-sized column's width is estimated from: its header and its longest cell (of the
#: first rows, as the grid measures them), at this many pixels a character plus the cell's
#: padding, within the grid's bounds for an automatic width.
_CHAR_PX, _PAD_PX, _MIN_PX, _MAX_PX, _SAMPLE = 7, 24, 50, 500, 50
_ROW_SELECT_PX = 34


@dataclass(frozen=True)
class Fit:
    """Which columns of a table show by default (`order`) and which wait in its column chooser
    (the toolbar's "Show/hide columns"), by their headers (`hidden`)."""

    order: tuple[str, ...]
    hidden: tuple[str, ...]

    def caption(self) -> str | None:
        """What the page says under the table of the columns it does not show at first.

        >>> Fit(("a",), ("Tokens", "Forks")).caption()
        '2 more columns: Tokens, Forks · show them from the table: hover it, then its eye icon (Show/hide columns)'
        """
        if not self.hidden:
            return None
        return (f"{render.plural(len(self.hidden), 'more column')}: {', '.join(self.hidden)} · show them from the "
                "table: hover it, then its eye icon (Show/hide columns)")


def _label(entry, name: str) -> str:
    if isinstance(entry, str):
        return entry
    return (entry or {}).get("label") or header(name)


def _width(entry, name: str, values: pd.Series) -> float:
    """A column's estimated width in pixels (its configured width, or what the grid would measure)."""
    width = None if isinstance(entry, str) else (entry or {}).get("width")
    if isinstance(width, int):
        return width
    if width in _NAMED_PX:
        return _NAMED_PX[width]
    sample = values.head(_SAMPLE)
    cells = sample[sample.notna()].astype(str) if sample.notna().any() else pd.Series([], dtype=object)
    if pd.api.types.is_datetime64_any_dtype(values):
        longest = 16  # (the tables' times: to the minute or the second)
    elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        longest = 8  # (drawn by the column's format: "1,234", "35.1%", "4.2 s")
    else:
        longest = int(cells.str.len().max()) if len(cells) else 0
    chars = max(len(_label(entry, name)) + 2, longest)  # (+2: the header's sort and help marks)
    return min(_MAX_PX, max(_MIN_PX, chars * _CHAR_PX + _PAD_PX))


def _blank(values: pd.Series) -> bool:
    """Whether a column shows nothing on any row (missing values or empty texts)."""
    return bool((values.isna() | (values.astype(str).str.strip() == "")).all())


def fit(frame: pd.DataFrame, config: dict, *, selectable: bool = False, budget: float = FIT_PX,
        keep: tuple[str, ...] = ()) -> Fit:
    """The columns of `frame` a table shows at first so that none lies beyond the page's right
    edge (`budget` pixels): pinned columns and those in `keep` (the column the rows are sorted by)
    first, then the others in their order while they fit; a column empty on every row waits
    first. The rest stay one click away in the table's column chooser, and `Fit.caption` names them.

    >>> frame = pd.DataFrame({"thread_id": ["acme:web:s1"], "note": [None], "text": ["x" * 90], "n": [3]})
    >>> fit(frame, {"thread_id": st.column_config.TextColumn("Thread", pinned=True)}, budget=900)
    Fit(order=('thread_id', 'note', 'text', 'n'), hidden=())
    >>> fit(frame, {"thread_id": st.column_config.TextColumn("Thread", pinned=True)}, budget=700)
    Fit(order=('thread_id', 'text', 'n'), hidden=('Note',))
    >>> fit(frame, {"text": st.column_config.TextColumn("Text", width="large")}, budget=520)
    Fit(order=('thread_id', 'text'), hidden=('Note', 'N'))
    >>> fit(frame, {"text": st.column_config.TextColumn("Text", width="large")}, budget=520, keep=("n",))
    Fit(order=('thread_id', 'n'), hidden=('Note', 'Text'))
    """
    shown = [c for c in frame.columns if not (c in config and config[c] is None)
             and not (isinstance(config.get(c), dict) and config[c].get("hidden"))]
    widths = {c: _width(config.get(c), c, frame[c]) for c in shown}
    used = _ROW_SELECT_PX if selectable else 0
    if used + sum(widths.values()) <= budget:
        return Fit(tuple(shown), ())
    pinned = [c for c in shown if c in keep or isinstance(config.get(c), dict) and config[c].get("pinned")]
    empty = [c for c in shown if c not in pinned and _blank(frame[c])]
    keep = set()
    for c in pinned + [c for c in shown if c not in pinned and c not in empty] + empty:
        if c in pinned or used + widths[c] <= budget:
            keep.add(c)
            used += widths[c]
        else:
            used = budget  # (after the first column that does not fit, none does: the order is kept)
    return Fit(tuple(c for c in shown if c in keep), tuple(_label(config.get(c), c) for c in shown if c not in keep))
