"""`python -m analytics transcript`: the same answers as `read`, printed; every mistake one line, exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from analytics import TranscriptQuery, read
from analytics.cli import main
from tests.analytics.dbutil import Msg, write_db

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
THREAD = "acme:eu:s-1"
CALL = [{"name": "search", "args": {"q": "Lisbon"}, "id": "call-1", "type": "tool_call"}]
TRANSCRIPT = [
    Msg("system", "You are a travel agent.", ts=T0),
    Msg("user", "Find me a flight to Lisbon", ts=T0),
    Msg("assistant", "", ts=T0 + timedelta(minutes=1), tool_calls=CALL),
    Msg("tool", "3 flights\nfound", ts=T0 + timedelta(minutes=1), name="search", tool_call_id="call-1"),
    Msg("assistant", "I found 3 flights.", ts=T0 + timedelta(minutes=1)),
    Msg("user", "Which one is cheapest?", ts=T0 + timedelta(minutes=30)),
    Msg("assistant", "The 07:15 one. " + "x" * 300, ts=T0 + timedelta(hours=2)),
]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return write_db(
        tmp_path_factory.mktemp("cli") / "lens.duckdb",
        {THREAD: TRANSCRIPT, "no-stamps": [Msg("user", "hello", message_id=None)]},
    )


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["transcript", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_prints_the_speaker_view_and_says_times_are_utc(db, capsys):
    code, out, err = run(capsys, "--db", str(db), "--thread", THREAD, "--speaker", "user")
    assert code == 0
    assert "UTC" in err and "2 rows" in err
    lines = out.splitlines()
    assert "ts (UTC)" in lines[0]
    assert len(lines) == 3
    assert "Find me a flight to Lisbon" in lines[1] and "2025-03-01 09:00:00" in lines[1]
    assert "Which one is cheapest?" in lines[2]
    assert "travel agent" not in out


def test_table_keeps_each_message_on_one_line(db, capsys):
    code, out, _ = run(capsys, "--db", str(db), "--thread", THREAD)
    assert code == 0
    assert len(out.splitlines()) == 1 + len(TRANSCRIPT)
    assert "3 flights found" in out  # the newline in the tool content is flattened
    assert "…" in out  # the 300-character reply is cut in the table (CSV/JSON keep it whole)


def test_negative_index_is_accepted_as_a_value(db, capsys):
    code, out, _ = run(capsys, "--db", str(db), "--thread", THREAD, "--speaker", "assistant", "--index", "-1")
    assert code == 0
    body = out.splitlines()[1:]
    assert len(body) == 1 and "The 07:15 one." in body[0]


def test_csv_is_the_api_answer(db, capsys):
    code, out, _ = run(
        capsys, "--db", str(db), "--thread", THREAD, "--since", "2025-03-01T09:01:00Z", "--format", "csv"
    )
    assert code == 0
    printed = pd.read_csv(io.StringIO(out), dtype={"content": str}, keep_default_na=False)
    expected = read(db, TranscriptQuery(THREAD, since=T0 + timedelta(minutes=1)))
    assert printed["index"].tolist() == expected["index"].tolist()
    assert printed["ordinal"].tolist() == expected["ordinal"].tolist()
    assert printed["content"].tolist() == expected["content"].tolist()  # whole, newline included
    assert pd.to_datetime(printed["ts"], utc=True).tolist() == expected["ts"].tolist()
    assert printed["ts"].str.endswith("Z").all()


def test_json_is_the_api_answer_with_tool_calls_nested(db, capsys):
    code, out, _ = run(capsys, "--db", str(db), "--thread", THREAD, "--speaker", "assistant", "--format", "json")
    assert code == 0
    records = json.loads(out)
    expected = read(db, TranscriptQuery(THREAD, speaker="assistant"))
    assert [r["ordinal"] for r in records] == expected["ordinal"].tolist()
    assert [r["index"] for r in records] == [0, 1, 2]
    assert records[0]["tool_calls"] == CALL
    assert records[1]["tool_calls"] is None
    assert records[0]["ts"] == "2025-03-01T09:01:00.000000Z"


def test_limit_and_index_follow_the_contract(db, capsys):
    code, out, _ = run(capsys, "--db", str(db), "--thread", THREAD, "--limit", "2", "--format", "json")
    assert code == 0
    assert [r["ordinal"] for r in json.loads(out)] == [0, 1]
    code, out, _ = run(capsys, "--db", str(db), "--thread", THREAD, "--index", "99", "--format", "json")
    assert code == 0 and json.loads(out) == []


def test_naive_bounds_are_read_as_utc_and_the_output_says_so(db, capsys):
    code, out, err = run(
        capsys, "--db", str(db), "--thread", THREAD, "--since", "2025-03-01T09:30", "--until", "2025-03-01T12:00:00+02:00",
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    assert [r["ordinal"] for r in json.loads(out)] == [5]
    assert "--since" in err and "UTC" in err and "--until" not in err


def test_an_empty_answer_is_not_an_error(db, capsys):
    code, out, err = run(capsys, "--db", str(db), "--thread", THREAD, "--since", "2030-01-01")
    assert code == 0
    assert out == ""
    assert "0 rows" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--since", "yesterday"], "--since"),
        (["--until", "2025-02-30T10:00"], "--until"),
        (["--index", "first"], "--index"),
        (["--limit", "1.5"], "--limit"),
        (["--limit", "-1"], "limit"),
        (["--speaker", "bot"], "--speaker"),
        (["--format", "xml"], "--format"),
        (["--index", "0", "--since", "2025-03-01"], "index"),
        (["--since", "2025-03-02", "--until", "2025-03-01"], "after"),
        (["--thread", "nope"], "nope"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(db, capsys, args, needle):
    code, out, err = run(capsys, "--db", str(db), "--thread", THREAD, *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_time_range_over_a_thread_without_timestamps_is_one_line(db, capsys):
    code, _, err = run(capsys, "--db", str(db), "--thread", "no-stamps", "--until", "2025-03-01")
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and "no message timestamps" in err


def test_a_missing_or_damaged_database_is_one_line(tmp_path, capsys):
    code, _, err = run(capsys, "--db", str(tmp_path / "missing.duckdb"), "--thread", THREAD)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "missing.duckdb" in err
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    code, _, err = run(capsys, "--db", str(junk), "--thread", THREAD)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "junk.duckdb" in err


def test_python_dash_m_analytics_transcript(db):
    ok = subprocess.run(
        [sys.executable, "-m", "analytics", "transcript", "--db", str(db), "--thread", THREAD, "--speaker", "user",
         "--index", "0", "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert [r["content"] for r in json.loads(ok.stdout)] == ["Find me a flight to Lisbon"]
    bad = subprocess.run(
        [sys.executable, "-m", "analytics", "transcript", "--db", str(db), "--thread", THREAD, "--since", "soon"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "ISO 8601" in bad.stderr
