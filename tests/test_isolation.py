"""The tests never use the app's own places (`make app`): the checkout's `.cache/` demo
database and its review workspace, or a database or workspace the developer exported."""

from __future__ import annotations

import os
from pathlib import Path

import transcript_lens
from analytics.workspace.store import workspace_path
from ui import database

ROOT = Path(__file__).resolve().parents[1]


def test_the_app_cache_of_a_test_run_is_a_temporary_folder_of_its_own(app_cache):
    assert os.environ["TRANSCRIPT_LENS_CACHE"] == str(app_cache)
    assert transcript_lens.cache_dir() == database.cache_dir() == app_cache
    assert not app_cache.is_relative_to(ROOT)  # not the checkout's .cache/ that `make app` uses
    assert database.demo_db().parent == app_cache


def test_the_demo_workspace_of_a_test_run_is_beside_its_own_demo(app_cache):
    assert "TRANSCRIPT_LENS_WORKSPACE" not in os.environ and "TRANSCRIPT_LENS_DB" not in os.environ
    ws = workspace_path(database.demo_db())
    assert ws.parent == app_cache.resolve()
    assert not ws.is_relative_to(ROOT / ".cache")
