"""Resume QA on real runtime logs: several restarts per thread, logged in the runtime's words.

The logs here are written by `storegen.runtime.RecencyRuntime`: a runtime that
keeps a recency window per thread, restarts (a new worker, after idle hours),
rebuilds the window from the store through the real saver on the first turn
after a restart, and logs each entry with `recorded_at`, the time it rebuilt the
window. Each alteration of that log is one kind of divergence in one restart:
the faithful log must pass every resume, an altered one fail exactly the resume
it alters, with that kind of finding.
"""

from __future__ import annotations

import copy
import datetime as dt
import json

import pandas as pd
import pytest

import transcript_lens
from analytics import observed, resume
from analytics.observed.attribution import TOLERANCE_S
from analytics.observed.log import parse_time_value
from storegen import Clock, Reply, ScriptedChatModel, deterministic, open_sqlite_saver
from storegen.runtime import RecencyRuntime

START = dt.datetime(2025, 5, 1, 9, 0, tzinfo=dt.UTC)
CAP = 4
MANY = "rt:acme:many"  # four processes, idle hours between: three resume points
TWO = "rt:acme:two"  # two processes: one resume point
QUICK = "rt:acme:quick"  # restarted after two minutes, no process key: no resume point at 30 minutes


def _log_bytes(lines: list[dict]) -> bytes:
    return ("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n").encode()


@pytest.fixture(scope="module")
def runtime_store(tmp_path_factory):
    """The store the runtime wrote, loaded, and the runtime's own rehydrate log."""
    folder = tmp_path_factory.mktemp("runtime")
    saver = open_sqlite_saver(folder / "rt.sqlite")
    log: list[dict] = []
    model = ScriptedChatModel(replies=[Reply(f"Answer {i}: the plan's step {i} is done.") for i in range(40)])
    try:
        with deterministic("rt"), Clock(START) as clock:
            # worker-1 serves MANY and TWO; 3 idle hours; worker-2 both again; then MANY alone twice more.
            for worker, idle, threads in ((1, 0, (MANY, TWO)), (2, 3, (MANY, TWO)), (3, 5, (MANY,)), (4, 2, (MANY,))):
                clock.advance(hours=idle)
                runtime = RecencyRuntime(saver, model, f"worker-{worker}", log, clock, cap=CAP)
                for thread in threads:
                    for turn in range(2):
                        runtime.turn(thread, f"{thread} question {worker}.{turn}")
            # No process key and two minutes apart: no resume point at the default 30-minute gap.
            RecencyRuntime(saver, model, None, log, clock, cap=CAP).turn(QUICK, "first question")
            clock.advance(minutes=2)
            RecencyRuntime(saver, model, None, log, clock, cap=CAP).turn(QUICK, "back after two minutes")
    finally:
        saver.conn.close()
    db = folder / "rt.duckdb"
    transcript_lens.load(folder / "rt.sqlite", db)
    return db, log


def _windows(log: list[dict], thread: str) -> list[list[dict]]:
    """The runtime's log lines of one thread, one list per rehydrate (in the order written)."""
    out: list[list[dict]] = []
    for line in log:
        if line["thread_id"] == thread:
            if line["position"] == 0:
                out.append([])
            out[-1].append(line)
    return out


def test_the_runtime_restarted_as_the_store_says(runtime_store):
    db, log = runtime_store
    points = resume.resume_points(db, MANY)
    assert points["resume_no"].tolist() == [1, 2, 3] and set(points["reason"]) == {"idle_gap+process_change"}
    assert len(_windows(log, MANY)) == 3 and len(_windows(log, TWO)) == 1
    # It logged the time it rebuilt each window: at the resume's first post-restart checkpoint.
    for window, point in zip(_windows(log, MANY), points.itertuples()):
        assert parse_time_value(window[0]["recorded_at"]) == point.after_ts


def test_the_faithful_log_passes_every_resume(runtime_store):
    db, log = runtime_store
    findings, summary = observed.compare(db, _log_bytes(log), cap=CAP)
    assert findings.empty, findings[["thread_id", "resume_no", "kind", "line", "detail"]]
    many = summary[summary["thread_id"] == MANY]
    assert many["resume_no"].tolist() == [1, 2, 3]
    assert set(many["attributed_by"]) == {"time"} and set(many["confidence"]) == {"high"}
    assert many["checkpoint_id"].tolist() == resume.resume_points(db, MANY)["before_checkpoint_id"].tolist()
    assert summary["verdict"].eq("pass").all() and (summary["malformed"] == 0).all()


