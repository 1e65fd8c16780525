"""A table whose page orders its columns still keeps every column it shows inside the page: those
past the right edge wait in the column chooser, named beneath, in the page's order."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _ordered() -> None:
    import pandas as pd
    import streamlit as st

    from ui import render

    frame = pd.DataFrame({"tenant_id": ["umbrella-corporation-eu-west"], "threads": [10], "abandoned": [1],
                          "failed": [2], "went_wrong_share": [30.0], "note": ["x"]})
    render.table(frame, key="t", fit_px=int(st.session_state.get("px", 900)), on_select="rerun",
                 selection_mode="single-row", column_order=["tenant_id", "abandoned", "failed", "went_wrong_share", "threads"],
                 column_config={"tenant_id": "Tenant", "threads": "Conversations", "abandoned": "Abandoned",
                                "failed": "Failed", "went_wrong_share": "Share"})


def _shown(px: int) -> tuple[list[str], list[str]]:
    at = AppTest.from_function(_ordered, default_timeout=60)
    at.session_state["px"] = px
    at.run()
    assert not at.exception
    return list(at.dataframe[0].proto.column_order), [c.value for c in at.caption]


def test_ordered_columns_past_the_edge_wait_in_the_chooser_named_beneath():
    order, captions = _shown(440)
    assert order == ["tenant_id", "abandoned", "failed"], order  # (the page's order; "note" never shown)
    assert any("2 more columns: Share, Conversations" in c for c in captions), captions


def test_ordered_columns_that_fit_all_show():
    order, captions = _shown(900)
    assert order == ["tenant_id", "abandoned", "failed", "went_wrong_share", "threads"] and not captions
