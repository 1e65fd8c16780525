"""The branch tree of a thread as a figure: one lane per branch, checkpoints along it, forks between lanes.

Built with graph_objects from `ui.models.history.ThreadHistory.tree` (`analytics.checkpoint_tree`
rows): x is a checkpoint's place along its chain (0 = the thread's first checkpoint), y its
branch's lane (1, the current branch, on top). A line joins each checkpoint to its parent, so
a fork reads as a line leaving one lane for another; heads are larger, fork points diamonds;
the current branch is blue, the branch read (when another) red, the others grey.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

CURRENT = "#1f77b4"
READ = "#d62728"
OTHER = "#9aa0a6"
_SYMBOLS = {"input": "circle", "loop": "circle-open", "update": "square", "fork": "star"}


def branch_tree(tree: pd.DataFrame, labels: dict[int, str], read: int = 1) -> go.Figure:
    """The tree figure; `labels` names each branch's lane (hover), `read` is highlighted."""
    fig = go.Figure()
    if tree.empty:
        return fig
    at = {c: (int(p), int(b)) for c, p, b in zip(tree["checkpoint_id"], tree["position"], tree["branch"])}
    xs: list = []
    ys: list = []
    for cid, parent in zip(tree["checkpoint_id"], tree["parent_checkpoint_id"]):
        if isinstance(parent, str) and parent in at:
            (x0, y0), (x1, y1) = at[parent], at[cid]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=OTHER, width=2), hoverinfo="skip", showlegend=False))
    for branch, part in tree.groupby("branch", sort=True):
        colour = CURRENT if branch == 1 else READ if branch == read else OTHER
        size = [14 if h else 9 for h in part["is_head"]]
        symbol = ["diamond" if f else _SYMBOLS.get(s, "circle") for f, s in zip(part["is_fork_point"], part["source"])]
        hover = [
            f"{cid}<br>step {'' if pd.isna(step) else step} · {src or '?'} · "
            f"{'' if pd.isna(n) else int(n)} messages<br>{'' if pd.isna(ts) else ts.strftime('%Y-%m-%d %H:%M:%S')} UTC"
            + ("<br>interrupt pending here" if intr else "")
            for cid, step, src, n, ts, intr in zip(
                part["checkpoint_id"], part["step"], part["source"], part["message_count"], part["ts"], part["has_interrupt"]
            )
        ]
        fig.add_trace(go.Scatter(
            x=part["position"], y=part["branch"], mode="markers", name=labels.get(int(branch), f"branch {branch}"),
            marker=dict(color=colour, size=size, symbol=symbol, line=dict(width=[3 if i else 1 for i in part["has_interrupt"]],
                                                                              color=["#ff7f0e" if i else colour for i in part["has_interrupt"]])),
            text=hover, hovertemplate="%{text}<extra>%{fullData.name}</extra>",
        ))  # fmt: skip
    lanes = sorted(tree["branch"].unique())
    fig.update_layout(
        margin=dict(l=10, r=10, t=10, b=10),
        height=90 + 38 * len(lanes),
        showlegend=False,
        xaxis=dict(title=dict(text="checkpoints along the chain (0 = first)"), zeroline=False, dtick=1 if tree["position"].max() <= 20 else None),
        yaxis=dict(
            tickvals=lanes, ticktext=[f"branch {b} · " + ("current" if b == 1 else "abandoned") for b in lanes],
            autorange="reversed", zeroline=False, range=[max(lanes) + 0.5, 0.5],
        ),
    )
    return fig
