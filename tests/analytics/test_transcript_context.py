"""`analytics.in_context` on a store written by real graphs: each marker against what LangGraph's
own saver says happened along the current branch (removed ids, edited texts, interrupts)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

import analytics
from analytics.errors import NotFound
from analytics.transcript.context import MARKER_COLUMNS, place_after
from tests import oracle


def _chain(saver, thread_id: str) -> list:
    """The current branch of a thread, first checkpoint first, as the saver returns its tuples."""
    roots = oracle._roots(oracle.tuples_by_thread(saver)[thread_id])
    by_id = {t.config["configurable"]["checkpoint_id"]: t for t in roots}
    node, chain = oracle._latest(roots), []
    while node is not None:
        chain.append(node)
        parent = node.parent_config["configurable"]["checkpoint_id"] if node.parent_config else None
        node = by_id.get(parent)
    return chain[::-1]


def _ids(tup) -> list:
    return [oracle._field(m, "id") for m in oracle._messages(tup) or []]


def expected_removals(saver, thread_id: str) -> list[tuple[str, int, str]]:
    """(message id, ordinal in the latest list it follows or -1, its text) for every message a
    checkpoint of the current branch dropped from its parent's list."""
    chain = _chain(saver, thread_id)
    latest = _ids(chain[-1])
    out = []
    for parent, child in zip(chain, chain[1:]):
        before, after = oracle._messages(parent) or [], set(_ids(child))
        for pos, m in enumerate(before):
            mid = oracle._field(m, "id")
            if mid in after:
                continue
            earlier = [oracle._field(p, "id") for p in before[:pos] if oracle._field(p, "id") in latest]
            anchor = latest.index(earlier[-1]) if earlier else -1
            out.append((mid, anchor, oracle.content_text(oracle._field(m, "content"))))
    return out


def expected_edits(saver, thread_id: str) -> list[tuple[str, str, str]]:
    """(message id, text before, text after) for every change of a message's text along the branch."""
    chain = _chain(saver, thread_id)
    out = []
    for parent, child in zip(chain, chain[1:]):
        old = {oracle._field(m, "id"): oracle.content_text(oracle._field(m, "content")) for m in oracle._messages(parent) or []}
        for m in oracle._messages(child) or []:
            mid, text = oracle._field(m, "id"), oracle.content_text(oracle._field(m, "content"))
            if mid in old and old[mid] != text:
                out.append((mid, old[mid], text))
    return out


def test_removed_messages_are_placed_where_they_were(con, sqlite_store, oracle_saver):
    thread = sqlite_store.thread("remove_message")
    ctx = analytics.in_context(con, thread)
    removed = ctx.markers[ctx.markers["kind"] == "removed"]
    expected = expected_removals(oracle_saver, thread)
    assert len(expected) >= 2  # the trim scenario drops messages on several turns
    got = sorted(zip(removed["message_id"], removed["after_ordinal"], removed["content"]))
    assert got == sorted(expected)
    assert list(ctx.markers.columns) == list(MARKER_COLUMNS)


def test_an_edit_is_marked_with_the_text_before_it(con, sqlite_store, oracle_saver):
    thread = sqlite_store.thread("edit")
    ctx = analytics.in_context(con, thread)
    edits = ctx.markers[ctx.markers["kind"] == "edited"]
    expected = expected_edits(oracle_saver, thread)
    assert len(expected) == len(edits) == 1
    mid, before, after = expected[0]
    row = edits.iloc[0]
    assert row["message_id"] == mid and row["content"] == before
    edited = ctx.messages.set_index("ordinal").loc[int(row["ordinal"])]
    assert edited["message_id"] == mid and edited["content"] == after
    # Placed in time: after the last message stamped before the edit (the operator came 12 min later).
    stamped = ctx.messages[ctx.messages["ts"] <= row["ts"]]
    assert row["after_ordinal"] == stamped["ordinal"].max() > row["ordinal"]


