"""How each page's tables label and format their columns (st.column_config), in one place.

Pages pass these to `st.dataframe`; the frames themselves (and their CSVs) keep the
column names of the page models (`ui.models`).
"""

from __future__ import annotations

import streamlit as st

_TS = "YYYY-MM-DD HH:mm:ss"


def conversations() -> dict:
    """The Conversations table: one row per thread."""
    return {
        "thread_id": st.column_config.TextColumn("thread", pinned=True),
        "duration_s": st.column_config.NumberColumn("duration (s)", format="%.1f"),
        "latency_median_s": st.column_config.NumberColumn("median latency (s)", format="%.2f"),
        "latency_p90_s": st.column_config.NumberColumn("p90 latency (s)", format="%.2f"),
        "first_ts": st.column_config.DatetimeColumn("first ts", format=_TS),
        "last_ts": st.column_config.DatetimeColumn("last ts", format=_TS),
    }


def risks(max_score: int) -> dict:
    """Resume QA's threads ranked by risk (`max_score` fills the bar)."""
    return {
        "thread_id": st.column_config.TextColumn("thread", pinned=True),
        "risk_score": st.column_config.ProgressColumn("risk", format="%d", min_value=0, max_value=max_score),
        "last_ts": st.column_config.DatetimeColumn("last ts", format=_TS),
    }


def window() -> dict:
    """Resume QA's expected window."""
    return {"ts": st.column_config.DatetimeColumn("ts", format=_TS)}
