"""Rows of cells side by side that wrap onto more rows when the page is too narrow for them.

`st.columns` keeps its shares at any width (it stacks only below 640 px of window): in a 1000 px
window with the sidebar open, five columns get ~110 px each and a tile's label and value are cut,
a chart of three a row draws 1–2 px bars. A flow row is a horizontal container whose cells never
shrink under their kind's narrowest width (`MIN_WIDTH`, one stylesheet: `style()`); the cells
of a row share what is left equally.

    for cell, panel in zip(flow.row("chart", "top-lists", 3), panels):
        with cell:
            ...
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

#: The narrowest a cell of each kind is drawn: an outcome tile (its label, count, share and link),
#: a chart (its axis labels and bars), a link, a form field (a select, a date and its clear
#: button), a control with a longer text (a checkbox, a two-way switch, a button), a wide
#: control or a table of a few columns (a thread picker, a switch of long options). (A row of
#: st.metric tiles needs no cells: Streamlit sizes a metric in a horizontal container by its label
#: and value: `tiles`.)
MIN_WIDTH = {"outcome": "8.5rem", "chart": "18rem", "link": "19rem", "field": "10.5rem", "control": "13.5rem",
             "wide": "20rem"}


def rules() -> str:
    """The stylesheet of the flow cells: each kind's minimum width, shares of the rest equal. A
    cell is a keyed container; its layout wrapper is the row's flex item.

    >>> rules().split("} ")[0].strip()
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-flow-outcome-"]) { flex: 1 1 8.5rem; min-width: min(8.5rem, 100%); max-width: 100%;'
    """
    return " ".join(f'[data-testid="stLayoutWrapper"]:has(> [class*="st-key-flow-{kind}-"]) {{ flex: 1 1 {width}; '
                    f'min-width: min({width}, 100%); max-width: 100%; }}' for kind, width in MIN_WIDTH.items())


def style() -> None:
    """Put the flow cells' stylesheet on the page (once per run, before the page draws)."""
    st.html(f"<style>{rules()}</style>")


def row(kind: str | Sequence[str], key: str, count: int | None = None, *, border: bool = False,
        align: str = "top") -> list[DeltaGenerator]:
    """`count` cells of `kind` (`MIN_WIDTH`), or a cell per kind of a sequence, in one wrapping row
    (aligned to the `align` of their row), keyed `flow-<kind>-<key>-<i>`."""
    kinds = [kind] * (count or 1) if isinstance(kind, str) else list(kind)
    unknown = [k for k in kinds if k not in MIN_WIDTH]
    if unknown:
        raise ValueError(f"no flow cell kind {unknown[0]!r}: one of {', '.join(MIN_WIDTH)}")
    outer = st.container(horizontal=True, gap="small", key=f"flowrow-{key}", vertical_alignment=align)
    return [outer.container(border=border, key=f"flow-{k}-{key}-{i}") for i, k in enumerate(kinds)]


def tiles(key: str) -> DeltaGenerator:
    """A wrapping row for st.metric tiles, each as wide as its label and value at least."""
    return st.container(horizontal=True, gap="small", key=f"flowrow-{key}")
