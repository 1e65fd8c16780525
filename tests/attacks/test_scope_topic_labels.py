"""A topic's label under a tenant scope holds words of that tenant's questions only.

The load names topics by words of every tenant's first questions (`conversation_topics`). A user
mapped to acme reading Compare, `report compare` or `report costs --cost-by topic` reads the topics
`analytics.topics` answers under that scope, computed live from acme's questions, as the Topics
page does (docs/privacy.md): here "nightfall", a word of globex's questions only, names the topic
acme's card refunds share with globex's, in the load's label."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from tests.attacks.harness import run_cli
from tests.pages.conftest import APP, TIMEOUT, _v2_router, open_page  # noqa: F401 - (the autouse router)
from tests.pages.test_privacy import serve, shown

WORD = "nightfall"  # in globex's questions only


def _store(path) -> None:
    """Card refunds of both tenants (globex's naming "nightfall") and acme's weather questions, as a
    real graph writes them (SqliteSaver), each answer priced by its model's tokens."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    def agent(state):
        return {"messages": [AIMessage("looking into it", response_metadata={"model_name": "gpt-4o-mini"},
                                       usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    app = graph.compile(checkpointer=SqliteSaver(sqlite3.connect(str(path), check_same_thread=False)))
    asked = ([(f"globex:api:s{i}", f"card refund {WORD}", "1.0") for i in range(5)]
             + [(f"acme:web:s{i}", "card refund question", "1.0") for i in range(3)]
             + [(f"acme:web:w{i}", "weather forecast today", "1.1") for i in range(10)])
    for thread, text, version in asked:
        app.invoke({"messages": [HumanMessage(text)]},
                   {"configurable": {"thread_id": thread}, "metadata": {"app_version": version}})


@pytest.fixture(scope="module")
def topics_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scope-topics")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    _store(store)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    con = duckdb.connect(str(db), read_only=True)
    try:
        labels = {t: label for t, label in con.execute("SELECT thread_id, topic_label FROM conversation_topics").fetchall()}
    finally:
        con.close()
    assert WORD in labels["acme:web:s0"], labels  # (the load's label of acme's topic names globex's word)
    return db


@pytest.fixture()
def prices(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('currency = "USD"\n[models."gpt-4o-mini"]\ninput = 1.0\noutput = 2.0\n')
    return path


@pytest.mark.parametrize("report", ["compare", "costs"])
def test_a_scoped_report_names_topics_by_its_tenants_words(topics_db, prices, tmp_path, monkeypatch, report):
    argv = (["report", "compare", "--db", str(topics_db), "--a-meta", "app_version=1.0", "--b-meta", "app_version=1.1"]
            if report == "compare" else
            ["report", "costs", "--db", str(topics_db), "--prices", str(prices), "--cost-by", "topic"])
    assert WORD in run_cli(argv, tmp_path).succeeded().stdout  # unscoped: the load's labels
    monkeypatch.setenv("TRANSCRIPT_LENS_TENANTS", "acme")
    out = run_cli(argv, tmp_path).succeeded()
    assert "card" in out.stdout and "weather" in out.stdout, out.stdout
    assert WORD not in out.stdout and "globex" not in out.stdout, out.stdout


def test_compare_shows_a_user_mapped_to_one_tenant_topics_named_by_its_words(topics_db, tmp_path, monkeypatch):
    serve(topics_db, tmp_path, monkeypatch)
    config = tmp_path / "deploy.toml"
    config.write_text('[app]\n[app.users]\n"*@acme.com" = ["acme"]\n')
    monkeypatch.setenv("TRANSCRIPT_LENS_CONFIG", str(config))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.user = {"email": "ana@acme.com", "is_logged_in": True}
    text = shown(open_page(at, "compare"))
    assert "Topic: card" in text and "Topic: forecast" in text, text[-3000:]
    assert WORD not in text
