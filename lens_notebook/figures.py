"""Every chart of the app as a plotly figure, from the page models the app draws.

The app draws its charts as ECharts option dicts (`ui.charts`: the browser starts faster
without plotly.js); `figure(option)` turns such a dict into the plotly figure a notebook
shows, series for series and label for label, so a fix to a chart in `ui.charts` shows in
both places.

>>> from ui.charts import bars
>>> import pandas as pd
>>> fig = figure(bars(pd.DataFrame({"model": ["a", "b"], "tokens": [3, 5]}), "model", "tokens"), "Tokens")
>>> [(t.type, list(t.x), list(t.y)) for t in fig.data], fig.layout.title.text
([('bar', ['a', 'b'], [3, 5])], 'Tokens')
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from analytics import contents
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from ui import charts
from ui.models import compare as compare_model
from ui.models import conversations as conversations_model
from ui.models import outcomes as outcomes_model
from ui.models import patterns as patterns_model
from ui.models import topics as topics_model
from ui.models import overview as overview_model
from ui.models.history import ThreadHistory, thread_history
from ui.models.resume_qa import ThreadQA, thread_qa

#: Counts below this many get a tick at every whole number (ECharts' `minInterval: 1`).
_WHOLE_TICKS = 10


def _values(option: dict, series: dict, horizontal: bool) -> tuple[list, list, list | None, list[str]]:
    """(categories, values, hover rows, hover names) of one series, from its data or the dataset."""
    category_axis = option["yAxis"] if horizontal else option["xAxis"]
    dataset = option.get("dataset")
    if dataset is None:
        return list(category_axis.get("data", [])), list(series["data"]), None, []
    dims, rows = dataset["dimensions"], dataset["source"]
    encode = series["encode"]
    cat, val = (encode["y"], encode["x"]) if horizontal else (encode["x"], encode["y"])
    cat = encode.get("itemName", cat)  # (the whole name: the axis's is broken into lines for ECharts)
    at = {d: i for i, d in enumerate(dims)}
    return [r[at[cat]] for r in rows], [r[at[val]] for r in rows], rows, list(dims)


def figure(option: dict[str, Any], title: str | None = None) -> go.Figure:
    """The plotly figure of an ECharts option dict made by `ui.charts` (bars, stacked or
    grouped, horizontal rankings, histograms, lines, the resume timeline's scatter); `title`
    above it (module docstring)."""
    if any(s["type"] == "scatter" for s in option["series"]):
        return _scatter(option, title)
    horizontal = option["yAxis"].get("type") == "category"
    fig = go.Figure()
    stacked = gapless = False
    categories: list = []
    for series in option["series"]:
        if series["type"] == "boxplot":  # error bars (`ui.charts.compare_chart`): the whiskers on the bars before
            _error_bars(fig.data[-1], series["data"], horizontal)
            continue
        cats, vals, rows, dims = _values(option, series, horizontal)
        categories = categories or cats
        stacked |= bool(series.get("stack"))
        gapless |= series.get("barCategoryGap") == "0%"
        xy = dict(x=vals, y=cats) if horizontal else dict(x=cats, y=vals)
        extra: dict[str, Any] = {}
        if rows is not None:  # every column of the row in the tooltip, as the app's
            extra = dict(customdata=rows, hovertemplate="<br>".join(
                f"{d}: %{{customdata[{i}]}}" for i, d in enumerate(dims)) + "<extra></extra>")
        if series["type"] == "line":
            fig.add_trace(go.Scatter(name=series["name"], mode="lines+markers", **xy, **extra))
        else:
            fig.add_trace(go.Bar(name=series["name"], orientation="h" if horizontal else "v", **xy, **extra))
    value_axis, category_axis = ("xaxis", "yaxis") if horizontal else ("yaxis", "xaxis")
    source_value, source_category = (option["xAxis"], option["yAxis"]) if horizontal else (option["yAxis"], option["xAxis"])
    cat_layout: dict[str, Any] = dict(type="category", categoryorder="array", categoryarray=categories,
                                      title=dict(text=source_category.get("name") or None))
    if source_category.get("inverse"):
        cat_layout["autorange"] = "reversed"
    val_layout: dict[str, Any] = dict(title=dict(text=source_value.get("name") or None), rangemode="tozero")
    if source_value.get("minInterval") == 1:
        top = max((abs(v) for t in fig.data for v in ((t.x if horizontal else t.y) or ()) if v is not None), default=0)
        val_layout.update(tickformat=",d", **({"dtick": 1} if top < _WHOLE_TICKS else {}))
    fig.update_layout(
        title=dict(text=title) if title else None,
        barmode="stack" if stacked else "group",
        bargap=0 if gapless else None,
        showlegend=bool(option.get("legend", {}).get("show")),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        height=charts.height(option) + (40 if title else 0),
        margin=dict(l=10, r=10, t=60 if title else 30, b=10),
        **{value_axis: val_layout, category_axis: cat_layout},
    )
    return fig


def _error_bars(bars: go.Bar, whiskers: list, horizontal: bool) -> None:
    """A boxplot flat at each bar's value (`[low, v, v, v, high]`, or "-" for none) as the bars'
    error bars: plotly's asymmetric error bars from the bar's value to each whisker's end."""
    values = bars.x if horizontal else bars.y
    plus = [None if w == "-" else w[4] - v for w, v in zip(whiskers, values)]
    minus = [None if w == "-" else v - w[0] for w, v in zip(whiskers, values)]
    error = dict(type="data", symmetric=False, array=plus, arrayminus=minus, color=charts.INTERVAL_COLOUR)
    bars.update(error_x=error) if horizontal else bars.update(error_y=error)


#: ECharts' symbol names as plotly's.
_SYMBOLS = {"circle": "circle", "emptyCircle": "circle-open", "diamond": "diamond", "rect": "square",
            "triangle": "triangle-up", charts.TREE_SYMBOLS["fork"]: "star"}


def _scatter(option: dict[str, Any], title: str | None) -> go.Figure:
    """A scatter option (`ui.charts.resume_timeline`, `ui.charts.branch_tree`): a trace per
    series from its dataset or its own data, its tooltip columns on hover, each point's own
    symbol, size and ring; a `lines` series as line segments; each series' markArea a shaded
    band, its markLine a dashed line with its name; the option's title (the legend's name) as
    the legend's title; a category y axis keeps its names."""
    time_axis = option["xAxis"].get("type") == "time"
    lanes = option["yAxis"].get("data") if option["yAxis"].get("type") == "category" else None

    def x_of(value: Any) -> Any:  # a time axis holds milliseconds since the epoch (UTC)
        return pd.Timestamp(value, unit="ms", tz="UTC") if time_axis and value is not None else value

    def y_of(value: Any) -> Any:  # a category axis holds each point's index in its names
        return lanes[value] if lanes is not None and value is not None else value

    fig = go.Figure()
    for series in option["series"]:
        if series["type"] == "lines":
            xs: list = []
            ys: list = []
            for item in series["data"]:
                (x0, y0), (x1, y1) = item["coords"]
                xs += [x_of(x0), x_of(x1), None]
                ys += [y_of(y0), y_of(y1), None]
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                     line=dict(color=series["lineStyle"]["color"], width=series["lineStyle"].get("width", 2))))
            continue
        if "datasetIndex" in series:
            dataset = option["dataset"][series["datasetIndex"]]
            dims, rows, items = dataset["dimensions"], dataset["source"], None
        else:
            items = series.get("data", [])
            dims, rows = series.get("dimensions", []), [item["value"] for item in items]
        if rows or "datasetIndex" in series:
            at = {d: i for i, d in enumerate(dims)}
            encode = series["encode"]
            x, y = (at.get(encode["x"], encode["x"]), at.get(encode["y"], encode["y"]))
            tips = encode.get("tooltip", [])
            colour = series.get("itemStyle", {}).get("color")
            marker: dict[str, Any] = dict(symbol=_SYMBOLS.get(series.get("symbol"), "circle"), size=series.get("symbolSize"), color=colour)
            if items is not None:  # each point its own look
                marker = dict(symbol=[_SYMBOLS.get(i.get("symbol"), "circle") for i in items], size=[i.get("symbolSize") for i in items],
                              color=[i["itemStyle"]["color"] for i in items],
                              line=dict(color=[i["itemStyle"]["borderColor"] for i in items], width=[i["itemStyle"]["borderWidth"] for i in items]))
            fig.add_trace(go.Scatter(
                name=series["name"], mode="markers", x=[x_of(r[x]) for r in rows], y=[y_of(r[y]) for r in rows], marker=marker,
                customdata=[[r[at[t]] for t in tips] for r in rows],
                hovertemplate="<br>".join(f"{t}: %{{customdata[{i}]}}" for i, t in enumerate(tips)) + "<extra>%{fullData.name}</extra>",
            ))
        area, line = series.get("markArea"), series.get("markLine")
        for start, end in (area or {}).get("data", []):
            fig.add_vrect(x0=x_of(start["xAxis"]), x1=x_of(end["xAxis"]), fillcolor=area["itemStyle"]["color"],
                          line_width=0, layer="below")
        for mark in (line or {}).get("data", []):
            fig.add_vline(x=x_of(mark["xAxis"]), line_dash="dash", line_color=line["lineStyle"]["color"],
                          annotation_text=mark.get("name"), annotation_position="top left")
    yaxis: dict[str, Any] = dict(title=dict(text=option["yAxis"].get("name") or None))
    if lanes is not None:
        yaxis.update(type="category", categoryorder="array", categoryarray=lanes,
                     autorange="reversed" if option["yAxis"].get("inverse") else True)
    fig.update_layout(
        title=dict(text=title) if title else None,
        legend=dict(title=dict(text=option.get("title", {}).get("text"))),
        showlegend=option.get("legend", {}).get("show", True),
        xaxis=dict(title=dict(text=option["xAxis"].get("name") or None)),
        yaxis=yaxis,
        height=charts.height(option) + 60 + (40 if title else 0),
        margin=dict(l=10, r=10, t=60 if title else 30, b=10),
    )
    return fig


