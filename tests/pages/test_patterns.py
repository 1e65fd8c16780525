"""AppTests of the Failure patterns page (pages/patterns.py) on the demo database: the pattern table is
`patterns()`, a pattern lists its conversations, one opens at its failing message."""

from __future__ import annotations

from urllib.parse import quote

import analytics
from analytics.topic_mining.patterns import pattern_threads
from tests.pages.conftest import metric, open_page
from ui import markup


def test_the_patterns_and_their_conversations(app, con):
    expected = analytics.patterns(con)
    assert len(expected)  # the demo has a conversation that failed on a tool error
    at = open_page(app, "patterns")
    table = at.dataframe[0].value
    assert table["label"].tolist() == expected["label"].tolist()
    assert metric(at, "Patterns") == str(len(expected))
    at.session_state["patterns.table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception
    listed = at.dataframe[1].value
    want = pattern_threads(con)
    want = want[want["signature"] == expected["signature"].iloc[0]]
    assert sorted(listed["thread_id"]) == sorted(want["thread_id"])
    assert (listed["message"] == listed["failing_ordinal"] + 1).all()
    # outcomes by the names every page gives them ("Failed", as on Conversations)
    assert set(listed["outcome"]) <= {"Resolved", "Abandoned", "Failed", "Waiting", "Unknown"}
    first = listed.iloc[0]
    at.session_state["patterns.threads"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    # The browser is sent to the transcript at that message as one history entry (state.go_to).
    script = next(h.proto.body for h in at.get("html") if "PopStateEvent" in h.proto.body)
    assert f"transcript?thread={quote(first['thread_id'])}&msg={first['message']}" in script


def test_the_top_pattern_is_listed_before_any_row_is_chosen(app, con):
    expected = analytics.patterns(con)
    at = open_page(app, "patterns")
    assert metric(at, "In the top pattern") == str(expected["threads"].iloc[0])
    assert any(h.value == f"Top pattern: {markup.text(expected['label'].iloc[0])}" for h in at.subheader)
    want = pattern_threads(con)
    want = want[want["signature"] == expected["signature"].iloc[0]]
    assert sorted(at.dataframe[1].value["thread_id"]) == sorted(want["thread_id"])


def test_filters_choose_the_conversations(app, con):
    failing = set(pattern_threads(con)["tenant_id"])
    other = next(t for t in ("acme", "initech", "umbrella") if t not in failing)
    at = open_page(app, "patterns", tenant=other)
    assert at.multiselect(key="patterns.tenant").value == [other]
    assert any("No conversation failed" in s.value for s in at.success)
