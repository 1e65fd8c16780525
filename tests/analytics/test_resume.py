"""Restart-resume QA (contract §5) on real stores written by real graphs through real savers.

Two stores: the session's `sqlite_store` (every storegen scenario, including
`second_process`: two turns, three idle hours, two more turns written by a
second OS process) and `qa_store`, written here for what that one lacks:

- `LONG`: 30 turns with a two-hour pause before turn 27, so the window at
  the resume point (52 user/assistant messages) is cut by the cap of 50;
- `HANDOVER`: the `second_process` scenario after only three idle minutes —
  a process change without an idle gap;
- `SKEW`: a simple chat continued by a second OS process whose clock is an
  hour behind: its checkpoint ids sort below their parent's, so the latest
  checkpoint (greatest id) is not a leaf.

Expected windows are checked against `tests.oracle.expected_window`, which
reads the store through the saver's public API only.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import analytics
import transcript_lens
from analytics import observed, resume
from analytics.cli import main as cli_main
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, deterministic, open_sqlite_saver, say
from storegen.scenarios import scenario_second_process, scenario_simple_chat, thread_config
from tests import oracle
from tests.conftest import ROOT, copy_store_files

UTC = dt.UTC
QA_START = dt.datetime(2025, 4, 1, 9, 0, tzinfo=UTC)
LONG = "qa:long:s1"
HANDOVER = "qa:handover:s1"
SKEW = "qa:skew:s1"
LONG_TURNS = 30
LONG_PAUSE_BEFORE_TURN = 26  # 0-based: turns 0..25 before the pause = 52 user/assistant messages


# --- stores and databases -----------------------------------------------------------------------


def _long_thread(saver, thread_id: str, clock: Clock) -> None:
    model = ScriptedChatModel(
        replies=[Reply(f"Answer {i}: step {i} of the migration plan.") for i in range(LONG_TURNS)]
    )
    graph = build_chat_graph(model, saver)
    cfg = thread_config(thread_id)
    for i in range(LONG_TURNS):
        if i == LONG_PAUSE_BEFORE_TURN:
            clock.advance(hours=2)
        say(graph, cfg, f"Question {i}: what is step {i}?", clock, think=20)


def _second_process_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture(scope="module")
def qa_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("qa_store") / "qa.sqlite"
    saver = open_sqlite_saver(path)
    try:
        with deterministic("qa:long"), Clock(QA_START) as clock:
            _long_thread(saver, LONG, clock)
        with deterministic("qa:handover"), Clock(QA_START + dt.timedelta(hours=3)) as clock:
            scenario_second_process(saver, HANDOVER, clock, location=str(path), idle_hours=0.05)
        with deterministic("qa:skew"), Clock(QA_START + dt.timedelta(hours=5)) as clock:
            scenario_simple_chat(saver, SKEW, clock)
            behind = clock.now() - dt.timedelta(hours=1)
    finally:
        saver.conn.close()
    # A second OS process whose wall clock is an hour behind the first writer's.
    subprocess.run(
        [sys.executable, "-m", "storegen.second_process", "--store", str(path), "--thread", SKEW,
         "--at", behind.isoformat(), "--seed", "skew"],
        check=True, capture_output=True, text=True, env=_second_process_env(),
    )  # fmt: skip
    return path


def _load(store: Path, tmp: Path) -> Path:
    # The loader only reads, but a copy keeps the session's store pristine for everyone else.
    copy = copy_store_files(store, tmp)
    db = tmp / "lens.duckdb"
    transcript_lens.load(str(copy), db)
    return db


@pytest.fixture(scope="module")
def lens(loaded) -> Path:
    """`sqlite_store` loaded (the module's copy of the run's one load: tests/analytics/conftest.py)."""
    return loaded


@pytest.fixture(scope="module")
def qa_lens(qa_store, tmp_path_factory) -> Path:
    return _load(qa_store, tmp_path_factory.mktemp("qa_lens"))


@pytest.fixture(scope="module")
def qa_saver(qa_store, tmp_path_factory):
    saver = oracle.open_sqlite(copy_store_files(qa_store, tmp_path_factory.mktemp("qa_oracle")))
    yield saver
    saver.conn.close()


@pytest.fixture(scope="module")
def con(lens):
    c = analytics.connect(lens)
    yield c
    c.close()


@pytest.fixture(scope="module")
def qa_con(qa_lens):
    c = analytics.connect(qa_lens)
    yield c
    c.close()


def _window_tuples(frame: pd.DataFrame) -> list[tuple]:
    return [(r.speaker, r.content, None if pd.isna(r.message_id) else r.message_id) for r in frame.itertuples()]


def _roots(saver) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in oracle.expected_checkpoints(saver):
        if row["checkpoint_ns"] == "":
            out.setdefault(row["thread_id"], []).append(row)
    return out


# --- resume points ------------------------------------------------------------------------------


def test_second_process_restart_is_one_resume_point(con, sqlite_store, oracle_checkpoints):
    thread = sqlite_store.thread("second_process")
    points = resume.resume_points(con, thread)
    assert len(points) == 1
    p = points.iloc[0]
    assert p.resume_no == 1
    assert p.reason == "idle_gap+process_change"
    assert p.gap_s == pytest.approx(3 * 3600)  # idle_hours=3 of the scenario, on the writers' clocks
    assert "writer: worker-1 → worker-2" in p.process_change and "writer_pid: " in p.process_change
    by_id = {r["checkpoint_id"]: r for r in oracle_checkpoints if r["thread_id"] == thread and r["checkpoint_ns"] == ""}
    after, before = by_id[p.after_checkpoint_id], by_id[p.before_checkpoint_id]
    assert after["parent_checkpoint_id"] == p.before_checkpoint_id
    assert after["source"] == "input"  # the restarted worker's first checkpoint is its graph input
    assert (after["ts"] - before["ts"]).total_seconds() == pytest.approx(p.gap_s)
    assert before["message_count"] == p.before_message_count == 4  # two turns before the restart


def test_gaps_follow_the_parent_chain_and_ties_never_count(con, oracle_checkpoints):
    # A tiny threshold: nearly every step is a "resume point", so every pair is checked.
    points = resume.resume_points(con, gap_minutes=0.001)
    assert len(points) > 50
    roots = {(r["thread_id"], r["checkpoint_id"]): r for r in oracle_checkpoints if r["checkpoint_ns"] == ""}
    for p in points.itertuples():
        after, before = roots[(p.thread_id, p.after_checkpoint_id)], roots[(p.thread_id, p.before_checkpoint_id)]
        assert after["parent_checkpoint_id"] == p.before_checkpoint_id
        assert p.gap_s == pytest.approx((after["ts"] - before["ts"]).total_seconds())
        if p.reason == "idle_gap":
            assert p.gap_s > 0.06  # a tie (input and step-0 checkpoints share a ts) is never a gap
    # Numbered along the chain: each point's `before` is at or after the previous point's `after`.
    for thread, group in points.groupby("thread_id"):
        chain = [cid for cid, _ in resume.current_chain(con, thread)]
        at = [chain.index(c) for c in group.sort_values("resume_no")["after_checkpoint_id"]]
        assert at == sorted(at) and group["resume_no"].tolist() == list(range(1, len(group) + 1))


def test_threshold_is_strict_and_configurable(con, sqlite_store):
    edit = sqlite_store.thread("edit")  # the operator's edit comes 12 minutes after the last turn
    assert resume.resume_points(con, edit).empty
    assert resume.resume_points(con, edit, gap_minutes=12).empty  # gap must exceed the threshold
    points = resume.resume_points(con, edit, gap_minutes=11.99)
    assert points["gap_s"].tolist() == [720.0] and points["reason"].tolist() == ["idle_gap"]


def test_process_change_without_idle_gap(qa_con):
    points = resume.resume_points(qa_con, HANDOVER)
    assert points["reason"].tolist() == ["process_change"]
    assert points["gap_s"].item() == pytest.approx(180)
    assert points["process_change"].item().startswith("writer: worker-1 → worker-2")
    # Telling the detector to ignore those keys leaves no resume point at all.
    assert resume.resume_points(qa_con, HANDOVER, process_keys=("run_id",)).empty


def test_timeline_marks_resume_points_on_the_chain(con, sqlite_store):
    thread = sqlite_store.thread("second_process")
    line = resume.timeline(con, thread)
    points = resume.resume_points(con, thread)
    assert line["chain_position"].tolist() == list(range(1, len(line) + 1))  # linear thread: all on the chain
    marked = line.dropna(subset=["resume"]).set_index("checkpoint_id")["resume"].to_dict()
    assert marked == {points.before_checkpoint_id.item(): "before #1", points.after_checkpoint_id.item(): "after #1"}
    assert line["process"].iloc[0].startswith("writer=worker-1") and line["process"].iloc[-1].startswith(
        "writer=worker-2"
    )


def test_timeline_of_a_forked_thread_lists_other_branches_last(con, sqlite_store):
    line = resume.timeline(con, sqlite_store.thread("replay_branch"))
    on = line[line["on_current_branch"]]
    assert on["chain_position"].tolist() == list(range(1, len(on) + 1))
    assert line["chain_position"].isna().tolist() == [False] * len(on) + [True] * (len(line) - len(on))


# --- expected windows against the oracle ----------------------------------------------------------


@pytest.mark.parametrize("cap", [50, 3, 1, 0])
def test_window_at_every_root_checkpoint_matches_the_oracle(con, oracle_saver, cap):
    roots = _roots(oracle_saver)
    targets = [(t, r["checkpoint_id"]) for t, rows in roots.items() for r in rows]
    windows = resume.windows_at(con, targets, cap)
    grouped = {k: g for k, g in windows.groupby(["thread_id", "checkpoint_id"])}
    for thread, checkpoint in targets:
        mine = grouped.get((thread, checkpoint), windows.iloc[:0])
        assert _window_tuples(mine) == oracle.expected_window(oracle_saver, thread, checkpoint, cap), (
            thread,
            checkpoint,
        )
        assert mine["position"].tolist() == list(range(len(mine)))


@pytest.mark.parametrize("gap", [0.001, 5, 30])
def test_window_at_every_resume_point_matches_the_oracle(con, oracle_saver, gap):
    report = resume.resume_windows(con, gap_minutes=gap, cap=50)
    points = resume.resume_points(con, gap_minutes=gap)
    assert len(report.drop_duplicates(["thread_id", "resume_no"])) == len(points) > 0
    for p in points.itertuples():
        window = resume.expected_window(con, p.thread_id, p.before_checkpoint_id)
        assert _window_tuples(window) == oracle.expected_window(oracle_saver, p.thread_id, p.before_checkpoint_id)
        rows = report[(report.thread_id == p.thread_id) & (report.resume_no == p.resume_no)].dropna(subset=["position"])
        assert _window_tuples(rows) == _window_tuples(window)


def test_windows_of_the_qa_store_match_the_oracle(qa_con, qa_saver):
    for thread in (LONG, HANDOVER, SKEW):
        for cap in (50, 3):
            assert _window_tuples(resume.expected_window(qa_con, thread, cap=cap)) == oracle.expected_window(
                qa_saver, thread, cap=cap
            )
        for p in resume.resume_points(qa_con, thread, gap_minutes=1).itertuples():
            assert _window_tuples(resume.expected_window(qa_con, thread, p.before_checkpoint_id)) == (
                oracle.expected_window(qa_saver, thread, p.before_checkpoint_id)
            )


def test_default_window_is_the_tail_of_the_transcript(con):
    for thread in con.sql("SELECT thread_id FROM threads ORDER BY 1").fetchall():
        thread = thread[0]
        window = resume.expected_window(con, thread, cap=4)
        rows = analytics.read(con, thread)
        tail = rows[rows["role"].isin(["user", "assistant"])].tail(4)
        assert window["ordinal"].tolist() == tail["ordinal"].tolist()
        assert window["content"].tolist() == tail["content"].tolist()
        assert window["speaker"].tolist() == tail["role"].tolist()
        assert window["message_id"].fillna("").tolist() == tail["message_id"].fillna("").tolist()
        # ts follows contract §3: the messages table's ts, NULL exactly where it is NULL.
        assert window["ts"].tolist() == tail["ts"].tolist()
        assert set(window["source"]) <= {"resume_rehydrate"}


def test_window_cap_truncates_the_long_thread(qa_con, qa_saver):
    point = resume.resume_points(qa_con, LONG).iloc[0]
    assert point.reason == "idle_gap" and point.gap_s > 2 * 3600
    assert point.before_message_count == 2 * LONG_PAUSE_BEFORE_TURN
    full = resume.expected_window(qa_con, LONG, point.before_checkpoint_id)  # cap 50 of 52
    assert len(full) == 50
    assert full["content"].iloc[0] == "Question 1: what is step 1?"  # the first turn fell off the window
    assert full["ordinal"].iloc[0] == 2 and full["position"].tolist() == list(range(50))
    three = resume.expected_window(qa_con, LONG, point.before_checkpoint_id, cap=3)
    assert three["content"].tolist() == [
        "Answer 24: step 24 of the migration plan.",
        "Question 25: what is step 25?",
        "Answer 25: step 25 of the migration plan.",
    ]
    assert _window_tuples(three) == oracle.expected_window(qa_saver, LONG, point.before_checkpoint_id, cap=3)
    risk = resume.risks(qa_con, Filters(thread_ids=(LONG,))).iloc[0]
    assert risk.truncated_by == 2 * LONG_TURNS - 50 and risk["flags"] == "truncated" and risk.risk_score == 1
    assert resume.risks(qa_con, Filters(thread_ids=(LONG,)), cap=60).iloc[0]["flags"] == ""


def test_window_arguments_are_checked(con, sqlite_store):
    thread = sqlite_store.thread("simple_chat")
    with pytest.raises(NotFound):
        resume.expected_window(con, "no:such:thread")
    with pytest.raises(NotFound, match="no root checkpoint"):
        resume.expected_window(con, thread, "1eff0000-0000-6000-8000-000000000000")
    subgraph_cp = con.sql("SELECT thread_id, checkpoint_id FROM checkpoints WHERE NOT is_root LIMIT 1").fetchall()[0]
    with pytest.raises(NotFound):
        resume.expected_window(con, *subgraph_cp)
    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(BadRequest):
            resume.expected_window(con, thread, cap=bad)
    for bad in (0, -5, float("nan"), "30"):
        with pytest.raises(BadRequest):
            resume.resume_points(con, thread, gap_minutes=bad)
    with pytest.raises(NotFound):
        resume.resume_points(con, "no:such:thread")


# --- risks -----------------------------------------------------------------------------------------


def test_risk_flags_of_the_real_scenarios(con, sqlite_store):
    table = resume.risks(con).set_index("thread_id")
    flags = table["flags"].map(lambda f: set(f.split(",")) if f else set())
    assert flags[sqlite_store.thread("edit")] == {"edited", "edited_in_window"}
    assert flags[sqlite_store.thread("remove_message")] == {"removed"}
    assert flags[sqlite_store.thread("replay_branch")] == {"forked"}
    assert flags[sqlite_store.thread("interrupt_pending")] == {"interrupt_pending"}
    assert {"no_id_in_window", "no_ts_in_window"} <= flags[sqlite_store.thread("operator_add")]
    for thread in sqlite_store.threads_of("simple_chat") + [sqlite_store.thread("second_process")]:
        assert flags[thread] == set() and table.loc[thread, "risk_score"] == 0
    weights = {f.name: f.weight for f in resume.RISK_FLAGS}
    assert (table["risk_score"] == flags.map(lambda fs: sum(weights[f] for f in fs))).all()
    ranked = resume.risks(con)
    assert ranked["risk_score"].is_monotonic_decreasing
    # The edited message sits at ordinal 1 of 6: a window of 3 no longer holds it.
    assert (
        resume.risks(con, Filters(thread_ids=(sqlite_store.thread("edit"),)), cap=3)["flags"].item()
        == "edited,truncated"
    )
    counts = table.loc[sqlite_store.thread("remove_message")]
    assert counts.removed_messages == 4 and counts.window_size == counts.conversational_messages == 4


def test_risks_respect_filters(con):
    acme = resume.risks(con, Filters(tenants=("acme",)))
    assert len(acme) > 0 and set(acme["tenant_id"]) == {"acme"}
    assert resume.risks(con, Filters(tenants=("nobody",))).empty


def test_clock_skew_makes_the_latest_checkpoint_not_a_leaf(qa_con, qa_saver):
    risk = resume.risks(qa_con, Filters(thread_ids=(SKEW,))).iloc[0]
    assert risk.latest_not_leaf and risk["flags"].split(",")[0] == "latest_not_leaf"
    details = resume.thread_risks(qa_con, SKEW)
    row = details[details["flag"] == "latest_not_leaf"].iloc[0]
    latest = risk.latest_checkpoint_id
    assert row.checkpoint_id == latest
    children = [c["checkpoint_id"] for c in oracle.expected_checkpoints(qa_saver)
                if c["thread_id"] == SKEW and c["parent_checkpoint_id"] == latest]  # fmt: skip
    assert children and all(c < latest for c in children) and all(c in row.detail for c in children)
    # The runtime rehydrates from the greatest id: the behind-clock worker's turns are not in the window.
    window = resume.expected_window(qa_con, SKEW)
    assert "I'm back, the container restarted overnight. Where were we?" not in set(window["content"])
    assert _window_tuples(window) == oracle.expected_window(qa_saver, SKEW)


def test_thread_risk_details(con, sqlite_store):
    edit = resume.thread_risks(con, sqlite_store.thread("edit"))
    assert edit["flag"].tolist() == ["edited_in_window", "edited"]
    assert "'The quarterly review is on Tuesday" in edit["detail"].iloc[0]
    assert "'Correction: the quarterly review is on Wednesday" in edit["detail"].iloc[0]
    removed = resume.thread_risks(con, sqlite_store.thread("remove_message"))
    assert removed["flag"].tolist() == ["removed"] * 4
    assert "removed: 'hi'" in removed["detail"].tolist()
    forked = resume.thread_risks(con, sqlite_store.thread("replay_branch"))
    assert forked["flag"].tolist() == ["forked", "forked"] and forked["checkpoint_id"].notna().all()
    pending = resume.thread_risks(con, sqlite_store.thread("interrupt_pending"))
    assert pending["flag"].tolist() == ["interrupt_pending"] and "Approve this action?" in pending["detail"].item()
    no_ids = resume.thread_risks(con, sqlite_store.thread("operator_add"))
    window = resume.expected_window(con, sqlite_store.thread("operator_add"))
    assert no_ids[no_ids["flag"] == "no_id_in_window"]["ordinal"].tolist() == window["ordinal"].tolist()
    assert resume.thread_risks(con, sqlite_store.thread("simple_chat")).empty


# --- observed windows ------------------------------------------------------------------------------


def _jsonl(entries: list[dict]) -> bytes:
    return ("\n".join(json.dumps(e) for e in entries) + "\n").encode()


@pytest.fixture(scope="module")
def restart(con, sqlite_store):
    """The second_process thread's resume point and the faithful observed lines for it."""
    thread = sqlite_store.thread("second_process")
    point = resume.resume_points(con, thread).iloc[0]
    window = resume.expected_window(con, thread, point.before_checkpoint_id)
    lines = [
        {"thread_id": thread, "checkpoint_id": point.before_checkpoint_id, "position": int(w.position),
         "speaker": w.speaker, "content": w.content, "metadata": {"source": "resume_rehydrate", "turn_id": w.message_id}}
        for w in window.itertuples()
    ]  # fmt: skip
    assert len(lines) == 4
    return thread, point, lines


