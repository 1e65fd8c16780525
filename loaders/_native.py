"""The one import point of the loader's C extensions, and the one switch to go without them.

Every compiled fast path has a pure-Python twin that gives the same results
(msgpack's pattern): `loaders/_scan.c` (checkpoint scan and payload numbering,
timestamps, Arrow staging: byte-level work, no transcript rule), `loaders/_readahead.c` (a
read-ahead SQLite VFS) and `loaders/_rows.c` (the SQLite reader's checkpoint rows stepped
with SQLite's C API and scanned in SQLite's buffers; its twin is the sqlite3 module's cursor). Callers take the names below and fall back to their twin
when one is None: the extension is not built (no compiler, no SQLite header), or
the environment sets `TRANSCRIPT_LENS_PUREPYTHON=1`, which `make test` uses to run
the loader's tests a second time without any C.

>>> from loaders import _native
>>> _native.scan is None or hasattr(_native.scan, "row")
True
"""

from __future__ import annotations

import os
from types import ModuleType

#: Set (to anything but "" or "0") to load without the C extensions.
ENV = "TRANSCRIPT_LENS_PUREPYTHON"
PURE_PYTHON = os.environ.get(ENV, "") not in ("", "0")

scan: ModuleType | None = None
readahead: ModuleType | None = None
rows: ModuleType | None = None

if not PURE_PYTHON:
    try:
        from loaders import _scan as scan
    except ImportError:  # not built: the Python twins do the same work, slower
        scan = None
    try:
        from loaders import _readahead as readahead  # registers its VFS with SQLite
    except ImportError:  # not built, or no SQLite header to build against: pages are read one by one
        readahead = None
    try:
        from loaders import _rows as rows
    except ImportError:  # not built: the sqlite3 module's cursor gives the rows (and copies each blob)
        rows = None


def missing() -> list[str]:
    """The extensions that should be there but are not (empty under `TRANSCRIPT_LENS_PUREPYTHON=1`).

    >>> isinstance(missing(), list)
    True
    """
    if PURE_PYTHON:
        return []
    return [name for name, mod in (("loaders._scan", scan), ("loaders._readahead", readahead), ("loaders._rows", rows))
            if mod is None]
