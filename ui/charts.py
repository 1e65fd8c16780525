"""Charts for the pages: ECharts option dicts (`st.echarts_chart`), built from frames in chart shape.

Why ECharts: the browser parses plotly.js (4.7 MB) before drawing the first plotly
chart of a visit, a single main-thread task of 1–4 s under load in headless
Chromium (bench/bench_render.py: a page with one plotly chart froze 2–4 s; four
ECharts charts 0.3–0.6 s, drawn in half the time). The Resume QA timeline and a
thread's branch tree are ECharts charts too: no page loads plotly.js.

Every builder returns a plain, JSON-compatible dict (numbers as Python floats and
ints, missing values as None); `ui.render.chart` draws it. Period axes are
categories named the way people read them ("Mar 3, 2025", "wk of Mar 3, 2025",
"Mar 2025").
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from ui import label_rows
from ui.formats import AXIS_TIME

#: Chart height in pixels.
HEIGHT = 340
#: Room right of a plot area: half the widest axis label ("Oct 16, 2026") under the last bar.
GRID_RIGHT = 40
#: Below a plot area: the x axis's labels and its name.
X_AXIS_ROOM = 64
#: The widest a category's name is drawn on a bar chart's axis (px), and the characters (of the
#: axis's 12 px font, about 6.5 px each) a line of it holds there: a longer name goes on more lines.
LABEL_PX = 110
LABEL_LINE = 16
#: Where a name breaks onto its next line: after a separator ("gpt-4o-mini-" / "2024-07-18").
_PIECE = re.compile(r"[^-_:/. ]+[-_:/. ]*|[-_:/. ]+")


def wrap_label(name: str, width: int = LABEL_LINE) -> str:
    r"""`name` in lines of at most `width` characters for a bar chart's axis, broken after a
    separator ("-", "_", ":", "/", ".", a space), a piece longer than a line cut where it must.

    >>> wrap_label("gpt-4o-mini-2024-07-18"), wrap_label("claude-3-5-sonnet-20241022"), wrap_label("acme")
    ('gpt-4o-mini-\n2024-07-18', 'claude-3-5-\nsonnet-20241022', 'acme')
    >>> wrap_label("check_service_status_now"), wrap_label("x" * 20), wrap_label("x" * 16 + " y")
    ('check_service_\nstatus_now', 'xxxxxxxxxxxxxxxx\nxxxx', 'xxxxxxxxxxxxxxxx\ny')
    """
    lines = [""]
    for piece in _PIECE.findall(name):
        while piece:
            if lines[-1] and len(lines[-1]) + len(piece.rstrip()) > width:
                lines.append("")
            room = width - len(lines[-1])
            if room <= 0:  # (a full line and only spaces left of the piece: they are the break)
                break
            lines[-1] += piece[:room]
            piece = piece[room:]
    return "\n".join(line.rstrip() for line in lines)


def _text_axis(values: pd.Series, labels: dict | None) -> bool:
    """Whether a category axis of `values` names things (models, tenants, tools) rather than
    periods, days or numbers: its names are wrapped (`wrap_label`)."""
    return labels is None and not pd.api.types.is_numeric_dtype(values) and not any(map(_is_day, values.head(1)))


def _plain(value: Any) -> Any:
    """A cell as JSON: numbers as int/float, missing as None, times as ISO text."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


def period_label(value: Any, by: str, through: date | None = None) -> str:
    """How a period (named by its first UTC day) reads on an axis; one that runs past `through`,
    the last day the data covers, says where it stops, so a short last week is not read as a drop.

    >>> period_label(date(2025, 3, 3), "week"), period_label(date(2025, 3, 1), "month")
    ('wk of Mar 3, 2025', 'Mar 2025')
    >>> period_label(date(2025, 3, 10), "week", date(2025, 3, 12)), period_label(date(2025, 3, 3), "week", date(2025, 3, 9))
    ('wk of Mar 10, 2025 (to Mar 12)', 'wk of Mar 3, 2025')
    """
    day = pd.Timestamp(value)
    if by == "month":
        text = f"{day:%b %Y}"
        end = day + pd.offsets.MonthEnd(0)
    else:
        text = f"{day:%b} {day.day}, {day.year}"
        text, end = (f"wk of {text}", day + pd.Timedelta(days=6)) if by == "week" else (text, day)
    if through is not None and day.date() <= through < end.date():
        return f"{text} (to {through:%b} {through.day})"
    return text


class PeriodLabels(dict):
    """An axis's periods and their labels, every period from the first to the last in order: a
    chart draws the periods its frame lacks as empty slots (bars) or zeros (counted lines)."""


