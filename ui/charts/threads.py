"""One thread's checkpoints: the Resume QA timeline (messages in state over time, resume points
shaded) and the History page's branch tree (a lane per branch).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ui import label_rows
from ui.charts.axes import base, period_label, plain
from ui.formats import AXIS_TIME

#: The timeline's symbol for each checkpoint source (metadata.source); another source is a triangle.
TIMELINE_SYMBOLS = {"input": "circle", "loop": "diamond", "fork": "rect", "update": "triangle"}
#: How the timeline's legend says what wrote a checkpoint (LangGraph's `metadata.source`).
TIMELINE_SOURCE_WORDS = {"input": "new input", "loop": "a step", "fork": "a fork", "update": "an edit (update_state)"}
#: The timeline's colour for each branch (`ui.models.resume_qa.ThreadQA.timeline`'s `branch`).
TIMELINE_COLORS = {"current branch": "#0068c9", "other branch": "#83c9ff"}
#: What shades a resume point: the idle gap behind it, and a dashed line where the thread resumed.
RESUME_SHADE, RESUME_LINE = "rgba(255, 165, 0, 0.15)", "#ffa500"
#: The timeline's columns a point's tooltip shows, and what it calls them.
_TIMELINE_TOOLTIP = {"checkpoint_id": "checkpoint", "label": "label", "chain_position": "position in the chain",
                     "time": "time (UTC)", "step": "step"}


def _epoch_ms(value: Any) -> int | None:
    """A time as milliseconds since the epoch (an ECharts time axis value), missing as None."""
    return None if value is None or pd.isna(value) else pd.Timestamp(value).value // 1_000_000


def clock(value: Any) -> str | None:
    return None if value is None or pd.isna(value) else pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _days(times: pd.Series) -> str:
    """The days `times` fall on, for an axis name: a time axis labels hours, and names a day only
    when it passes midnight.

    >>> _days(pd.Series(pd.to_datetime(["2025-03-10 10:00", "2025-03-10 10:03"], utc=True)))
    ' on Mar 10, 2025'
    >>> _days(pd.Series(pd.to_datetime(["2025-03-10 23:59", "2025-03-12 00:01"], utc=True)))
    ', Mar 10, 2025 → Mar 12, 2025'
    """
    days = sorted({t.date() for t in times.dropna()})
    if not days:
        return ""
    first, last = period_label(days[0], "day"), period_label(days[-1], "day")
    return f" on {first}" if first == last else f", {first} → {last}"


def resume_timeline(timeline: pd.DataFrame, markers: pd.DataFrame, by_step: bool = False) -> dict:
    """A thread's root checkpoints (messages in state over time, or over steps) with its resume points shaded.

    `timeline` and `markers` are `ui.models.resume_qa.ThreadQA`'s. A scatter series per branch ×
    source (legend "Branch · source"), a colour per branch and a symbol per source; each point's
    tooltip names its checkpoint. Each resume point is shaded from the checkpoint before it to the
    one after (the idle gap) with a dashed line where it resumed, labelled ("resume #1"). Times
    are UTC (`useUTC`: the writer's clock as stored, not the reader's time zone).
    """
    x, x0, x1 = ("step", "before_step", "after_step") if by_step else ("ts", "before_ts", "after_ts")
    at = (lambda v: None if pd.isna(v) else int(v)) if by_step else _epoch_ms
    frame = timeline.assign(x=[at(v) for v in timeline[x]], time=[clock(v) for v in timeline["ts"]])
    dims = ["x", "message_count", *_TIMELINE_TOOLTIP]
    names = ["x", "messages in state", *_TIMELINE_TOOLTIP.values()]
    datasets, series = [], []
    for (branch, source), part in frame.groupby(["branch", "source"], sort=False, dropna=False):
        source = "(none)" if pd.isna(source) else str(source)
        datasets.append({"dimensions": names, "source": [[plain(v) for v in row] for row in part[dims].itertuples(index=False)]})
        series.append({
            "type": "scatter", "name": f"{branch} · {TIMELINE_SOURCE_WORDS.get(source, source)}",
            "datasetIndex": len(datasets) - 1,
            "symbol": TIMELINE_SYMBOLS.get(source, "triangle"), "symbolSize": 9,
            "itemStyle": {"color": TIMELINE_COLORS.get(branch, "#808495")},
            "encode": {"x": "x", "y": "messages in state", "tooltip": list(_TIMELINE_TOOLTIP.values())},
        })
    legend = [s["name"] for s in series]
    spans = [(at(getattr(m, x0)), at(getattr(m, x1)), m.label) for m in markers.itertuples()]
    spans = [(a, b, label) for a, b, label in spans if a is not None and b is not None]
    placed: list[int | None] = []
    if spans:  # a series of no points of its own, not in the legend: it carries the shading
        xs = [v for v in frame["x"] if v is not None] + [v for a, b, _ in spans for v in (a, b)]
        placed = label_rows.rows([b for _, b, _ in spans], [label for *_, label in spans], min(xs), max(xs))
        series.append({
            "type": "scatter", "name": "resume points", "data": [],
            "markArea": {"silent": True, "itemStyle": {"color": RESUME_SHADE},
                         "data": [[{"xAxis": a}, {"xAxis": b}] for a, b, _ in spans]},
            "markLine": {"silent": True, "symbol": "none", "lineStyle": {"type": "dashed", "color": RESUME_LINE, "width": 2},
                         "label": {"position": "end", "formatter": "{b}", "color": "#808495"},
                         # (a label that would cover its neighbour's goes a row up, or is left out)
                         "data": [{"xAxis": b, "name": label, "label": {"show": False} if row is None else
                                   {"distance": 5 + row * label_rows.ROW_PX}}
                                  for (_, b, label), row in zip(spans, placed)]},
        })
    xlabel = "step (metadata.step)" if by_step else f"checkpoint time{_days(timeline['ts'])} (UTC, writer's clock)"
    option = base(xlabel, "messages in state", True)
    option.update({
        "useUTC": True,
        "title": {"text": "Branch · source", "left": 0, "top": 2,
                  "textStyle": {"fontSize": 12, "fontWeight": "normal", "color": "#808495"}},
        "legend": {"show": True, "top": 0, "left": 110, "type": "scroll", "data": legend, "itemWidth": 12, "itemHeight": 12},
        "tooltip": {"trigger": "item"},
        "series": series,
        "dataset": datasets,
    })
    rows = max((r + 1 for r in placed if r is not None), default=1)
    # room for the rows of resume labels above, the y axis name beside
    option["grid"].update({"top": 52 + (rows - 1) * label_rows.ROW_PX, "left": 34})
    margin = ["4%", "4%"]  # (no point on the chart's edge, cut in half: label_rows.rows' margin)
    option["xAxis"].update({"type": "value", "minInterval": 1, "scale": True, "boundaryGap": margin} if by_step
                           else {"type": "time", "boundaryGap": margin, "axisLabel": {"formatter": AXIS_TIME}})
    option["yAxis"].update({"type": "value", "name": "messages in state", "nameLocation": "middle", "nameGap": 30,
                            "minInterval": 1, "min": 0})
    return option


# --- a thread's branch tree (ui.models.history.ThreadHistory.tree) -------------------------

#: Lane colours: the current branch, the branch read (when another), the others.
TREE_CURRENT, TREE_READ, TREE_OTHER, TREE_INTERRUPT = "#1f77b4", "#d62728", "#9aa0a6", "#ff7f0e"
#: A checkpoint's marker by `metadata.source` (a fork point is a diamond whatever its source).
TREE_SYMBOLS = {"input": "circle", "loop": "emptyCircle", "update": "rect",
                "fork": "path://M50 0 L61 35 L98 35 L68 57 L79 91 L50 70 L21 91 L32 57 L2 35 L39 35 Z"}
_TREE_TOOLTIP = ["checkpoint", "step", "source", "messages", "time (UTC)", "interrupt"]


def branch_tree(tree: pd.DataFrame, labels: dict[int, str], read: int = 1) -> dict:
    """A thread's branch tree: one lane per branch, its checkpoints along it, a line from each
    checkpoint to its parent (a fork reads as a line leaving one lane for another).

    `tree` is `ui.models.history.ThreadHistory.tree` (`analytics.checkpoint_tree` rows): x is a
    checkpoint's place along its chain counted from 1 (the thread's first), as the app numbers
    messages, not the stored 0-based `position`; the lane its branch (1, the
    current one, on top). Heads are larger, fork points diamonds, a pending interrupt has an
    orange ring; the current branch is blue, the branch read (when another) red, the others grey.

    >>> t = pd.DataFrame({"checkpoint_id": ["a", "b", "c"], "parent_checkpoint_id": [None, "a", "a"],
    ...     "position": [0, 1, 1], "branch": [1, 1, 2], "is_head": [False, True, True],
    ...     "is_fork_point": [True, False, False], "source": ["input", "loop", "update"], "step": [0, 1, 1],
    ...     "message_count": [1, 2, 2], "ts": pd.to_datetime(["2025-03-03"] * 3, utc=True), "has_interrupt": [False] * 3})
    >>> option = branch_tree(t, {1: "current", 2: "abandoned"})
    >>> option["yAxis"]["data"], [s["name"] for s in option["series"]]
    (['branch 1 · current', 'branch 2 · abandoned'], ['forks', 'current', 'abandoned'])
    >>> option["series"][0]["data"]
    [{'coords': [[1, 0], [2, 0]]}, {'coords': [[1, 0], [2, 1]]}]
    >>> option["xAxis"]["name"], option["xAxis"]["min"]
    ('checkpoint along the chain (1 = the first)', 1)
    """
    lanes = sorted(int(b) for b in tree["branch"].unique()) if not tree.empty else []
    lane = {b: i for i, b in enumerate(lanes)}
    at = {c: (int(p) + 1, lane[int(b)]) for c, p, b in zip(tree["checkpoint_id"], tree["position"], tree["branch"])}
    edges = [{"coords": [list(at[parent]), list(at[cid])]}
             for cid, parent in zip(tree["checkpoint_id"], tree["parent_checkpoint_id"])
             if isinstance(parent, str) and parent in at]
    series: list[dict] = [{"type": "lines", "name": "forks", "coordinateSystem": "cartesian2d", "silent": True,
                           "lineStyle": {"color": TREE_OTHER, "width": 2, "opacity": 1}, "data": edges, "z": 1}]
    for branch, part in tree.groupby("branch", sort=True):
        colour = TREE_CURRENT if branch == 1 else TREE_READ if branch == read else TREE_OTHER
        points = []
        for row in part.itertuples(index=False):
            interrupt = bool(row.has_interrupt)
            points.append({
                "value": [int(row.position) + 1, lane[int(branch)], row.checkpoint_id, plain(row.step), row.source or "?",
                          plain(row.message_count), clock(row.ts), "pending here" if interrupt else ""],
                "symbol": "diamond" if row.is_fork_point else TREE_SYMBOLS.get(row.source, "circle"),
                "symbolSize": 14 if row.is_head else 9,
                "itemStyle": {"color": colour, "borderColor": TREE_INTERRUPT if interrupt else colour,
                              "borderWidth": 3 if interrupt else 1},
            })
        series.append({"type": "scatter", "name": labels.get(int(branch), f"branch {branch}"), "z": 2,
                       "dimensions": ["x", "lane", *_TREE_TOOLTIP], "encode": {"x": 0, "y": 1, "tooltip": _TREE_TOOLTIP},
                       "data": points})
    option = base("checkpoint along the chain (1 = the first)", "", False)
    option.update({"tooltip": {"trigger": "item"}, "series": series})
    # (no boundaryGap: on a value axis it moved the points off their ticks and dropped the labels)
    option["xAxis"].update({"type": "value", "minInterval": 1, "min": 1, "axisLine": {"show": True},
                            "splitLine": {"show": False}})
    option["yAxis"] = {"type": "category", "inverse": True, "boundaryGap": True,
                       "data": [f"branch {b} · " + ("current" if b == 1 else "abandoned") for b in lanes]}
    option["grid"].update({"top": 12, "height": 48 * len(lanes)})  # a row per lane (`height` adds the axis below)
    return option
