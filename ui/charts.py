"""Plotly figures for the pages, built with graph_objects from plain dicts.

plotly.express spends ~150 ms per figure validating and regrouping its input,
and `update_xaxes(title_text=…)`-style calls parse "magic underscore" paths on
every call; these builders take frames already in chart shape (ui.models)
and pass one layout dict, ~10 ms a figure — it matters on a page with five
charts that reruns on every click.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go


def _layout(xlabel: str, ylabel: str, **extra) -> dict:
    return dict(
        margin=dict(l=10, r=10, t=30, b=10),
        legend=dict(title=dict(text="")),
        xaxis=dict(title=dict(text=xlabel)),
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
) -> go.Figure:
    """Bars of `y` by `x`, one stacked trace per `color` value."""
    traces = [
        go.Bar(x=part[x], y=part[y], name=name, orientation="h" if horizontal else "v", **_hover(part, hover))
        for name, part in _groups(frame, color)
    ]
    layout = _layout(x if xlabel is None else xlabel, y if ylabel is None else ylabel,
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


def lines(frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str = "count") -> go.Figure:
    """One line per column of `ys` over `x`."""
    traces = [go.Scatter(x=frame[x], y=frame[c], name=c.replace("_", " "), mode="lines+markers") for c in ys]
    return go.Figure(data=traces, layout=_layout(x, ylabel))


def grouped_bars(frame: pd.DataFrame, x: str, ys: list[str], *, ylabel: str) -> go.Figure:
    """Side-by-side bars, one trace per column of `ys`."""
    traces = [go.Bar(x=frame[x], y=frame[c], name=c.replace("_", " ")) for c in ys]
    return go.Figure(data=traces, layout=_layout(x, ylabel, barmode="group"))


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
