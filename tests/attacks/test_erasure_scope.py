"""Erasure under a tenant scope: a tombstone holds its threads out of every later load for every
reader, and the tombstones and the erasure log name every tenant's threads and reasons, so a
reader scoped to tenants can neither erase, nor lift, nor list them — in another tenant or its
own (docs/privacy.md, "Tenant scope"). A load under a scope still holds every tombstone back."""

from __future__ import annotations

import pytest

import analytics
from tests.attacks.harness import attack
from tests.attacks.test_erasure import env, store  # noqa: F401 (fixtures: the app cache; the erasure store)
from tests.erasure_stores import GONE

SCOPED = {"TRANSCRIPT_LENS_TENANTS": "globex"}


def _threads(db) -> set[str]:
    con = analytics.connect(db)
    try:
        return {t for (t,) in con.execute("SELECT DISTINCT thread_id FROM messages").fetchall()}
    finally:
        con.close()


@pytest.mark.parametrize("argv", [
    ["--thread", GONE, "--reason", "x"],
    ["--tenant", "acme", "--reason", "x"],
    ["--thread", "globex:mobile:sess-010", "--reason", "x"],
    ["--thread", GONE, "--lift", "--reason", "x"],
    ["--list"],
    ["--log"],
], ids=["other-thread", "other-tenant", "own-thread", "lift", "list", "log"])
def test_a_reader_scoped_to_a_tenant_cannot_erase_lift_or_list(store, tmp_path, env, argv):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    attack(["load", str(store), "--db", str(db)], tmp_path, env=env).succeeded()
    attack(["erase", "--db", str(db), "--thread", "initech:support:sess-020", "--reason", "acme gdpr ticket 7"],
           tmp_path, env=env).succeeded()
    before = _threads(db)

    out = attack(["erase", "--db", str(db), *argv], tmp_path, env={**env, **SCOPED})
    out.refused("scoped to tenants").within_budget().never_prints("acme gdpr ticket 7", "initech:support:sess-020")
    assert _threads(db) == before
    assert [t.value for t in analytics.tombstones(db)] == ["initech:support:sess-020"]


def test_a_load_under_a_tenant_scope_still_holds_every_tombstone_back(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    attack(["load", str(store), "--db", str(db)], tmp_path, env=env).succeeded()
    attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR"], tmp_path, env=env).succeeded()
    attack(["load", str(store), "--db", str(db)], tmp_path, env={**env, **SCOPED}).succeeded()
    assert GONE not in _threads(db)
