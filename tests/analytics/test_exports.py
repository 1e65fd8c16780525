"""The export log (analytics.exports): every CLI report, transcript, search and diff, and every
API report, appends who / when / what / rows / masked to the workspace; no log, no export."""

from __future__ import annotations

import getpass
import json
import shutil

import pandas as pd
import pytest

import analytics
import transcript_lens
from analytics import Filters
from analytics.export_log import ExportRefused
from storegen import build_sqlite_store
from transcript_lens.cli import main as cli

THREADS = {"acme:web:sess-001": "simple_chat", "globex:mobile:sess-010": "simple_chat"}
THREAD = "acme:web:sess-001"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exports")
    build_sqlite_store(folder / "store.sqlite", threads=THREADS)
    transcript_lens.load(folder / "store.sqlite", folder / "lens.duckdb")
    return folder / "lens.duckdb"


@pytest.fixture()
def db(loaded, tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.delenv("TRANSCRIPT_LENS_REDACT", raising=False)
    target = tmp_path / "lens.duckdb"
    shutil.copyfile(loaded, target)
    return target


def test_a_cli_report_is_logged_with_its_rows_filters_and_file(db, tmp_path):
    out = tmp_path / "conv.csv"
    assert cli(["report", "conversations", "--db", str(db), "--out", str(out), "--tenant", "acme"]) == 0
    log = analytics.exports(db)
    assert len(log) == 1
    row = log.iloc[0]
    assert (row.who, row.origin, row.what, row.masked) == (getpass.getuser(), "cli", "conversations", False)
    assert row.rows == len(pd.read_csv(out)) == 1
    assert row.target == str(out.resolve()) and row.db == str(db.resolve())
    assert json.loads(row.arguments)["filters"] == {"tenants": ["acme"]}


def test_masked_exports_say_so(db, tmp_path):
    out = tmp_path / "t.csv"
    assert cli(["report", "transcript", "--db", str(db), "--out", str(out), "--redact"]) == 0
    row = analytics.exports(db).iloc[-1]
    assert row.masked and row.what == "transcript" and row.rows == len(pd.read_csv(out))


def test_transcript_search_and_diff_printed_by_the_cli_are_logged(db, capsys):
    assert cli(["transcript", "--db", str(db), "--thread", THREAD, "--format", "csv"]) == 0
    printed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert cli(["search", "the", "--db", str(db), "--format", "json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert cli(["diff", "--db", str(db), "--thread", THREAD, "--with-thread", "globex:mobile:sess-010"]) == 0
    log = analytics.exports(db)
    assert list(log.what) == ["transcript", "search", "diff"]
    assert list(log.origin) == ["cli"] * 3
    assert log.rows.iloc[0] == len(printed) and log.rows.iloc[1] == len(hits)
    assert json.loads(log.arguments.iloc[0])["thread"] == THREAD
    assert log.target.isna().all()  # printed on stdout


def test_a_report_printed_on_stdout_is_logged_without_a_file(db, capsys):
    for out in ([], ["--out", "-"]):
        assert cli(["report", "transcript", "--db", str(db), *out]) == 0
        assert capsys.readouterr().out.startswith("thread_id,")
    log = analytics.exports(db)
    assert list(log.what) == ["transcript", "transcript"]
    assert log.target.isna().all()  # not the temporary file it was staged in on its way out


def test_an_api_report_is_logged_as_the_api_or_as_whom_the_caller_says(db, tmp_path):
    analytics.write_report(db, "daily", tmp_path / "d.csv", Filters(tenants=("globex",)))
    with analytics.acting_as("ana@acme.com", "app"):
        analytics.write_report(db, "daily", tmp_path / "d.json")
    log = analytics.exports(db)
    assert list(zip(log.who, log.origin)) == [(getpass.getuser(), "api"), ("ana@acme.com", "app")]
    assert log.rows.iloc[1] == len(json.loads((tmp_path / "d.json").read_text()))


def test_no_log_no_export(db, tmp_path, monkeypatch, capsys):
    # A workspace that cannot be written (its folder does not exist): the export is refused.
    monkeypatch.setenv("TRANSCRIPT_LENS_WORKSPACE", str(tmp_path / "missing" / "ws.sqlite"))
    with pytest.raises(ExportRefused, match="export refused"):
        analytics.write_report(db, "daily", tmp_path / "d.csv")
    assert not (tmp_path / "d.csv").exists()
    assert cli(["transcript", "--db", str(db), "--thread", THREAD]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "export refused" in captured.err
    assert cli(["report", "daily", "--db", str(db), "--out", str(tmp_path / "x.csv")]) == 2
    assert not (tmp_path / "x.csv").exists()


def test_report_exports_lists_the_log_as_csv_and_json(db, tmp_path):
    analytics.write_report(db, "daily", tmp_path / "d.csv")
    assert cli(["report", "exports", "--db", str(db), "--out", str(tmp_path / "e.csv")]) == 0
    listed = pd.read_csv(tmp_path / "e.csv")
    assert list(listed.columns) == list(analytics.exports(db).columns)
    assert list(listed.what) == ["daily"]  # (the listing itself is logged once written)
    assert cli(["report", "exports", "--db", str(db), "--out", str(tmp_path / "e.json")]) == 0
    records = json.loads((tmp_path / "e.json").read_text())
    assert [r["what"] for r in records] == ["daily", "exports"]


def test_a_masked_export_logs_its_arguments_masked(db, tmp_path, capsys):
    # (a masked search for an email itself is refused: analytics.search)
    assert cli(["search", "the", "--tenant", "bob@example.com", "--db", str(db), "--redact"]) == 0
    assert cli(["search", "the", "--tenant", "bob@example.com", "--db", str(db)]) == 0
    masked, plain = analytics.exports(db).arguments
    assert "bob@example.com" not in masked and "<EMAIL_" in masked
    assert json.loads(plain)["tenant"] == ["bob@example.com"]


def test_a_reader_scoped_to_tenants_cannot_read_the_export_log(db, tmp_path, monkeypatch, capsys):
    """Its rows name other tenants' threads and search texts, and say nothing of whose scope wrote them."""
    assert cli(["report", "transcript", "--db", str(db), "--thread", THREAD, "--out", str(tmp_path / "t.csv")]) == 0
    assert cli(["search", "Zebulon", "--db", str(db)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("TRANSCRIPT_LENS_TENANTS", "globex")
    assert cli(["report", "exports", "--db", str(db)]) == 2
    out, err = capsys.readouterr()
    assert THREAD not in out + err and "Zebulon" not in out + err
    assert err.strip().splitlines() == ["error: the export log spans every tenant (thread ids, search texts, files), "
                                        "so a reader scoped to tenants cannot read it"]
    with pytest.raises(analytics.BadRequest, match="scoped to tenants"):
        analytics.exports(db)
    monkeypatch.delenv("TRANSCRIPT_LENS_TENANTS")
    assert list(analytics.exports(db).what) == ["transcript", "search"]