# --- the pages' charts -------------------------------------------------------------------------


def overview_figures(page: overview_model.OverviewPage, through: date | None = None) -> dict[str, go.Figure]:
    """The overview page's charts by `OverviewPage` field: every trend (`overview_model.TREND_PANELS`)
    and the top lists (`ui.charts.TOP_LISTS`). An empty frame has no figure (the app says "no data").
    `through`: the last day the data covers (a period past it is labelled partial)."""
    out = {p.field: figure(charts.trend(p.field, getattr(page, p.field), page.by, through), p.title)
           for p in overview_model.TREND_PANELS if not getattr(page, p.field).empty}
    out.update({name: figure(charts.top_list(name, getattr(page, name)), title)
                for name, (title, *_) in charts.TOP_LISTS.items() if not getattr(page, name).empty})
    return out


def overview(con_or_path: ConOrPath, filters: Filters = Filters(), by: str = overview_model.AUTO) -> dict[str, go.Figure]:
    """`overview_figures` of the overview page for `filters`, bucketed `by` day / week / month
    ("auto": chosen from the date range, as the page's Auto)."""
    with connection(con_or_path) as con:
        facets = contents.facets(con)
        by = overview_model.resolve_bucket(by, facets, filters)
        return overview_figures(overview_model.overview_page(con, filters, by),
                                overview_model.bucket_range(facets, filters)[1])


