"""Plotly figures for the pages, built with graph_objects from plain dicts.

plotly.express spends ~150 ms per figure validating and regrouping its input,
and `update_xaxes(title_text=…)`-style calls parse "magic underscore" paths on
every call; these builders take frames already in chart shape (ui.models)
and pass one layout dict, ~10 ms a figure — it matters on a page with five
charts that reruns on every click.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

_DAY_MS = 86_400_000
#: About this many ticks at most on a period axis.
_TICKS = 7


def period_axis(by: str, periods: int) -> dict:
    """An x-axis of periods (each named by its first UTC day): ticks on period starts, a year in every label.

    >>> period_axis("month", 30)["dtick"]
    'M5'
    """
    step = max(1, math.ceil(periods / _TICKS))
    if by == "month":
        return dict(type="date", dtick=f"M{step}", tickformat="%b %Y", hoverformat="%b %Y")
    days = step * (7 if by == "week" else 1)
    # 1970-01-05 is a Monday: week ticks fall on ISO week starts.
    return dict(type="date", dtick=days * _DAY_MS, tick0="1970-01-05", tickformat="%b %d<br>%Y",
                hoverformat="%a %b %d, %Y")


def _layout(xlabel: str, ylabel: str, xaxis: dict | None = None, **extra) -> dict:
    return dict(
        margin=dict(l=10, r=10, t=30, b=10),
        legend=dict(title=dict(text="")),
        xaxis=dict(title=dict(text=xlabel), **(xaxis or {})),
        yaxis=dict(title=dict(text=ylabel)),
        **extra,
    )


def _groups(frame: pd.DataFrame, color: str | None):
    if color is None:
        yield None, frame
        return
    for name, part in frame.groupby(color, sort=False, dropna=False):
        yield ("(none)" if pd.isna(name) else str(name)), part


def _hover(part: pd.DataFrame, hover: list[str] | None) -> dict:
    if not hover:
        return {}
    template = "<br>".join(f"{h}: %{{customdata[{i}]}}" for i, h in enumerate(hover))
    return {
        "customdata": part[hover].astype(object).to_numpy(),
        "hovertemplate": template + "<extra>%{fullData.name}</extra>",
    }


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
    xaxis: dict | None = None,
) -> go.Figure:
    """Bars of `y` by `x`, one stacked trace per `color` value (`xaxis`: extra x-axis layout, e.g. `period_axis`)."""
    traces = [
        go.Bar(x=part[x], y=part[y], name=name, orientation="h" if horizontal else "v", **_hover(part, hover))
        for name, part in _groups(frame, color)
    ]
    layout = _layout(x if xlabel is None else xlabel, y if ylabel is None else ylabel, xaxis,
                     barmode="stack", showlegend=color is not None)
    if horizontal:
        layout["yaxis"].update(autorange="reversed", type="category")
    return go.Figure(data=traces, layout=layout)


def histogram_bars(frame: pd.DataFrame, color: str, xlabel: str) -> go.Figure:
    """Pre-binned counts (bin_start, bin_end, pairs) drawn as adjoining bars."""
    traces = [
        go.Bar(x=part["bin_start"], y=part["pairs"], name=name, offset=0,
               width=(part["bin_end"] - part["bin_start"]).tolist(), **_hover(part, ["bin_start", "bin_end", "pairs"]))
        for name, part in _groups(frame, color)
    ]
    return go.Figure(data=traces, layout=_layout(xlabel, "pairs", barmode="stack", bargap=0))


def _name(column: str, names: dict[str, str] | None) -> str:
    return (names or {}).get(column, column.replace("_", " "))


def lines(
    frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str = "count", xlabel: str | None = None,
    names: dict[str, str] | None = None, xaxis: dict | None = None,
) -> go.Figure:
    """One line per column of `ys` over `x` (`names`: legend names by column)."""
    traces = [go.Scatter(x=frame[x], y=frame[c], name=_name(c, names), mode="lines+markers") for c in ys]
    return go.Figure(data=traces, layout=_layout(x if xlabel is None else xlabel, ylabel, xaxis))


def grouped_bars(
    frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str, xlabel: str | None = None,
    names: dict[str, str] | None = None, xaxis: dict | None = None,
) -> go.Figure:
    """Side-by-side bars, one trace per column of `ys` (`names`: legend names by column)."""
    traces = [go.Bar(x=frame[x], y=frame[c], name=_name(c, names)) for c in ys]
    return go.Figure(data=traces, layout=_layout(x if xlabel is None else xlabel, ylabel, xaxis, barmode="group"))


def resume_timeline(timeline: pd.DataFrame, markers: pd.DataFrame, by_step: bool = False) -> go.Figure:
    """A thread's root checkpoints (messages in state over time, or over steps) with its resume points shaded.

    `timeline` and `markers` are `ui.models.resume_qa.ThreadQA`'s. The one
    plotly.express figure of the app: one trace per branch × source, symbols by
    source, is what px draws in a call; imported here, so the other pages never
    load it.
    """
    import plotly.express as px

    x, x0, x1 = ("step", "before_step", "after_step") if by_step else ("ts", "before_ts", "after_ts")
    fig = px.scatter(
        timeline,
        x=x,
        y="message_count",
        color="branch",
        symbol="source",
        hover_name="checkpoint_id",
        hover_data={"label": True, "chain_position": True, "ts": True, "step": True},
        labels={
            "ts": "checkpoint ts (UTC, writer's clock)", "step": "metadata.step", "message_count": "messages in state",
        },
    )
    for m in markers.itertuples():
        fig.add_vrect(x0=getattr(m, x0), x1=getattr(m, x1), fillcolor="orange", opacity=0.25, line_width=0)
        fig.add_vline(
            x=getattr(m, x1), line_dash="dash", line_color="orange", annotation_text=m.label,
            annotation_position="top left",
        )
    return fig


# --- the overview's trends (frames of ui.models.overview.OverviewPage) ---------------------

_PERIOD_LABEL = {"day": "day (UTC)", "week": "week starting Monday (UTC)", "month": "month (UTC)"}


def trend(name: str, frame: pd.DataFrame, by: str) -> go.Figure:
    """The overview chart `name` (an `OverviewPage` trend field) of `frame`, bucketed `by`."""
    fig, top = _trend(name, frame, by)
    yaxis = dict(rangemode="tozero")
    if name != "latency" and top <= 10:
        yaxis["dtick"] = 1  # counts this small: whole-number ticks, not 0.5 steps
    # Legends above the plot (in a half-width column one at the side takes a third of it), in trace order.
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, traceorder="normal"), yaxis=yaxis)
    return fig


def _stacked_top(frame: pd.DataFrame, y: str) -> float:
    return float(frame.groupby("period")[y].sum().max())


def _trend(name: str, frame: pd.DataFrame, by: str) -> tuple[go.Figure, float]:
    """The figure and its highest bar (for the y ticks)."""
    axis = dict(xlabel=_PERIOD_LABEL[by], xaxis=period_axis(by, frame["period"].nunique()))
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
        return bars(frame, "period", y, color, ylabel=ylabel, **axis), _stacked_top(frame, y)
    if name in grouped:
        ys, ylabel, names = grouped[name]
        return grouped_bars(frame, "period", ys, ylabel=ylabel, names=names, **axis), float(frame[ys].max().max())
    if name == "latency":
        ys = ["reply_latency_p50_s", "reply_latency_p90_s"]
        fig = lines(frame, "period", ys, ylabel="seconds", names=dict(zip(ys, ["p50", "p90"])), **axis)
        return fig, float(frame[ys].max().max())
    raise ValueError(f"no trend chart named {name!r}")
