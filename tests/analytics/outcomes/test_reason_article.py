"""An outcome's reason reads as a sentence: a conversation that ends with a message of a role
without a rule of its own says which, after the article its role's first sound takes."""

from __future__ import annotations

import datetime as dt
import re

from langchain_core.messages import ChatMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

import analytics
import transcript_lens
from storegen import Clock, open_sqlite_saver, thread_config


def _closing_graph(saver, last):
    """A graph that answers a question with `last()`: a message neither user nor assistant."""
    graph = StateGraph(MessagesState)
    graph.add_node("close", lambda state: {"messages": [last()]})
    graph.add_edge(START, "close")
    graph.add_edge("close", END)
    return graph.compile(checkpointer=saver)


def test_a_reason_naming_the_last_messages_role_takes_the_article_of_its_sound(tmp_path):
    src = tmp_path / "ends.sqlite"
    saver = open_sqlite_saver(src)
    lasts = {"kiosk:lobby:moderated": lambda: ChatMessage(role="moderator", content="Closed by a moderator."),
             "kiosk:lobby:tool": lambda: ToolMessage("Open 9-17 today.", tool_call_id="call-1")}
    with Clock(dt.datetime(2025, 5, 1, 9, tzinfo=dt.timezone.utc)):
        for thread, last in lasts.items():
            _closing_graph(saver, last).invoke({"messages": [HumanMessage("Are you open today?")]}, thread_config(thread))
    saver.conn.close()
    db = tmp_path / "ends.duckdb"
    assert transcript_lens.load(src, db, workers=1).errors == 0
    con = analytics.connect(db)
    try:
        reasons = dict(zip(*analytics.outcomes(con)[["thread_id", "outcome_reason"]].T.values))
        roles = dict(con.execute("SELECT thread_id, role FROM messages WHERE ordinal = 1").fetchall())
    finally:
        con.close()
    assert sorted(roles.values()) == ["other", "tool"]
    for thread, reason in reasons.items():
        said = re.search(r"ends with (a|an) (\w+) message", reason)
        assert said is not None and said.group(2) == roles[thread], reason
        assert said.group(1) == ("an" if roles[thread][0] in "aeiou" else "a"), reason