def conversations_figures(page: conversations_model.ConversationsPage) -> dict[str, go.Figure]:
    """The conversations page's charts by `ConversationsPage` field (`ui.charts.CONVERSATION_CHARTS`)."""
    return {name: figure(charts.conversations_chart(name, getattr(page, name)), title)
            for name, title in charts.CONVERSATION_CHARTS.items() if not getattr(page, name).empty}


def conversations(con_or_path: ConOrPath, filters: Filters = Filters(), **options: Any) -> dict[str, go.Figure]:
    """`conversations_figures` of the conversations page; `options` are `conversations_page`'s
    (`min_turns`, `pending_only`, `forks_only`, `ranges`)."""
    return conversations_figures(conversations_model.conversations_page(con_or_path, filters, **options))


def branch_tree(history: ThreadHistory | tuple[ConOrPath, str], branch: int = 1) -> go.Figure:
    """A thread's branch tree, as the transcript explorer's history section draws it: from a
    `ThreadHistory`, or from `(database, thread_id)` with `branch` highlighted."""
    if isinstance(history, tuple):
        history = thread_history(*history, branch=branch)
    return figure(charts.branch_tree(history.tree, history.labels, history.branch))


def resume_timeline(qa: ThreadQA | tuple[ConOrPath, str], by_step: bool = False) -> go.Figure:
    """A thread's Resume QA timeline (root checkpoints, resume points shaded): from a `ThreadQA`,
    or from `(database, thread_id)`; `by_step` orders it by steps instead of time."""
    if isinstance(qa, tuple):
        qa = thread_qa(*qa)
    return figure(charts.resume_timeline(qa.timeline, qa.markers, by_step))