#: Past this many periods an axis keeps only the periods its frame has.
MAX_PERIODS = 2000
_FREQ = {"day": "D", "week": "7D", "month": "MS"}


def period_labels(periods: pd.Series, by: str, through: date | None = None) -> PeriodLabels:
    """`period_label` of every period between the first and the last of `periods` (an axis's `labels`).

    >>> list(period_labels(pd.Series([date(2025, 3, 3), date(2025, 3, 6)]), "day").values())
    ['Mar 3, 2025', 'Mar 4, 2025', 'Mar 5, 2025', 'Mar 6, 2025']
    >>> list(period_labels(pd.Series([date(2025, 1, 1), date(2025, 3, 1)]), "month").values())
    ['Jan 2025', 'Feb 2025', 'Mar 2025']
    """
    seen = [p for p in periods.unique() if not pd.isna(p)]
    keys: list = sorted(seen)
    if seen and by in _FREQ:
        span = pd.date_range(pd.Timestamp(keys[0]), pd.Timestamp(keys[-1]), freq=_FREQ[by])
        plain_days = isinstance(seen[0], date) and not isinstance(seen[0], datetime)
        filled = [d.date() if plain_days else d for d in span]
        if len(filled) <= MAX_PERIODS and set(filled) >= set(keys):  # (periods off the grid: as they are)
            keys = filled
    return PeriodLabels((p, period_label(p, by, through)) for p in keys)


def _base(xlabel: str, ylabel: str, legend: bool) -> dict:
    """The frame every chart shares: legend on top, the x axis named beneath, the y axis named
    above it when there is no legend (the two would collide); no animation (a first render
    draws once, and a reader sees the final bars at once)."""
    return {
        "animation": False,
        # (right: half a day's label, "Oct 16, 2026", centred on the last bar, overflowed 16 px and was cut)
        "grid": {"left": 8, "right": GRID_RIGHT, "top": 34 if legend else 12, "bottom": 28 if xlabel else 8, "containLabel": True},
        "legend": {"show": legend, "top": 0, "left": 0, "type": "scroll"},
        "tooltip": {"trigger": "axis", "axisPointer": {"type": "shadow"}},
        "xAxis": {"name": xlabel, "nameLocation": "middle", "nameGap": 26},
        "yAxis": {} if legend or not ylabel else {"name": ylabel},
    }


def _groups(frame: pd.DataFrame, color: str | None):
    if color is None:
        yield None, frame
        return
    for name, part in frame.groupby(color, sort=False, dropna=False):
        yield ("(none)" if pd.isna(name) else str(name)), part


def _categories(values: pd.Series, labels: dict | None = None) -> list:
    """An axis's category names and values, in order; days read as days ("Mar 3, 2025"), not ISO text."""
    ordered = sorted(values.dropna().unique().tolist()) if pd.api.types.is_numeric_dtype(values) else list(dict.fromkeys(values))
    if isinstance(labels, PeriodLabels) and set(ordered) <= set(labels):
        ordered = list(labels)  # every period between the ends, those without rows too
    return [(labels or {}).get(v, _day(v) if _is_day(v) else _plain(v)) for v in ordered], ordered


def _is_day(value: Any) -> bool:
    return isinstance(value, (datetime, date, pd.Timestamp))


def _day(value: Any) -> str:
    """A day (or a time at midnight) as an axis reads it; a time of day keeps its hour and minute.

    >>> _day(date(2025, 3, 3)), _day(pd.Timestamp("2025-03-03", tz="UTC")), _day(datetime(2025, 3, 3, 9, 30))
    ('Mar 3, 2025', 'Mar 3, 2025', 'Mar 3, 2025 09:30')
    """
    t = pd.Timestamp(value)
    text = period_label(t, "day")
    return text if (t.hour, t.minute, t.second) == (0, 0, 0) else f"{text} {t:%H:%M}"


def _counts(frame: pd.DataFrame, columns: list[str]) -> bool:
    """Whether every column holds whole numbers (counts: an axis of whole-number ticks, never 0.5)."""
    return all(pd.api.types.is_integer_dtype(frame[c]) or (
        pd.api.types.is_numeric_dtype(frame[c]) and bool((frame[c].dropna() % 1 == 0).all())) for c in columns)


def bin_labels(spans: list[tuple[float, float]]) -> list[str]:
    """Each bin's "start–end" with as many decimals as tell neighbouring bins apart.

    >>> bin_labels([(1.0, 1.02), (1.02, 1.04)])
    ['1.00–1.02', '1.02–1.04']
    >>> bin_labels([(0.0, 2.5), (2.5, 5.0)])
    ['0.0–2.5', '2.5–5.0']
    >>> bin_labels([(0.9, 1.01), (1.01, 1.13), (1.13, 1.27)])
    ['0.9–1.0', '1.0–1.1', '1.1–1.3']
    """
    names: list[str] = []
    for decimals in range(1, 7):  # (a bin whose ends read the same, "1.0–1.0", names no bin)
        names = [f"{a:.{decimals}f}–{b:.{decimals}f}" for a, b in spans]
        if len(set(names)) == len(names) and all(a != b for a, b in (n.split("–") for n in names)):
            break
    return names


