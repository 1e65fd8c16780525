"""Counts per period: the Overview's trends, the outcome trend, and the Topics and Failure
patterns trends (one line a label).
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from ui.charts.axes import LEGEND_ROW, period_labels
from ui.charts.shapes import bars, grouped_bars, lines

# --- the overview's trends (frames of ui.models.overview.OverviewPage) ---------------------

PERIOD_AXIS = {"day": "day (UTC)", "week": "week starting Monday (UTC)", "month": "month (UTC)"}


def trend(name: str, frame: pd.DataFrame, by: str, through: date | None = None) -> dict:
    """The overview chart `name` (an `OverviewPage` trend field) of `frame`, bucketed `by`; `through`:
    the last day the data covers (`period_label`)."""
    labels = period_labels(frame["period"], by, through)
    axis = dict(xlabel=PERIOD_AXIS[by], labels=labels)
    stacked = {  # name: (y, color, ylabel)
        "conversations": ("conversations", None, "threads"),
        "messages_by_role": ("messages", "role", "messages"),
        "tool_calls": ("calls", "tool", "tool calls"),
        "model_mix": ("messages", "model", "messages"),
        "latency_pairs": ("latency_pairs", None, "questions answered"),
    }
    grouped = {  # name: (ys, ylabel, legend names)
        "tokens": (["input_tokens", "output_tokens"], "tokens", {"input_tokens": "input", "output_tokens": "output"}),
        "problems": (["tool_errors", "interrupts"], "count", {"tool_errors": "tool errors"}),
    }
    if name in stacked:
        y, color, ylabel = stacked[name]
        option = bars(frame, "period", y, color, ylabel=ylabel, **axis)
    elif name in grouped:
        ys, ylabel, names = grouped[name]
        option = grouped_bars(frame, "period", ys, ylabel=ylabel, names=names, **axis)
    elif name == "latency":
        ys = ["reply_latency_p50_s", "reply_latency_p90_s"]
        option = lines(frame, "period", ys, ylabel="seconds", names=dict(zip(ys, ["p50", "p90"])), **axis)
    else:
        raise ValueError(f"no trend chart named {name!r}")
    option["yAxis"]["minInterval"] = 0 if name == "latency" else 1  # counts: whole-number ticks
    return option


#: The outcome colours of the outcome charts (the tiles' and badges' named colours, `ui.outcomes`).
OUTCOME_COLORS = {"resolved": "#21c354", "abandoned": "#ff8c00", "failed": "#ff4b4b", "waiting": "#803df5",
                  "unknown": "#a3a8b8"}


def outcome_trend(frame: pd.DataFrame, by: str, through: date | None = None) -> dict:
    """Threads per period (period, outcome, threads), stacked by outcome in a fixed colour each."""
    labels = period_labels(frame["period"], by, through)
    option = bars(frame, "period", "threads", "outcome", ylabel="threads", xlabel=PERIOD_AXIS[by], labels=labels)
    for series in option["series"]:
        if series["name"] in OUTCOME_COLORS:
            series["itemStyle"] = {"color": OUTCOME_COLORS[series["name"]]}
    option["yAxis"]["minInterval"] = 1
    return option


def period_trend(frame: pd.DataFrame, ylabel: str = "conversations", by: str = "day",
                 through: date | None = None) -> dict:
    """One line per column of `frame` over its `period_start` (the Topics and Failure patterns trends).

    The columns are topic or pattern labels, data rather than column names: shown as written, one
    per row of a legend below the chart (a legend on one paged row cut the long ones), each cut to
    the chart's width with the whole label in its tooltip."""
    ys = [c for c in frame.columns if c != "period_start"]
    option = lines(frame, "period_start", ys, ylabel=ylabel, xlabel=PERIOD_AXIS[by], names={c: c for c in ys},
                   labels=period_labels(frame["period_start"], by, through))
    option["legend"] = {"show": True, "type": "plain", "orient": "vertical", "left": 0, "bottom": 0,
                        "itemGap": LEGEND_ROW - 14, "tooltip": {"show": True},
                        "textStyle": {"width": 900, "overflow": "truncate"}}
    option["grid"].update({"top": 24, "bottom": 40 + LEGEND_ROW * len(ys)})
    option["yAxis"].update({"name": ylabel, "nameTextStyle": {"align": "left"}})
    return option