def outcomes(con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "week") -> dict[str, go.Figure]:
    """The Outcomes page's chart: conversations per `by` period, stacked by outcome."""
    with connection(con_or_path) as con:
        page, through = outcomes_model.outcomes_page(con, filters, by), _through(con, filters)
    return {} if page.trend.empty else {"trend": figure(charts.outcome_trend(page.trend, by, through), "Outcomes over time")}


def topics(con_or_path: ConOrPath, filters: Filters = Filters(), period: str = "week") -> dict[str, go.Figure]:
    """The Topics page's chart: conversations per topic and `period` ("day" or "week")."""
    with connection(con_or_path) as con:
        page, through = topics_model.topics_page(con, filters, period), _through(con, filters)
    return {} if page.trend.empty else {"trend": figure(charts.period_trend(page.trend, by=period, through=through),
                                                        f"Conversations per topic and {period}")}


def patterns(con_or_path: ConOrPath, filters: Filters = Filters(), period: str = "week") -> dict[str, go.Figure]:
    """The Failure patterns page's chart: the top patterns' conversations per `period`."""
    with connection(con_or_path) as con:
        page, through = patterns_model.patterns_page(con, filters, period), _through(con, filters)
    return {} if page.trend.empty else {"trend": figure(
        charts.period_trend(page.trend, "failed conversations", period, through), f"The top patterns per {period}")}


def _through(con, filters: Filters) -> date | None:
    """The last day the data under `filters` covers, as the pages label a partial last period."""
    return overview_model.bucket_range(contents.facets(con), filters)[1]


def compare(con_or_path: ConOrPath, a: Filters, b: Filters) -> dict[str, go.Figure]:
    """The Compare page's charts for cohorts `a` and `b` (`ui.charts.COMPARE_CHARTS`).

    >>> compare("lens.duckdb", Filters(metadata=(("app_version", "1.0"),)),
    ...         Filters(metadata=(("app_version", "1.1"),)))["shares"]  # doctest: +SKIP
    """
    page = compare_model.compare_page(con_or_path, a, b)
    return {name: figure(charts.compare_chart(name, getattr(page, name)), title)
            for name, (title, _) in charts.COMPARE_CHARTS.items() if not getattr(page, name).empty}
