"""Fixtures for the app's AppTests: the demo database, README facts, and a v2 router.

The demo database is the one the app itself builds (`ui.database.ensure_demo_db`), in the
run's own cache folder (tests/conftest.py `app_cache`), so these tests also cover "a fresh
machine opens the demo" and never touch the demo database or workspace of `make app`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.apptest_scan import components_scanned_once  # noqa: F401  (autouse fixture)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


@pytest.fixture(autouse=True)
def _v2_router(monkeypatch):
    """Run the app as a `st.navigation` app on every AppTest run.

    AppTest resets Streamlit's "uses the pages/ folder" flag before each run, so
    every rerun after the first would start in v1 multipage mode and run the page
    file alone (no sidebar); `ui.state.router_guard` then reruns, which drops
    one-shot button clicks. A real server sets the flag once per process (see
    test_router_guard_deep_link for the v1 start itself).
    """
    from streamlit.runtime import pages_manager

    original = pages_manager.PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pages_manager.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pages_manager.PagesManager, "__init__", init)


@pytest.fixture(autouse=True)
def _default_db_env(monkeypatch, app_cache):
    # The tests choose the database: the run's own cache (tests/conftest.py `app_cache`), never
    # the developer's exported TRANSCRIPT_LENS_DB or the checkout's .cache/.
    monkeypatch.delenv("TRANSCRIPT_LENS_DB", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(app_cache))
    monkeypatch.setattr("sys.argv", ["app.py"])


@pytest.fixture(scope="session")
def demo_db() -> Path:
    from ui.database import ensure_demo_db

    return ensure_demo_db()


@pytest.fixture()
def con(demo_db):
    import analytics

    c = analytics.connect(demo_db)
    yield c
    c.close()


@pytest.fixture(scope="session")
def readme_facts() -> dict[str, tuple[str, str]]:
    """{thread_id: (first user message, last assistant reply)} from demo/README.md's "Known facts"."""
    text = (ROOT / "demo" / "README.md").read_text()
    section = text.split("## Known facts", 1)[1]
    facts = {}
    for line in section.splitlines():
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            facts[m.group(1)] = (m.group(2), m.group(3))
    assert facts, "demo/README.md lists no known facts"
    return facts


@pytest.fixture()
def app(demo_db):
    """A fresh AppTest of the router on the demo database (not yet run)."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(APP, default_timeout=TIMEOUT)


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch) -> Path:
    """A private cache folder (loads, uploads) with the demo database already in it."""
    from ui.database import demo_db as demo_path

    cache = tmp_path / "cache"
    cache.mkdir()
    source = demo_path()
    shutil.copyfile(source, cache / "demo.duckdb")
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(cache))
    return cache


def markdown_texts(at) -> list[str]:
    return [m.value for m in at.markdown]


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


def metric(at, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}: {[m.label for m in at.metric]}")


def open_page(at, page: str, /, **params):
    """Open `pages/<page>.py` through the router with these query params (a pasted link)."""
    at.query_params.clear()
    at.query_params.update(params)
    # Before the first run AppTest names a page by its file; our url paths are the file stems, so it matches.
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at
