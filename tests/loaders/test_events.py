"""`message_events`: a list compared with its parent's, message by message and copy by copy.

Found by an independent check on a store no test had seen: an `operator.add`
messages channel (no ids) whose node answers the same "OK" twice grew from 3 to 4
messages with no event at all (the repeated payload matched its first copy).
"""

from __future__ import annotations

import operator
import sqlite3
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import add_messages

from tests.loaders.util import load_db, one_node_app, rows

_EVENTS = """
SELECT c.step, e.event, e.position FROM message_events e
JOIN checkpoints c USING (thread_id, checkpoint_id) WHERE thread_id = ? ORDER BY c.step, e.position, e.event
"""


class PlainList(TypedDict):
    messages: Annotated[list, operator.add]  # no add_messages: messages keep no ids


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def _store(path, state, node, inputs, thread="acme:web:s1"):
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = one_node_app(conn, state, node)
        config = {"configurable": {"thread_id": thread}}
        for value in inputs:
            app.invoke(value, config)
        return app, config, conn
    except BaseException:
        conn.close()
        raise


def test_a_repeated_message_without_id_is_added_each_time(tmp_path):
    store = tmp_path / "plain.sqlite"
    _, _, conn = _store(store, PlainList, lambda s: {"messages": [AIMessage(content="OK")]},
                        [{"messages": [HumanMessage(content=q)]} for q in ("q1", "q2")])
    conn.close()
    db = tmp_path / "plain.duckdb"
    load_db(store, db, workers=1)
    counts = [r["message_count"] for r in rows(db, "SELECT message_count FROM checkpoints WHERE is_root ORDER BY step")]
    added = [r for r in rows(db, _EVENTS, ["acme:web:s1"]) if r["event"] == "added"]
    # Every message a list gained is an `added` event: as many as the final list holds.
    assert counts[-1] == 4 and len(added) == 4
    assert [r["position"] for r in added] == [0, 1, 2, 3]


class Overwritten(TypedDict):
    messages: list  # no reducer: each step's list replaces the last


def test_dropping_one_copy_of_a_repeated_message_is_one_removal(tmp_path):
    store = tmp_path / "dup.sqlite"
    ok = AIMessage(content="OK")
    _, _, conn = _store(store, Overwritten, lambda s: {}, [
        {"messages": [HumanMessage(content="q"), ok, ok]},
        {"messages": [HumanMessage(content="q"), ok]},  # the second copy dropped
    ])
    conn.close()
    db = tmp_path / "dup.duckdb"
    load_db(store, db, workers=1)
    events = [(e["event"], e["position"]) for e in rows(db, _EVENTS, ["acme:web:s1"])]
    assert events.count(("added", 2)) == 1 and [e for e in events if e[0] == "removed"] == [("removed", 2)]


def test_a_removed_message_with_an_id_is_one_removal(tmp_path):
    store = tmp_path / "chat.sqlite"
    app, config, conn = _store(store, Chat, lambda s: {"messages": [AIMessage(content="OK")]},
                               [{"messages": [HumanMessage(content="q1", id="h1")]}])
    try:
        first_ai = app.get_state(config).values["messages"][1].id
        app.update_state(config, {"messages": [RemoveMessage(id=first_ai)]})
    finally:
        conn.close()
    db = tmp_path / "chat.duckdb"
    load_db(store, db, workers=1)
    events = rows(db, _EVENTS, ["acme:web:s1"])
    assert [e["event"] for e in events].count("removed") == 1
    assert rows(db, "SELECT removed_message_count FROM threads") == [{"removed_message_count": 1}]


def _keys_reversed(value):
    """`value` with every mapping's keys in reverse order (what another serializer or
    langchain-core release may write for the same message)."""
    if isinstance(value, dict):
        return {k: _keys_reversed(v) for k, v in reversed(value.items())}
    if isinstance(value, list):
        return [_keys_reversed(v) for v in value]
    return value


def test_the_same_messages_in_other_bytes_are_no_edit_and_no_removal(tmp_path):
    """Every message of the latest checkpoints re-written with its fields (and its tool
    calls' keys) in another order: the same values, other bytes. Found on stores begun by
    an old release and continued by a newer one: unchanged messages without ids counted as
    removed and re-added, and a tool call as edited."""
    from tests.loaders.hostile_util import RawExt, StoreEditor, pack

    def reply(s):
        n = len(s["messages"])
        return {"messages": [AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": n, "b": 1}, "id": f"c{n}"}],
                                       response_metadata={"model_name": "m", "finish_reason": "tool_calls"})]}

    store = tmp_path / "s.sqlite"
    for thread, state in (("acme:web:plain", PlainList), ("acme:web:chat", Chat)):
        _, _, conn = _store(store, state, reply, [{"messages": [HumanMessage(content=q)]} for q in ("q1", "q2", "q3")], thread)
        conn.close()
    before = tmp_path / "before.duckdb"
    load_db(store, before, workers=1)

    ed = StoreEditor(store)
    for thread in ("acme:web:plain", "acme:web:chat"):
        for cid in ed.root_ids(thread)[-3:]:
            def rewrite(cp):
                msgs = cp["channel_values"]["messages"]
                for i, m in enumerate(msgs):
                    payload = m.fields()
                    payload[2] = _keys_reversed(payload[2])
                    msgs[i] = RawExt(m.code, pack(payload))
            ed.edit(thread, cid, rewrite)
    ed.close()
    after = tmp_path / "after.duckdb"
    load_db(store, after, workers=1)

    events = "SELECT thread_id, checkpoint_id, event, position FROM message_events ORDER BY ALL"
    counts = "SELECT thread_id, edited_message_count, removed_message_count, message_count FROM threads ORDER BY ALL"
    versions = "SELECT thread_id, count(*) AS n FROM message_versions GROUP BY ALL ORDER BY ALL"
    assert rows(after, events) == rows(before, events)
    assert rows(after, counts) == rows(before, counts)
    assert rows(after, versions) == rows(before, versions)
    assert {r["event"] for r in rows(after, events)} == {"added"}
