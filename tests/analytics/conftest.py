"""Shared fixtures for analytics tests over a real loaded store."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from analytics import connect
import transcript_lens


@pytest.fixture(scope="session")
def loaded_once(sqlite_store, tmp_path_factory):
    """`sqlite_store` loaded by the real loader, once for the run (never handed out: see `loaded`)."""
    db = tmp_path_factory.mktemp("loaded-once") / "lens.duckdb"
    transcript_lens.load(sqlite_store.path, db)
    return db


@pytest.fixture(scope="module")
def loaded(loaded_once, tmp_path_factory):
    """`sqlite_store` loaded by the real loader, a module's own copy of the one load of the run
    (read it, or copy it before changing it): what a module writes beside it (a workspace) stays
    the module's, as when each module loaded the store itself."""
    db = tmp_path_factory.mktemp("loaded") / "lens.duckdb"
    shutil.copyfile(loaded_once, db)
    return db


@pytest.fixture()
def con(loaded):
    c = connect(loaded)
    yield c
    c.close()


def edited_copy(db: Path, target: Path, *statements: str) -> Path:
    """A copy of `db` at `target` with `statements` run on it (the original stays as it is)."""
    shutil.copyfile(db, target)
    c = duckdb.connect(str(target))
    try:
        for sql in statements:
            c.execute(sql).fetchall()
    finally:
        c.close()
    return target
