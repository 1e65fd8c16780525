"""bench/bench_outcomes.py runs end to end on a tiny labelled set (skipped until `analytics.outcomes` exists)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from storegen.labelled import SIGNALS

ROOT = Path(__file__).resolve().parents[1]
NO_OUTCOMES = 3  # bench_outcomes.NO_OUTCOMES


def test_the_outcomes_bench_prints_every_figure(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_outcomes.py"), "--scale", "0.05", "--errors", "0"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    if out.returncode == NO_OUTCOMES:
        assert "analytics.outcomes is not available" in out.stderr
        pytest.skip("analytics.outcomes is not in this tree yet")
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    for signal in SIGNALS:
        row = next(line for line in lines if line.startswith(signal + " "))
        assert "met" in row or "MISSED" in row, row
    assert any(line.startswith("outcome accuracy: ") for line in lines)
    assert any(line.startswith("topic") for line in lines)
    assert list(tmp_path.iterdir()) == []  # the set and its database live in a temp folder
