"""The chart shapes the pages draw: bars (stacked, horizontal, a histogram's bins), lines and
grouped bars, each an ECharts option dict built from a frame in chart shape.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.charts.axes import (LABEL_PX, base, bin_grid, bin_labels, categories, groups, plain, text_axis,
                            whole_numbers, wrap_label)

def histogram_bars(frame: pd.DataFrame, color: str, xlabel: str) -> dict:
    """Pre-binned counts (bin_start, bin_end, pairs), stacked per `color`, one bar per bin of
    `bin_grid` (equal widths or equal ratios); the empty bins between the first and the last are
    drawn too (as gaps), so the axis keeps its scale."""
    spans = list(zip(frame["bin_start"].astype(float), frame["bin_end"].astype(float)))
    grid = bin_grid(spans) if spans else []
    starts = [a for a, _ in grid]
    # each bin at its place on the grid (the nearest start: the model's edges are floats)
    place = [int(np.argmin([abs(b - a) for a in starts])) for b, _ in spans]
    frame = frame.assign(bin=place, series=frame[color].fillna("(none)").astype(str))
    labels = bin_labels(grid)
    option = bars(frame.assign(label=[labels[i] for i in place]), "label", "pairs", "series", xlabel=xlabel, ylabel="pairs")
    option["xAxis"]["data"] = labels
    # (bins are a scale, not names: a label that would overlap its neighbour is skipped)
    option["xAxis"]["axisLabel"] = {"interval": "auto", "hideOverlap": True}
    for series in option["series"]:
        counts = frame.loc[frame["series"] == series["name"]].groupby("bin")["pairs"].sum()  # (summed: never overwritten)
        series["data"] = [plain(counts.get(i)) for i in range(len(grid))]
        series["barCategoryGap"] = "0%"
    return option


def bars(
    frame: pd.DataFrame,
    x: str,
    y: str,
    color: str | None = None,
    *,
    horizontal: bool = False,
    xlabel: str | None = None,
    ylabel: str | None = None,
    hover: list[str] | None = None,
    labels: dict | None = None,
) -> dict:
    """Bars of `y` by `x`, stacked per `color` value; `horizontal` draws bars of length `x` for
    each `y` top-down (a ranking, as plotly's `orientation="h"`); `hover` columns go into the
    tooltip (one series, no `color`); `labels` names the category values."""
    cat, val = (y, x) if horizontal else (x, y)
    option = base("" if horizontal else (x if xlabel is None else xlabel), val if ylabel is None else ylabel,
                   color is not None)
    if hover:
        if color is not None:
            raise ValueError("hover columns are for a single series (no color)")
        dims = list(dict.fromkeys([cat, val, *hover]))
        source = [[plain(v) for v in row] for row in frame[dims].itertuples(index=False)]
        axis = cat
        if text_axis(frame[cat], labels):  # the axis draws each name on lines; the tooltip names it whole
            axis = "name on the axis"
            dims.append(axis)
            source = [[*row, None if row[0] is None else wrap_label(str(row[0]))] for row in source]
        option["dataset"] = {"dimensions": dims, "source": source}
        encode = {"x": val, "y": axis} if horizontal else {"x": axis, "y": val}
        tooltip = [d for d in dims[1:] if d != axis]
        option["series"] = [{"type": "bar", "name": val, "encode": {**encode, "itemName": cat, "tooltip": tooltip}}]
        option["tooltip"] = {"trigger": "item"}
        category: dict = {"type": "category"}
    else:
        names, order = categories(frame[cat], labels)
        if text_axis(frame[cat], labels):
            names = [wrap_label(str(n)) for n in names]
        option["series"] = []
        for name, part in groups(frame, color):
            value = dict(zip(part[cat].tolist(), part[val].tolist()))
            option["series"].append({"type": "bar", "name": name or val, "stack": "all",
                                     "data": [plain(value.get(v)) for v in order]})
        category = {"type": "category", "data": names}
    value_axis = {"type": "value", **({"minInterval": 1} if len(frame) and whole_numbers(frame, [val]) else {})}
    if text_axis(frame[cat], labels):  # every name drawn (none skipped for room), a line never past LABEL_PX
        category["axisLabel"] = {"interval": 0, "width": LABEL_PX, "overflow": "truncate", "lineHeight": 13}
    if horizontal:
        option["xAxis"] = value_axis
        option["yAxis"] = {**category, "inverse": True}
    else:
        option["xAxis"].update(category)
        option["yAxis"].update(value_axis)
    return option


def _name(column: str, names: dict[str, str] | None) -> str:
    return (names or {}).get(column, column.replace("_", " "))


def _multi(frame: pd.DataFrame, x: str, ys: list[str], kind: str, ylabel: str, xlabel: str | None,
           names: dict[str, str] | None, labels: dict | None) -> dict:
    axis, order = categories(frame[x], labels)
    rows = frame.set_index(x)
    option = base(x if xlabel is None else xlabel, ylabel, True)
    option["xAxis"].update({"type": "category", "data": axis})
    option["yAxis"].update({"type": "value", **({"minInterval": 1} if len(frame) and whole_numbers(frame, ys) else {})})
    missing = 0 if len(frame) and whole_numbers(frame, ys) else None  # (a period without rows: no count is 0)
    option["series"] = [
        {"type": kind, "name": _name(c, names), "data": [plain(rows[c].get(v, missing)) for v in order],
         **({"symbolSize": 5} if kind == "line" else {})}
        for c in ys
    ]
    return option


def lines(
    frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str = "count", xlabel: str | None = None,
    names: dict[str, str] | None = None, labels: dict | None = None,
) -> dict:
    """One line per column of `ys` over `x` (`names`: legend names by column; `labels`: x values' names)."""
    return _multi(frame, x, ys, "line", ylabel, xlabel, names, labels)


def grouped_bars(
    frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str, xlabel: str | None = None,
    names: dict[str, str] | None = None, labels: dict | None = None,
) -> dict:
    """Side-by-side bars, one series per column of `ys` (`names`: legend names by column)."""
    return _multi(frame, x, ys, "bar", ylabel, xlabel, names, labels)
