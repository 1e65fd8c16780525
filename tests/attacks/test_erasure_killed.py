"""`transcript-lens erase` killed with SIGKILL at each step (a database file with its review
workspace, and a Parquet dataset): the database or dataset is left whole, the erased thread
all there or all gone in it (never some tables rewritten and others not), and the erasure run
again completes: exit 0, its scan clean, the text in no file.

To kill at a step whatever the machine's speed, a `sitecustomize` on the subprocess's path
holds the erasure at the step named by `TL_HOLD` (after writing a marker file) until it is
killed, as tests/loaders/test_atomic.py holds a load.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import analytics
from tests.attacks.harness import ROOT, attack
from tests.erasure_stores import GONE, SECRET_ASK, build_erasure_store, files_holding

SITECUSTOMIZE = '''
import importlib, os, time
_where = os.environ.get("TL_HOLD")
if _where:
    def _hold():
        open(os.environ["TL_HOLD_MARK"], "w").close()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(0.01)
    if _where == "replace":  # the rewritten copy is complete, not yet renamed over the database
        _replace = os.replace
        def replace(src, dst, *a, **k):
            if str(src).endswith("-erase"):
                _hold()
            return _replace(src, dst, *a, **k)
        os.replace = replace
    else:
        _module, _name = _where.split(":")
        _mod = importlib.import_module(_module)
        _real = getattr(_mod, _name)
        def held(*a, **k):
            _hold()
            return _real(*a, **k)
        setattr(_mod, _name, held)
'''

# Each step an erasure passes through, before it runs.
FILE_STEPS = ["replace", "analytics.erasure.erasing:purge_workspace", "analytics.erasure.erasing:scan"]
DATASET_STEPS = ["replace", "loaders.dataset:write_version", "analytics.erasure.erasing:purge_workspace"]
TABLES = ("threads", "checkpoints", "messages", "message_versions", "message_events")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_erasure_store(tmp_path_factory.mktemp("erasure-killed-store") / "store.sqlite")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sitecustomize")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder


def _env(tmp_path: Path) -> dict[str, str]:
    return {"TRANSCRIPT_LENS_CACHE": str(tmp_path / "cache")}


def _counts(db: Path) -> dict[str, int]:
    con = analytics.connect(db)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE thread_id = ?", [GONE]).fetchone()[0] for t in TABLES}
    finally:
        con.close()


def _erase_killed_at(step: str, db: Path, tmp_path: Path, site: Path) -> None:
    mark = tmp_path / "held"
    mark.unlink(missing_ok=True)
    (tmp_path / ".kill-tmp").mkdir(exist_ok=True)
    env = {**os.environ, **_env(tmp_path), "TMPDIR": str(tmp_path / ".kill-tmp"), "TL_HOLD": step,
           "TL_HOLD_MARK": str(mark), "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("TRANSCRIPT_LENS_WORKSPACE", None)
    proc = subprocess.Popen([sys.executable, "-m", "tests.attacks.measure", "erase", "--db", str(db), "--thread", GONE,
                             "--reason", "GDPR request"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # (polls for the marker: the erasure holds there until killed)
        assert mark.exists(), proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL


def _annotate(db: Path) -> None:
    con = analytics.connect(db)
    try:
        (ordinal,) = con.execute("SELECT ordinal FROM messages WHERE thread_id = ? AND content = ?",
                                 [GONE, SECRET_ASK]).fetchone()
    finally:
        con.close()
    analytics.annotate(db, GONE, ordinal=ordinal, label="wrong answer", note=f"quoted: {SECRET_ASK}", author="rev")


@pytest.mark.parametrize("parquet, step", [(False, s) for s in FILE_STEPS] + [(True, s) for s in DATASET_STEPS],
                         ids=[f"file-{s.split(':')[-1]}" for s in FILE_STEPS] + [f"dataset-{s.split(':')[-1]}" for s in DATASET_STEPS])
def test_a_killed_erasure_leaves_the_thread_whole_or_gone_and_a_rerun_completes(store, tmp_path, site, monkeypatch,
                                                                               parquet, step):
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    db = tmp_path / ("lens" if parquet else "lens.duckdb")
    attack(["load", str(store), "--db", str(db), *(["--format", "parquet"] if parquet else [])], tmp_path,
           env=_env(tmp_path)).succeeded()
    _annotate(db)
    before = _counts(db)
    assert all(before.values()), before

    _erase_killed_at(step, db, tmp_path, site)
    after = _counts(db)  # (the database or dataset opens: whole)
    assert after in (before, dict.fromkeys(TABLES, 0)), after

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=_env(tmp_path))
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout
    assert _counts(db) == dict.fromkeys(TABLES, 0)
    assert files_holding(tmp_path) == []
