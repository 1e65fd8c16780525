"""AppTests of the conversations page (pages/conversations.py) on the demo database."""

from __future__ import annotations

from urllib.parse import quote

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import analytics
from analytics import metrics
from analytics.filters import Filters
from tests.pages.conftest import APP, TIMEOUT, markdown_texts, open_page
from ui import columns


def table(at) -> pd.DataFrame:
    return at.dataframe[0].value


def open_link(at, **params):
    """`open_page` for links with a `page` param (its own argument is the page file)."""
    at.query_params.clear()
    at.query_params.update({"page" if k == "page_no" else k: v for k, v in params.items()})
    at.switch_page("pages/conversations.py").run()
    assert not at.exception, at.exception
    return at


def rows_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith(("rows ", "no thread")))


def pandas_sort(conv: pd.DataFrame, column: str, descending: bool) -> list[str]:
    """The order the page must show, by pandas: `column` NULLs last, ties by thread_id."""
    frame = conv.sort_values("thread_id", kind="stable")
    frame = frame.sort_values(column, ascending=not descending, na_position="last", kind="stable")
    return frame["thread_id"].tolist()


@pytest.fixture()
def small_pages(monkeypatch):
    """Pages of 10 rows, so the 37 demo threads take four pages (cached answers of other page sizes dropped)."""
    monkeypatch.setattr("ui.models.conversations.PAGE_SIZE", 10)
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def test_every_thread_newest_first_with_cells_that_sort_by_value(app, con):
    at = open_page(app, "conversations")
    shown = table(at)
    conv = metrics.conversations(con)
    assert shown["thread_id"].tolist() == pandas_sort(conv, "last_ts", True)
    assert f"rows 1–{len(conv)} of {len(conv)} threads" in rows_caption(at)
    row = shown.set_index("thread_id").loc["acme:web:sess-1002"]
    want = conv.set_index("thread_id").loc["acme:web:sess-1002"]
    assert row["user_turns"] == want["user_turns"]
    # Numbers and times stay numbers and times (a header click in the browser sorts them by value,
    # not by their text: "5.7 s" after "43 m 07 s"); their column's format draws them.
    for column in ("duration_s", "user_turns", "messages", "latency_median_s", "input_tokens"):
        assert pd.api.types.is_numeric_dtype(shown[column]), column
    assert pd.api.types.is_datetime64_any_dtype(shown["last_ts"])
    first = " ".join(analytics.read(con, "acme:web:sess-1002", speaker="user", index=0)["content"].item().split())
    assert row["first_user_message"] == (
        first if len(first) <= metrics.PREVIEW_CHARS else first[: metrics.PREVIEW_CHARS - 1] + "…")
    texts = shown.select_dtypes(object).to_numpy().ravel().tolist()
    assert "None" not in texts and "nan" not in texts and "—" not in texts
    assert at.dataframe[0].proto.placeholder == ""  # a missing value is an empty cell, not "None"
    assert "(click a header to sort by it)" in rows_caption(at)  # the caption says what the order is
    assert len(at.get("echarts_chart")) == 4
    assert [d.label for d in at.get("download_button")] == [f"Download all {len(conv)} rows (CSV)"]


def test_sort_order_and_page_come_from_the_url(app, con, small_pages):
    conv = metrics.conversations(con)
    want = pandas_sort(conv, "duration_s", descending=False)
    at = open_link(app, sort="duration_s", order="asc", page_no="2")
    assert table(at)["thread_id"].tolist() == want[10:20]
    assert "rows 11–20 of 37 threads" in rows_caption(at)
    assert at.selectbox(key="conversations.sort").value == "duration_s"
    # Every page, once: each row exactly once, in the sort's order.
    seen = []
    for page in (1, 2, 3, 4):
        at.number_input(key="conversations.page").set_value(page).run()
        assert at.query_params.get("page", "1") == str(page)  # page 1 is the default: not in the URL
        seen += table(at)["thread_id"].tolist()
    assert seen == want
    assert "rows 31–37 of 37 threads" in rows_caption(at)


def test_a_new_sort_starts_on_page_one_and_goes_in_the_url(app, con, small_pages):
    at = open_link(app, page_no="3")
    assert "rows 21–30" in rows_caption(at)
    # Chosen as the widget would (AppTest cannot pick a selectbox option shown through a format_func).
    at.session_state["conversations.sort"] = "output_tokens"
    at.run()
    assert table(at)["thread_id"].tolist() == pandas_sort(metrics.conversations(con), "output_tokens", True)[:10]
    assert dict(at.query_params) == {"sort": "output_tokens"}
    fresh = open_link(AppTest.from_file(APP, default_timeout=TIMEOUT), page_no="9")
    assert "rows 31–37 of 37 threads" in rows_caption(fresh)  # past the end: the last page


def test_pending_interrupt_and_fork_filters(app, con):
    conv = metrics.conversations(con)
    pending = sorted(conv.loc[conv["interrupt_pending"].astype(bool), "thread_id"])
    forked = sorted(conv.loc[conv["forks"] > 0, "thread_id"])
    assert "acme:web:sess-1008" in pending and "globex:api:sess-2105" in forked  # demo/README.md facts
    assert sorted(table(open_page(app, "conversations", pending="1"))["thread_id"]) == pending
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    assert sorted(table(open_page(fresh, "conversations", forks="1"))["thread_id"]) == forked


