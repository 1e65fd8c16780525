"""Drawing parts of the Resume QA page that are more than a table: an observed window beside the
expected one (`ui.models.resume_qa.ObservedCheck.side_by_side`), each finding coloured and named."""

from __future__ import annotations


import pandas as pd
import streamlit as st

from ui import diffs, render
from ui.models.resume_qa import kind_text

#: Colour of an entry by the first finding it carries.
_FINDING_COLOURS = {
    "missing": diffs.COLOURS["removed"], "extra": diffs.COLOURS["added"], "reordered": diffs.COLOURS["moved"],
    "altered_content": diffs.COLOURS["edited"], "wrong_speaker": diffs.COLOURS["edited"],
    "wrong_source": diffs.COLOURS["edited"], "malformed": diffs.COLOURS["removed"],
}  # fmt: skip


def side_by_side(rows: pd.DataFrame) -> None:
    """Expected entries on the left, the observed ones standing for them on the right."""
    left, right = st.columns(2)
    left.caption("Expected (the store's window)")
    right.caption("Observed (the runtime's log)")
    for r in rows.head(render.CHAT_MAX).itertuples():
        kinds = r.findings.split(", ") if isinstance(r.findings, str) else []
        colour = _FINDING_COLOURS.get(kinds[0], diffs.COLOURS["same"]) if kinds else diffs.COLOURS["same"]
        note = " · " + kind_text(r.findings) if kinds else ""
        altered = isinstance(r.text_diff, str)
        expected = observed = None
        if pd.notna(r.expected_position):
            body = (diffs.diff_html(r.expected_content, r.observed_content, "old") if altered
                    else diffs.text_html(r.expected_content))
            expected = (f"{r.message} · {r.expected_speaker}{note}", body, colour)
        if pd.notna(r.observed_position):
            body = (diffs.diff_html(r.expected_content, r.observed_content, "new") if altered
                    else diffs.text_html(r.observed_content))
            observed = (f"position {r.observed_position} · {r.observed_speaker} · line {r.line}{note}", body, colour)
        diffs.pair(expected, observed)
    if len(rows) > render.CHAT_MAX:
        st.info(f"Showing the first {render.CHAT_MAX} of {len(rows):,} entries; the findings table has every divergence.")
