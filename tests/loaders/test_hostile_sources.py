"""Files that are not checkpoint stores (contract §2 "clear error", §8 "existing database untouched").

Every case goes through the CLI (`python -m loaders SOURCE --db EXISTING`): exit
code 2, exactly one line on stderr that names the path and says what was
expected, and the existing database (and its folder) byte-identical. Most cases
call `loaders.__main__.main` in-process (the code `python -m loaders` runs); a
few also run the real subprocess. Postgres exports: test_hostile_postgres.py.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from analytics.dblock import database_lock
from loaders.__main__ import main
from tests.loaders.conformance import force_split
from tests.loaders.hostile_util import tree_fingerprint
from tests.loaders.util import load_db

ROOT = Path(__file__).resolve().parents[2]
PAGE = 4096


def _sqlite_with(path: Path, ddl: str) -> None:
    con = sqlite3.connect(path)
    con.executescript(ddl)
    con.commit()
    con.close()


def _damaged_page(store: Path, dst: Path) -> Path:
    """The store with one B-tree page of its `writes` table overwritten: header and schema
    are fine, so the damage only shows once rows are read ("disk image is malformed")."""
    con = sqlite3.connect(f"file:{store}?immutable=1", uri=True)
    (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'writes'").fetchone()
    con.close()
    data = bytearray(store.read_bytes())
    data[(root - 1) * PAGE:root * PAGE] = bytes(range(256)) * (PAGE // 256)
    dst.write_bytes(bytes(data))
    return dst


def _make(case: str, store: Path, d: Path) -> Path:
    if case == "missing":
        return d / "missing.sqlite"
    if case == "empty-file":
        (d / "empty.sqlite").write_bytes(b"")
        return d / "empty.sqlite"
    if case == "text-file":
        (d / "notes.txt").write_text("checkpoint notes\nnothing here\n")
        return d / "notes.txt"
    if case == "binary-junk":
        (d / "junk.bin").write_bytes(bytes(range(256)) * 64)
        return d / "junk.bin"
    if case == "sqlite-other-tables":
        _sqlite_with(d / "other.sqlite", "CREATE TABLE foo (a); INSERT INTO foo VALUES (1);")
        return d / "other.sqlite"
    if case == "sqlite-empty-db":
        _sqlite_with(d / "blank.sqlite", "CREATE TABLE t (a); DROP TABLE t;")
        return d / "blank.sqlite"
    if case == "only-checkpoints":
        p = shutil.copyfile(store, d / "only.sqlite")
        _sqlite_with(p, "DROP TABLE writes;")
        return p
    if case == "checkpoints-lacks-columns":
        p = shutil.copyfile(store, d / "cols.sqlite")
        _sqlite_with(p, "ALTER TABLE checkpoints DROP COLUMN metadata;")
        return p
    if case == "truncated-sqlite":
        data = store.read_bytes()
        (d / "cut.sqlite").write_bytes(data[: len(data) // 2])
        return d / "cut.sqlite"
    if case == "damaged-page":
        return _damaged_page(store, d / "damaged.sqlite")
    if case == "sqlite-header-only":
        (d / "header.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
        return d / "header.sqlite"
    if case == "empty-directory":
        (d / "emptydir").mkdir()
        return d / "emptydir"
    if case == "directory-of-junk":
        (d / "junkdir").mkdir()
        (d / "junkdir" / "a.txt").write_text("x")
        (d / "junkdir" / "b.csv").write_text("id,name\n1,x\n")
        return d / "junkdir"
    if case == "zip-of-junk":
        with zipfile.ZipFile(d / "junk.zip", "w") as zf:
            zf.writestr("readme.txt", "not an export")
        return d / "junk.zip"
    raise KeyError(case)


CASES = {
    "missing": r": no such file$",
    "empty-file": r"not a recognised checkpoint source \(expected one of: sqlite",
    "text-file": r"not a recognised checkpoint source \(expected one of: sqlite",
    "binary-junk": r"not a recognised checkpoint source \(expected one of: sqlite",
    "sqlite-other-tables": r"not a SqliteSaver checkpoint file \(missing table checkpoints, writes; found foo\)",
    "sqlite-empty-db": r"not a SqliteSaver checkpoint file \(missing table checkpoints, writes; found no tables\)",
    "only-checkpoints": r"not a SqliteSaver checkpoint file \(missing table writes; found checkpoints\)",
    "checkpoints-lacks-columns": r"table checkpoints lacks column\(s\) metadata",
    "truncated-sqlite": r"unreadable SQLite file",
    "damaged-page": r"unreadable SQLite file \(database disk image is malformed\)",
    "sqlite-header-only": r"(unreadable SQLite file|not a SqliteSaver checkpoint file)",
    "empty-directory": r"(not a recognised checkpoint source|no CSV)",
    "directory-of-junk": r"(not a recognised checkpoint source|no CSV|header)",
    "zip-of-junk": r"(not a recognised checkpoint source|no CSV)",
}


@pytest.fixture(scope="module")
def existing(sqlite_store, tmp_path_factory):
    """A database from an earlier good load; every failing load must leave its folder byte-identical."""
    folder = tmp_path_factory.mktemp("existing")
    db = folder / "existing.duckdb"
    load_db(sqlite_store.path, db)
    with database_lock(db):  # (the lock file every load through the CLI leaves: never removed)
        pass
    return db


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_that_is_not_a_store_fails_in_one_line_and_keeps_the_database(case, sqlite_store, existing, tmp_path, capsys):
    source = _make(case, sqlite_store.path, tmp_path)
    before_db = tree_fingerprint(existing.parent)
    before_src = tree_fingerprint(tmp_path)
    rc = main([str(source), "--db", str(existing), "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {source}") and re.search(CASES[case], lines[0]), lines[0]
    assert tree_fingerprint(existing.parent) == before_db  # untouched, and no temp database left beside it
    assert tree_fingerprint(tmp_path) == before_src  # the source is not written either


@pytest.mark.parametrize("case", ["text-file", "damaged-page"])
def test_the_real_cli_fails_the_same_way(case, sqlite_store, existing, tmp_path):
    source = _make(case, sqlite_store.path, tmp_path)
    before = tree_fingerprint(existing.parent)
    proc = subprocess.run([sys.executable, "-m", "loaders", str(source), "--db", str(existing)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {source}") and re.search(CASES[case], line)
    assert tree_fingerprint(existing.parent) == before


def test_a_damaged_store_fails_the_same_way_in_parallel_workers(sqlite_store, existing, tmp_path, monkeypatch):
    """Damage found inside a decode worker is the same one-line SourceError, not a worker traceback."""
    from loaders import SourceError
    from loaders.sqlite.reader import SqliteReader

    force_split(monkeypatch, SqliteReader)
    source = _make("damaged-page", sqlite_store.path, tmp_path)
    before = tree_fingerprint(existing.parent)
    with pytest.raises(SourceError, match=r"damaged.sqlite: unreadable SQLite file") as err:
        load_db(source, existing, workers=2)
    assert "\n" not in str(err.value)
    assert tree_fingerprint(existing.parent) == before


def test_an_existing_file_that_is_not_a_database_is_kept_when_the_load_fails(tmp_path, capsys):
    target = tmp_path / "notes.duckdb"
    target.write_text("my notes, not a database")
    (tmp_path / "notes.txt").write_text("not a store")
    rc = main([str(tmp_path / "notes.txt"), "--db", str(target), "--quiet"])
    assert rc == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1
    assert target.read_text() == "my notes, not a database"