def bin_grid(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Every bin from the first of `spans` to the last, the empty ones between too, so the axis
    keeps its scale: the bins were cut at equal widths or, for latencies spread over
    `ui.models.conversations.LOG_SPREAD`x, at equal ratios (`latency_edges`).

    >>> bin_grid([(0.0, 1.0), (2.0, 3.0)])
    [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]
    >>> [(round(a, 6), round(b, 6)) for a, b in bin_grid([(1.0, 10.0), (100.0, 1000.0)])]
    [(1.0, 10.0), (10.0, 100.0), (100.0, 1000.0)]
    """
    spans = sorted(set(spans))
    (first, first_end), (last, _) = spans[0], spans[-1]
    widths = [b - a for a, b in spans]
    if max(widths) - min(widths) <= 1e-9 * max(abs(first), abs(last), max(widths)) or first <= 0:
        width = max(widths)
        count = int(round((last - first) / width)) + 1 if width > 0 else 1
        return [(first + i * width, first + (i + 1) * width) for i in range(count)]
    ratio = first_end / first
    count = int(round(math.log(last / first) / math.log(ratio))) + 1
    return [(first * ratio**i, first * ratio ** (i + 1)) for i in range(count)]


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
        series["data"] = [_plain(counts.get(i)) for i in range(len(grid))]
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
    option = _base("" if horizontal else (x if xlabel is None else xlabel), val if ylabel is None else ylabel,
                   color is not None)
    if hover:
        if color is not None:
            raise ValueError("hover columns are for a single series (no color)")
        dims = list(dict.fromkeys([cat, val, *hover]))
        source = [[_plain(v) for v in row] for row in frame[dims].itertuples(index=False)]
        axis = cat
        if _text_axis(frame[cat], labels):  # the axis draws each name on lines; the tooltip names it whole
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
        names, order = _categories(frame[cat], labels)
        if _text_axis(frame[cat], labels):
            names = [wrap_label(str(n)) for n in names]
        option["series"] = []
        for name, part in _groups(frame, color):
            value = dict(zip(part[cat].tolist(), part[val].tolist()))
            option["series"].append({"type": "bar", "name": name or val, "stack": "all",
                                     "data": [_plain(value.get(v)) for v in order]})
        category = {"type": "category", "data": names}
    value_axis = {"type": "value", **({"minInterval": 1} if len(frame) and _counts(frame, [val]) else {})}
    if _text_axis(frame[cat], labels):  # every name drawn (none skipped for room), a line never past LABEL_PX
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
    axis, order = _categories(frame[x], labels)
    rows = frame.set_index(x)
    option = _base(x if xlabel is None else xlabel, ylabel, True)
    option["xAxis"].update({"type": "category", "data": axis})
    option["yAxis"].update({"type": "value", **({"minInterval": 1} if len(frame) and _counts(frame, ys) else {})})
    missing = 0 if len(frame) and _counts(frame, ys) else None  # (a period without rows: no count is 0)
    option["series"] = [
        {"type": kind, "name": _name(c, names), "data": [_plain(rows[c].get(v, missing)) for v in order],
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


def _clock(value: Any) -> str | None:
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
    frame = timeline.assign(x=[at(v) for v in timeline[x]], time=[_clock(v) for v in timeline["ts"]])
    dims = ["x", "message_count", *_TIMELINE_TOOLTIP]
    names = ["x", "messages in state", *_TIMELINE_TOOLTIP.values()]
    datasets, series = [], []
    for (branch, source), part in frame.groupby(["branch", "source"], sort=False, dropna=False):
        source = "(none)" if pd.isna(source) else str(source)
        datasets.append({"dimensions": names, "source": [[_plain(v) for v in row] for row in part[dims].itertuples(index=False)]})
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
    option = _base(xlabel, "messages in state", True)
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


# --- the overview's trends (frames of ui.models.overview.OverviewPage) ---------------------

_PERIOD_LABEL = {"day": "day (UTC)", "week": "week starting Monday (UTC)", "month": "month (UTC)"}


def trend(name: str, frame: pd.DataFrame, by: str, through: date | None = None) -> dict:
    """The overview chart `name` (an `OverviewPage` trend field) of `frame`, bucketed `by`; `through`:
    the last day the data covers (`period_label`)."""
    labels = period_labels(frame["period"], by, through)
    axis = dict(xlabel=_PERIOD_LABEL[by], labels=labels)
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
    option = bars(frame, "period", "threads", "outcome", ylabel="threads", xlabel=_PERIOD_LABEL[by], labels=labels)
    for series in option["series"]:
        if series["name"] in OUTCOME_COLORS:
            series["itemStyle"] = {"color": OUTCOME_COLORS[series["name"]]}
    option["yAxis"]["minInterval"] = 1
    return option
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


#: Height of one legend row of a chart whose legend is a list below it (`period_trend`).
LEGEND_ROW = 22


def period_trend(frame: pd.DataFrame, ylabel: str = "conversations", by: str = "day",
                 through: date | None = None) -> dict:
    """One line per column of `frame` over its `period_start` (the Topics and Failure patterns trends).

    The columns are topic or pattern labels, data rather than column names: shown as written, one
    per row of a legend below the chart (a legend on one paged row cut the long ones), each cut to
    the chart's width with the whole label in its tooltip."""
    ys = [c for c in frame.columns if c != "period_start"]
    option = lines(frame, "period_start", ys, ylabel=ylabel, xlabel=_PERIOD_LABEL[by], names={c: c for c in ys},
                   labels=period_labels(frame["period_start"], by, through))
    option["legend"] = {"show": True, "type": "plain", "orient": "vertical", "left": 0, "bottom": 0,
                        "itemGap": LEGEND_ROW - 14, "tooltip": {"show": True},
                        "textStyle": {"width": 900, "overflow": "truncate"}}
    option["grid"].update({"top": 24, "bottom": 40 + LEGEND_ROW * len(ys)})
    option["yAxis"].update({"name": ylabel, "nameTextStyle": {"align": "left"}})
    return option


def height(option: dict) -> int:
    """The height to draw `option` at: `HEIGHT`, and a row more for each entry of a legend listed below it.

    >>> height({}), height(period_trend(pd.DataFrame({"period_start": ["2025-03-03"], "a": [1], "b": [2]})))
    (340, 384)
    """
    grid = option.get("grid", {})
    if "height" in grid:  # a plot area of its own size (the branch tree's lanes): the x axis and its name below it
        return grid["top"] + grid["height"] + X_AXIS_ROOM
    legend = option.get("legend", {})
    below = legend.get("orient") == "vertical" and "bottom" in legend
    return HEIGHT + (LEGEND_ROW * len(option.get("series", [])) if below else 0)


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
    whiskers = [[_plain(lo), _plain(d), _plain(d), _plain(d), _plain(hi)] if pd.notna(lo) and pd.notna(hi) else "-"
                for d, lo, hi in zip(frame[value], frame["low"], frame["high"])]
    option["series"].append({"type": "boxplot", "name": "95 % interval", "layout": "horizontal", "silent": True,
                             "boxWidth": [6, 14], "tooltip": {"show": False}, "data": whiskers,
                             "itemStyle": {"color": "transparent", "borderColor": INTERVAL_COLOUR, "borderWidth": 1.5}})
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
                "value": [int(row.position) + 1, lane[int(branch)], row.checkpoint_id, _plain(row.step), row.source or "?",
                          _plain(row.message_count), _clock(row.ts), "pending here" if interrupt else ""],
                "symbol": "diamond" if row.is_fork_point else TREE_SYMBOLS.get(row.source, "circle"),
                "symbolSize": 14 if row.is_head else 9,
                "itemStyle": {"color": colour, "borderColor": TREE_INTERRUPT if interrupt else colour,
                              "borderWidth": 3 if interrupt else 1},
            })
        series.append({"type": "scatter", "name": labels.get(int(branch), f"branch {branch}"), "z": 2,
                       "dimensions": ["x", "lane", *_TREE_TOOLTIP], "encode": {"x": 0, "y": 1, "tooltip": _TREE_TOOLTIP},
                       "data": points})
    option = _base("checkpoint along the chain (1 = the first)", "", False)
    option.update({"tooltip": {"trigger": "item"}, "series": series})
    # (no boundaryGap: on a value axis it moved the points off their ticks and dropped the labels)
    option["xAxis"].update({"type": "value", "minInterval": 1, "min": 1, "axisLine": {"show": True},
                            "splitLine": {"show": False}})
    option["yAxis"] = {"type": "category", "inverse": True, "boundaryGap": True,
                       "data": [f"branch {b} · " + ("current" if b == 1 else "abandoned") for b in lanes]}
    option["grid"].update({"top": 12, "height": 48 * len(lanes)})  # a row per lane (`height` adds the axis below)
    return option
