"""`make test` on a fresh machine: its temporary folder (TMPDIR of every step, set-up included) is
made before any step runs; a set-up step's `mktemp` failed in a folder not made yet."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_tests_temporary_folder_is_made_before_any_step(tmp_path):
    folder = tmp_path / "not-yet"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # (run under make test)
    plan = subprocess.run(["make", "--no-print-directory", "-n", "-B", "test", f"TEST_TMPDIR={folder}"], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    steps = [line for line in plan if line.strip() and not line.startswith("#")]
    assert steps[0] == f"mkdir -p {folder}", steps[:3]
    assert not folder.exists()  # (`-n`: nothing run)
