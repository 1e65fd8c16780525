"""`TRANSCRIPT_LENS_PUREPYTHON=1`: the one switch that loads without any C, with the same tables.

`loaders._native` is the one import point of the extensions; under the switch
nothing imports them, and a load gives exactly the tables the compiled paths give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loaders import _native
from tests.loaders.util import assert_same_tables

ROOT = Path(__file__).resolve().parents[2]

_LOAD = """
import json, sys
import loaders
from loaders import _native
summary = loaders.load(sys.argv[1], sys.argv[2], workers=int(sys.argv[3]))
print(json.dumps({"pure": _native.PURE_PYTHON, "messages": summary.messages,
                  "extensions": sorted(m for m in sys.modules if m in ("loaders._scan", "loaders._readahead"))}))
"""


def _load_in_subprocess(store: Path, db: Path, workers: int, pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != _native.ENV}
    if pure:
        env[_native.ENV] = "1"
    proc = subprocess.run([sys.executable, "-c", _LOAD, str(store), str(db), str(workers)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.native
def test_the_extensions_are_built():
    # `make test` builds them; a broken build must fail here, not silently test only the twins.
    assert _native.missing() == []


def test_a_pure_python_load_imports_no_extension_and_gives_the_same_tables(sqlite_store, tmp_path):
    workers = 1
    pure = _load_in_subprocess(sqlite_store.path, tmp_path / "pure.duckdb", workers, pure=True)
    assert pure["pure"] is True and pure["extensions"] == [] and pure["messages"] > 0
    compiled = _load_in_subprocess(sqlite_store.path, tmp_path / "compiled.duckdb", workers, pure=False)
    if not _native.PURE_PYTHON:
        assert compiled["extensions"] == ["loaders._readahead", "loaders._scan"]
    assert_same_tables(tmp_path / "pure.duckdb", tmp_path / "compiled.duckdb", with_errors=True)


def test_the_switch_is_read_once_at_import():
    # "0" and "" mean off, anything else on: a typo must not silently turn C off.
    code = "from loaders import _native; print(_native.PURE_PYTHON)"
    for value, expected in (("", "False"), ("0", "False"), ("1", "True"), ("yes", "True")):
        env = {**os.environ, _native.ENV: value}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected, value