def test_min_turns_tenant_and_text(app, con):
    conv = metrics.conversations(con, Filters(tenants=("acme",), text="refund"))
    expected = sorted(conv.loc[conv["user_turns"] >= 2, "thread_id"])
    at = open_page(app, "conversations", tenant="acme", q="refund", min_turns="2")
    assert 0 < len(expected) < len(metrics.conversations(con))
    assert sorted(table(at)["thread_id"]) == expected


def test_the_threads_without_a_tenant_are_a_tenant_choice(app, con):
    # The Overview's "Top tenants" draws a "(no tenant)" bar: the filter offers it too, and it
    # keeps exactly those threads (a NULL tenant in SQL), alone or beside a named tenant.
    conv = metrics.conversations(con)
    tenantless = sorted(conv.loc[conv["tenant_id"].isna(), "thread_id"])
    acme = sorted(conv.loc[conv["tenant_id"] == "acme", "thread_id"])
    assert tenantless == ["faq-kiosk-lobby"]  # demo/README.md: a thread id outside the key pattern
    at = open_page(app, "conversations")
    assert "(no tenant)" in at.multiselect(key="conversations.tenant").options
    at.multiselect(key="conversations.tenant").select("(no tenant)").run()
    assert sorted(table(at)["thread_id"]) == tenantless
    assert dict(at.query_params) == {"tenant": "(no tenant)"}  # a link keeps the choice
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "conversations", tenant=["acme", "(no tenant)"])
    assert sorted(table(fresh)["thread_id"]) == sorted(acme + tenantless)


def test_metric_ranges_from_the_url_and_the_inputs(app, con):
    conv = metrics.conversations(con)
    keep = conv[(conv["duration_s"] >= 5 * 60) & (conv["tool_calls"] <= 1) & (conv["total_tokens"] >= 300)]
    assert 0 < len(keep) < len(conv)
    at = open_page(app, "conversations", duration_min="5", tools_max="1", tokens_min="300")
    assert sorted(table(at)["thread_id"]) == sorted(keep["thread_id"])
    assert at.number_input(key="conversations.duration_min").value == 5
    at.number_input(key="conversations.errors_min").set_value(1).run()
    errors = keep[keep["tool_errors"] >= 1]
    assert sorted(table(at)["thread_id"]) == sorted(errors["thread_id"])
    assert at.query_params.get("errors_min") == "1"


def test_filters_round_trip_through_the_url(app):
    at = open_page(app, "conversations")
    at.number_input(key="conversations.min_turns").set_value(3).run()
    at.checkbox(key="conversations.forks").check().run()
    at.multiselect(key="conversations.sub").set_value(["api"]).run()
    params = dict(at.query_params)
    assert params == {"min_turns": "3", "forks": "1", "sub": "api"}
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "conversations", **params)
    assert fresh.number_input(key="conversations.min_turns").value == 3
    assert fresh.checkbox(key="conversations.forks").value is True
    assert fresh.multiselect(key="conversations.sub").value == ["api"]
    assert table(fresh)["thread_id"].tolist() == table(at)["thread_id"].tolist()


def test_no_thread_matches_gives_empty_charts_not_errors(app):
    at = open_page(app, "conversations", min_turns="999")
    assert not at.exception
    assert table(at).empty
    assert rows_caption(at).startswith("no thread matches (37 in the database) · ")
    assert len(at.info) == 4  # one "no data" note per chart


def test_selecting_a_row_opens_the_transcript(app, con, small_pages):
    at = open_link(app, sort="thread_id", order="asc", page_no="2")
    shown = table(at)
    want = sorted(metrics.conversations(con)["thread_id"])[10:20]
    assert shown["thread_id"].tolist() == want
    at.session_state[columns.table_key("thread_id", False)] = {"selection": {"rows": [3], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    # The browser is sent to the transcript as one history entry (tests/e2e clicks it and goes Back).
    script = next(h.proto.body for h in at.get("html") if "PopStateEvent" in h.proto.body)
    # (acme:web:sess-1009 is abandoned: its transcript opens at the unanswered message)
    target = f"transcript?thread={quote(want[3])}&signal=abandoned"
    assert target in script
    link = next(lnk for lnk in at.main.get("page_link") if lnk.proto.label.startswith("Open "))
    assert link.proto.label == f"Open {want[3]} in the transcript explorer" and link.proto.query_string == target[11:]
    # Following it opens that thread (the link a browser without scripts clicks).
    at = open_page(at, "transcript", thread=want[3])
    assert [t.value for t in at.title] == ["Transcript explorer"]
    first = analytics.read(con, want[3], speaker="user", index=0)["content"]
    assert first.empty or first.item() in markdown_texts(at)


def test_every_shown_column_has_a_label_and_sorts_in_duckdb():
    assert set(columns.SORTABLE) <= set(metrics.SORT_COLUMNS)
    assert all(c.label and "_" not in c.label for c in columns.CONVERSATION_TABLE)


def test_no_thread_matches_offers_no_empty_download(app):
    at = open_page(app, "conversations", min_turns="999")
    button = next(b.proto for b in at.get("download_button") if b.proto.id and "conversations.csv" in b.proto.id)
    assert button.label == "No rows to download"
    assert button.disabled
    at = open_page(app, "conversations")
    button = next(b.proto for b in at.get("download_button") if b.proto.id and "conversations.csv" in b.proto.id)
    assert button.label == "Download all 37 rows (CSV)" and not button.disabled
