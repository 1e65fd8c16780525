"""AppTests of where users meet outcomes on the demo database: the Outcomes page, the outcome and
signal filters of Conversations, the transcript opened at a flagged message, the Overview's
outcome tiles and the backlog's service level (demo/README.md lists the conversations that went wrong)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import analytics
from analytics.topic_mining.patterns import pattern_threads
from tests.pages.conftest import metric, open_page
from ui import columns

LOOP = "acme:web:sess-1010"  # agent loop at messages 4, 6, 8; "talk to a real person" at message 11


def _links(at) -> dict[str, dict[str, list[str]]]:
    return {link.proto.label: parse_qs(link.proto.query_string) for link in at.main.get("page_link")}


def _tile_links(at) -> dict[str, tuple[str, dict[str, list[str]]]]:
    """Each outcome tile's link: outcome → (label, query params)."""
    found = {}
    for link in at.main.get("page_link"):
        params = parse_qs(link.proto.query_string)
        if link.proto.page == "conversations" and len(params.get("outcome", [])) == 1:
            found[params["outcome"][0]] = (link.proto.label, params)
    return found


def _badges(at) -> list[str]:
    """The badges' texts (st.badge draws `:color-badge[:material/icon: text]` markdown)."""
    found = (re.fullmatch(r":\w+-badge\[(?::material/\w+: )?(.*)\]", m.value, re.S) for m in at.markdown)
    return [f.group(1) for f in found if f]


def _deltas(at) -> dict[str, str]:
    return {m.label: m.proto.delta for m in at.metric}


def _table(at, key: str):
    return next(d for d in at.dataframe if getattr(d, "key", None) == key).value


def _go_to_script(at) -> str:
    return next(h.proto.body for h in at.get("html") if "PopStateEvent" in h.proto.body)


def test_outcomes_page_counts_each_outcome_and_links_to_its_conversations(app):
    at = open_page(app, "outcomes", tenant="acme")
    assert [t.value for t in at.title] == ["Outcomes"]
    assert metric(at, "Abandoned") == "1" and metric(at, "Waiting") == "1"
    assert _deltas(at)["Abandoned"] == "6.7 %"  # of acme's 15
    assert metric(at, "Failed") == "0"
    tiles = _tile_links(at)
    assert tiles["abandoned"][0] == "List 1" and tiles["abandoned"][1]["tenant"] == ["acme"]
    assert "failed" not in tiles  # nothing to list
    signals = _table(at, "outcomes.signals").set_index("label")
    assert signals.loc["agent loop", "threads"] == 1 and signals.loc["slow human-in-the-loop", "threads"] == 2
    assert "definition" not in signals.columns  # (a cell clips it: every definition is written out in full beside)
    meaning = next(m.value for m in at.markdown if m.value.startswith("- **"))
    line = next(line for line in meaning.splitlines() if line.startswith("- **agent loop**"))
    assert "same normalised arguments" in line and not line.endswith("…")
    assert {d.label for d in at.get("download_button")} >= {"Download CSV"}
    assert len(at.get("download_button")) == 5  # signals, trend, tenants, slow human-in-the-loop (2)
    assert at.query_params["tenant"] == "acme"


def test_a_signal_row_opens_conversations_with_that_signal(app):
    at = open_page(app, "outcomes")
    labels = _table(at, "outcomes.signals")["label"].tolist()
    at.session_state["outcomes.signals"] = {"selection": {"rows": [labels.index("agent loop")], "columns": []}}
    at.run()
    assert not at.exception
    assert "conversations?signal=agent_loop" in _go_to_script(at)


