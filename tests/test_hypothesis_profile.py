"""Hypothesis runs the same examples on every CI run (tests/conftest.py registers the profiles)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]


def test_the_profile_of_this_run():
    current = settings()
    assert current.deadline is None  # a slow, shared machine is not a bug
    ci = os.environ.get("HYPOTHESIS_PROFILE") == "ci" or (os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"))
    if ci:
        assert current.derandomize and current.database is None


def test_make_test_runs_the_ci_profile():
    """`make test` (what CI runs) picks the derandomized profile itself, whether or not `CI` is set."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: export HYPOTHESIS_PROFILE = ci$", makefile, re.MULTILINE)
