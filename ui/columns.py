"""How each page's tables label and format their columns (st.column_config), in one place.

Pages pass these to `st.dataframe`; the frames themselves (and their CSVs) keep the
column names of the page models (`ui.models`). The Conversations table is text made
here (`conversations_table`): units and "—" that a number column cannot show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from analytics.catalog import RISK_FIGURES
from ui import render
from ui.models.outcomes import OUTCOME_LABELS, signals_text

_TS = "YYYY-MM-DD HH:mm:ss"


@dataclass(frozen=True)
class Shown:
    """A column of the Conversations table: a `metrics.LIST_COLUMNS` name, its header and its cell text."""

    column: str
    label: str
    cell: Callable[[Any], str]
    help: str | None = None
    width: str | None = None
    sortable: bool = True  # a `metrics.LIST_COLUMNS` column, sorted in DuckDB (the outcome columns are not)


def _flag(value: Any) -> str:
    return "" if render.is_missing(value) or not value else "yes"


def _stale(value: Any) -> str:
    return "" if render.is_missing(value) or not value else "⚠ stale"


#: The Conversations table's columns, in order (the CSV has every `metrics.LIST_COLUMNS` column).
CONVERSATION_TABLE = (
    Shown("thread_id", "Thread", render.text, width="medium"),
    Shown("stale_reason", "Stale", _stale, "The transcript is an older root checkpoint's: the latest did not decode "
          "(the transcript page says which and why)", width="small"),
    Shown("first_user_message", "First question", render.text, "The thread's first user message (shortened)",
          width="large"),
    Shown("outcome", "Outcome", lambda v: OUTCOME_LABELS.get(v, "") if isinstance(v, str) else "",
          "Resolved, abandoned, failed, waiting or unknown (docs/outcomes.md)", width="small", sortable=False),
    Shown("signals", "Signals", signals_text, "What went wrong on the way: the outcome signals that fired (the Outcomes "
          "page defines each)", width="medium", sortable=False),
    Shown("last_ts", "Last active (UTC)", render.minute_text, "Time of the last message"),
    Shown("duration_s", "Duration", render.duration, "Last message time − first message time"),
    Shown("user_turns", "User turns", render.number),
    Shown("messages", "Messages", render.number),
    Shown("tool_calls", "Tool calls", render.number),
    Shown("tool_errors", "Tool errors", render.number, "Tool results with status error"),
    Shown("input_tokens", "Input tokens", render.number),
    Shown("output_tokens", "Output tokens", render.number),
    Shown("latency_median_s", "Median reply", render.seconds, "Median user → assistant reply time"),
    Shown("latency_p90_s", "p90 reply", render.seconds, "90th percentile user → assistant reply time"),
    Shown("models", "Models", render.text),
    Shown("tenant_id", "Tenant", render.text),
    Shown("sub_tenant_id", "Sub-tenant", render.text),
    Shown("first_ts", "Started (UTC)", render.minute_text, "Time of the first message"),
    Shown("forks", "Forks", render.number),
    Shown("interrupt_pending", "Pending interrupt", _flag),
    Shown("resume_points", "Resumes", render.number, "Restarts after a gap in the checkpoints"),
)  # fmt: skip
#: What the table can be sorted by (in DuckDB, over every matching thread): every shown metric.
SORTABLE = tuple(c.column for c in CONVERSATION_TABLE if c.sortable)
SORT_LABELS = {c.column: c.label for c in CONVERSATION_TABLE if c.sortable}


def conversations_table(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """One page of `metrics.conversation_list` rows as the table shows them: text cells
    (durations as "2 h 14 m", "—" for unknown, never "None"), and their st.column_config."""
    shown = pd.DataFrame({c.column: [c.cell(v) for v in rows[c.column]] for c in CONVERSATION_TABLE},
                         index=rows.index, dtype=object)  # fmt: skip
    config = {c.column: st.column_config.TextColumn(c.label, help=c.help, width=c.width) for c in CONVERSATION_TABLE}
    config["thread_id"] = st.column_config.TextColumn("Thread", pinned=True, width="medium")
    return shown, config


#: Resume QA's ranked table: each column's header (`ui.models.resume_qa.RISK_TABLE_COLUMNS`),
#: which its "Sort by" and caption use too.
RISK_LABELS = {
    "thread_id": "thread",
    "risk_score": "risk",
    "flags": "flags",
    "resume_points": "resume points",
    "window_size": "window size",
    "truncated_by": "fell off the window",
    "window_no_id": "no id (window)",
    "window_no_ts": "no ts (window)",
    "edited_in_window": "edited (window)",
    "edited_messages": "edited",
    "removed_messages": "removed",
    "forks": "forks",
    "latest_not_leaf": "latest not a leaf",
    "interrupt_pending": "interrupt pending",
    "undecodable_messages": "undecodable",
    "load_errors": "load errors",
    "last_ts": "last ts",
}


def risks(max_score: int) -> dict:
    """Resume QA's threads ranked by risk (`max_score` fills the bar); each header's help is
    the column's meaning in the catalogue (`analytics.catalog.RISK_FIGURES`)."""
    meaning = {c.name: c.doc for c in RISK_FIGURES.columns}
    config = {
        name: st.column_config.Column(label, help=meaning.get(name))
        for name, label in RISK_LABELS.items()
    }
    config.update({
        "thread_id": st.column_config.TextColumn("thread", pinned=True),
        "flags": st.column_config.TextColumn("flags", width="medium", help=meaning["flags"]),
        "risk_score": st.column_config.ProgressColumn("risk", format="%d", min_value=0, max_value=max_score,
                                                      help=meaning["risk_score"]),
        "resume_points": st.column_config.NumberColumn(
            "resume points", help="Restarts: idle gaps over the threshold and changes of run / process id"),
        "last_ts": st.column_config.DatetimeColumn("last ts", format=_TS,
                                                   help="time of the latest checkpoint (`threads.last_ts`)"),
    })
    return config


def window() -> dict:
    """Resume QA's expected window."""
    return {"ts": st.column_config.DatetimeColumn("ts", format=_TS)}
