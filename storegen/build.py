"""Run scenarios into a checkpointer, or build a fresh SQLite store file.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.sqlite")
    >>> build_sqlite_store(path, scenarios=["simple_chat"])
    {'acme:web:sess-001': 'simple_chat', 'beta:sess-9': 'simple_chat'}
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from storegen.clock import DEFAULT_START, Clock
from storegen.ids import deterministic
from storegen.scenarios import DEFAULT_THREADS, SCENARIOS

SPACING = dt.timedelta(minutes=53)


def select_threads(
    scenarios: Iterable[str] | None = None, threads: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The ``{thread_id: scenario}`` manifest to run (``DEFAULT_THREADS`` filtered)."""
    manifest = dict(threads if threads is not None else DEFAULT_THREADS)
    if scenarios is not None:
        wanted = set(scenarios)
        unknown = wanted - SCENARIOS.keys()
        if unknown:
            raise KeyError(f"unknown scenarios: {sorted(unknown)}; known: {sorted(SCENARIOS)}")
        manifest = {t: s for t, s in manifest.items() if s in wanted}
    return manifest


def run_scenarios(
    checkpointer: BaseCheckpointSaver,
    scenarios: Iterable[str] | None = None,
    *,
    seed: int = 0,
    start: dt.datetime = DEFAULT_START,
    threads: Mapping[str, str] | None = None,
    location: str | None = None,
    spacing: dt.timedelta = SPACING,
) -> dict[str, str]:
    """Write each thread of the manifest through ``checkpointer``; return the manifest.

    Thread *i* starts at ``start + i * spacing`` under a frozen clock, seeded by
    ``(seed, thread_id)``, so one thread's content does not depend on which
    others run. ``location`` (SQLite path / Postgres DSN) is for the
    ``second_process`` scenario when it cannot be derived from the checkpointer.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> run_scenarios(InMemorySaver(), ["operator_add"])
        {'support-bot-7': 'operator_add'}
    """
    manifest = select_threads(scenarios, threads)
    for i, (thread_id, name) in enumerate(manifest.items()):
        fn = SCENARIOS[name]
        with deterministic(f"{seed}:{thread_id}"), Clock(start + i * spacing) as clock:
            if name == "second_process":
                fn(checkpointer, thread_id, clock, location=location)
            else:
                fn(checkpointer, thread_id, clock)
    return manifest


def remove_store(path: str | os.PathLike[str]) -> None:
    """Delete an SQLite file and its ``-wal`` / ``-shm`` / ``-journal`` side files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{os.fspath(path)}{suffix}").unlink(missing_ok=True)


def open_sqlite_saver(path: str | os.PathLike[str], *, fast: bool = True) -> SqliteSaver:
    """A ``SqliteSaver`` on ``path`` as an application would open it.

    ``fast`` sets ``synchronous=OFF`` on this connection only: no fsync per
    commit (the file format is unchanged; a crash could lose the tail).
    """
    conn = sqlite3.connect(os.fspath(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    if fast:
        conn.execute("PRAGMA synchronous=OFF")
    return saver


def build_sqlite_store(
    path: str | os.PathLike[str],
    scenarios: Iterable[str] | None = None,
    seed: int = 0,
    start: dt.datetime = DEFAULT_START,
    *,
    threads: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Write a FRESH SqliteSaver file at ``path`` with all (or some) scenarios.

    Returns the manifest ``{thread_id: scenario}``. The connection is closed at
    the end, which checkpoints the WAL into the main file.
    """
    remove_store(path)
    saver = open_sqlite_saver(path)
    try:
        return run_scenarios(saver, scenarios, seed=seed, start=start, threads=threads, location=os.fspath(path))
    finally:
        saver.conn.close()
