"""The labelled set (storegen/labelled.py: real graphs through a real SqliteSaver, six topics in
four languages) at a tenth of its size, loaded once for the module's tests."""

from __future__ import annotations

import pytest

import transcript_lens
from storegen.labelled import build_labelled_store


@pytest.fixture(scope="package")
def labelled(tmp_path_factory):
    """(database path, labels) of the labelled set at scale 0.1, loaded."""
    folder = tmp_path_factory.mktemp("topics")
    labels = build_labelled_store(folder / "labelled.sqlite", seed=5, scale=0.1)
    db = folder / "labelled.duckdb"
    transcript_lens.load(folder / "labelled.sqlite", db)
    return db, labels
