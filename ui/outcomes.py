"""Outcomes where users meet them: a row of outcome tiles whose counts open the conversations
behind them, the outcome at the top of a transcript, and a badge on each flagged message.

>>> tiles(shares, state.link_params(tenant=["acme"]))  # doctest: +SKIP
>>> chat.draw(items, head=marks(outcome))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from ui import flow, markup, state
from ui.formats import plural
from ui.models.chat import MessageItem
from ui.models.outcomes import (
    OUTCOME_DEFINITIONS, OUTCOME_LABELS, SIGNAL_DEFINITIONS, SIGNAL_LABELS, ThreadOutcome, pointer_text, share_text,
)

#: Each outcome's colour (Streamlit's named colours) and icon; the badges of its signals share them.
OUTCOME_STYLE = {
    "resolved": ("green", ":material/check_circle:"),
    "abandoned": ("orange", ":material/person_off:"),
    "failed": ("red", ":material/error:"),
    "waiting": ("violet", ":material/front_hand:"),
    "unknown": ("gray", ":material/help:"),
}
SIGNAL_STYLE = {
    "abandoned": ("orange", ":material/person_off:"),
    "resolved_closing": ("green", ":material/waving_hand:"),
    "dropped_after_failure": ("red", ":material/error:"),
    "agent_loop": ("red", ":material/repeat:"),
    "tool_error_cascade": ("red", ":material/warning:"),
    "user_frustration": ("orange", ":material/sentiment_dissatisfied:"),
    "repetition": ("orange", ":material/content_copy:"),
    "slow_hitl": ("violet", ":material/hourglass_bottom:"),
    "lost_context": ("blue", ":material/history_toggle_off:"),
}


def shared_params(url: state.Url) -> dict[str, Any]:
    """The shared filters (`state.SHARED`) `url` holds now, for a link that keeps them."""
    return {k: v for k, v in url.params().items() if k in state.SHARED}


def tiles(shares: pd.DataFrame, params: dict[str, Any], outcomes: tuple[str, ...] | None = None) -> None:
    """A tile per outcome (`ui.models.outcomes` shares: outcome, threads, share), each with a link
    listing its conversations on Conversations (`?outcome=`, plus `params`)."""
    rows = shares if outcomes is None else shares.set_index("outcome").loc[list(outcomes)].reset_index()
    for cell, row in zip(flow.row("outcome", "outcome-tiles", len(rows), border=True), rows.itertuples()):
        icon = OUTCOME_STYLE[row.outcome][1]
        with cell:
            st.metric(OUTCOME_LABELS[row.outcome], f"{int(row.threads):,}", help=OUTCOME_DEFINITIONS[row.outcome],
                      delta=share_text(float(row.share)), delta_color="off", delta_arrow="off")
            if row.threads:
                # (the count alone: "List 30 abandoned" does not fit a fifth of a page)
                st.page_link("pages/conversations.py", icon=icon, label=f"List {int(row.threads):,}",
                             help=f"The {plural(int(row.threads), OUTCOME_LABELS[row.outcome].lower() + ' conversation')} on Conversations",
                             query_params=state.link_params(outcome=row.outcome, **params))
            else:
                st.caption("none")


def banner(outcome: ThreadOutcome) -> None:
    """The thread's outcome and its reason, above the transcript, with the signals that fired."""
    color, icon = OUTCOME_STYLE.get(outcome.outcome, OUTCOME_STYLE["unknown"])
    with st.container(border=True, key="transcript-outcome"):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.badge(f"Outcome: {OUTCOME_LABELS.get(outcome.outcome, outcome.outcome)}", icon=icon, color=color)
            markup.caption(outcome.reason)
        if outcome.first:
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                for signal, number in outcome.first.items():
                    badge(signal, pointer_text(signal, number, first=True))


def badge(signal: str, suffix: str = "") -> None:
    color, icon = SIGNAL_STYLE.get(signal, ("gray", ":material/flag:"))
    st.badge(SIGNAL_LABELS.get(signal, signal) + suffix, icon=icon, color=color, help=SIGNAL_DEFINITIONS.get(signal))


def marks(outcome: ThreadOutcome | None) -> Callable[[MessageItem], None] | None:
    """The `head` for `ui.chat.draw`: a badge per signal under the header of each message it points
    at, and the outcome's badge on the message an outcome other than resolved rests on."""
    rests_on = outcome.at if outcome is not None and outcome.outcome != "resolved" else None
    if outcome is None or (not outcome.marks and rests_on is None):
        return None

    def head(item: MessageItem) -> None:
        flagged = outcome.marks.get(item.number, ())
        if flagged or item.number == rests_on:
            with st.container(horizontal=True, gap="small", key=f"signal-marks-{item.number}"):
                if item.number == rests_on:
                    color, icon = OUTCOME_STYLE.get(outcome.outcome, OUTCOME_STYLE["unknown"])
                    st.badge(f"Outcome: {OUTCOME_LABELS.get(outcome.outcome, outcome.outcome)}", icon=icon, color=color,
                             help=OUTCOME_DEFINITIONS.get(outcome.outcome))
                for signal in flagged:
                    badge(signal, pointer_text(signal, item.number, first=False))

    return head


#: Where an analyst goes from the outcome tiles: (page, icon, label, what it answers), what went wrong first.
NEXT_STEPS = (
    ("pages/patterns.py", ":material/error:", "Why they failed: patterns", "What the failed conversations have in common"),
    ("pages/topics.py", ":material/category:", "What users ask: topics", "Topics of the first questions, and how each ends"),
    ("pages/compare.py", ":material/compare_arrows:", "Compare two cohorts", "Versions, models, tenants or days side by side"),
)


def next_steps(params: dict[str, Any]) -> None:
    """A row of links to the pages that explain the outcomes, keeping the shared filters `params`."""
    for col, (page, icon, label, answers) in zip(flow.row("link", "next-steps", len(NEXT_STEPS)), NEXT_STEPS):
        col.page_link(page, icon=icon, label=label, help=answers, query_params=state.link_params(**params))