def test_a_faithful_observed_window_passes(con, restart):
    thread, point, lines = restart
    findings, summary = observed.compare(con, _jsonl(lines))
    assert findings.empty
    assert summary[["thread_id", "checkpoint_id", "resume_no", "attributed_by", "confidence", "verdict"]].values.tolist() == [
        [thread, point.before_checkpoint_id, 1, "checkpoint_id", "exact", "pass"]
    ]
    assert summary.iloc[0][["expected_entries", "observed_entries", "matched"]].tolist() == [4, 4, 4]


def _mutate(kind: str, lines: list[dict]) -> list[dict]:
    out = [json.loads(json.dumps(line)) for line in lines]
    if kind == "missing":
        del out[1]
    elif kind == "extra":
        out.insert(2, {**out[1], "content": "I never said this.", "position": 99})
    elif kind == "reordered":
        out[1]["position"], out[2]["position"] = out[2]["position"], out[1]["position"]
    elif kind == "altered_content":
        out[3]["content"] = out[3]["content"].replace("local time", "UTC")
    elif kind == "wrong_speaker":
        out[2]["speaker"] = "assistant"
    elif kind == "wrong_source":
        out[0]["metadata"]["source"] = "live_turn"
    return out


@pytest.mark.parametrize("kind", ["missing", "extra", "reordered", "altered_content", "wrong_speaker", "wrong_source"])
def test_each_divergence_is_reported_as_its_kind(con, restart, kind):
    thread, point, lines = restart
    findings, summary = observed.compare(con, _jsonl(_mutate(kind, lines)))
    assert findings["kind"].tolist() == [kind]
    assert summary["verdict"].tolist() == ["fail"] and summary[kind].tolist() == [1]
    f = findings.iloc[0]
    assert (f.thread_id, f.checkpoint_id, f.resume_no, f.window) == (thread, point.before_checkpoint_id, 1, 1)
    if kind == "missing":
        assert f.expected_position == 1 and pd.isna(f.line) and f.expected_content == lines[1]["content"]
    elif kind == "extra":
        assert f.observed_content == "I never said this." and f.line == 3 and pd.isna(f.expected_position)
    elif kind == "altered_content":
        assert f.expected_content == lines[3]["content"] and "UTC" in f.observed_content and f.line == 4
        assert "[-local time-]{+UTC+}" in f.text_diff
    elif kind == "wrong_speaker":
        assert (f.expected_speaker, f.observed_speaker) == ("user", "assistant")
    elif kind == "wrong_source":
        assert f.observed_source == "live_turn" and f.line == 1
    elif kind == "reordered":
        assert {f.expected_position, f.observed_position} == {1, 2}