def test_tenants_and_slow_human_in_the_loop_open_what_is_behind_them(app):
    at = open_page(app, "outcomes")
    tenants = _table(at, "outcomes.tenants")
    assert tenants["tenant_id"].tolist()[:1] == ["globex"] and tenants["failed"].tolist()[0] == 2
    slow = _table(at, "outcomes.slow")
    assert slow["thread_id"].tolist() == ["acme:web:sess-1008", "acme:mobile:sess-3005"]
    assert slow["status"].tolist() == ["still waiting", "answered late"]
    at.session_state["outcomes.slow"] = {"selection": {"rows": [1], "columns": []}}
    at.run()
    assert "transcript?thread=acme%3Amobile%3Asess-3005&signal=slow_hitl" in _go_to_script(at)
    at = open_page(app, "outcomes")
    at.session_state["outcomes.tenants"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert "conversations?outcome=abandoned&outcome=failed&tenant=globex" in _go_to_script(at)


def test_conversations_link_lists_the_threads_of_an_outcome_or_a_signal(app):
    at = open_page(app, "conversations", signal="agent_loop")
    assert at.multiselect(key="conversations.signal").value == ["agent_loop"]
    table = at.dataframe[0].value
    assert table["thread_id"].tolist() == [LOOP]
    assert table["signals"].tolist() == ["agent loop, user frustration"] and table["outcome"].tolist() == ["Resolved"]
    at = open_page(app, "conversations", outcome="failed")
    assert sorted(at.dataframe[0].value["thread_id"]) == [
        "globex:api:sess-2104", "globex:api:sess-2108", "umbrella:eu:sess-7004"]
    at.multiselect(key="conversations.outcome").set_value(["abandoned"]).run()
    assert at.dataframe[0].value["thread_id"].tolist() == ["acme:web:sess-1009"]
    assert at.query_params["outcome"] == "abandoned"
    # a row opens its transcript at the signal chosen
    at = open_page(app, "conversations", signal="user_frustration", sort="thread_id", order="asc")
    assert at.dataframe[0].value["thread_id"].tolist() == [LOOP, "initech:helpdesk:sess-5007"]
    at.session_state[columns.table_key("thread_id", False)] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert "transcript?thread=acme%3Aweb%3Asess-1010&signal=user_frustration" in _go_to_script(at)


def test_the_transcript_opens_at_the_flagged_message_with_the_signal_marked(app):
    at = open_page(app, "transcript", thread=LOOP, signal="agent_loop")
    badges = _badges(at)
    assert "Outcome: Resolved" in badges
    assert badges.count("agent loop") == 3 and badges.count("user frustration") == 1  # one per flagged message
    assert "agent loop · from message 4" in badges
    # the flagged message is the one highlighted and scrolled to
    styles = [h.proto.body for h in at.get("html") if "<style>" in h.proto.body]
    assert any(".st-key-chat-msg-4 " in s for s in styles)
    assert any("assistant answered last (message 12)" in c.value for c in at.caption)  # numbered as the transcript
    assert at.query_params["signal"] == "agent_loop"
    # another signal of the same thread: its first message
    at = open_page(app, "transcript", thread=LOOP, signal="user_frustration")
    assert any(".st-key-chat-msg-11 " in h.proto.body for h in at.get("html") if "<style>" in h.proto.body)
    # a chosen message number wins over the signal, and the signal leaves the URL
    at.number_input(key="transcript.msg").set_value(2).run()
    assert any(".st-key-chat-msg-2 " in h.proto.body for h in at.get("html") if "<style>" in h.proto.body)
    assert "signal" not in at.query_params


def test_overview_tiles_list_what_went_wrong(app):
    at = open_page(app, "overview")
    assert metric(at, "Abandoned") == "1" and metric(at, "Failed") == "3"
    assert _deltas(at)["Failed"] == "8.1 %"
    tiles = _tile_links(at)
    assert tiles["failed"][0] == "List 3"
    assert "Why: signals, trend, tenants on Outcomes" in _links(at)
    at.multiselect(key="overview.tenant").set_value(["umbrella"]).run()
    assert metric(at, "Failed") == "1" and _deltas(at)["Failed"] == "25.0 %" and _tile_links(at)["failed"][1]["tenant"] == ["umbrella"]
    pages = {link.proto.page: parse_qs(link.proto.query_string) for link in at.main.get("page_link")}
    for page in ("patterns", "topics", "compare"):  # the pages that say why, under the same filters
        assert pages[page]["tenant"] == ["umbrella"]


def test_backlog_marks_and_filters_the_waits_over_the_service_level(app):
    at = open_page(app, "backlog")
    assert metric(at, "Over 4 h") == "1"
    assert at.dataframe[0].value["over_service_level"].tolist() == [True]
    at = open_page(app, "backlog", until="now", over="1")
    assert at.checkbox(key="backlog.over").value is True
    assert at.dataframe[0].value["thread_id"].tolist() == ["acme:web:sess-1008"]
    at.session_state["backlog.table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert at.query_params.get("signal") in ("slow_hitl", ["slow_hitl"])


FAILED_BY_RULE = "globex:api:sess-2104"  # failed: its last tool result (message 7) is an error; no signal fired


def test_a_conversation_failed_by_the_rule_alone_opens_at_the_message_that_decided_it(app, con):
    """From the failed tile's list, and from the unfiltered list, the row opens its transcript at the
    failed tool result, badged with the outcome, as Failure patterns opens it."""
    at = open_page(app, "conversations", outcome="failed", sort="thread_id", order="asc")
    rows = at.dataframe[0].value
    assert rows["signals"].tolist()[rows["thread_id"].tolist().index(FAILED_BY_RULE)] == ""
    at.session_state[columns.table_key("thread_id", False)] = {
        "selection": {"rows": [rows["thread_id"].tolist().index(FAILED_BY_RULE)], "columns": [], "cells": []}}
    at.run()
    assert "transcript?thread=globex%3Aapi%3Asess-2104&msg=7" in _go_to_script(at)
    at = open_page(app, "conversations", sort="thread_id", order="asc")
    at.session_state[columns.table_key("thread_id", False)] = {
        "selection": {"rows": [at.dataframe[0].value["thread_id"].tolist().index(FAILED_BY_RULE)], "columns": [],
                      "cells": []}}
    at.run()
    assert "transcript?thread=globex%3Aapi%3Asess-2104&msg=7" in _go_to_script(at)
    at = open_page(app, "transcript", thread=FAILED_BY_RULE, msg="7")
    assert any(".st-key-chat-msg-7 " in h.proto.body for h in at.get("html") if "<style>" in h.proto.body)
    assert _badges(at).count("Outcome: Failed") == 2  # the banner, and the failed tool result it rests on
    # the message Failure patterns opens it at, and the one `report outcomes` names
    failing = pattern_threads(con).set_index("thread_id").loc[FAILED_BY_RULE, "failing_ordinal"]
    assert analytics.outcomes(con).set_index("thread_id").loc[FAILED_BY_RULE, "outcome_ordinals"] == [failing] == [6]
