"""The label set under a tenant scope: a label defined by a reader limited to some tenants is
offered, listed and accepted only within them (and to readers without a scope); the default set
and labels an unscoped reader defines are everyone's (docs/privacy.md, "The review workspace").

The store is `pii_store`'s (two tenants, acme and globex, written by a real graph); the reader's
scope is the deployment's environment (`TRANSCRIPT_LENS_TENANTS`)."""

from __future__ import annotations

import sqlite3

import pytest

import analytics
from analytics import workspace as ws_api
from analytics.errors import NotFound
from analytics.policy import TENANTS_ENV
from tests.analytics.test_workspace_policy import db, store_db  # noqa: F401 - (the fixtures: the store's database)
from transcript_lens.cli import main

ACME, GLOBEX = "acme:web:s1", "globex:web:s1"
SECRET = "GLOBEXSECRETLABEL"


@pytest.fixture()
def labelled(db, monkeypatch):  # noqa: F811
    """The store's database (`db`, no policy set) with an unscoped label and globex's own."""
    ws_api.define_label(db, "shared by the lead", "#123456")  # unscoped: everyone's
    monkeypatch.setenv(TENANTS_ENV, "globex")
    ws_api.define_label(db, SECRET, "#654321", "the merger codename")
    ws_api.annotate(db, GLOBEX, label=SECRET, author="gus")
    monkeypatch.delenv(TENANTS_ENV)
    return db


def _names(db) -> list[str]:
    return [label.name for label in ws_api.labels(db)]


def test_a_label_defined_under_a_scope_is_listed_within_it_only(labelled, monkeypatch, capsys):
    db = labelled
    everyone = {"good answer", "needs follow-up", "shared by the lead"}
    assert {*everyone, SECRET} <= set(_names(db))  # no scope: every label
    monkeypatch.setenv(TENANTS_ENV, "globex")
    assert {*everyone, SECRET} <= set(_names(db))
    monkeypatch.setenv(TENANTS_ENV, "acme")
    assert everyone <= set(_names(db)) and SECRET not in _names(db)
    assert main(["annotations", "labels", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert "shared by the lead" in listed and SECRET not in listed and "merger" not in listed
    monkeypatch.setenv(TENANTS_ENV, "acme,globex")  # (a label made for globex alone is within it)
    assert SECRET in _names(db)


def test_a_label_of_another_scope_is_neither_used_nor_changed_nor_described(labelled, monkeypatch):
    db = labelled
    monkeypatch.setenv(TENANTS_ENV, "acme")
    with pytest.raises(analytics.BadRequest, match="unknown label") as refused:
        ws_api.annotate(db, ACME, label=SECRET, author="ana")
    assert "shared by the lead" in str(refused.value) and "merger" not in str(refused.value)
    with pytest.raises(analytics.BadRequest, match="is taken; choose another") as taken:
        ws_api.define_label(db, SECRET, "#000000")
    assert "merger" not in str(taken.value) and "#654321" not in str(taken.value)
    with pytest.raises(NotFound):
        ws_api.rename_label(db, SECRET, "mine now")
    with pytest.raises(NotFound):
        ws_api.retire_label(db, SECRET)
    ws_api.define_label(db, "acme's own", "#abcdef")
    ws_api.annotate(db, ACME, label="acme's own", author="ana")
    ws_api.rename_label(db, "acme's own", "acme renamed")  # its scope follows the name
    monkeypatch.setenv(TENANTS_ENV, "globex")
    assert "acme renamed" not in _names(db)
    monkeypatch.delenv(TENANTS_ENV)
    labels = {label.name: label for label in ws_api.labels(db)}
    assert labels[SECRET].color == "#654321" and labels[SECRET].description == "the merger codename"
    assert not labels[SECRET].retired and "acme renamed" in labels
    with sqlite3.connect(db.parent / "lens.duckdb.workspace.sqlite") as conn:
        assert conn.execute("SELECT name, scope FROM label_scopes ORDER BY name").fetchall() == [
            (SECRET, '["globex"]'), ("acme renamed", '["acme"]')]
