"""AppTests of the Resume QA page (pages/resume_qa.py) on the demo database.

The demo's `globex:api:sess-2107` is the restart thread: two turns, three idle
hours, two more turns written by a second OS process (demo/README.md).
"""

from __future__ import annotations

import io
import json
import re

import pandas as pd

from streamlit.testing.v1 import AppTest

from analytics import observed, resume
from analytics.filters import Filters
from tests.pages.conftest import APP, TIMEOUT, captions, metric, open_page
from tests.pages.test_privacy import downloads  # noqa: F401  (a fixture: the data of each download button)
from ui import columns
from ui.models import resume_qa

RESTART = "globex:api:sess-2107"
EDITED = "initech:helpdesk:sess-5005"


# A table is recognised by a column only it has (AppTest keeps the key of selectable tables only).
_MARKERS = {
    "resume_qa.risks": "risk_score",
    "resume_qa.points": "before_checkpoint_id",
    "resume_qa.thread_risks": "flag",
    "resume_qa.window": "speaker",
    "resume_qa.summary": "verdict",
    "resume_qa.findings": "kind",
}


def _table(at, key: str):
    found = [f.value for f in at.dataframe if _MARKERS[key] in f.value.columns]
    assert len(found) == 1, f"{len(found)} tables for {key!r}: {[list(f.value.columns)[:4] for f in at.dataframe]}"
    return found[0]


def _downloads(at) -> list[str]:
    return [d.label for d in at.get("download_button")]


def test_threads_are_ranked_by_risk(app, con):
    at = open_page(app, "resume_qa")
    expected = resume_qa.risk_overview(con, Filters(), 50).table
    shown = _table(at, "resume_qa.risks")
    assert shown["thread_id"].tolist() == expected["thread_id"].tolist()
    assert shown["risk_score"].tolist() == expected["risk_score"].tolist()
    assert shown["flags"].fillna("").tolist() == expected["flags"].fillna("").tolist()
    assert not shown["flags"].str.contains("_").any()  # words, not the codes
    top = shown.iloc[0]
    assert top["risk_score"] > 0 and top["risk_score"] >= shown["risk_score"].max()
    flags = dict(zip(shown["thread_id"], shown["flags"].fillna("")))
    assert "restored messages since edited" in flags[EDITED] and "waiting on a human" in flags["acme:web:sess-1008"]
    assert "restored messages without an id" in flags["faq-kiosk-lobby"]
    assert "messages removed" in flags["initech:helpdesk:sess-5006"]
    assert any("Pick a thread" in i.value for i in at.info)
    assert _downloads(at) == [f"Download all {len(expected)} rows (CSV)"]


def test_the_risk_table_is_sorted_and_paged_by_the_server(app, con):
    at = open_page(app, "resume_qa", sort="resume_points", order="asc", page="2")
    assert not at.exception
    size = resume_qa.PAGE_SIZE
    full = resume_qa.risk_overview(con, Filters(), 50, sort="resume_points", descending=False, page_size=10_000).table
    shown = _table(at, "resume_qa.risks")
    # The demo holds fewer threads than a page: page 2 of an old link shows the last (only) page.
    assert len(full) <= size and at.number_input(key="resume_qa.page").value == 1
    assert shown["thread_id"].tolist() == full["thread_id"].tolist()
    assert shown["resume_points"].tolist() == sorted(shown["resume_points"].tolist())
    assert shown["resume_points"].iloc[0] < shown["resume_points"].iloc[-1]  # the sort is not the ranking
    # Sorts are named as the table's headers name the columns, not by their column names.
    assert at.selectbox(key="resume_qa.sort").options == [columns.RISK_LABELS[c] for c in resume_qa.SORTABLE]
    assert "messages restored" in at.selectbox(key="resume_qa.sort").options
    assert any("sorted by restarts, low first" in c for c in captions(at))


def test_every_risk_column_has_a_header():
    assert list(columns.RISK_LABELS) == list(resume_qa.RISK_TABLE_COLUMNS)
    assert len(set(columns.RISK_LABELS.values())) == len(columns.RISK_LABELS)


#: What names the store's internals rather than what a reader sees: a column or table name, a
#: code span, "(window)" tacked on, "ts" for a time.
INTERNAL = re.compile(r"`|_|\(window\)|\bts\b|\bthreads\.|\bordinal\b|checkpoint_ns|\bleaf\b")