def test_a_missing_metadata_source_is_not_a_finding(con, restart):
    _, _, lines = restart
    bare = [{k: v for k, v in line.items() if k != "metadata"} for line in lines]
    findings, summary = observed.compare(con, _jsonl(bare))
    assert findings.empty and summary["passed"].all()


def test_malformed_lines_are_reported_and_the_rest_compared(con, restart):
    _, _, lines = restart
    bad = [
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**lines[0], "position": -1}),
        json.dumps({**lines[0], "speaker": None}),
        json.dumps({**lines[0], "content": 42}),
        json.dumps({"speaker": "user", "content": "x", "position": 0}),
        json.dumps({**lines[0], "resume_at": "yesterday"}),
    ]
    text = "\n".join([json.dumps(lines[0]), bad[0], json.dumps(lines[1]), "", *bad[1:], json.dumps(lines[2]),
                      json.dumps(lines[3])])  # fmt: skip
    findings, summary = observed.compare(con, text.encode())
    broken = findings[findings["kind"] == "malformed"]
    assert sorted(broken["line"]) == [2, 5, 6, 7, 8, 9, 10]  # line 4 is blank: skipped, still counted
    details = dict(zip(broken["line"], broken["detail"]))
    assert details[2].startswith("not valid JSON") and details[5] == "not a JSON object but a list"
    assert "position" in details[6] and "speaker" in details[7] and "content" in details[8]
    assert "names no thread" in details[9] and "resume_at" in details[10]
    # The good lines were compared (and matched); malformed lines naming this resume fail it.
    assert set(findings["kind"]) == {"malformed"}
    s = summary.iloc[0]
    assert (s.matched, s.malformed, s.verdict) == (4, 4, "fail")  # lines 6, 7, 8, 10 name this resume
    assert broken[broken["line"].isin([2, 5, 9])]["checkpoint_id"].isna().all()


