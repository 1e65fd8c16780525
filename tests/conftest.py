"""Session fixtures: real checkpoint stores written by real graphs through real savers.

Building stores is the slow part (~3 s for all scenarios, including the second
OS process), so each store is built once per session. Fixtures hand out paths;
a test that OPENS a store through LangGraph or SQLite in write mode must work
on a copy (fixture ``copy_store``, function ``copy_store_files``): ``SqliteSaver.setup()`` creates ``-wal``/``-shm``
files and closing the last connection rewrites the main file.

Example:
    def test_first_question(sqlite_store, oracle_rows):
        tid = sqlite_store.thread("simple_chat")
        first = next(r for r in oracle_rows if r["thread_id"] == tid and r["role"] == "user")
        assert first["content"] == "Hi! Can you help me reset my password?"
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `storegen` and `tests.oracle` import from the repo root
    sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from loaders import _native  # noqa: E402
from storegen import build_sqlite_store, run_scenarios  # noqa: E402
from tests import oracle  # noqa: E402


# Hypothesis the same on every run in CI (`CI` set, as .ci/run is run): examples derived from the
# test itself, no example database carried between runs, no per-example deadline (a loaded
# 2-core machine is slow by chance, not by a bug). Elsewhere the default profile explores anew.
settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "native: compares a C extension with its Python twin (skipped under TRANSCRIPT_LENS_PUREPYTHON=1)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Without the extensions (the pure-Python run of `make test`) there is nothing to compare.
    if _native.PURE_PYTHON:
        skip = pytest.mark.skip(reason=f"{_native.ENV}=1: the C extensions are not loaded")
        for item in items:
            if "native" in item.keywords:
                item.add_marker(skip)


# The app's own places a developer uses (`make app`): the demo database and its review workspace in
# `.cache/`, an exported database or workspace. A test run never reads or writes them.
APP_ENV = ("TRANSCRIPT_LENS_CACHE", "TRANSCRIPT_LENS_DB", "TRANSCRIPT_LENS_WORKSPACE")


def _run_root(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole run: shared by the xdist workers (each has a subfolder)."""
    base = factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


@pytest.fixture(scope="session", autouse=True)
def app_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The app's cache folder for this run (``$TRANSCRIPT_LENS_CACHE``): the demo database the app
    builds, its workspace, loads and uploads live there, never in the checkout's ``.cache/``.

    One folder for all workers of a run, so the demo database is built once or twice (the loader
    writes atomically, so two workers building it at once both leave a valid file).

    Example:
        def test_x(app_cache):
            assert ui.database.demo_db().parent == app_cache
    """
    cache = _run_root(tmp_path_factory) / "app-cache"
    cache.mkdir(exist_ok=True)
    saved = {name: os.environ.pop(name, None) for name in APP_ENV}
    os.environ["TRANSCRIPT_LENS_CACHE"] = str(cache)
    yield cache
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


SIDE_SUFFIXES = ("-wal", "-shm")


def copy_store_files(path: str | os.PathLike[str], dst_dir: str | os.PathLike[str], name: str | None = None) -> Path:
    """Copy an SQLite store plus any ``-wal`` / ``-shm`` into ``dst_dir``; return the new path.

    Example:
        >>> p = copy_store_files(sqlite_store.path, tmp_path)   # tmp_path/"all.sqlite" (+ side files)
    """
    src = Path(path)
    dst_dir = Path(dst_dir)
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / (name or src.name)
    for suffix in SIDE_SUFFIXES:  # stale side files next to the copy would corrupt it
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    for suffix in SIDE_SUFFIXES:
        side = Path(f"{src}{suffix}")
        if side.exists():
            shutil.copyfile(side, f"{dst}{suffix}")
    return dst


@dataclass(frozen=True)
class Store:
    """A generated store: ``path`` and ``manifest`` ``{thread_id: scenario}``."""

    path: Path
    manifest: dict[str, str]
    extra: dict[str, Any] = field(default_factory=dict)

    def threads_of(self, scenario: str) -> list[str]:
        return [t for t, s in self.manifest.items() if s == scenario]

    def thread(self, scenario: str) -> str:
        """The first thread written by ``scenario``."""
        return self.threads_of(scenario)[0]


@pytest.fixture(scope="session")
def copy_store():
    """The ``copy_store_files(path, dst_dir, name=None) -> Path`` helper, as a fixture.

    Example:
        def test_x(sqlite_store, copy_store, tmp_path):
            private = copy_store(sqlite_store.path, tmp_path)
    """
    return copy_store_files


@pytest.fixture(scope="session")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Every scenario of ``storegen.DEFAULT_THREADS`` in one SqliteSaver file (WAL checkpointed, closed)."""
    path = tmp_path_factory.mktemp("store") / "all.sqlite"
    manifest = build_sqlite_store(path)
    return Store(path, manifest)


@pytest.fixture(scope="session")
def oracle_saver(sqlite_store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteSaver]:
    """A strict-decoding ``SqliteSaver`` on a private copy of ``sqlite_store``."""
    copy = copy_store_files(sqlite_store.path, tmp_path_factory.mktemp("oracle"))
    saver = oracle.open_sqlite(copy)
    yield saver
    saver.conn.close()


@pytest.fixture(scope="session")
def oracle_rows(oracle_saver: SqliteSaver) -> list[dict[str, Any]]:
    """``oracle.expected_messages`` of ``sqlite_store`` (contract §3 rows)."""
    return oracle.expected_messages(oracle_saver)


@pytest.fixture(scope="session")
def oracle_checkpoints(oracle_saver: SqliteSaver) -> list[dict[str, Any]]:
    """``oracle.expected_checkpoints`` of ``sqlite_store``."""
    return oracle.expected_checkpoints(oracle_saver)


@pytest.fixture(scope="session")
def wal_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A store whose newest threads exist ONLY in ``-wal`` (a live writer's view).

    ``simple_chat`` threads were written and checkpointed into the main file;
    then a writer with ``wal_autocheckpoint=0`` added the ``edit`` thread and
    the three files were copied while that writer was still open. ``extra``:
    ``wal_threads`` (only in -wal), ``main_threads`` (in the main file too).
    Copy it (``copy_store``) before opening: the first reader that closes
    checkpoints the WAL into the main file.
    """
    work = tmp_path_factory.mktemp("wal_writer")
    live = work / "live.sqlite"
    base = build_sqlite_store(live, scenarios=["simple_chat"])
    conn = sqlite3.connect(live, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        conn.execute("PRAGMA wal_autocheckpoint=0")
        more = run_scenarios(saver, ["edit"], threads={"globex::s2": "edit"})
        assert Path(f"{live}-wal").stat().st_size > 0
        path = copy_store_files(live, tmp_path_factory.mktemp("wal_store"), "wal.sqlite")
    finally:
        conn.close()
    return Store(path, {**base, **more}, {"wal_threads": sorted(more), "main_threads": sorted(base)})
