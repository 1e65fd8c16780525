"""AppTests of the Topics page (pages/topics.py) on the demo database: the topic table is
`topic_overview()`, a selected topic lists its conversations, a conversation opens at its question."""

from __future__ import annotations

from urllib.parse import quote

import analytics
from tests.pages.conftest import metric, open_page
from ui import markup


def test_the_topics_and_their_outcomes(app, con):
    at = open_page(app, "topics")
    expected = analytics.topic_overview(con)
    table = at.dataframe[0].value
    assert table["topic_label"].tolist() == expected["topic_label"].tolist()
    assert table["threads"].tolist() == expected["threads"].tolist()
    assert metric(at, "Conversations") == f"{expected['threads'].sum():,}"
    assert metric(at, "Topics") == str(len(expected))
    assert any(d.label == "Download every topic (CSV)" for d in at.get("download_button"))
    for row, want in zip(table.itertuples(), expected.itertuples()):  # no "None" cell: a word, a ratio or nothing
        if want.abandoned_rate > 0 and want.abandoned_vs_rest != want.abandoned_vs_rest:  # (NaN: rest never abandoned)
            assert row.abandoned_vs_rest == "only here"
        elif want.abandoned_rate == 0:
            assert row.abandoned_vs_rest == ""
        else:
            assert row.abandoned_vs_rest == f"{want.abandoned_vs_rest:.1f}×"
    rates = [c for c in table.columns if c.endswith("_rate")]
    # every outcome: a row is 100 %, written in percent as every page writes a share ("84.6 %")
    assert len(rates) == 5 and (table[rates].sum(axis=1) - 100).abs().max() < 1e-6
    assert (table["share"] - expected["share"] * 100).abs().max() < 1e-9
    largest = expected.iloc[0]
    said = f"Largest: **{markup.text(largest['topic_label'])}** ({largest['threads']:,} conversations"
    assert any(said in m.value for m in at.markdown)


def test_a_topic_and_an_outcome_list_their_conversations_from_the_url(app, con):
    per_thread = analytics.topics(con)
    topic = int(per_thread[per_thread["outcome"] == "resolved"]["topic_id"].iloc[0])
    at = open_page(app, "topics", topic=str(topic + 1), outcome="resolved", by="day")  # (shown from 1)
    listed = at.dataframe[1].value
    want = per_thread[(per_thread["topic_id"] == topic) & (per_thread["outcome"] == "resolved")]
    assert sorted(listed["thread_id"]) == sorted(want["thread_id"])
    assert at.radio(key="topics.by").value == "day"
    at.multiselect(key="topics.tenant").set_value(["globex"]).run()
    assert at.query_params["tenant"] == "globex"
    shown = at.dataframe[0].value["threads"].sum()
    assert shown == (per_thread["thread_id"].str.startswith("globex:")).sum()


def test_selecting_a_topic_then_a_conversation_opens_it_at_its_question(app, con):
    at = open_page(app, "topics")
    at.session_state["topics.table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception
    assert at.query_params.get("topic") in ("1", ["1"])  # the largest topic is Topic 1
    largest = analytics.topic_overview(con)["topic_label"].iloc[0]
    assert any(h.value == f"Topic 1 · {markup.text(largest)}" for h in at.subheader)
    listed = at.dataframe[1].value
    first = listed.iloc[0]
    at.session_state["topics.threads"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception
    # The browser is sent to the transcript at that message as one history entry (state.go_to).
    script = next(h.proto.body for h in at.get("html") if "PopStateEvent" in h.proto.body)
    assert f"transcript?thread={quote(first['thread_id'])}&msg={first['message']}" in script


def test_listed_conversations_name_their_outcome_as_every_page_does(app, con):
    per_thread = analytics.topics(con)
    topic = int(per_thread[per_thread["outcome"] == "resolved"]["topic_id"].iloc[0])
    at = open_page(app, "topics", topic=str(topic + 1))
    assert set(at.dataframe[1].value["outcome"]) <= {"Resolved", "Abandoned", "Failed", "Waiting", "Unknown"}
    assert "Resolved" in set(at.dataframe[1].value["outcome"])