def test_lines_name_threads_and_resumes_in_every_documented_way(con, restart, sqlite_store):
    thread, point, lines = restart
    tenant, sub, session = thread.split(":", 2)
    # A restart time inside the idle gap before the resume's first checkpoint (a `resume_at`) is that resume.
    by_key = [{**{k: v for k, v in line.items() if k not in ("thread_id", "checkpoint_id")},
               "tenant_id": tenant, "sub_tenant_id": sub, "session_id": session,
               "resume_at": (point.after_ts - pd.Timedelta(minutes=5)).isoformat()} for line in lines]  # fmt: skip
    findings, summary = observed.compare(con, _jsonl(by_key))
    assert findings.empty and summary[["attributed_by", "confidence"]].values.tolist() == [["time", "medium"]]
    assert summary["checkpoint_id"].tolist() == [point.before_checkpoint_id] and summary["resume_no"].tolist() == [1]
    # No naming at all: matched by position order to the thread's resume points (then a restart now).
    bare = [{k: v for k, v in line.items() if k != "checkpoint_id"} for line in lines]
    findings, summary = observed.compare(con, _jsonl(bare))
    assert findings.empty and summary[["attributed_by", "resume_no"]].values.tolist() == [["position order", 1]]
    # An empty sub-tenant is NULL in the database (contract §3): "" and a missing key both find `globex::s2`.
    edit = sqlite_store.thread("edit")
    window = resume.expected_window(con, edit)
    for sub_value in ({"sub_tenant_id": ""}, {}):
        entries = [{"tenant_id": "globex", "session_id": "s2", **sub_value, "position": int(w.position),
                    "speaker": w.speaker, "content": w.content} for w in window.itertuples()]  # fmt: skip
        findings, summary = observed.compare(con, _jsonl(entries))
        assert findings.empty and summary["thread_id"].tolist() == [edit]


