"""`transcript-lens report outcomes` and `analytics.outcomes()` with other parameters."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import analytics
from analytics.conversation_outcomes.report import OUTCOME_COLUMNS, REPORT_COLUMNS
from analytics.conversation_outcomes.signals import SIGNALS
from tests.analytics.outcomes.conftest import CASES
from transcript_lens.cli import main


def test_cli_report_writes_a_row_per_thread_with_signals_outcome_and_ordinals(signal_store, tmp_path):
    out = tmp_path / "outcomes.csv"
    assert main(["report", "outcomes", "--db", str(signal_store[1]), "--out", str(out)]) == 0
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == REPORT_COLUMNS
    assert REPORT_COLUMNS[:1 + len(SIGNALS)] == ("thread_id", *SIGNALS)
    assert sorted(r["thread_id"] for r in rows) == sorted(CASES)
    frame = analytics.outcomes(signal_store[1]).set_index("thread_id")
    for row in rows:
        want = frame.loc[row["thread_id"]]
        assert row["outcome"] == want["outcome"]
        for s in SIGNALS:
            assert row[s] == ("true" if want[s] else "false")
            assert json.loads(row[f"{s}_ordinals"]) == want[f"{s}_ordinals"]
        assert json.loads(row["outcome_ordinals"]) == want["outcome_ordinals"] and len(want["outcome_ordinals"]) == 1


def test_cli_report_without_out_writes_the_csv_to_stdout(signal_store, tmp_path, capfdbinary):
    out = tmp_path / "outcomes.csv"
    assert main(["report", "outcomes", "--db", str(signal_store[1]), "--out", str(out)]) == 0
    capfdbinary.readouterr()
    # Written through a fresh interpreter's stdout: the bytes a shell redirect keeps.
    shown = subprocess.run([sys.executable, "-m", "transcript_lens", "report", "outcomes", "--db", str(signal_store[1])],
                           check=True, capture_output=True)
    assert shown.stdout == out.read_bytes()


def test_other_parameters_compute_live(signal_store):
    db = signal_store[1]
    default = analytics.outcomes(db).set_index("thread_id")
    assert tuple(default.reset_index().columns) == OUTCOME_COLUMNS
    assert default.loc["en:hitl-slow", "slow_hitl"]
    # A six-hour service level: the five-hour wait is within it; a week-long window: nobody has abandoned yet.
    live = analytics.outcomes(db, hitl_hours=6, idle_minutes=7 * 24 * 60).set_index("thread_id")
    assert not live.loc["en:hitl-slow", "slow_hitl"]
    assert not live["abandoned"].any() and live.loc["en:abandoned", "outcome"] == "unknown"
    # Another lexicon (a phrase no message holds) is computed live, by the rules the load used.
    same = analytics.outcomes(db, lexicon={"extend": True, "human": ["zzz never said"]}).set_index("thread_id")
    assert same.equals(default)


def test_a_user_lexicon_file_replaces_a_category(signal_store, tmp_path):
    path = tmp_path / "lexicon.toml"
    path.write_text('human = ["paket ist"]\n', encoding="utf-8")
    frame = analytics.outcomes(signal_store[1], filters=analytics.Filters(thread_ids=("de:human",)),
                               lexicon=str(path)).set_index("thread_id")
    assert frame.loc["de:human", "user_frustration_ordinals"] == [0]  # "Mein Paket ist verspätet", not "Menschen"


def test_the_function_keeps_its_name_beside_its_subpackage():
    import analytics.conversation_outcomes.lexicon  # noqa: F401  (binds the subpackage on the package, as any import does)

    assert callable(analytics.outcomes) and analytics.outcomes.__module__ == "analytics.conversation_outcomes.report"
