"""The one writer of CSV cells (`analytics.reporting.csv_cells`, `write_csv_rows`): text that a
spreadsheet would run as a formula is written as text; numbers, and text that is one number, as
they are (docs/security.md, "CSV files and spreadsheets")."""

from __future__ import annotations

import csv
import io

import duckdb
import pytest

from analytics.reporting.csv_cells import cell
from analytics.reporting.writer import write_csv_rows

FORMULAS = ["=1+1", "+cmd", "-cmd", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "- 5"]
KEPT = ["-12", "+3.5", "-1e3", "-.5", "plain", "a=b", "'=already", ""]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_is_text(text):
    assert cell(text) == "'" + text


@pytest.mark.parametrize("text", KEPT)
def test_a_number_or_plain_text_is_kept(text):
    assert cell(text) == text


def test_the_sql_rule_is_the_python_rule(tmp_path):
    con = duckdb.connect()
    values = FORMULAS + KEPT
    rel = con.sql("SELECT unnest($t) AS t, -5 AS n, -2.5::DOUBLE AS x", params={"t": values})
    write_csv_rows(rel, tmp_path / "rows.csv")
    rows = list(csv.reader(io.StringIO((tmp_path / "rows.csv").read_bytes().decode(), newline="")))
    assert rows[0] == ["t", "n", "x"]
    assert [r[0] for r in rows[1:]] == [cell(v) for v in values]
    assert {(r[1], r[2]) for r in rows[1:]} == {("-5", "-2.5")}  # numbers stay numbers
