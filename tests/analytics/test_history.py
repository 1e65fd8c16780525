"""A conversation's whole history: reading any root checkpoint, the branch tree, the diff,
the edit log, subgraph runs and the human-in-the-loop backlog, on stores written by real graphs."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import RemoveMessage

import analytics
import transcript_lens
from analytics import TranscriptQuery
from analytics.align import Alignment, merged_order, pair
from analytics.history.backlog import backlog
from analytics.history.branches import branch_head, branches_of
from analytics.cli import main as cli_main
from analytics.history.diff import Side, diff, diff_counts
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.history.edits import edit_log
from analytics.subgraphs import subgraph_messages, subgraph_runs
from analytics.textdiff import inline
from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, open_sqlite_saver, say, thread_config
from tests import oracle

SPEAKERS = ("all", "user", "assistant")


def _roots(con, thread_id: str) -> list[str]:
    return [r[0] for r in con.sql(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND is_root ORDER BY checkpoint_id", params=[thread_id]
    ).fetchall()]  # fmt: skip


# --- reading any root checkpoint -------------------------------------------------------------------


def test_reading_the_latest_checkpoint_is_reading_the_transcript(con, sqlite_store):
    # Every thread, every speaker view: the same rows, columns and dtypes, whichever way it is read.
    for thread in sqlite_store.manifest:
        latest = con.sql("SELECT latest_checkpoint_id FROM threads WHERE thread_id = ?", params=[thread]).fetchall()[0][0]
        for speaker in SPEAKERS:
            pd.testing.assert_frame_equal(
                analytics.read(con, thread, speaker=speaker),
                analytics.read(con, TranscriptQuery(thread, speaker=speaker, checkpoint_id=latest)),
            )


@pytest.mark.parametrize("scenario", ["replay_branch", "edit", "remove_message", "tool_calls"])
def test_every_root_checkpoint_reads_as_langgraph_holds_it(con, sqlite_store, oracle_saver, scenario):
    thread = sqlite_store.thread(scenario)
    for checkpoint in _roots(con, thread):
        tup = oracle_saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint}})
        held = [
            (oracle.role_of(oracle._field(m, "type")), oracle.content_text(oracle._field(m, "content")), oracle._field(m, "id"))
            for m in (tup.checkpoint["channel_values"].get("messages") or [])
        ]
        got = analytics.read(con, thread, checkpoint_id=checkpoint)
        assert list(zip(got["role"], got["content"], got["message_id"])) == held, checkpoint
        assert got["ordinal"].tolist() == list(range(len(held)))


def test_a_checkpoint_read_keeps_the_query_contract(con, sqlite_store):
    thread = sqlite_store.thread("replay_branch")
    head = branch_head(con, thread, 3)
    whole = analytics.read(con, thread, checkpoint_id=head)
    users = analytics.read(con, thread, checkpoint_id=head, speaker="user")
    assert users["content"].tolist() == whole.loc[whole["role"] == "user", "content"].tolist()
    assert users["index"].tolist() == list(range(len(users)))
    last = analytics.read(con, thread, checkpoint_id=head, speaker="assistant", index=-1)
    assert last["content"].item() == whole.loc[whole["role"] == "assistant", "content"].iloc[-1]
    # A message's ts is its id's first sighting on any branch (contract §3.5), as in the transcript.
    transcript = analytics.read(con, thread).set_index("message_id")["ts"]
    for row in whole.itertuples():
        if row.message_id in transcript.index:
            assert row.ts == transcript[row.message_id]
    with pytest.raises(NotFound, match="no root checkpoint"):
        analytics.read(con, thread, checkpoint_id="1eff0000-0000-6000-8000-000000000000")
    with pytest.raises(BadRequest):
        TranscriptQuery(thread, checkpoint_id="")


# --- the branch tree -----------------------------------------------------------------------------------


def test_branches_of_a_replayed_and_rebranched_thread(con, sqlite_store):
    thread = sqlite_store.thread("replay_branch")
    found = analytics.branches(con, thread)
    info = con.sql(
        "SELECT branch_count, latest_checkpoint_id FROM threads WHERE thread_id = ?", params=[thread]
    ).fetchall()[0]
    assert len(found) == info[0] == 3
    assert found["status"].tolist() == ["current", "abandoned", "abandoned"]
    assert found.loc[0, "head_checkpoint_id"] == info[1] and pd.isna(found.loc[0, "fork_checkpoint_id"])
    tree = analytics.checkpoint_tree(con, thread)
    parent_of = dict(zip(tree["checkpoint_id"], tree["parent_checkpoint_id"]))
    branch_of = dict(zip(tree["checkpoint_id"], tree["branch"]))
    for b in found[found["status"] == "abandoned"].itertuples():
        # The fork point is an ancestor of the head, on the branch it forks from, and has several children.
        node, chain = b.head_checkpoint_id, []
        while isinstance(node, str):
            chain.append(node)
            node = parent_of.get(node)
        assert b.fork_checkpoint_id in chain and branch_of[b.fork_checkpoint_id] == b.parent_branch
        assert tree.set_index("checkpoint_id").at[b.fork_checkpoint_id, "is_fork_point"]
        assert b.checkpoints == chain.index(b.fork_checkpoint_id)
        assert b.messages == len(analytics.read(con, thread, checkpoint_id=b.head_checkpoint_id))
    # Every root checkpoint is on exactly one branch; the current branch is the loader's current branch.
    assert len(tree) == len(_roots(con, thread))
    current = {r[0] for r in con.sql(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND on_current_branch", params=[thread]).fetchall()}
    assert set(tree.loc[tree["branch"] == 1, "checkpoint_id"]) == current
    # The replay's first own checkpoint is a `fork` one; the Osaka question branched with new input.
    assert "fork" in set(tree.loc[tree["branch"] == 2, "source"])
    osaka = analytics.read(con, thread)
    assert "Osaka" in " ".join(osaka["content"])


def test_a_linear_thread_has_one_branch_and_the_report_lists_only_forked_threads(con, sqlite_store):
    linear = analytics.branches(con, sqlite_store.thread("simple_chat"))
    assert linear[["branch", "status", "checkpoints"]].values.tolist() == [[1, "current", len(_roots(con, sqlite_store.thread("simple_chat")))]]
    every = branches_of(con)
    assert set(every["thread_id"]) == {sqlite_store.thread("replay_branch")}
    with pytest.raises(NotFound, match="no branch 7"):
        branch_head(con, sqlite_store.thread("simple_chat"), 7)


# --- the diff --------------------------------------------------------------------------------------------


def test_diff_of_an_edit_shows_the_edit_inline(con, sqlite_store):
    thread = sqlite_store.thread("edit")
    event = con.sql(
        "SELECT checkpoint_id, parent_checkpoint_id FROM message_events WHERE thread_id = ? AND event = 'edited'",
        params=[thread],
    ).fetchall()[0]
    frame = diff(con, TranscriptQuery(thread, checkpoint_id=event[1]), TranscriptQuery(thread, checkpoint_id=event[0]))
    assert diff_counts(frame) == {"same": 3, "edited": 1, "added": 0, "removed": 0, "moved": 0}
    edited = frame[frame["status"] == "edited"].iloc[0]
    assert edited["matched_by"] == "message id" and edited["changed"] == "content"
    assert edited["left_message_id"] == edited["right_message_id"]
    assert "[-Tuesday-]{+Wednesday+}" in edited["text_diff"]


def test_diff_of_two_branches(con, sqlite_store):
    thread = sqlite_store.thread("replay_branch")
    frame = diff(con, TranscriptQuery(thread, checkpoint_id=branch_head(con, thread, 3)), TranscriptQuery(
        thread, checkpoint_id=branch_head(con, thread, 2)))
    # The replay regenerated the last answer: same question, another answer (too unlike to be an edit of
    # it), in the same place: the old one removed, the new one added right after.
    assert frame["status"].tolist() == ["same"] * 5 + ["removed", "added"]
    old, new = frame.iloc[-2], frame.iloc[-1]
    assert old["left_role"] == new["right_role"] == "assistant" and old["left_ordinal"] == new["right_ordinal"] == 5
    assert "¥25,000" in old["left_content"] and "¥30,000" in new["right_content"]
    # Against the current branch (another question after the first answer): removed, then added.
    frame = diff(con, TranscriptQuery(thread, checkpoint_id=branch_head(con, thread, 2)), thread)
    assert frame["status"].tolist()[:2] == ["same", "same"]
    assert set(frame["status"].tolist()[2:]) == {"removed", "added"}
    assert frame["left_ordinal"].dropna().tolist() == list(range(6)) and frame["right_ordinal"].dropna().tolist() == list(range(4))


def test_diff_of_two_threads_pairs_by_text(con, sqlite_store):
    a, b = sqlite_store.threads_of("simple_chat")[:2]
    frame = diff(con, a, b)
    assert set(frame["status"]) == {"same"} and set(frame["matched_by"]) == {"speaker and text"}
    frame = diff(con, a, sqlite_store.thread("edit"))
    assert not (frame["status"] == "same").any() and len(frame) == len(analytics.read(con, a)) + len(analytics.read(con, sqlite_store.thread("edit")))


_ITEMS = st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.sampled_from(["a", "b", "c", "d e", "d f"])), max_size=8)


@settings(max_examples=150, deadline=None)
@given(left=_ITEMS, right=_ITEMS)
# Two speakers' similar-text pairs crossed, so a left entry was shown twice or out of order.
@example(left=[("assistant", "d f"), ("user", "a"), ("user", "d f")], right=[("user", "d e"), ("assistant", "d e")])
@example(left=[("user", "d e"), ("assistant", "d e")], right=[("assistant", "d f"), ("user", "d f")])
def test_merged_order_shows_every_message_once_in_each_sides_order(left, right):
    lm = [Side(None, s, c) for s, c in left]
    rm = [Side(None, s, c) for s, c in right]
    alignment = pair(lm, rm)
    merged = merged_order(len(lm), len(rm), alignment)
    assert sorted(i for i, _ in merged if i is not None) == list(range(len(lm)))
    assert [j for _, j in merged if j is not None] == list(range(len(rm)))
    kept = [i for i, j in merged if i is not None and (j is None or j not in alignment.moved)]
    assert kept == sorted(kept)
    for j, i in alignment.pairs.items():
        assert (i, j) in merged


def test_merged_order_puts_left_only_rows_before_right_only_ones():
    assert merged_order(2, 2, Alignment({}, set(), {})) == [(0, None), (1, None), (None, 0), (None, 1)]


def test_inline_text_diff():
    assert inline("Call 4401 now.", "Call 4410 now.") == "Call [-4401-]{+4410+} now."
    assert inline("same", "same") == "same"


def test_diff_cli(loaded, sqlite_store, tmp_path, capsys):
    thread = sqlite_store.thread("replay_branch")
    assert cli_main(["diff", "--db", str(loaded), "--thread", thread, "--branch", "3", "--with-branch", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2] == "# 5 same, 1 added, 1 removed"
    assert [line[0] for line in out.splitlines()[3:]] == [" "] * 5 + ["-", "+"]
    target = tmp_path / "d.csv"
    assert cli_main(["diff", "--db", str(loaded), "--thread", thread, "--branch", "2", "--format", "csv",
                     "--out", str(target)]) == 0  # fmt: skip
    csv = pd.read_csv(target)
    assert tuple(csv.columns) == tuple(analytics.diff.__globals__["DIFF_COLUMNS"])
    assert cli_main(["diff", "--db", str(loaded), "--thread", thread]) == 2
    assert "same transcript" in capsys.readouterr().err
    assert cli_main(["diff", "--db", str(loaded), "--thread", thread, "--branch", "x", "--with-branch", "1"]) == 2
    assert cli_main(["transcript", "--db", str(loaded), "--thread", thread, "--branch", "3", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert "¥25,000" in rows[-1]["content"]


# --- the edit log ---------------------------------------------------------------------------------------


def test_edit_log_of_an_operator_edit(con, sqlite_store):
    thread = sqlite_store.thread("edit")
    log = edit_log(con, thread)
    assert log[["event", "source", "role", "ordinal"]].values.tolist() == [["edited", "update", "assistant", 1]]
    row = log.iloc[0]
    assert row["old_content"].startswith("The quarterly review is on Tuesday")
    assert row["new_content"].startswith("Correction: the quarterly review is on Wednesday")
    assert analytics.read(con, thread).loc[1, "message_id"] == row["message_id"]


def test_edit_log_places_removals_before_the_message_that_followed_them(con, sqlite_store):
    thread = sqlite_store.thread("remove_message")
    log = edit_log(con, thread)
    assert set(log["event"]) == {"removed"} and len(log) == 4 and log["ordinal"].isna().all()
    transcript = analytics.read(con, thread)
    for row in log.itertuples():
        # The removed message stood before the message `before_ordinal` names, in the list it left.
        parent = analytics.read(con, thread, checkpoint_id=row.parent_checkpoint_id)
        after = parent.iloc[row.position + 1 :]
        survivor = next(m for m in after["message_id"] if m in set(transcript["message_id"]))
        assert transcript.loc[row.before_ordinal, "message_id"] == survivor


@pytest.fixture(scope="module")
def readd_db(tmp_path_factory):
    """A thread where an operator removed an answer and put it back (a re-add), then kept talking."""
    folder = tmp_path_factory.mktemp("readd")
    saver = open_sqlite_saver(folder / "r.sqlite")
    try:
        graph = build_chat_graph(ScriptedChatModel(replies=[Reply("First answer."), Reply("Second answer.")]), saver)
        cfg = thread_config("ops:readd:s1")
        with Clock(dt.datetime(2025, 6, 1, 9, tzinfo=dt.UTC)) as clock:
            say(graph, cfg, "First question", clock, think=0)
            answer = graph.get_state(cfg).values["messages"][1]
            graph.update_state(cfg, {"messages": [RemoveMessage(id=answer.id)]}, as_node="chat")
            clock.advance(60)
            graph.update_state(cfg, {"messages": [answer]}, as_node="chat")
            say(graph, cfg, "Second question", clock)
    finally:
        saver.conn.close()
    db = folder / "r.duckdb"
    transcript_lens.load(folder / "r.sqlite", db)
    return db


def test_edit_log_finds_a_re_add(readd_db):
    log = edit_log(readd_db, "ops:readd:s1")
    assert log["event"].tolist() == ["removed", "re_added"]
    removed, readded = log.iloc[0], log.iloc[1]
    assert removed["message_id"] == readded["message_id"] and readded["new_content"] == "First answer."
    assert readded["ordinal"] == removed["ordinal"] == 1  # back in the transcript, where both markers point
    assert readded["ts"] > removed["ts"]
    # Read at the checkpoint between the two, the transcript had no answer yet: the re-add is not in its log.
    between = edit_log(readd_db, "ops:readd:s1", checkpoint_id=removed["checkpoint_id"])
    assert between["event"].tolist() == ["removed"] and pd.isna(between.loc[0, "before_ordinal"])


def test_edits_report_and_all_branches(loaded, sqlite_store, tmp_path):
    out = tmp_path / "edits.csv"
    assert cli_main(["report", "edits", "--db", str(loaded), "--out", str(out)]) == 0
    csv = pd.read_csv(out)
    assert set(csv["thread_id"]) == {sqlite_store.thread("edit"), sqlite_store.thread("remove_message")}
    assert tuple(csv.columns) == tuple(analytics.history.edits.EDIT_LOG_COLUMNS)
    assert csv["ts"].str.endswith("Z").all()


# --- subgraph runs ---------------------------------------------------------------------------------------


def test_subgraph_runs_hang_under_the_message_that_started_them(con, sqlite_store):
    thread = sqlite_store.thread("subgraph")
    runs = subgraph_runs(con, thread)
    assert runs["node"].tolist() == ["research", "fetch", "research", "fetch"]
    assert runs["depth"].tolist() == [1, 2, 1, 2]
    assert runs["parent_ns"].tolist()[1] == runs["checkpoint_ns"].tolist()[0]
    transcript = analytics.read(con, thread)
    for run in runs.itertuples():
        started = analytics.read(con, thread, checkpoint_id=run.started_from)
        # The trigger is the last message of the list the run started from, placed in the transcript.
        assert run.trigger_message_id == started["message_id"].iloc[-1]
        assert transcript.loc[run.anchor_ordinal, "message_id"] == run.trigger_message_id
        # A MessagesState subgraph hands its messages back: they are in the transcript, after the trigger.
        said = subgraph_messages(con, thread, run.checkpoint_ns)
        assert run.messages == len(said) == run.returned
        assert (said["transcript_ordinal"] > run.anchor_ordinal).all()


def test_a_sub_agent_run_inside_a_tool_names_its_tool_call(con, sqlite_store):
    thread = sqlite_store.thread("tool_subgraph")
    run = subgraph_runs(con, thread).iloc[0]
    call = json.loads(analytics.read(con, thread).loc[run.anchor_ordinal, "tool_calls"])[0]
    assert (run.tool_call_id, run.tool_call_name, run.tool_call_match) == (call["id"], "ask_researcher", "arguments")
    assert run.first_message == call["args"]["question"] and run.returned == 0
    said = subgraph_messages(con, thread)
    assert said["transcript_ordinal"].isna().all()


def test_subgraphs_report(loaded, sqlite_store, tmp_path):
    out = tmp_path / "runs.csv"
    assert cli_main(["report", "subgraphs", "--db", str(loaded), "--out", str(out)]) == 0
    csv = pd.read_csv(out)
    assert csv["thread_id"].value_counts().to_dict() == {sqlite_store.thread("subgraph"): 4, sqlite_store.thread("tool_subgraph"): 1}


# --- the backlog ---------------------------------------------------------------------------------------------


def test_backlog_lists_threads_waiting_on_an_interrupt(con, sqlite_store):
    waiting = backlog(con)
    assert waiting["thread_id"].tolist() == [sqlite_store.thread("interrupt_pending")]
    row = waiting.iloc[0]
    newest, since = con.sql(
        "SELECT (SELECT max(last_ts) FROM threads), c.ts FROM threads t JOIN checkpoints c "
        "ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest_checkpoint_id WHERE t.thread_id = ?",
        params=[row.thread_id],
    ).fetchall()[0]
    assert row.waiting_since == pd.Timestamp(since) and row.waited_s == (newest - since).total_seconds()
    assert "action=issue_refund" in row.request and "args.amount=89.0" in row.request
    assert json.loads(row.interrupt_value)[0]["args"]["order_id"] == "B-2211"
    assert row.last_message_role == "assistant"
    now = backlog(con, until="now").iloc[0]
    assert now.waited_s > row.waited_s
    assert backlog(con, Filters(tenants=("acme",))).empty
    with pytest.raises(BadRequest):
        backlog(con, until="tomorrow")


def test_backlog_report(loaded, sqlite_store, tmp_path):
    out = tmp_path / "waiting.csv"
    assert cli_main(["report", "backlog", "--db", str(loaded), "--waited-until", "now", "--out", str(out)]) == 0
    csv = pd.read_csv(out)
    assert csv["thread_id"].tolist() == [sqlite_store.thread("interrupt_pending")]
    assert tuple(csv.columns) == tuple(analytics.backlog.__globals__["BACKLOG_COLUMNS"])
