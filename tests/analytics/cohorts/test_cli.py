"""`transcript-lens report compare` and `report costs` from the command line, on a real loaded store."""

from __future__ import annotations

import csv
import io

import pytest

from analytics.cohorts.compare import COLUMNS
from transcript_lens.cli import main


def _csv(capsys):
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_report_compare_by_app_version(labelled_db, tmp_path, capsys):
    db, labels = labelled_db
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-4o-mini-2024-07-18"]\ninput = 0.15\noutput = 0.6\n', encoding="utf-8")
    assert main(["report", "compare", "--db", str(db), "--a-meta", "app_version=1.0", "--b-meta", "app_version=1.1",
                 "--prices", str(prices)]) == 0
    rows = _csv(capsys)
    assert rows and tuple(rows[0]) == COLUMNS
    by_name = {r["name"]: r for r in rows}
    n = sum(1 for r in labels["threads"].values() if r["app_version"] == "1.0")
    assert by_name["abandoned"]["n_a"] == str(n) and "cost" in by_name


def test_report_compare_cohort_option_replaces_the_shared_one(labelled_db, capsys):
    db, labels = labelled_db
    assert main(["report", "compare", "--db", str(db), "--meta", "app_version=1.0", "--a-tenant", "acme",
                 "--b-tenant", "globex"]) == 0
    rows = {r["name"]: r for r in _csv(capsys)}
    acme = sum(1 for t, r in labels["threads"].items() if r["app_version"] == "1.0" and t.startswith("acme:"))
    assert rows["abandoned"]["n_a"] == str(acme)


def test_report_costs_needs_prices_and_groups(labelled_db, tmp_path, capsys):
    db, _ = labelled_db
    assert main(["report", "costs", "--db", str(db)]) != 0
    assert "--prices" in capsys.readouterr().err
    prices = tmp_path / "prices.csv"
    prices.write_text("model,input,output\ngpt-4o-mini-2024-07-18,1,2\n", encoding="utf-8")
    assert main(["report", "costs", "--db", str(db), "--prices", str(prices), "--cost-by", "tenant,outcome"]) == 0
    rows = _csv(capsys)
    assert list(rows[0])[:3] == ["tenant", "outcome", "conversations"]
    assert sum(float(r["cost"]) for r in rows) > 0
