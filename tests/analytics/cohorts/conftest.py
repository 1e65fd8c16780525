"""The labelled outcome set (storegen/labelled.py: real graphs, a real SqliteSaver, two app versions in
checkpoint metadata), loaded once for the module's tests."""

from __future__ import annotations

import json

import pytest

import transcript_lens
from storegen.labelled import build_labelled_store, labels_path


@pytest.fixture(scope="module")
def labelled_db(tmp_path_factory):
    """(database path, labels): the set at scale 0.05 (58 threads), loaded by the real loader."""
    folder = tmp_path_factory.mktemp("cohorts")
    store = folder / "set.sqlite"
    build_labelled_store(store, scale=0.05, seed=3)
    db = folder / "lens.duckdb"
    transcript_lens.load(store, db)
    return db, json.loads(labels_path(store).read_text(encoding="utf-8"))
