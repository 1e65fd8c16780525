"""What every chart shares: its frame, axes and category names, periods as people read them,
and the height it is drawn at.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any

import pandas as pd

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


def text_axis(values: pd.Series, labels: dict | None) -> bool:
    """Whether a category axis of `values` names things (models, tenants, tools) rather than
    periods, days or numbers: its names are wrapped (`wrap_label`)."""
    return labels is None and not pd.api.types.is_numeric_dtype(values) and not any(map(is_day, values.head(1)))


def plain(value: Any) -> Any:
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


def base(xlabel: str, ylabel: str, legend: bool) -> dict:
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


def groups(frame: pd.DataFrame, color: str | None):
    if color is None:
        yield None, frame
        return
    for name, part in frame.groupby(color, sort=False, dropna=False):
        yield ("(none)" if pd.isna(name) else str(name)), part


def categories(values: pd.Series, labels: dict | None = None) -> list:
    """An axis's category names and values, in order; days read as days ("Mar 3, 2025"), not ISO text."""
    ordered = sorted(values.dropna().unique().tolist()) if pd.api.types.is_numeric_dtype(values) else list(dict.fromkeys(values))
    if isinstance(labels, PeriodLabels) and set(ordered) <= set(labels):
        ordered = list(labels)  # every period between the ends, those without rows too
    return [(labels or {}).get(v, day_label(v) if is_day(v) else plain(v)) for v in ordered], ordered


def is_day(value: Any) -> bool:
    return isinstance(value, (datetime, date, pd.Timestamp))


def day_label(value: Any) -> str:
    """A day (or a time at midnight) as an axis reads it; a time of day keeps its hour and minute.

    >>> day_label(date(2025, 3, 3)), day_label(pd.Timestamp("2025-03-03", tz="UTC")), day_label(datetime(2025, 3, 3, 9, 30))
    ('Mar 3, 2025', 'Mar 3, 2025', 'Mar 3, 2025 09:30')
    """
    t = pd.Timestamp(value)
    text = period_label(t, "day")
    return text if (t.hour, t.minute, t.second) == (0, 0, 0) else f"{text} {t:%H:%M}"


def whole_numbers(frame: pd.DataFrame, columns: list[str]) -> bool:
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


#: Height of one legend row of a chart whose legend is a list below it (`period_trend`).
LEGEND_ROW = 22


def height(option: dict) -> int:
    """The height to draw `option` at: `HEIGHT`, and a row more for each entry of a legend listed below it.

    >>> from ui.charts.trends import period_trend
    >>> height({}), height(period_trend(pd.DataFrame({"period_start": ["2025-03-03"], "a": [1], "b": [2]})))
    (340, 384)
    """
    grid = option.get("grid", {})
    if "height" in grid:  # a plot area of its own size (the branch tree's lanes): the x axis and its name below it
        return grid["top"] + grid["height"] + X_AXIS_ROOM
    legend = option.get("legend", {})
    below = legend.get("orient") == "vertical" and "bottom" in legend
    return HEIGHT + (LEGEND_ROW * len(option.get("series", [])) if below else 0)
