"""The History section's page model (ui/models/history.py) on the storegen store: markers where they belong."""

from __future__ import annotations

import json

import analytics
from analytics.history.branches import branch_head
from ui.models import history


def _kinds(view) -> list[tuple[int, str]]:
    return [(m.after, m.kind) for m in view.markers]


def test_an_abandoned_branch_read_marks_where_it_left(con, sqlite_store):
    thread = sqlite_store.thread("replay_branch")
    current = history.thread_history(con, thread)
    assert current.branch == 1 and set(current.labels) == {1, 2, 3}
    assert current.summary == "3 branches (2 abandoned)"
    assert [k for _, k in _kinds(current)] == ["fork"]  # branch 2 forks off the current branch
    second = history.thread_history(con, thread, branch=2)
    assert second.head_checkpoint_id == branch_head(con, thread, 2)
    kinds = _kinds(second)
    # It left branch 1 after the first answer (2 shared messages), and branch 3 forks off it.
    assert kinds[0] == (1, "left") and ("fork" in {k for _, k in kinds})
    assert len(second.rows) == 6
    assert history.thread_history(con, thread, branch=42).branch == 1


def test_edits_and_removals_sit_where_the_transcript_shows_them(con, sqlite_store):
    edited = history.thread_history(con, sqlite_store.thread("edit"))
    (marker,) = [m for m in edited.markers if m.kind == "edited"]
    assert marker.after == 1 and "update_state" in marker.text and marker.diff and "Wednesday" in marker.new
    removed = history.thread_history(con, sqlite_store.thread("remove_message"))
    marks = [m for m in removed.markers if m.kind == "removed"]
    log = analytics.edit_log(con, sqlite_store.thread("remove_message"))
    assert len(marks) == len(log) == 4
    assert sorted(m.after for m in marks) == sorted(int(b) - 1 for b in log["before_ordinal"])
    assert edited.default_checkpoint == analytics.edit_log(con, sqlite_store.thread("edit"))["parent_checkpoint_id"].item()


def test_a_sub_agent_run_hangs_under_the_tool_call_and_nothing_of_it_is_said_in_the_transcript(con, sqlite_store):
    thread = sqlite_store.thread("tool_subgraph")
    view = history.thread_history(con, thread)
    (run,) = [m for m in view.markers if m.kind == "subgraph"]
    call = json.loads(view.rows.loc[run.after, "tool_calls"])[0]
    assert f"by tool call ask_researcher ({call['id']})" in run.text
    assert not [m for m in view.markers if m.kind == "from_subgraph"]
    nested = history.thread_history(con, sqlite_store.thread("subgraph"))
    said = [m for m in nested.markers if m.kind == "from_subgraph"]
    assert len(said) == 6 and sum("research › fetch" in m.text for m in said) == 4


def test_compare_choices_and_their_problems(con, sqlite_store):
    thread = sqlite_store.thread("edit")
    log = analytics.edit_log(con, thread)
    view = history.compare_view(con, thread, 1, f"c:{log['parent_checkpoint_id'].item()}")
    assert view.problem is None and view.counts["edited"] == 1 and view.left.startswith("checkpoint ")
    assert history.compare_view(con, thread, 1, "b7").problem.kind == "bad_request"
    assert history.compare_view(con, thread, 1, "t:no:such:thread").problem.kind == "not_found"
    other = history.compare_view(con, thread, 1, f"t:{sqlite_store.thread('simple_chat')}")
    assert other.counts["same"] == 0 and len(other.table) == len(other.frame)


def test_the_one_line_summary_reads_the_threads_row_only(con, sqlite_store):
    assert history.history_summary(con, sqlite_store.thread("simple_chat")) == "1 branch"
    assert history.history_summary(con, sqlite_store.thread("subgraph")) == "1 branch · 4 subgraph runs"
    assert history.history_summary(con, "no:such:thread") is None