def test_a_pending_interrupt_closes_the_conversation(con, sqlite_store):
    thread = sqlite_store.thread("interrupt_pending")
    ctx = analytics.in_context(con, thread)
    pending = ctx.markers[ctx.markers["kind"] == "pending"]
    assert len(pending) == 1
    assert pending["after_ordinal"].item() == ctx.messages["ordinal"].max()
    assert "Approve this action?" in pending["detail"].item()
    assert pd.isna(pending["until_ts"].item())


def test_a_resumed_interrupt_says_how_long_it_waited(con, sqlite_store):
    thread = sqlite_store.thread("interrupt_resumed")
    ctx = analytics.in_context(con, thread)
    assert "pending" not in set(ctx.markers["kind"])
    paused = ctx.markers[ctx.markers["kind"] == "interrupt"]
    assert len(paused) == 1
    waited = paused["gap_s"].item()
    assert dt.timedelta(minutes=25) <= dt.timedelta(seconds=waited) < dt.timedelta(minutes=26)  # the scenario's 25 minutes
    # It follows the assistant message whose tool call needed the approval.
    asked = ctx.messages.set_index("ordinal").loc[int(paused["after_ordinal"].item())]
    assert asked["role"] == "assistant" and "issue_refund" in asked["tool_calls"]


def test_a_restart_in_a_second_process_is_marked_between_the_two_runs(con, sqlite_store):
    thread = sqlite_store.thread("second_process")
    ctx = analytics.in_context(con, thread)
    restart = ctx.markers[ctx.markers["kind"] == "restart"]
    assert len(restart) == 1
    after = int(restart["after_ordinal"].item())
    m = ctx.messages.set_index("ordinal")
    assert m.loc[after + 1, "content"].startswith("I'm back")  # the first message the second process wrote
    assert "writer: worker-1 → worker-2" in restart["detail"].item()
    assert restart["gap_s"].item() > 3 * 3600 - 60
    # The 3 h pause is the same place: the pause row is there, the page folds it into the restart.
    pause = ctx.markers[ctx.markers["kind"] == "pause"]
    assert pause["after_ordinal"].tolist() == [after]


def test_reply_latency_is_the_metrics_pairing(con, sqlite_store):
    thread = sqlite_store.thread("tool_calls")
    ctx = analytics.in_context(con, thread)
    pairs = analytics.latency_distribution(con, analytics.Filters(thread_ids=(thread,)))
    shown = ctx.messages.dropna(subset=["latency_s"])
    assert sorted(shown["ordinal"]) == sorted(pairs["assistant_ordinal"].unique())
    for row in pairs.itertuples():
        assert shown.set_index("ordinal").loc[row.assistant_ordinal, "latency_s"] == pytest.approx(row.latency_s)
    assistants = ctx.messages[ctx.messages["role"] == "assistant"]
    assert assistants["since_question_s"].notna().all() and (assistants["since_question_s"] >= 0).all()


def test_a_plain_conversation_has_no_markers_and_an_unknown_thread_is_not_found(con, sqlite_store):
    ctx = analytics.in_context(con, sqlite_store.thread("simple_chat"))
    assert ctx.markers.empty and list(ctx.markers.columns) == list(MARKER_COLUMNS)
    assert len(ctx.messages) == 6
    with pytest.raises(NotFound):
        analytics.in_context(con, "no:such:thread")


def test_place_after_skips_messages_without_time():
    messages = pd.DataFrame({"ordinal": [0, 1, 2, 3],
                             "ts": pd.to_datetime(["2025-01-01 10:00", None, "2025-01-01 11:00", None], utc=True)})
    moments = pd.Series(pd.to_datetime(["2025-01-01 09:59", "2025-01-01 10:00", "2025-01-01 10:59", None], utc=True))
    assert place_after(messages, moments).tolist() == [-1, 0, 0, -1]
