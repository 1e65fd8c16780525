"""Every table the app draws shows human headers: a column its page does not configure reads as
`columns.header` names it (the Overview's trend tables had `period`, `conversations`)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def _script():
    import pandas as pd
    import streamlit as st

    from ui import render

    frame = pd.DataFrame({"period": pd.to_datetime(["2026-12-01", "2026-12-02"]), "conversations": [3, 4],
                          "median_reply_s": [1.5, None], "gap_s": [3600.0, 12.5]})
    render.table(frame, hide_index=True, key="t",
                 column_config={"median_reply_s": st.column_config.NumberColumn("Median reply", format="%.1f s")})


def test_a_column_the_page_does_not_configure_shows_its_human_header():
    at = AppTest.from_function(_script, default_timeout=60).run()
    assert not at.exception
    config = json.loads(at.dataframe[0].proto.columns)
    labels = {name: c.get("label") for name, c in config.items()}
    assert labels["period"] == "Period" and labels["conversations"] == "Conversations"
    assert labels["median_reply_s"] == "Median reply"  # the page's own config is kept
    assert labels["gap_s"] == "Gap (s)"  # seconds by their unit, not "Gap s"


def test_every_configured_header_starts_with_a_capital():
    """A header a page names itself reads as the others do ("Began with", not "began with")."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lower = re.compile(r"""\b\w*Column\(\s*["'][a-z]""")
    found = [f"{p.relative_to(root)}:{i}: {line.strip()}"
             for p in [*root.glob("pages/*.py"), *root.glob("ui/*.py")]
             for i, line in enumerate(p.read_text().splitlines(), 1) if lower.search(line)]
    assert not found, "\n".join(found)


def _unnumbered():
    import pandas as pd

    from ui import render

    render.table(pd.DataFrame({"role": ["user", "assistant"], "content": ["hi", "hello"]}), key="plain")
    render.table(pd.DataFrame({"n": [3, 4]}, index=pd.Index(["acme", "globex"], name="tenant")), key="named")


def test_no_table_shows_pandas_row_numbers_counting_from_0():
    """A frame whose index is pandas' 0, 1, 2… draws no index column; an index that names its rows stays."""
    at = AppTest.from_function(_unnumbered, default_timeout=60).run()
    assert not at.exception
    plain, named = (json.loads(t.proto.columns) for t in at.dataframe)
    assert plain.get("_index", {}).get("hidden") is True, plain
    assert not named.get("_index", {}).get("hidden"), named
