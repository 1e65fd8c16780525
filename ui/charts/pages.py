"""The charts of one page each: the Conversations page's, the Overview's top lists and the
Compare page's differences with their intervals.
"""

from __future__ import annotations

import pandas as pd

from ui.charts.axes import plain
from ui.charts.shapes import bars, histogram_bars, lines

# --- the conversations page and the top lists (frames of ui.models) ------------------------

#: The conversations page's charts: `ConversationsPage` field → title (the page draws them in this order).
CONVERSATION_CHARTS = {
    "latency": "Reply latency",
    "tokens_by_model": "Tokens by model",
    "turns": "User turns per thread",
    "activity": "Activity over time",
}


def conversations_chart(name: str, frame: pd.DataFrame) -> dict:
    """The conversations chart `name` (a `CONVERSATION_CHARTS` key, a `ConversationsPage` field) of `frame`."""
    if name == "latency":
        return histogram_bars(frame, "model", "seconds")
    if name == "tokens_by_model":
        return bars(frame, "model", "tokens", "kind")
    if name == "turns":
        return bars(frame, "user_turns", "threads", xlabel="user turns")
    if name == "activity":
        return lines(frame, "day", ["active_conversations", "messages", "user_messages"])
    raise ValueError(f"no conversations chart named {name!r}")


#: The overview's top lists: `OverviewPage` field → (title, value column, category column, what an empty one lacks).
TOP_LISTS = {
    "top_tenants": ("Top tenants", "conversations", "tenant_id", "tenants"),
    "top_models": ("Top models", "messages", "model", "models"),
    "top_tools": ("Top tools", "calls", "tool", "tools"),
}


def top_list(name: str, frame: pd.DataFrame) -> dict:
    """The overview's ranking `name` (a `TOP_LISTS` key): horizontal bars, every column in the tooltip."""
    _, x, y, _ = TOP_LISTS[name]
    option = bars(frame, x, y, horizontal=True, ylabel="", hover=list(frame.columns))
    # The value axis says what it counts; a long name goes on lines of LABEL_PX (whole in the
    # tooltip) rather than squeezing the bars into the chart's right third.
    option["xAxis"].update({"name": x, "nameLocation": "middle", "nameGap": 26})
    option["grid"]["bottom"] = 28
    return option


#: The Compare page's charts: `ComparePage` field → (title, the difference column it ranks by).
COMPARE_CHARTS = {
    "shares": ("Rates and shares: biggest differences (percentage points, B − A)", "difference_pp"),
    "means": ("Per conversation: biggest relative differences (%, B vs A)", "relative_pct"),
}


#: The error bars' colour: dark over any bar.
INTERVAL_COLOUR = "#31333f"


def compare_chart(name: str, frame: pd.DataFrame) -> dict:
    """The Compare page's chart `name` (a `COMPARE_CHARTS` key): the rows' differences as horizontal
    bars, each with its 95 % interval (`low` to `high`, the frame's) as an error bar with caps.

    The error bars are a horizontal boxplot whose box is flat at the difference, so its whiskers
    run from `low` to `high`, capped, and the value axis spans them; a row without an interval
    has none.

    >>> f = pd.DataFrame({"marked": ["x", "y"], "difference_pp": [5.0, -2.0], "low": [1.0, float("nan")],
    ...                   "high": [9.0, float("nan")], "ci95": ["+1.0 to +9.0 pp", "—"], "q": ["0.01", "0.5"]})
    >>> option = compare_chart("shares", f)
    >>> option["series"][1]["data"], option["yAxis"]["data"]
    ([[1.0, 5.0, 5.0, 5.0, 9.0], '-'], ['x', 'y'])
    """
    value = COMPARE_CHARTS[name][1]
    option = bars(frame, value, "marked", horizontal=True, ylabel="", hover=["ci95", "q"])
    # (the boxplot's rows are the bars' by position: the axis lists the names the bars are drawn at)
    dims, source = option["dataset"]["dimensions"], option["dataset"]["source"]
    at = dims.index(option["series"][0]["encode"]["y"])
    option["yAxis"]["data"] = [row[at] for row in source]
    whiskers = [[plain(lo), plain(d), plain(d), plain(d), plain(hi)] if pd.notna(lo) and pd.notna(hi) else "-"
                for d, lo, hi in zip(frame[value], frame["low"], frame["high"])]
    option["series"].append({"type": "boxplot", "name": "95 % interval", "layout": "horizontal", "silent": True,
                             "boxWidth": [6, 14], "tooltip": {"show": False}, "data": whiskers,
                             "itemStyle": {"color": "transparent", "borderColor": INTERVAL_COLOUR, "borderWidth": 1.5}})
    return option