def test_the_risk_table_says_its_headers_help_and_flags_in_the_readers_words():
    config = columns.risks(resume_qa.MAX_RISK_SCORE)
    said = [(name, c["label"], c.get("help") or "") for name, c in config.items()]
    assert all(help for name, _, help in said if name != "thread_id"), said
    internal = [(name, text) for name, label, help in said for text in (label, help) if INTERNAL.search(text)]
    assert not internal, internal
    words = [resume_qa.flags_text(f.name) for f in resume.RISK_FLAGS]
    assert not [w for w in words if INTERNAL.search(w) or "window" in w], words


def test_the_restart_thread_shows_its_resume_point_and_window(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    assert not at.exception and not at.warning
    point = resume.resume_points(con, RESTART).iloc[0]
    assert point.reason == "idle_gap+process_change" and "worker-1 → worker-2" in point.process_change
    assert any(f"{len(resume.timeline(con, RESTART))} root checkpoints · 1 resume point" in c for c in captions(at))
    points = _table(at, "resume_qa.points")
    assert points["before_checkpoint_id"].tolist() == [point.before_checkpoint_id]
    assert points["reason"].tolist() == ["idle gap and a new run or process"]  # (in words, as its CSV)
    # The window shown is the one rebuilt from the checkpoint before the restart: the first two turns.
    window = _table(at, "resume_qa.window")
    expected = resume.expected_window(con, RESTART, point.before_checkpoint_id)
    assert window["content"].tolist() == expected["content"].tolist()
    assert window["content"].iloc[0] == "Can you help me debug a failing date test?"
    assert window["speaker"].tolist() == ["user", "assistant", "user", "assistant"]
    assert window["message"].tolist() == ["Message 1", "Message 2", "Message 3", "Message 4"]
    assert "position" not in window.columns and "ordinal" not in window.columns
    assert set(window["source"]) == {"resume_rehydrate"}
    assert any(f"Rebuilt from checkpoint `{point.before_checkpoint_id}` · 4 of at most 50" in c for c in captions(at))
    assert at.selectbox(key="resume_qa.resume").value == "1"
    # The timeline (an ECharts chart: the page loads no plotly) marks the resume point: the idle gap
    # shaded from the checkpoint before it to the one after, a line labelled where it resumed.
    assert not at.get("plotly_chart")
    (chart,) = at.get("echarts_chart")
    spec = json.loads(chart.proto.spec)
    legend = {s["name"] for s in spec["series"] if "datasetIndex" in s}
    assert legend and all(n.split(" · ")[1] in ("new input", "a step") for n in legend), legend
    (marks,) = [s for s in spec["series"] if "markLine" in s]
    assert [m["name"] for m in marks["markLine"]["data"]] == ["resume #1"]
    line = resume.timeline(con, RESTART).set_index("checkpoint_id")["ts"].dt.floor("ms")  # (a time axis counts ms)
    ((start, end),) = marks["markArea"]["data"]
    assert start["xAxis"] == line[point.before_checkpoint_id].timestamp() * 1000
    assert end["xAxis"] == marks["markLine"]["data"][0]["xAxis"] == line[point.after_checkpoint_id].timestamp() * 1000
    assert "Download CSV" in _downloads(at)
    assert at.query_params["resume"] == "1"


def test_picking_the_latest_checkpoint_shows_what_a_restart_now_rebuilds(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    at.selectbox(key="resume_qa.resume").set_value(resume_qa.LATEST).run()
    window = _table(at, "resume_qa.window")
    latest = resume.expected_window(con, RESTART)
    assert len(window) == 8 and window["content"].tolist() == latest["content"].tolist()
    assert at.query_params["resume"] == resume_qa.LATEST


def test_gap_and_cap_live_in_the_url_and_a_link_restores_them(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    at.number_input(key="resume_qa.cap").set_value(3).run()
    at.number_input(key="resume_qa.gap").set_value(1).run()
    assert not at.exception
    params = dict(at.query_params)
    assert params["thread"] == RESTART and params["cap"] == "3" and params["gap"] == "1"
    points = resume.resume_points(con, RESTART, gap_minutes=1)
    assert len(points) > 1  # at one minute every pause between turns is a resume point
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "resume_qa", **params)
    assert fresh.number_input(key="resume_qa.cap").value == 3
    assert fresh.number_input(key="resume_qa.gap").value == 1
    assert len(_table(fresh, "resume_qa.points")) == len(points)
    at_no = int(params["resume"])
    before = points.loc[points["resume_no"] == at_no, "before_checkpoint_id"].item()
    expected = resume.expected_window(con, RESTART, before, cap=3)
    assert _table(fresh, "resume_qa.window")["content"].tolist() == expected["content"].tolist()
    assert len(_table(fresh, "resume_qa.risks")) == len(resume.risks(con))


def test_thread_risk_details_are_listed(app, con):
    at = open_page(app, "resume_qa", thread=EDITED)
    details = _table(at, "resume_qa.thread_risks")
    expected = resume.thread_risks(con, EDITED)
    assert details["flag"].tolist() == expected["flag"].map(resume_qa.flags_text).tolist()  # (in words)
    assert "4401" in details["detail"].iloc[0] and "4410" in details["detail"].iloc[0]


def test_thread_risks_number_messages_as_the_transcript_does(app, con):
    at = open_page(app, "resume_qa", thread=RESTART, cap="3")
    details = _table(at, "resume_qa.thread_risks").set_index("flag")
    stored = resume.thread_risks(con, RESTART, 3).set_index("flag")
    number = int(stored.loc["truncated", "ordinal"]) + 1  # the transcript's "Message N"
    assert "ordinal" not in details.columns and "position" not in details.columns
    truncated = resume_qa.flags_text("truncated")
    assert details.loc[truncated, "message"] == f"Message {number}"
    assert details.loc[truncated, "detail"].endswith(f"the window starts at message {number}")
    assert not details.isna().all().any()  # (no column without a value)


def _upload(at, lines: list[dict], extra: str = "") -> None:
    data = ("\n".join(json.dumps(line) for line in lines) + "\n" + extra).encode()
    at.file_uploader(key="resume_qa.observed").set_value(("observed.jsonl", data, "application/jsonl")).run()
    assert not at.exception, at.exception


def _observed_lines(con) -> list[dict]:
    point = resume.resume_points(con, RESTART).iloc[0]
    window = resume.expected_window(con, RESTART, point.before_checkpoint_id)
    return [
        {"tenant_id": "globex", "sub_tenant_id": "api", "session_id": "sess-2107",
         "checkpoint_id": point.before_checkpoint_id, "position": int(w.position), "speaker": w.speaker,
         "content": w.content, "metadata": {"source": "resume_rehydrate"}}
        for w in window.itertuples()
    ]  # fmt: skip


def test_a_faithful_upload_passes(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    _upload(at, _observed_lines(con))
    assert metric(at, "Windows checked") == "1" and metric(at, "Passed") == "1" and metric(at, "Failed") == "0"
    assert any("matches its expected window" in s.value for s in at.success)
    summary = _table(at, "resume_qa.summary")
    assert summary["verdict"].tolist() == ["pass"] and summary["thread_id"].tolist() == [RESTART]
    assert summary["attributed_by"].iloc[0].startswith("matched by")


def test_a_divergent_upload_shows_the_diff(app, con):
    lines = _observed_lines(con)
    lines[1]["content"] = lines[1]["content"][:20]  # altered: truncated
    lines[2]["speaker"] = "assistant"  # wrong speaker
    del lines[3]  # missing
    at = open_page(app, "resume_qa", thread=RESTART)
    _upload(at, lines, extra="{broken\n")
    findings = _table(at, "resume_qa.findings")
    expected, _ = observed.compare(con, ("\n".join(json.dumps(x) for x in lines) + "\n{broken\n").encode())
    assert findings["kind"].tolist() == expected["kind"].map(resume_qa.kind_text).tolist()
    assert sorted(findings["kind"]) == ["altered", "malformed line", "missing", "wrong speaker"]
    # Each expected entry by the transcript's numbering: the window is the first four messages.
    assert findings.loc[findings["kind"] == "missing", "message"].tolist() == ["Message 4"]
    assert "expected_position" not in findings.columns
    assert findings.loc[findings["kind"] == "malformed line", "line"].tolist() == [4]
    assert metric(at, "Failed") == "1" and metric(at, "Lines not compared") == "1"
    assert "Download findings CSV" in _downloads(at) and "Download summary CSV" in _downloads(at)


def test_an_upload_nested_100k_deep_is_one_malformed_line_not_a_traceback(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    _upload(at, _observed_lines(con), extra='{"thread_id": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    findings = _table(at, "resume_qa.findings")
    bad = findings[findings["kind"] == "malformed line"]
    assert bad["line"].tolist() == [5] and "nested deeper than 200 levels" in bad["detail"].item()


def test_an_upload_over_the_limit_is_refused_unread(app):
    from ui import access

    at = open_page(app, "resume_qa", thread=RESTART)
    data = b"\n" * (access.OBSERVED_UPLOAD_MB * 1024 * 1024 + 1)
    at.file_uploader(key="resume_qa.observed").set_value(("big.jsonl", data, "application/jsonl")).run()
    assert not at.exception, at.exception
    assert any(f"at most {access.OBSERVED_UPLOAD_MB} MB" in e.value for e in at.error)
    assert not at.get("download_button") or "Download findings CSV" not in _downloads(at)


def test_an_upload_of_more_lines_than_read_is_one_error_naming_the_limit(app):
    from analytics.jsonlines import MAX_LINES

    at = open_page(app, "resume_qa", thread=RESTART)
    data = b"1\n" * (MAX_LINES + 1)
    at.file_uploader(key="resume_qa.observed").set_value(("flood.jsonl", data, "application/jsonl")).run()
    assert not at.exception, at.exception
    assert any(f"more than {MAX_LINES:,} lines" in e.value for e in at.error)
    assert not at.get("download_button") or "Download findings CSV" not in _downloads(at)


def test_an_unknown_thread_in_the_link_is_a_warning(app):
    at = open_page(app, "resume_qa", thread="no:such:thread")
    assert not at.exception
    assert any("no thread 'no:such:thread'" in w.value for w in at.warning)


def test_the_timeline_can_be_drawn_in_checkpoint_order(app, con):
    at = open_page(app, "resume_qa", thread="globex:api:sess-2105", steps="1")  # the forked thread
    assert at.toggle(key="resume_qa.steps").value is True
    spec = json.loads(at.get("echarts_chart")[0].proto.spec)
    line = resume.timeline(con, "globex:api:sess-2105")
    xs = sorted(row[0] for dataset in spec["dataset"] for row in dataset["source"])  # (x is each row's first)
    assert xs == sorted(line["step"].tolist())
    assert {s["name"].split(" · ")[0] for s in spec["series"]} == {"current branch", "other branch"}
    assert spec["xAxis"]["name"] == "step (metadata.step)" and spec["xAxis"]["type"] == "value"
    assert spec["title"]["text"] == "Branch · source"


def test_restarted_threads_are_findable_and_their_resume_points_sortable(app, con):
    at = open_page(app, "resume_qa")
    shown = _table(at, "resume_qa.risks")
    expected = resume.risks(con)
    assert shown["resume_points"].tolist() == expected["resume_points"].tolist()
    assert shown.set_index("thread_id").at[RESTART, "resume_points"] == len(resume.resume_points(con, RESTART))
    at.toggle(key="resume_qa.restarted").set_value(True).run()
    restarted = _table(at, "resume_qa.risks")
    assert RESTART in set(restarted["thread_id"]) and (restarted["resume_points"] > 0).all()
    assert set(restarted["thread_id"]) == set(expected.loc[expected["resume_points"] > 0, "thread_id"])
    assert at.query_params["restarted"] == "1"
    # Another idle gap counts other restarts: the column follows the page's gap.
    at.number_input(key="resume_qa.gap").set_value(1).run()
    again = _table(at, "resume_qa.risks")
    assert again["resume_points"].tolist() == resume.risks(con, gap_minutes=1).query("resume_points > 0")["resume_points"].tolist()


def test_a_finding_is_shown_beside_its_expected_entry(app, con):
    lines = _observed_lines(con)
    lines[3]["content"] = lines[3]["content"].replace("local time", "UTC")
    at = open_page(app, "resume_qa", thread=RESTART)
    _upload(at, lines)
    assert at.selectbox(key="resume_qa.window_pick").value == 1
    boxes = [m.value for m in at.markdown if "border:1px solid #e6e6e6" in m.value]
    assert len(boxes) == 8  # four expected entries, four observed ones
    altered = [b for b in boxes if " · altered" in b]
    assert len(altered) == 2 and not any("altered_content" in b for b in boxes)
    assert "Message 4 · assistant · altered" in altered[0]  # the transcript's numbering, not "#3"
    assert '<del style="background:#fdd;color:#a00">local time</del>' in altered[0]
    assert '<ins style="background:#dfd;color:#060;text-decoration:none">UTC</ins>' in altered[1]


def test_the_expected_window_downloads_as_a_jsonl_template_that_passes(app, con):
    at = open_page(app, "resume_qa", thread=RESTART)
    assert "Download as JSONL template" in _downloads(at)
    qa = resume_qa.thread_qa(con, RESTART, at="1")
    findings, summary = observed.compare(con, qa.template())
    assert findings.empty and summary[["resume_no", "attributed_by", "verdict"]].values.tolist() == [
        [1, "checkpoint_id", "pass"]
    ]
    assert {json.loads(line)["recorded_at"] for line in qa.template().decode().splitlines()} == {
        resume.resume_points(con, RESTART).iloc[0]["after_ts"].isoformat()
    }


def test_the_window_csv_numbers_its_entries_as_the_transcript_does(app, con, downloads):
    at = open_page(app, "resume_qa", thread=RESTART)
    assert not at.exception
    rows = pd.read_csv(io.BytesIO(downloads["resume_qa.window_csv"]()), keep_default_na=False)
    point = resume.resume_points(con, RESTART).iloc[0]
    expected = resume.expected_window(con, RESTART, point.before_checkpoint_id)
    # The rows the table shows, by the numbers the transcript shows ("Message N"): no 0-based position.
    assert rows["Message"].tolist() == [f"Message {int(o) + 1}" for o in expected["ordinal"]]
    assert "Position" not in rows and "Ordinal" not in rows
    assert list(rows.columns) == [columns.header(c) for c in _table(at, "resume_qa.window").columns]


def test_the_thread_picker_names_the_risk_as_the_table_heads_it(app):
    """One word for one number: the picker's "risk N" is the table's Risk column."""
    at = open_page(app, "resume_qa")
    risks = next(t for t in at.dataframe if "risk_score" in t.value.columns)
    header = json.loads(risks.proto.columns)["risk_score"]["label"]
    labels = at.selectbox(key="resume_qa.thread").options  # (as the picker shows them)
    shown = dict(zip(risks.value["thread_id"], zip(risks.value["risk_score"], risks.value["flags"].fillna(""))))
    for label in labels:
        risk, flags = shown[label.split(" · ", 1)[0]]
        assert f" · {header.lower()} {risk}" in label and label.endswith(flags), label  # the table's flags, in words
    said = labels + captions(at) + [o for o in at.selectbox(key="resume_qa.sort").options]
    assert not [s for s in said if re.search(r"\bscore\b", s, re.I)]


WAITED = "acme:mobile:sess-3003"  # waited 38 minutes for a supervisor's approval (demo/README.md)


def test_a_wait_for_a_human_is_labelled_a_human_wait_on_the_timeline(app, con):
    """An idle gap that began at a checkpoint waiting on an interrupt is a person taking their time:
    its line says so; a gap no interrupt explains stays a plain resume."""
    for thread in (WAITED, RESTART):
        at = open_page(app, "resume_qa", thread=thread)
        (chart,) = at.get("echarts_chart")
        (marks,) = [s for s in json.loads(chart.proto.spec)["series"] if "markLine" in s]
        waiting = resume.timeline(con, thread).set_index("checkpoint_id")["has_interrupt"]
        for point, mark in zip(resume.resume_points(con, thread).itertuples(), marks["markLine"]["data"], strict=True):
            assert mark["name"].startswith(f"resume #{point.resume_no}")
            human = bool(waiting[point.before_checkpoint_id]) and point.reason == "idle_gap"
            assert ("human wait" in mark["name"]) == human, (thread, mark["name"])
            assert "restart" not in mark["name"].lower()
    assert resume.timeline(con, WAITED)["has_interrupt"].any()  # (the demo has both kinds)


def test_a_wait_for_a_human_is_not_a_restart_in_the_count_or_the_filter(app, con):
    """A resume point the timeline calls a human wait (an idle gap alone, begun at a checkpoint
    waiting on an interrupt) is counted nowhere as a restart: not in the Restarts column, not by
    "Restarted threads only"."""
    at = open_page(app, "resume_qa")
    shown = _table(at, "resume_qa.risks").set_index("thread_id")["resume_points"]
    restarts = {}
    for thread in shown.index:
        waiting = resume.timeline(con, thread).set_index("checkpoint_id")["has_interrupt"]
        points = resume.resume_points(con, thread)
        waited = points["before_checkpoint_id"].map(waiting).fillna(False).astype(bool)
        human = waited & (points["reason"] == "idle_gap")
        restarts[thread] = int((~human).sum())
        if thread == WAITED:
            assert len(points) and human.all()  # (the demo's wait for a supervisor)
    assert shown.to_dict() == restarts
    at.toggle(key="resume_qa.restarted").set_value(True).run()
    listed = set(_table(at, "resume_qa.risks")["thread_id"])
    assert listed == {t for t, n in restarts.items() if n} and WAITED not in listed
