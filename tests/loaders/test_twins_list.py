"""The pure-Python pass of `make test` (tests/loaders/twins.py) names every loader test module
once: in TWINS (run again without C) or in OTHERS (with why not); the tests of TWINS modules it
skips (PURE_SKIPS) are tests that exist, and it skips them and no other."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from loaders.conformance import CHECKS, check_name
from tests.loaders.twins import HERE, OTHERS, PURE_SKIPS, TWINS, paths


def test_every_loader_test_module_is_either_a_twin_or_another():
    modules = {p.name for p in HERE.glob("test_*.py")}
    assert not set(TWINS) & set(OTHERS)
    assert sorted({*TWINS, *OTHERS}) == sorted(modules), "add the new module to TWINS or OTHERS in twins.py"


def test_the_native_comparisons_and_the_twin_paths_are_in_the_pure_pass():
    # The modules that exercise `_rows`, `_readahead`, `_scan` and the staging with a store's bytes.
    assert {"test_native.py", "test_rows.py", "test_readahead.py", "test_scan.py", "test_parts.py",
            "test_fast_path.py", "test_sqlite_loader.py", "test_conformance.py"} <= set(TWINS)
    assert all((HERE.parents[1] / p).is_file() for p in paths())


def test_every_pure_skip_names_a_test_of_a_twins_module():
    for pattern in PURE_SKIPS:
        module, test = pattern.split("::")
        assert module in TWINS, pattern
        assert re.search(rf"^def {re.escape(test.split('[')[0])}\(", (HERE / module).read_text(), re.M), pattern
        if test.startswith("test_conformance["):
            assert test.removeprefix("test_conformance[*-").removesuffix("]") in {check_name(c) for c in CHECKS}, pattern
    # The checks that read and stage a kind's rows stay in the pure pass.
    skipped_checks = {p.split("-")[-1].rstrip("]") for p in PURE_SKIPS if p.startswith("test_conformance.py::")}
    assert not skipped_checks & {"reader", "split", "load", "split_load"}


def test_the_pure_pass_skips_exactly_the_listed_tests(tmp_path):
    env = {**os.environ, "TRANSCRIPT_LENS_PUREPYTHON": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist", "--basetemp", str(tmp_path),
         "tests/loaders/test_sqlite_loader.py", "-k", "bad_thread_key_pattern or cli_starts_no_thread or source_folder_is_byte"],
        cwd=HERE.parents[1], env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b1 passed, 4 skipped\b", proc.stdout), proc.stdout[-3000:]
    assert "TRANSCRIPT_LENS_PUREPYTHON=1: the pattern is refused before a read" in proc.stdout
