"""JSON Lines import/export and the command line (`annotations`, `queues`, `report annotations`).

The commands run through `transcript_lens.cli.main`, the `transcript-lens` entry point.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import analytics
from analytics import workspace as ws_api
from analytics.workspace import ImportFailed, Workspace
from analytics.workspace.annotating import STORED_COLUMNS
from transcript_lens.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def db(loaded, tmp_path):
    return shutil.copyfile(loaded, tmp_path / "lens.duckdb")


@pytest.fixture()
def threads(db):
    con = analytics.connect(db)
    try:
        rows = con.execute(
            "SELECT thread_id, min(message_id) FILTER (WHERE role = 'assistant') FROM messages "
            "GROUP BY thread_id HAVING count(message_id) > 0 ORDER BY thread_id").fetchall()
    finally:
        con.close()
    return rows


def _write(path, *records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_an_evaluators_lines_import_once_and_fill_in_what_the_database_knows(db, threads, tmp_path):
    (t1, m1), (t2, _) = threads[0], threads[1]
    src = _write(tmp_path / "eval.jsonl",
                 {"thread_id": t1, "label": "wrong answer", "verdict": False, "note": "amount"},
                 "",
                 {"thread_id": t1, "message_id": m1, "verdict": "pass", "author": "grader-2"},
                 {"thread_id": t2, "label": "lost context", "created_at": "2025-03-03T10:00:00+01:00"},
                 {"thread_id": "gone:x:y", "note": "from an older run"})
    summary = ws_api.import_jsonl(db, src, author="eval-v3")
    assert (summary.lines, summary.added, summary.already, summary.orphaned) == (4, 4, 0, 1)
    assert summary.line() == "imported 4 of 4 annotations; 1 not in the database (kept, shown orphaned)"
    got = ws_api.annotations(db)
    assert sorted(got["author"]) == ["eval-v3", "eval-v3", "eval-v3", "grader-2"]
    by_thread = got.set_index(["thread_id", "target"])
    assert by_thread.loc[(t1, "thread"), "verdict"] == "fail"  # JSON false → fail
    msg = by_thread.loc[(t1, "message")]
    assert (msg["role"], msg["status"], msg["origin"]) == ("assistant", "ok", "import") and msg["excerpt"]
    assert by_thread.loc[(t2, "thread"), "created_at"] == "2025-03-03T09:00:00.000000Z"
    assert by_thread.loc[("gone:x:y", "thread"), "orphan_reason"] == "thread gone"
    again = ws_api.import_jsonl(db, src, author="eval-v3")
    assert (again.added, again.already) == (0, 4) and len(ws_api.annotations(db)) == 4


def test_a_bad_file_is_refused_as_a_whole_naming_each_bad_line(db, threads, tmp_path):
    t1 = threads[0][0]
    src = _write(tmp_path / "bad.jsonl",
                 {"thread_id": t1, "label": "good answer"},
                 "{not json",
                 "[1, 2]",
                 {"label": "good answer"},
                 {"thread_id": t1, "lable": "typo"},
                 {"thread_id": t1, "verdict": "maybe"},
                 {"thread_id": t1, "ordinal": "3", "note": "x"},
                 {"thread_id": t1})
    with pytest.raises(ImportFailed) as info:
        ws_api.import_jsonl(db, src)
    text = str(info.value)
    assert text.startswith("7 bad line(s), nothing imported:")
    for line, what in ((2, "not JSON"), (3, "a JSON object, got list"), (4, "thread_id is required"),
                       (5, "unknown key(s) lable"), (6, "a verdict is 'pass' or 'fail'"),
                       (7, "ordinal must be an integer"), (8, "needs a label, a verdict or a note")):
        said = next(x for x in text.splitlines() if f"bad.jsonl:{line}: " in x)
        assert what in said, (line, said)
    assert ws_api.annotations(db).empty and not Workspace.beside(db).exists()


def test_unknown_labels_refuse_the_import_unless_it_may_add_them(db, threads, tmp_path):
    src = _write(tmp_path / "l.jsonl", {"thread_id": threads[0][0], "label": "tone"},
                 {"thread_id": threads[1][0], "label": "good answer"})
    with pytest.raises(ImportFailed, match=r"line 1: unknown label 'tone'"):
        ws_api.import_jsonl(db, src, author="x")
    assert ws_api.annotations(db).empty
    summary = ws_api.import_jsonl(db, src, author="x", add_labels=True)
    assert summary.new_labels == ("tone",) and summary.added == 2
    tone = next(label for label in ws_api.labels(db) if label.name == "tone")
    assert tone.color.startswith("#") and tone.position == 7


def test_export_then_import_moves_annotations_between_workspaces_unchanged(db, threads, tmp_path):
    t1, m1 = threads[0]
    ws_api.annotate(db, t1, label="good answer", note="ünïcode ✓", author="ana")
    ws_api.annotate(db, t1, message_id=m1, verdict="fail", author="ben")
    out = tmp_path / "a.jsonl"
    assert ws_api.export_jsonl(db, out) == 2
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert set(lines[0]) == set(STORED_COLUMNS) and lines[0]["note"] == "ünïcode ✓"
    other = Workspace(tmp_path / "other.sqlite")
    summary = ws_api.import_jsonl(db, out, workspace=other)
    assert summary.added == 2
    cols = ["annotation_id", "target", "thread_id", "message_id", "label", "verdict", "note", "author", "created_at",
            "excerpt", "status"]
    mine = ws_api.annotations(db)[cols]
    theirs = ws_api.annotations(db, workspace=other)[cols]
    pd.testing.assert_frame_equal(mine, theirs)
    assert set(ws_api.annotations(db, workspace=other)["origin"]) == {"import"}


def test_the_command_line_imports_adds_exports_lists_and_reports(db, threads, tmp_path, capsys):
    (t1, m1), (t2, _) = threads[0], threads[1]
    src = _write(tmp_path / "in.jsonl", {"thread_id": t1, "label": "lost context", "verdict": "fail"})
    assert main(["annotations", "import", str(src), "--db", str(db), "--author", "eval"]) == 0
    assert capsys.readouterr().out.strip() == "imported 1 of 1 annotations"
    assert main(["annotations", "add", "--db", str(db), "--thread", t2, "--message-id", m1, "--label",
                 "good answer"]) == 2
    assert "error: cannot annotate the message with id" in capsys.readouterr().err
    assert main(["annotations", "add", "--db", str(db), "--thread", t1, "--message-id", m1, "--label",
                 "good answer", "--author", "ana"]) == 0
    made = capsys.readouterr().out.strip()
    assert len(made) == 32
    assert main(["annotations", "labels", "--db", str(db), "--add", "tone", "--color", "#123456",
                 "--description", "rude or curt"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0] == "#2e7d32  good answer  — Correct, helpful and complete"
    assert listing[-1] == "#123456  tone  — rude or curt"
    assert main(["annotations", "labels", "--db", str(db), "--add", "x"]) == 2
    assert "error: --add needs --color" in capsys.readouterr().err

    out = tmp_path / "e.jsonl"
    assert main(["annotations", "export", "--db", str(db), "--out", str(out)]) == 0
    assert [json.loads(x)["author"] for x in out.read_text().splitlines()] == ["eval", "ana"]
    assert main(["annotations", "export", "--db", str(db)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2

    csv = tmp_path / "a.csv"
    assert main(["report", "annotations", "--db", str(db), "--out", str(csv)]) == 0
    frame = pd.read_csv(csv, keep_default_na=False)
    assert list(frame.columns) == list(ws_api.COLUMNS)
    assert frame["annotation_id"].tolist()[1] == made and set(frame["status"]) == {"ok"}
    assert frame["created_at"].str.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$").all()
    tenant = t1.split(":")[0]
    assert main(["report", "annotations", "--db", str(db), "--out", str(csv), "--tenant", "nobody"]) == 0
    assert len(pd.read_csv(csv)) == 0
    assert main(["report", "annotations", "--db", str(db), "--out", str(csv), "--tenant", tenant]) == 0
    assert len(pd.read_csv(csv)) == 2
    capsys.readouterr()

    assert main(["queues", "create", "triage", "--db", str(db), "--sample", "3", "--seed", "5", "--assign", "ana",
                 "--assign", "ben"]) == 0
    assert capsys.readouterr().out.strip().startswith("queue 1 'triage': 3 threads (a sample of ")
    assert main(["queues", "list", "--db", str(db)]) == 0
    table = capsys.readouterr().out
    assert "(all)" in table and "ana" in table and "ben" in table
    assert main(["queues", "create", "triage", "--db", str(db)]) == 2
    assert "error: a queue named 'triage' exists already" in capsys.readouterr().err
    assert main(["annotations", "import", str(tmp_path / "missing.jsonl"), "--db", str(db)]) == 2
    assert "error: cannot read" in capsys.readouterr().err


def test_the_workspace_flag_and_environment_name_another_file(db, threads, tmp_path, monkeypatch, capsys):
    shared = tmp_path / "team.sqlite"
    assert main(["annotations", "add", "--db", str(db), "--thread", threads[0][0], "--note", "x", "--author", "a",
                 "--workspace", str(shared)]) == 0
    own = Workspace.beside(db)  # holds no annotation, only the record of the other (for erasure)
    assert shared.is_file() and [w.path for w in own.others()] == [shared]
    assert len(ws_api.annotations(db)) == 0
    monkeypatch.setenv(ws_api.ENV, str(shared))
    assert len(ws_api.annotations(db)) == 1


def test_the_installed_command_lists_the_new_subcommands():
    proc = subprocess.run([sys.executable, "-m", "transcript_lens", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0
    assert "annotations" in proc.stdout and "queues" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "transcript_lens", "report", "--help"], capture_output=True,
                          text=True, cwd=ROOT)
    assert "annotations:" in proc.stdout and "--workspace" in proc.stdout
