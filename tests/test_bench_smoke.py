"""The bench scripts of loads and reads run on a tiny store (tests/bench_smoke.py); every script
of `bench/` is smoke-run by one of the three files, or by tests/test_bench_outcomes.py."""

from __future__ import annotations

import pytest

from tests.bench_smoke import GROUPS, ROOT, SMOKE, smoke_run


def test_every_bench_script_has_a_smoke_run():
    """A script is a file of `bench/` that runs as a program; a module the scripts share
    (`debian_chromium.py`) is not one."""
    scripts = [p.name for p in (ROOT / "bench").glob("*.py") if 'if __name__ == "__main__"' in p.read_text()]
    assert "bench_load.py" in scripts and "debian_chromium.py" not in scripts
    assert sorted(SMOKE) == sorted(scripts)


def test_every_smoke_run_is_in_one_group():
    grouped = [script for scripts in GROUPS.values() for script in scripts]
    assert sorted(grouped) == sorted(name for name, args in SMOKE.items() if args is not None)


@pytest.mark.parametrize("script", GROUPS["loads"])
def test_the_bench_script_runs_on_a_tiny_store(script, sqlite_store, copy_store, tmp_path):
    smoke_run(script, sqlite_store.path, copy_store, tmp_path)