def _alter(kind: str, window: list[dict]) -> None:
    """One divergence of `kind` in one rehydrate's lines (in place)."""
    if kind == "missing":
        del window[1]
    elif kind == "extra":
        window.insert(2, {**window[1], "content": "I never said this.", "metadata": {**window[1]["metadata"], "turn_id": "x-1"}})
        for position, line in enumerate(window):
            line["position"] = position
    elif kind == "reordered":
        window[1]["content"], window[2]["content"] = window[2]["content"], window[1]["content"]
        window[1]["speaker"], window[2]["speaker"] = window[2]["speaker"], window[1]["speaker"]
        window[1]["metadata"], window[2]["metadata"] = window[2]["metadata"], window[1]["metadata"]
    elif kind == "altered_content":
        window[3]["content"] = window[3]["content"].replace("step", "stage")
    elif kind == "wrong_speaker":
        window[0]["speaker"] = "assistant" if window[0]["speaker"] == "user" else "user"
    elif kind == "wrong_source":
        window[2]["metadata"] = {**window[2]["metadata"], "source": "live_turn"}


@pytest.mark.parametrize("kind", ["missing", "extra", "reordered", "altered_content", "wrong_speaker", "wrong_source"])
@pytest.mark.parametrize("restart", [1, 2, 3])
def test_an_altered_log_fails_exactly_the_resume_it_alters(runtime_store, kind, restart):
    db, log = runtime_store
    altered = copy.deepcopy(log)
    windows = _windows(altered, MANY)
    _alter(kind, windows[restart - 1])
    lines = [line for line in altered if line["thread_id"] != MANY] + [line for w in windows for line in w]
    findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP)
    failed = summary[summary["verdict"] == "fail"]
    assert failed[["thread_id", "resume_no"]].values.tolist() == [[MANY, restart]]
    assert set(findings["kind"]) == {kind} and set(findings["resume_no"]) == {restart}
    assert set(summary["attributed_by"]) == {"time"} and set(summary.loc[summary["thread_id"] == MANY, "confidence"]) == {"high"}


_NAMES = {"speaker": "role", "content": "text", "position": "index"}


@pytest.mark.parametrize(
    "field, stamp",
    [
        ("recorded_at", lambda t: t.isoformat()),
        ("recorded_at", lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
        ("resume_at", lambda t: t.replace(tzinfo=None).isoformat()),
        ("ts", lambda t: t.timestamp()),
        ("timestamp", lambda t: int(t.timestamp()) + 1),
        ("time", lambda t: int(t.timestamp() * 1000)),
        ("logged_at", lambda t: str(int(t.timestamp() * 1000) + 750)),
    ],
)
def test_every_time_field_and_form_places_the_windows(runtime_store, field, stamp):
    db, log = runtime_store
    lines = []
    for line in log:
        at = parse_time_value(line["recorded_at"])
        out = {k: v for k, v in line.items() if k != "recorded_at"}
        out[field] = stamp(at)
        lines.append(out)
    findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP)
    assert findings.empty and set(summary["attributed_by"]) == {"time"}
    assert summary[summary["thread_id"] == MANY]["resume_no"].tolist() == [1, 2, 3]


def test_the_runtimes_own_field_names_and_ids_in_metadata(runtime_store):
    db, log = runtime_store
    lines = []
    for line in log:
        renamed = {_NAMES.get(k, k): v for k, v in line.items() if k != "recorded_at"}
        renamed["role"] = {"user": "human", "assistant": "ai"}[renamed["role"]]
        renamed["metadata"] = {**renamed["metadata"], "recorded_at": line["recorded_at"]}
        lines.append(renamed)
    findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP)
    assert findings.empty and summary["verdict"].eq("pass").all()
    # The turn id is the message id: it matches even when the text was changed.
    lines[1]["text"] = "something else entirely"
    findings, _ = observed.compare(db, _log_bytes(lines), cap=CAP)
    assert findings["kind"].tolist() == ["altered_content"] and findings["message_id"].notna().all()


def test_untimed_windows_split_where_positions_start_again_and_match_in_order(runtime_store):
    db, log = runtime_store
    bare = [{k: v for k, v in line.items() if k != "recorded_at"} for line in log if line["thread_id"] != QUICK]
    findings, summary = observed.compare(db, _log_bytes(bare), cap=CAP)
    assert findings.empty
    many = summary[summary["thread_id"] == MANY]
    assert many["resume_no"].tolist() == [1, 2, 3] and set(many["attributed_by"]) == {"position order"}
    assert set(many["confidence"]) == {"medium"}
    # Only the last two restarts logged (the first rotated away): order and content place them.
    later = [line for window in _windows(bare, MANY)[1:] for line in window]
    findings, summary = observed.compare(db, _log_bytes(later), cap=CAP)
    assert findings.empty and summary["resume_no"].tolist() == [2, 3]
    # A window whose position 0 is missing still starts anew where a position comes back: one `missing`.
    windows = _windows(bare, MANY)
    del windows[1][0]
    findings, summary = observed.compare(db, _log_bytes([line for w in windows for line in w]), cap=CAP)
    assert summary["resume_no"].tolist() == [1, 2, 3]
    assert findings[["resume_no", "kind"]].values.tolist() == [[2, "missing"]]