def test_unresolvable_and_duplicate_lines(con, restart):
    _, _, lines = restart
    extra = [
        {**lines[0], "thread_id": "no:such:thread"},
        {**lines[0], "checkpoint_id": "1eff0000-0000-6000-8000-000000000000"},
        {**lines[0], "resume_at": "2000-01-01T00:00:00Z", "checkpoint_id": None},
    ]
    # A position repeated right away is one window's duplicate (a position that comes back lower starts a window).
    duplicate = {**lines[3], "content": "same position again"}
    findings, summary = observed.compare(con, _jsonl(lines + [duplicate] + extra))
    kinds = dict(zip(findings["line"], findings["kind"]))
    assert kinds == {5: "malformed", 6: "unresolved", 7: "unresolved", 8: "unresolved"}
    assert "duplicate position 3 (also on line 4)" in findings.set_index("line").loc[5, "detail"]
    assert summary["verdict"].tolist() == ["fail"]  # the duplicate names this resume


def test_the_cap_decides_what_a_faithful_window_is(qa_con):
    point = resume.resume_points(qa_con, LONG).iloc[0]
    three = resume.expected_window(qa_con, LONG, point.before_checkpoint_id, cap=3)
    entries = [{"thread_id": LONG, "checkpoint_id": point.before_checkpoint_id, "position": int(w.position),
                "speaker": w.speaker, "content": w.content} for w in three.itertuples()]  # fmt: skip
    findings, summary = observed.compare(qa_con, _jsonl(entries), cap=3)
    assert findings.empty and summary["verdict"].tolist() == ["pass"]
    findings, summary = observed.compare(qa_con, _jsonl(entries), cap=50)
    assert findings["kind"].value_counts().to_dict() == {"missing": 47}
    assert summary.iloc[0][["expected_entries", "matched"]].tolist() == [50, 3]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_drops_and_insertions_are_counted_exactly(qa_con, long_window, data):
    """Dropping k expected entries and adding m new ones gives k `missing` and m `extra`, nothing else."""
    checkpoint, window = long_window
    keep = data.draw(st.lists(st.booleans(), min_size=len(window), max_size=len(window)))
    inserts = data.draw(st.lists(st.integers(0, len(window)), max_size=5))
    entries = [w for w, k in zip(window, keep) if k]
    for n, at in enumerate(sorted(inserts, reverse=True)):
        entries.insert(min(at, len(entries)), {"speaker": "user", "content": f"invented {n}"})
    assume(entries)  # an observed window with no line names no resume at all
    lines = [{"thread_id": LONG, "checkpoint_id": checkpoint, "position": i, **e} for i, e in enumerate(entries)]
    findings, summary = observed.compare(qa_con, _jsonl(lines), cap=10)
    counts = findings["kind"].value_counts().to_dict()
    assert counts.get("missing", 0) == keep.count(False)
    assert counts.get("extra", 0) == len(inserts)
    assert set(counts) <= {"missing", "extra"}
    assert summary["matched"].item() == keep.count(True)


