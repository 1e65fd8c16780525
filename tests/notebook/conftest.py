"""Fixtures for the notebook surface: the demo store loaded into tmp_path (never the app's own database)."""

from __future__ import annotations

import pytest

import transcript_lens


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("notebook-demo") / "demo.duckdb"
    transcript_lens.load(transcript_lens.demo_store(), db)
    return db
