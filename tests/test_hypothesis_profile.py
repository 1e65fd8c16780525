"""Hypothesis runs the same examples on every CI run (tests/conftest.py registers the profiles)."""

from __future__ import annotations

import os

from hypothesis import settings


def test_the_profile_of_this_run():
    current = settings()
    assert current.deadline is None  # a slow, shared machine is not a bug
    if os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"):
        assert current.derandomize and current.database is None
