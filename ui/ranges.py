"""Range filters on the conversations' metrics (turns, duration, tokens, tool calls, latency, errors).

Each bound is a number input bound to the URL (`<stem>_min` / `<stem>_max`); the
filled ones come back as `analytics.filters.Range`s in the column's own unit.

>>> ranges = range_filters(url)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from analytics.filters import Range
from ui import state


@dataclass(frozen=True)
class RangeInput:
    stem: str  # URL params <stem>_min / <stem>_max
    column: str  # a metrics.RANGE_COLUMNS column
    label: str
    scale: float = 1  # one widget unit in the column's unit (minutes → seconds: 60)
    step: float = 1
    integer: bool = True


RANGE_INPUTS = (
    RangeInput("turns", "user_turns", "User turns"),
    RangeInput("duration", "duration_s", "Duration (min)", scale=60, step=1.0, integer=False),
    RangeInput("tokens", "total_tokens", "Total tokens", step=100),
    RangeInput("tools", "tool_calls", "Tool calls"),
    RangeInput("latency", "latency_median_s", "Median reply (s)", step=0.5, integer=False),
    RangeInput("errors", "tool_errors", "Tool errors"),
)
#: URL params kept from before the ranges: `min_turns` is the turns lower bound.
_PARAMS = {("turns", "min"): "min_turns"}


def _param(r: RangeInput, end: str) -> str:
    return _PARAMS.get((r.stem, end), f"{r.stem}_{end}")


def range_filters(url: state.Url) -> tuple[Range, ...]:
    """Draw the range inputs in an expander (open when one is set) and return the set ones."""
    keys = {
        (r, end): url.bind(_param(r, end), None, state.INT if r.integer else state.FLOAT)
        for r in RANGE_INPUTS for end in ("min", "max")
    }  # fmt: skip
    active = sum(st.session_state.get(k) is not None for k in keys.values())
    title = "Metric ranges" + (f" · {active} set" if active else "")
    out = []
    with st.expander(title, expanded=bool(active), icon=":material/tune:"):
        for col, r in zip(st.columns(len(RANGE_INPUTS)), RANGE_INPUTS):
            number = dict(min_value=0 if r.integer else 0.0, step=r.step, value=None, format="%d" if r.integer else "%g")
            low = col.number_input(f"{r.label} ≥", key=keys[(r, "min")], placeholder="any", **number)
            high = col.number_input(f"{r.label} ≤", key=keys[(r, "max")], placeholder="any", **number)
            if low is not None or high is not None:
                scaled = [None if v is None else v * r.scale for v in (low, high)]
                out.append(Range(r.column, *scaled))
        st.caption("Bounds are inclusive; a thread without a value (e.g. no reply yet) is outside a bounded range.")
    return tuple(out)
