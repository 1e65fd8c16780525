"""One writer at a time per database: `<db>.lock`, an fcntl `flock` held while a load or an erasure runs.

A load stages a new database and renames it over the old one; an erasure rewrites the
database the same way. Run side by side, the later rename would bring back what the
other removed (an erased thread reappears when a load that started before the
erasure finishes after it). Both take this lock for their whole run, so one waits
for the other. `flock` is released by the kernel when its holder dies, so a killed
load never leaves the database locked. Readers (the app, reports) take no lock: they
read whichever complete file the last rename left.

>>> with database_lock("lens.duckdb"):  # doctest: +SKIP
...     ...  # load or erase
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

SUFFIX = ".lock"


def lock_path(db: str | os.PathLike) -> Path:
    """The lock file of the database at `db`.

    >>> lock_path("/data/lens.duckdb").as_posix()
    '/data/lens.duckdb.lock'
    """
    p = Path(db).expanduser().resolve()
    return p.with_name(p.name + SUFFIX)


@contextmanager
def database_lock(db: str | os.PathLike, on_wait: Callable[[], None] | None = None) -> Iterator[Path]:
    """Hold the database's lock for the block, waiting for whoever holds it (`on_wait` is
    called once before waiting, when someone does). Makes the folder if it is missing, as a
    load into a new folder does."""
    path = lock_path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)  # the file stays: removing it would let two waiters lock two different files