@pytest.fixture(scope="module")
def long_window(qa_con):
    point = resume.resume_points(qa_con, LONG).iloc[0]
    window = resume.expected_window(qa_con, LONG, point.before_checkpoint_id, cap=10)
    return point.before_checkpoint_id, [{"speaker": w.speaker, "content": w.content} for w in window.itertuples()]


def test_parse_observed_reads_paths_bytes_and_file_objects(tmp_path, restart):
    _, _, lines = restart
    data = _jsonl(lines)
    path = tmp_path / "obs.jsonl"
    path.write_bytes(data)
    parsed = [
        observed.parse_observed(src) for src in (path, str(path), data, io.BytesIO(data), io.StringIO(data.decode()))
    ]
    assert all(p == parsed[0] for p in parsed) and len(parsed[0].entries) == 4 and not parsed[0].errors
    assert parsed[0].entries[0].source == "resume_rehydrate" and parsed[0].entries[3].position == 3
    with pytest.raises(FileNotFoundError):
        observed.parse_observed(tmp_path / "missing.jsonl")


# --- the report and the CLI -------------------------------------------------------------------------


def test_report_resume_writes_the_expected_windows(lens, tmp_path):
    out = tmp_path / "resume.csv"
    assert cli_main(["report", "resume", "--db", str(lens), "--gap-minutes", "5", "--cap", "3", "--out", str(out)]) == 0
    csv = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert tuple(csv.columns) == observed.RESUME_REPORT_COLUMNS
    windows = resume.resume_windows(lens, gap_minutes=5, cap=3)
    assert len(csv) == len(windows) and set(csv["kind"]) == {"expected"}
    assert csv["content"].tolist() == windows["content"].tolist()
    assert csv["checkpoint_id"].tolist() == windows["before_checkpoint_id"].tolist()
    assert csv["ts"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z").all()
    frame = observed.resume_report(lens, gap_minutes=5, cap=3)
    assert frame["content"].tolist() == csv["content"].tolist()


def test_report_resume_with_observed_lists_verdicts_and_findings(lens, restart, tmp_path):
    _, _, lines = restart
    obs = tmp_path / "obs.jsonl"
    obs.write_bytes(_jsonl(_mutate("altered_content", lines)) + b"{oops\n")
    out = tmp_path / "findings.csv"
    args = ["report", "resume", "--db", str(lens), "--observed", str(obs), "--out", str(out)]
    assert cli_main(args) == 0
    csv = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert tuple(csv.columns) == observed.RESUME_REPORT_COLUMNS
    assert csv["kind"].tolist() == ["verdict", "altered_content", "malformed"]
    assert csv["verdict"].tolist() == ["fail", "fail", ""]
    assert csv.loc[0, "resume_no"] == "1" and csv.loc[0, "reason"] == "idle_gap+process_change"
    assert csv.loc[2, "line"] == "5"
    # A thread filter keeps that thread's rows only.
    assert cli_main(args + ["--thread", "acme:web:sess-001"]) == 0
    assert pd.read_csv(out).empty


def test_report_resume_errors_are_one_line(lens, tmp_path, capsys):
    code = cli_main(["report", "resume", "--db", str(lens), "--observed", str(tmp_path / "nope.jsonl"),
                     "--out", str(tmp_path / "x.csv")])  # fmt: skip
    assert code == 2 and "no observed JSONL file" in capsys.readouterr().err
    code = cli_main(["report", "resume", "--db", str(lens), "--cap", "-1", "--out", str(tmp_path / "x.csv")])
    assert code == 2 and "cap must be" in capsys.readouterr().err


def test_python_m_analytics_report_resume_runs(lens, tmp_path):
    out = tmp_path / "r.csv"
    done = subprocess.run(
        [sys.executable, "-m", "analytics", "report", "resume", "--db", str(lens), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=_second_process_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    csv = pd.read_csv(out)
    assert csv["thread_id"].unique().tolist() == ["acme:web:sess-restart"] and len(csv) == 4
