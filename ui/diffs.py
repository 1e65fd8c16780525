"""Drawing differences: an inline word diff as HTML, and two texts side by side (the transcript diff,
Resume QA's expected / observed windows). Text is escaped; colours say what happened to an entry."""

from __future__ import annotations

import html

import streamlit as st

from analytics.textdiff import segments
from ui.markup import inert

#: Background of an entry by what happened to it.
COLOURS = {"same": "#ffffff", "edited": "#fff8e1", "added": "#eefaee", "removed": "#fdeeee", "moved": "#f5f0fa"}


def diff_html(old: str | None, new: str | None, side: str = "both") -> str:
    """The inline diff of `old` → `new` as HTML, escaped: removed runs struck through in red, added
    ones in green; `side="old"` / `"new"` shows one side only (for side-by-side columns).

    >>> diff_html("call 4401", "call 4410")
    'call <del style="background:#fdd;color:#a00">4401</del><ins style="background:#dfd;color:#060;text-decoration:none">4410</ins>'
    >>> diff_html("call 4401", "call 4410", side="new")
    'call <ins style="background:#dfd;color:#060;text-decoration:none">4410</ins>'
    """
    parts = []
    for s in segments(old, new):
        text = html.escape(s.text)
        if s.op == "-" and side != "new":
            parts.append(f'<del style="background:#fdd;color:#a00">{text}</del>')
        elif s.op == "+" and side != "old":
            parts.append(f'<ins style="background:#dfd;color:#060;text-decoration:none">{text}</ins>')
        elif s.op == "=":
            parts.append(text)
    return "".join(parts)


def box(head: str, body_html: str, colour: str) -> str:
    """One entry of a side-by-side view: a small head line (escaped here) over its text (HTML)."""
    return (f'<div style="background:{colour};border:1px solid #e6e6e6;border-radius:4px;padding:6px 10px;'
            f'margin-bottom:4px;min-height:2.5rem;white-space:pre-wrap"><small>{html.escape(head)}</small><br>'
            f"{body_html}</div>")  # fmt: skip


def pair(left: tuple[str, str, str] | None, right: tuple[str, str, str] | None) -> None:
    """Two entries side by side, each `(head, body_html, colour)` or None (nothing on that side)."""
    a, b = st.columns(2)
    if left is not None:
        a.markdown(inert(box(*left)), unsafe_allow_html=True)
    if right is not None:
        b.markdown(inert(box(*right)), unsafe_allow_html=True)
