"""Erasure under a tenant scope, through the real command line: a reader limited to globex erases
globex's threads, and neither erases, lifts nor reads anything of acme's (docs/privacy.md,
"Tenant scope"; `analytics/erasure/tenants.py`)."""

from __future__ import annotations

import shutil

import pytest

from tests.attacks.harness import run_cli
from tests.erasure_stores import GONE, build_erasure_store

OURS = "globex:mobile:sess-010"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scope-erase")
    store = build_erasure_store(folder / "store.sqlite")
    db = folder / "t.duckdb"
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


@pytest.fixture()
def db(loaded, tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.delenv("TRANSCRIPT_LENS_TENANTS", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    copy = tmp_path / "t.duckdb"
    shutil.copyfile(loaded, copy)
    return copy


def _as_globex(monkeypatch) -> None:
    monkeypatch.setenv("TRANSCRIPT_LENS_TENANTS", "globex")


def _refused(out, *words: str) -> None:
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_a_scoped_reader_cannot_erase_another_tenants_thread_tenant_or_session(db, tmp_path, monkeypatch):
    _as_globex(monkeypatch)
    _refused(run_cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "x"], tmp_path), "your tenants")
    _refused(run_cli(["erase", "--db", str(db), "--tenant", "acme", "--reason", "x"], tmp_path), "outside")
    _refused(run_cli(["erase", "--db", str(db), "--session", "sess-010", "--reason", "x"], tmp_path), "session")
    monkeypatch.delenv("TRANSCRIPT_LENS_TENANTS")
    held = run_cli(["transcript", "--db", str(db), "--thread", GONE], tmp_path)
    assert held.returncode == 0 and "QUINCE-48213-PLOVER" in held.stdout  # nothing erased
    assert run_cli(["erase", "--db", str(db), "--list"], tmp_path).stdout == ""  # no tombstone either


def test_another_tenants_thread_and_a_missing_thread_get_the_same_answer(db, tmp_path, monkeypatch):
    _as_globex(monkeypatch)
    theirs = run_cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "x"], tmp_path)
    missing = run_cli(["erase", "--db", str(db), "--thread", "acme:web:sess-999", "--reason", "x"], tmp_path)
    def answer(out, thread):
        return out.returncode, (out.stdout + out.stderr).replace(thread, "ID")

    assert answer(theirs, GONE) == answer(missing, "acme:web:sess-999")


def test_a_scoped_reader_erases_their_own_thread_and_tenant(db, tmp_path, monkeypatch):
    _as_globex(monkeypatch)
    out = run_cli(["erase", "--db", str(db), "--thread", OURS, "--reason", "x"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "erased thread globex:mobile:sess-010: 1 thread" in out.stdout
    out = run_cli(["erase", "--db", str(db), "--tenant", "globex", "--reason", "x"], tmp_path)
    assert out.returncode == 0, out.stderr


def test_a_scoped_reader_cannot_list_read_the_log_or_lift(db, tmp_path, monkeypatch):
    run_cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "acme gdpr ticket 7"], tmp_path).succeeded()
    _as_globex(monkeypatch)
    for argv in (["--list"], ["--log"], ["--thread", GONE, "--lift", "--reason", "x"]):
        out = run_cli(["erase", "--db", str(db), *argv], tmp_path)
        _refused(out, "scoped to tenants")
        assert GONE not in out.stdout + out.stderr and "ticket" not in out.stdout + out.stderr
    monkeypatch.delenv("TRANSCRIPT_LENS_TENANTS")
    assert "acme gdpr ticket 7" in run_cli(["erase", "--db", str(db), "--log"], tmp_path).stdout


def test_a_load_under_a_tenant_scope_still_holds_every_tombstone_back(loaded, db, tmp_path, monkeypatch):
    """Tombstones are refused to a scoped reader, not to a load (it writes every tenant's rows)."""
    run_cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "x"], tmp_path).succeeded()
    _as_globex(monkeypatch)
    run_cli(["load", str(loaded.parent / "store.sqlite"), "--db", str(db)], tmp_path).succeeded()
    monkeypatch.delenv("TRANSCRIPT_LENS_TENANTS")
    assert run_cli(["transcript", "--db", str(db), "--thread", GONE], tmp_path).returncode == 2
    assert run_cli(["transcript", "--db", str(db), "--thread", OURS], tmp_path).returncode == 0
