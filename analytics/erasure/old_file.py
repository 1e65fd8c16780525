"""The pre-erasure database file, held open while the erasure replaces it: how many names it has left.

An erasure writes the database again and renames the new file over it; the old file's other
names (hard links: an app's version under another cache folder than the erasure's, a link made
by hand) keep it whole, erased text and all, and the scan cannot find them. Its link count,
read from the open file once the app's known links are removed, says how many there are, so
the erasure does not call a clean scan a proof (`Scan.other_links`).

>>> with held_open("lens.duckdb") as names_left:  # doctest: +SKIP
...     rewrite_without("lens.duckdb", ["acme:web:s1"])
...     names_left()
0
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held_open(db: str | os.PathLike) -> Iterator[Callable[[], int]]:
    """The database file at `db` held open while the erasure replaces it: `names_left()` is how
    many names the pre-erasure file still has once another file stands at `db` (hard links: an
    app's version under another cache folder, a link made by hand), each holding its text whole;
    0 while it is still the database, and for a dataset's folder."""
    if not Path(db).is_file():
        yield lambda: 0
        return
    fd = os.open(db, os.O_RDONLY)

    def names_left() -> int:
        old = os.fstat(fd)
        try:
            replaced = os.stat(db).st_ino != old.st_ino
        except FileNotFoundError:
            replaced = True
        return old.st_nlink if replaced else 0

    try:
        yield names_left
    finally:
        os.close(fd)
