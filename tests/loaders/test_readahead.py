"""`loaders._readahead` (the read-ahead SQLite VFS) changes how pages are read, never what.

Every row of a real store, and of damaged copies of it, reads the same through
the VFS as through SQLite's own; the SQLite reader really uses it; a load with
it equals a load without it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from loaders.sqlite import opening, reader as sqlite_reader
from tests.loaders.util import assert_same_tables, load_db

_readahead = opening.native_readahead
pytestmark = pytest.mark.native

ROWS = [
    "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
    "SELECT * FROM checkpoints",  # table order: long sequential runs
    "SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
]


def test_the_read_ahead_vfs_is_built():
    # `make test` builds it (Debian's libsqlite3-dev); a broken build must fail here.
    assert _readahead is not None, "loaders/_readahead.c is not built: run `python setup.py build_ext --inplace`"


def _read(path: Path, vfs: str | None) -> list:
    extra = f"&vfs={vfs}" if vfs else ""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1{extra}", uri=True)
    try:
        return [("ok", [con.execute(sql).fetchall() for sql in ROWS])]
    except sqlite3.DatabaseError as exc:
        return [("error", type(exc).__name__, str(exc))]
    finally:
        con.close()


def test_every_row_of_a_real_store_reads_the_same_and_mostly_from_the_buffer(sqlite_store):
    served_before, passed_before = _readahead.stats()
    assert _read(sqlite_store.path, _readahead.VFS_NAME) == _read(sqlite_store.path, None)
    served, passed = (a - b for a, b in zip(_readahead.stats(), (served_before, passed_before)))
    # The point of it: most page reads of a table scan come from the buffer.
    assert served > passed > 0


@pytest.mark.parametrize("damage", ["truncate-mid-page", "truncate-half", "zero-pages", "flip-bytes"])
def test_a_damaged_store_reads_the_same_or_fails_the_same(sqlite_store, tmp_path, damage):
    data = bytearray(Path(sqlite_store.path).read_bytes())
    if damage == "truncate-mid-page":
        data = data[: len(data) - 4096 - 1000]
    elif damage == "truncate-half":
        data = data[: len(data) // 2]
    elif damage == "zero-pages":
        start = len(data) // 3 // 4096 * 4096
        data[start : start + 3 * 4096] = bytes(3 * 4096)
    else:
        for i in range(8192, len(data), 7919):
            data[i] ^= 0x5A
    path = tmp_path / "damaged.sqlite"
    path.write_bytes(bytes(data))
    assert _read(path, _readahead.VFS_NAME) == _read(path, None)


def test_the_sqlite_reader_opens_stores_through_it(sqlite_store):
    served_before = _readahead.stats()[0]
    reader = sqlite_reader.SqliteSource().open(str(sqlite_store.path), sqlite_reader.SourceOptions())
    try:
        assert sum(1 for _ in reader.threads()) == len(sqlite_store.manifest)
    finally:
        reader.close()
    assert _readahead.stats()[0] > served_before


def test_a_load_through_it_equals_a_load_without_it(sqlite_store, tmp_path, monkeypatch):
    with_vfs, without = tmp_path / "with.duckdb", tmp_path / "without.duckdb"
    load_db(sqlite_store.path, with_vfs, workers=1)
    monkeypatch.setattr(opening, "native_readahead", None)
    load_db(sqlite_store.path, without, workers=1)
    assert_same_tables(with_vfs, without, with_errors=True)
