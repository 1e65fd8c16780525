"""`make test` runs the fuzz smoke once per change of what it fuzzes (scripts/fuzz-smoke-once.sh):
the same code on the same machine is not fuzzed twice with the same inputs; any edit, committed
or not, runs it again; a smoke that failed is run again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fuzz-smoke-once.sh"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A git checkout holding a C source and the script, as the project's is laid out."""
    repo = tmp_path / "repo"
    (repo / "loaders").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / "loaders" / "_scan.c").write_text("int f(void) { return 1; }\n")
    shutil.copy(SCRIPT, repo / "scripts" / SCRIPT.name)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first")
    return repo


def _smoke(repo: Path, cache: Path, code: int = 0) -> bool:
    """Run the script over a command that counts its runs (exit `code`); True if the command ran."""
    ran = repo.parent / "ran"
    before = ran.read_text().count("x") if ran.exists() else 0
    command = f"printf x >> {ran}; exit {code}"
    env = {**os.environ, "TL_FUZZ_TOOLS_CACHE": str(cache), "PY": sys.executable}
    env.pop("FUZZ_SMOKE_ALWAYS", None)
    done = subprocess.run(["bash", "scripts/fuzz-smoke-once.sh", "bash", "-c", command], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert done.returncode == code, done.stderr
    return ran.read_text().count("x") > before


def test_the_same_code_is_smoked_once_and_an_edit_runs_it_again(checkout, tmp_path):
    cache = tmp_path / "cache"
    assert _smoke(checkout, cache)
    assert not _smoke(checkout, cache)
    (checkout / "loaders" / "_scan.c").write_text("int f(void) { return 2; }\n")  # not committed
    assert _smoke(checkout, cache)
    assert not _smoke(checkout, cache)
    (checkout / "loaders" / "_twin.py").write_text("x = 1\n")  # a new file, not yet added
    assert _smoke(checkout, cache)


def test_a_smoke_that_failed_runs_again(checkout, tmp_path):
    cache = tmp_path / "cache"
    assert _smoke(checkout, cache, code=1)
    assert _smoke(checkout, cache, code=1)
    assert _smoke(checkout, cache)
    assert not _smoke(checkout, cache)


def test_make_test_runs_the_smoke_through_it():
    assert "bash scripts/fuzz-smoke-once.sh $(MAKE) fuzz-smoke" in (ROOT / "Makefile").read_text()
