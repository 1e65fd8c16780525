"""A masking app shows no stored key: thread ids, tenants and model names holding personal data
are masked in every table cell, chart, label, header and picker option (`ui.cache`, the app's
masking boundary), and the masked key a page shows still opens its thread.

The store is written by a real graph through a real SqliteSaver: its thread ids hold an email,
a card number and a phone number, one tenant is an email, and every reply names a model whose
name is an email (`response_metadata.model_name`).
"""

from __future__ import annotations

import sqlite3
from typing import Annotated
from urllib.parse import quote, unquote

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from streamlit.testing.v1 import AppTest
from typing_extensions import TypedDict

from tests.pages.conftest import APP, TIMEOUT, open_page
from tests.pages.test_privacy import serve, shown
from ui import columns

MODEL = "model.owner@example.com"
#: thread id → its first question (a marker of that thread alone, nothing personal in it)
THREADS = {
    "acme:web:alice.pii@example.com": "where is parcel walrus",
    "globex:api:4111111111111111": "where is parcel pelican",
    "acme:+14155552671:sess-3": "where is parcel heron",
    "tenant.owner@example.com:web:s1": "where is parcel otter",
    "acme:web:plain": "where is parcel badger",
}
#: Every spelling of a planted value a page could show.
PLANTED = ["alice.pii@example.com", "4111111111111111", "+14155552671", "14155552671", "tenant.owner@example.com",
           MODEL, "model.owner"]


class _State(TypedDict):
    messages: Annotated[list, add_messages]


def _reply(state: _State) -> dict:
    return {"messages": [AIMessage(content="on its way", response_metadata={"model_name": MODEL})]}


@pytest.fixture(scope="module")
def keys_db(tmp_path_factory):
    import transcript_lens

    folder = tmp_path_factory.mktemp("masked-keys")
    store = folder / "store.sqlite"
    graph = StateGraph(_State)
    graph.add_node("bot", _reply)
    graph.add_edge(START, "bot")
    graph.add_edge("bot", END)
    conn = sqlite3.connect(store, check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(conn))
        for thread_id, question in THREADS.items():
            app.invoke({"messages": [HumanMessage(content=question)]}, {"configurable": {"thread_id": thread_id}})
    finally:
        conn.close()
    db = folder / "lens.duckdb"
    transcript_lens.load(store, db)
    return db


@pytest.fixture()
def masking(keys_db, tmp_path, monkeypatch):
    db = serve(keys_db, tmp_path, monkeypatch)
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    return db


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def _leaks(at) -> list[str]:
    text = shown(at)
    return [v for v in PLANTED if v in text]


def _opens(shown_id: str, question: str) -> None:
    """The masked key `shown_id` opens the transcript whose first question is `question`."""
    at = open_page(_app(), "transcript", thread=shown_id)
    assert not at.exception, at.exception
    assert not [w.value for w in at.warning if "No thread" in w.value]
    assert question in shown(at), shown_id
    assert not _leaks(at)


def test_the_conversations_table_shows_masked_keys_that_open_their_transcripts(masking):
    at = open_page(_app(), "conversations")
    assert not at.exception, at.exception
    assert not _leaks(at)
    table = at.dataframe[0].value
    ids = list(table["thread_id"])
    assert "acme:web:plain" in ids and sum("<EMAIL_" in t for t in ids) == 2 and any("<CARD_" in t for t in ids)
    assert any("<PHONE_" in t for t in ids)
    for shown_id, question in zip(table["thread_id"], table["first_user_message"]):
        _opens(shown_id, question)
    # Selecting a row (AppTest cannot click one: the selection arrives as the widget's state) sends
    # the browser to the masked key, never the stored one.
    row = next(i for i, t in enumerate(ids) if "<CARD_" in t)
    at.session_state[columns.table_key("last_ts", True)] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    script = next(h.proto.body for h in at.get("html") if "PopStateEvent" in h.proto.body)
    link = next(lnk for lnk in at.main.get("page_link") if lnk.proto.label.startswith("Open "))
    assert f"thread={quote(ids[row])}" in script and link.proto.query_string.startswith(f"thread={quote(ids[row])}")
    assert not _leaks(at)
    _opens(unquote(link.proto.query_string.split("&")[0].removeprefix("thread=")), THREADS["globex:api:4111111111111111"])


def test_the_overview_charts_name_no_tenant_or_model_as_stored(masking):
    at = open_page(_app(), "overview")
    assert not at.exception, at.exception
    assert not _leaks(at)
    text = shown(at)
    assert "<EMAIL_" in text  # the tenant and the model, masked in the charts' data
    # The tenant as the filter bar offers it (masked) keeps that tenant's threads.
    from analytics.masking import mask_text
    from analytics.policy import Policy

    tenant = mask_text("tenant.owner@example.com", Policy(redact=True))
    at = open_page(_app(), "conversations", tenant=tenant)
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["first_user_message"]) == [THREADS["tenant.owner@example.com:web:s1"]]
    assert not _leaks(at)


def test_the_conversations_charts_name_no_model_as_stored(masking):
    at = open_page(_app(), "conversations")
    charts = "\n".join(str(c.proto) for c in at.get("echarts_chart"))
    assert charts and "<EMAIL_" in charts and MODEL not in charts


def test_the_transcript_header_and_the_picker_show_masked_keys(masking):
    at = open_page(_app(), "transcript")
    assert not at.exception, at.exception
    options = next(s for s in at.selectbox if s.label == "Thread").options
    assert len(options) == len(THREADS) and "acme:web:plain" in " ".join(options)
    assert not [o for o in options if any(v in o for v in PLANTED)], options
    assert not _leaks(at)
    # the picker's own value (a masked key) opens the thread: its header names the model masked
    picker = next(s for s in at.selectbox if s.label == "Thread")
    picked = next(v for v in picker.options if "<CARD_" in v)
    picker.set_value(picked).run()
    assert not at.exception, at.exception
    text = shown(at)
    assert THREADS["globex:api:4111111111111111"] in text and not _leaks(at)
    assert "<EMAIL_" in text  # the model name in the message header


def test_resume_qa_shows_masked_keys_that_open_their_thread(masking):
    at = open_page(_app(), "resume_qa")
    assert not at.exception, at.exception
    assert not _leaks(at)
    ids = list(at.dataframe[0].value["thread_id"])
    picked = next(t for t in ids if "<EMAIL_" in t and t.startswith("acme:"))
    at.session_state["resume_qa.risks"] = {"selection": {"rows": [ids.index(picked)], "columns": []}}  # a row selected
    at.run()
    assert not at.exception, at.exception
    assert not _leaks(at)
    assert not [e.value for e in at.error]
    assert any(picked in s.value for s in at.subheader)  # the timeline of that thread
    assert at.query_params["thread"] == picked  # the address bar holds the masked key
    assert len(at.get("echarts_chart")) >= 1
