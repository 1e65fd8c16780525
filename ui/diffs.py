"""Drawing differences: an inline word diff as HTML, and two texts side by side (the transcript diff,
Resume QA's expected / observed windows). Text is escaped and its line breaks are `<br>`: the HTML is
handed to Markdown, where a blank line would end the HTML block and the rest would be read as
Markdown (a code fence there shows the escaped entities, `&quot;`, as typed). Colours say what
happened to an entry."""

from __future__ import annotations

import html

import streamlit as st

from analytics.textdiff import segments
from ui.markup import inert

#: Background of an entry by what happened to it.
COLOURS = {"same": "#ffffff", "edited": "#fff8e1", "added": "#eefaee", "removed": "#fdeeee", "moved": "#f5f0fa"}


def text_html(value: str | None) -> str:
    """`value` as HTML text that stays inside one HTML block: escaped, each line break a `<br>`.

    >>> text_html('a "b"\\n\\nc')
    'a &quot;b&quot;<br><br>c'
    """
    return html.escape(value or "").replace("\r\n", "\n").replace("\n", "<br>")


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
        text = text_html(s.text)
        if s.op == "-" and side != "new":
            parts.append(f'<del style="background:#fdd;color:#a00">{text}</del>')
        elif s.op == "+" and side != "old":
            parts.append(f'<ins style="background:#dfd;color:#060;text-decoration:none">{text}</ins>')
        elif s.op == "=":
            parts.append(text)
    return "".join(parts)


def edit_log_html(edits) -> str:
    """An edit log (`ui.models.history.EDIT_TABLE_COLUMNS` rows) as an HTML table: messages named
    "Message N" as the transcript numbers them, each change drawn as `diff_html` draws it, no
    empty value written as "None"; every value escaped."""
    from ui.formats import clock, is_missing

    def cell(value) -> str:
        return "" if is_missing(value) else text_html(str(value))

    def message(ordinal) -> str:
        return "" if is_missing(ordinal) else f"Message {int(ordinal) + 1}"

    head = ("When (UTC)", "What", "Role", "Message", "Removed before", "Change", "Written by", "Branch")
    rows = []
    for e in edits.itertuples():
        change = (diff_html(e.old_content, e.new_content) if not is_missing(e.old_content) or not is_missing(e.new_content)
                  else "")  # fmt: skip
        when = "" if is_missing(e.ts) else clock(e.ts).removesuffix(" UTC")
        cells = (html.escape(when), cell(e.event), cell(e.role), message(e.ordinal), message(e.before_ordinal),
                 change, cell(e.source), cell(e.branch))
        rows.append("<tr>" + "".join(f'<td style="{_TD}">{c}</td>' for c in cells) + "</tr>")
    return (f'<table style="border-collapse:collapse;font-size:0.85rem;width:100%"><thead><tr>'
            + "".join(f'<th style="{_TD};text-align:left">{h}</th>' for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


_TD = "border-bottom:1px solid #e6e6e6;padding:4px 8px;vertical-align:top;white-space:pre-wrap"


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
