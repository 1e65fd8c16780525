"""`make` installs storegen/js's packages through scripts/js-deps.sh: a machine's first `npm ci` of
a lock is kept, a later clone with the same lock copies it instead of installing (and compiling)
again; another lock installs anew."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "js-deps.sh"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# Stands in for npm: `npm ci` writes node_modules/marker (the lock it saw) and counts its runs.
FAKE_NPM = """#!/usr/bin/env bash
[ "$1" = ci ] || exit 2
rm -rf node_modules && mkdir -p node_modules/pkg
cp package-lock.json node_modules/pkg/marker
printf x >> "$NPM_RUNS"
"""


def _clone(tmp_path: Path, name: str, lock: str) -> Path:
    clone = tmp_path / name
    (clone / "storegen" / "js").mkdir(parents=True)
    (clone / "storegen" / "js" / "package-lock.json").write_text(lock)
    return clone


def _install(clone: Path, tmp_path: Path) -> int:
    """Run the script in `clone`; the count of `npm ci` runs so far."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    runs = tmp_path / "npm-runs"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TL_JS_CACHE": str(tmp_path / "cache"),
           "NPM_RUNS": str(runs)}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=clone, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return len(runs.read_text()) if runs.exists() else 0


def test_a_lock_is_installed_once_per_machine(tmp_path):
    first = _clone(tmp_path, "first", '{"lock": 1}')
    assert _install(first, tmp_path) == 1
    second = _clone(tmp_path, "second", '{"lock": 1}')
    assert _install(second, tmp_path) == 1  # copied, not installed
    assert (second / "storegen" / "js" / "node_modules" / "pkg" / "marker").read_text() == '{"lock": 1}'
    third = _clone(tmp_path, "third", '{"lock": 2}')
    assert _install(third, tmp_path) == 2
    assert (third / "storegen" / "js" / "node_modules" / "pkg" / "marker").read_text() == '{"lock": 2}'


def test_make_installs_through_it():
    assert "\tbash scripts/js-deps.sh\n" in (ROOT / "Makefile").read_text()