def test_times_outside_the_tolerance_say_how_sure_the_placement_is(runtime_store):
    db, log = runtime_store
    points = resume.resume_points(db, MANY)
    first = [dict(line) for line in _windows(log, MANY)[0]]

    def placed(at: pd.Timestamp, field: str = "recorded_at") -> pd.Series:
        lines = [{**{k: v for k, v in line.items() if k != "recorded_at"}, field: at.isoformat()} for line in first]
        findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP)
        return summary.iloc[0]

    after = points.loc[0, "after_ts"]
    # A restart time (`resume_at`) in the idle gap before the resume is that resume; a rehydrate time there is
    # early, so only the nearest resume, said with little confidence.
    restart = placed(after - pd.Timedelta(minutes=30), "resume_at")
    assert (restart.resume_no, restart.confidence, restart.verdict) == (1, "medium", "pass")
    early = placed(after - pd.Timedelta(minutes=30))
    assert (early.resume_no, early.confidence, early.verdict) == (1, "low", "pass")
    late = placed(after + pd.Timedelta(seconds=TOLERANCE_S + 60))
    assert (late.resume_no, late.confidence, late.verdict) == (1, "low", "pass")
    assert "(the nearest), outside the 5 s lead and 120 s tolerance" in late.attribution
    early = placed(after - pd.Timedelta(seconds=2))
    assert (early.resume_no, early.confidence) == (1, "high")
    # After the thread's last checkpoint: a restart with no checkpoint yet, rebuilt from the latest one.
    last = resume.timeline(db, MANY)["ts"].max()
    now = placed(last + pd.Timedelta(hours=1))
    assert pd.isna(now.resume_no) and now.checkpoint_id == resume.latest_root(db, MANY) and now.confidence == "medium"
    # Before the thread began: nothing to place it at.
    findings, summary = observed.compare(db, _log_bytes([{**line, "recorded_at": "2020-01-01T00:00:00Z"} for line in first]))
    assert summary.empty and set(findings["kind"]) == {"unresolved"} and "before the thread's first checkpoint" in findings["detail"].iloc[0]


def test_a_restart_the_gap_threshold_missed_is_placed_at_its_turn(runtime_store):
    # (Without times such a window can only be a restart now: only resume points and the latest checkpoint
    # are candidates for untimed windows, so a window rebuilt from an older checkpoint shows as findings.)
    db, log = runtime_store
    assert resume.resume_points(db, QUICK).empty
    lines = [line for line in log if line["thread_id"] == QUICK]
    findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP)
    s = summary.iloc[0]
    assert findings.empty and pd.isna(s.resume_no) and s.confidence == "low" and "no resume point fits" in s.attribution
    untimed = [{k: v for k, v in line.items() if k != "recorded_at"} for line in lines]
    findings, summary = observed.compare(db, _log_bytes(untimed), cap=CAP)
    assert summary["checkpoint_id"].tolist() == [resume.latest_root(db, QUICK)] and set(findings["kind"]) == {"missing"}
    # With a threshold under two minutes it is a resume point, placed with confidence.
    findings, summary = observed.compare(db, _log_bytes(lines), cap=CAP, gap_minutes=1)
    assert findings.empty and summary[["resume_no", "confidence"]].values.tolist() == [[1, "high"]]


def test_a_second_rehydrate_from_one_checkpoint_is_another_window_not_duplicates(runtime_store):
    db, log = runtime_store
    window = [dict(line) for line in _windows(log, TWO)[0]]
    twice = window + [{**line, "recorded_at": window[0]["recorded_at"]} for line in window]
    findings, summary = observed.compare(db, _log_bytes(twice), cap=CAP)
    assert findings.empty and summary["resume_no"].tolist() == [1, 1] and summary["verdict"].eq("pass").all()


def test_the_expected_window_as_a_jsonl_template_passes_as_it_is(runtime_store):
    db, _ = runtime_store
    points = resume.resume_points(db, MANY)
    template = b"".join(
        observed.template_lines(resume.expected_window(db, MANY, p.before_checkpoint_id, cap=CAP), MANY, p.after_ts)
        for p in points.itertuples()
    )
    parsed = observed.parse_observed(template)
    assert not parsed.errors and {e.time_field for e in parsed.entries} == {"recorded_at"}
    findings, summary = observed.compare(db, template, cap=CAP)
    assert findings.empty and summary["resume_no"].tolist() == [1, 2, 3]
    assert set(summary["attributed_by"]) == {"checkpoint_id"} and set(summary["confidence"]) == {"exact"}
