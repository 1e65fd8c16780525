"""AppTests of the conversations page (pages/conversations.py) on the demo database."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import analytics
from analytics import metrics
from analytics.filters import Filters
from tests.pages.conftest import APP, TIMEOUT, markdown_texts, open_page


def table(at):
    return at.dataframe[0].value


def test_one_row_per_thread_with_the_metrics(app, con):
    at = open_page(app, "conversations")
    shown = table(at)
    expected = metrics.conversations(con)
    assert sorted(shown["thread_id"]) == sorted(expected["thread_id"])
    merged = shown.merge(expected, on="thread_id", suffixes=("", "_m"))
    assert (merged["user_turns"] == merged["user_turns_m"]).all()
    assert (merged["messages"] == merged["messages_m"]).all()
    assert f"{len(expected)} of {len(expected)} threads" in at.caption[0].value
    assert len(at.get("plotly_chart")) == 4
    assert [d.label for d in at.get("download_button")] == ["Download CSV"]


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
    assert len(at.info) == 4  # one "no data" note per chart


def test_selecting_a_row_opens_the_transcript(app, con):
    at = open_page(app, "conversations")
    shown = table(at)
    row = int(shown.index[shown["thread_id"] == "acme:web:sess-1002"][0])
    at.session_state["conversations.table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Transcript explorer"]
    assert at.query_params.get("thread") == "acme:web:sess-1002"
    first = analytics.read(con, "acme:web:sess-1002", speaker="user", index=0)["content"].item()
    assert first in markdown_texts(at)
