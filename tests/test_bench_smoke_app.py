"""The bench scripts of the app, its pages and the outcome and topic computations run on a tiny
store (tests/bench_smoke.py)."""

from __future__ import annotations

import pytest

from tests.bench_smoke import GROUPS, smoke_run


@pytest.mark.parametrize("script", GROUPS["app"])
def test_the_bench_script_runs_on_a_tiny_store(script, sqlite_store, copy_store, tmp_path):
    smoke_run(script, sqlite_store.path, copy_store, tmp_path)
