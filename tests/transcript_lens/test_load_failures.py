"""Every error that can escape a load is caught in one place (`transcript_lens.load`) and
becomes one line `error: <what> (<where>)` and exit 2 from `transcript-lens load` and
`python -m loaders`; the previous database stays byte-identical.

The failures are real: sources of the example kind (tests/loaders/example_source.py)
registered here whose readers raise what a reader should never raise (in the loading
process and in decode workers, or kill their worker), a database path that cannot be
written, a file that is not a DuckDB database, a missing store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import psycopg
import pytest

import transcript_lens
from loaders import registry
from loaders.records import weighted_ranges
from tests.loaders.example_source import JsonlDirReader, JsonlDirSource
from tests.loaders.hostile_util import tree_fingerprint
from tests.loaders.test_conformance import dump_sqlite_store
from transcript_lens.cli import main

ROOT = Path(__file__).resolve().parents[2]


class _FailingReader(JsonlDirReader):
    """Yields the first thread, then fails as `failure` says (in the loading process or a worker)."""

    def __init__(self, folder, options, failure, parallel) -> None:
        super().__init__(folder, options)
        self.failure, self.parallel = failure, parallel

    def threads(self, only=None):
        bundles = super().threads(only)
        yield next(bundles)
        if self.failure == "exit":
            os._exit(3)  # a worker that dies (the OOM killer, a crash in C)
        if self.failure == "twice":
            yield from super().threads(only)  # every thread again: out of the contract's order
            return
        raise self.failure

    def split(self, n, min_bytes=0):
        return weighted_ranges([(t, 1) for t in self._selected(None)], 2) if self.parallel else [(None, None)]


class FailingSource(JsonlDirSource):
    """The example kind, failing. (The failure is the instance's: a load's job carries its
    source to the workers, pickled when they are not forked.)"""

    kind = "failing"

    def __init__(self, failure: BaseException | str, parallel: bool) -> None:
        self.failure, self.parallel = failure, parallel

    def open_reader(self, spec, options):
        return _FailingReader(Path(spec), options, self.failure, self.parallel)


@pytest.fixture(scope="module")
def dumps(sqlite_store, tmp_path_factory) -> Path:
    return dump_sqlite_store(sqlite_store.path, tmp_path_factory.mktemp("failing") / "dumps")


@pytest.fixture
def existing(sqlite_store, tmp_path) -> Path:
    """A database from an earlier good load through the composition root, alone in its folder
    but for the lock file every such load leaves (`analytics.dblock`: never removed)."""
    db = tmp_path / "db" / "lens.duckdb"
    transcript_lens.load(sqlite_store.path, db)
    return db


@pytest.fixture
def failing(monkeypatch):
    monkeypatch.setattr(registry, "_SOURCES", dict(registry.sources()))

    def arm(failure, parallel=False):
        registry.register(FailingSource(failure, parallel))

    return arm


def _one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


FAILURES = {
    "overflow": (OverflowError("a staged text column outgrew one Arrow batch"),
                 "OverflowError: a staged text column outgrew one Arrow batch"),
    "memory": (MemoryError(), "out of memory"),
    "duckdb-oom": (duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 1.5 GiB"),
                   "DuckDB: Out of Memory Error: failed to allocate data of size 1.5 GiB"),
    # DuckDB's words for "a fatal error happened before" say nothing a user can act on: the
    # original error is named instead, in the project's words.
    "duckdb-invalidated": (
        duckdb.FatalException('FATAL Error: Failed: database has been invalidated because of a previous fatal error. '
                              'The database must be restarted prior to being used again.\nOriginal error: "No space '
                              'left on device"'),
        "the database being written failed and was abandoned (No space left on device); the previous database is "
        "unchanged"),
    "unicode": (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
                "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    "runtime": (RuntimeError("something\nwith a second line"), "RuntimeError: something"),
    "psycopg": (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
                "Postgres: canceling statement due to statement timeout"),
    "long": (ValueError("x" * 5000), "x" * 400 + "…"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_an_unexpected_error_is_one_line_exit_2_and_the_database_is_untouched(name, failing, dumps, existing, capsys):
    failure, what = FAILURES[name]
    failing(failure)
    before = tree_fingerprint(existing.parent)
    assert main(["load", str(dumps), "--kind", "failing", "--db", str(existing), "--quiet", "--workers", "1"]) == 2
    assert _one_line(capsys) == f"error: {what} (loading {dumps.resolve()} into {existing})"
    assert tree_fingerprint(existing.parent) == before  # byte-identical, and no temp file beside it


def test_a_duckdb_constraint_error_is_one_line(failing, dumps, existing, capsys):
    failing("twice")  # the same threads twice: the database refuses the duplicate keys
    before = tree_fingerprint(existing.parent)
    assert main(["load", str(dumps), "--kind", "failing", "--db", str(existing), "--quiet", "--workers", "1"]) == 2
    line = _one_line(capsys)
    assert line.startswith("error: DuckDB: Constraint Error: ") and line.endswith(f"(loading {dumps.resolve()} into {existing})")
    assert tree_fingerprint(existing.parent) == before


@pytest.mark.parametrize("failure, what", [
    (OverflowError("too big"), "a load worker failed: OverflowError: too big"),
    ("exit", "a load worker died (exit code 3)"),
])
def test_a_failing_or_dead_worker_is_one_line(failure, what, failing, dumps, existing, capsys):
    failing(failure, parallel=True)
    before = tree_fingerprint(existing.parent)
    assert main(["load", str(dumps), "--kind", "failing", "--db", str(existing), "--quiet", "--workers", "2"]) == 2
    assert _one_line(capsys) == f"error: {what} (loading {dumps.resolve()} into {existing})"
    assert tree_fingerprint(existing.parent) == before


def test_debug_adds_the_traceback_of_the_worker(failing, dumps, existing, capsys, monkeypatch):
    failing(OverflowError("too big"), parallel=True)
    assert main(["load", str(dumps), "--kind", "failing", "--db", str(existing), "--quiet", "--workers", "2", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "in the worker:" in err and "raise self.failure" in err
    assert err.strip().splitlines()[-1].startswith("error: a load worker failed: OverflowError: too big")
    monkeypatch.setenv("TRANSCRIPT_LENS_DEBUG", "1")
    failing(OverflowError("too big"))
    assert main(["load", str(dumps), "--kind", "failing", "--db", str(existing), "--quiet", "--workers", "1"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_the_help_says_how_to_see_the_traceback(capsys):
    with pytest.raises(SystemExit):
        main(["load", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--debug" in text and "TRANSCRIPT_LENS_DEBUG=1" in text and "error: <what> (<where>)" in text


def test_a_database_path_that_cannot_be_written_is_one_line(sqlite_store, tmp_path, capsys):
    (tmp_path / "a-file").write_text("not a folder\n")
    assert main(["load", str(sqlite_store.path), "--db", str(tmp_path / "a-file" / "lens.duckdb"), "--quiet"]) == 2
    line = _one_line(capsys)
    assert str(tmp_path / "a-file") in line


@pytest.mark.parametrize("incremental", [False, True])
def test_a_db_that_is_not_a_duckdb_database_is_refused_and_kept(incremental, sqlite_store, tmp_path, capsys):
    db = tmp_path / "notes.duckdb"
    db.write_text("my notes, not a database\n")
    assert main(["load", str(sqlite_store.path), "--db", str(db), "--quiet", *(["--incremental"] if incremental else [])]) == 2
    assert _one_line(capsys) == f"error: not a DuckDB database, so not replaced: {db} (name a new file or a Transcript Lens database)"
    assert db.read_text() == "my notes, not a database\n"


def test_a_damaged_duckdb_database_fails_an_incremental_load_in_one_line(sqlite_store, existing, capsys):
    data = bytearray(existing.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)  # the header (and its magic) kept, the rest garbage
    existing.write_bytes(bytes(data))
    before = tree_fingerprint(existing.parent)
    assert main(["load", str(sqlite_store.path), "--db", str(existing), "--quiet", "--incremental"]) == 2
    line = _one_line(capsys)
    assert line.startswith("error: DuckDB: ") and str(existing) in line
    assert tree_fingerprint(existing.parent) == before


def test_since_is_refused_for_sqlite_naming_the_kind(sqlite_store, tmp_path, capsys):
    db = tmp_path / "x.duckdb"
    assert main(["load", str(sqlite_store.path), "--db", str(db), "--since", "2025-01-01", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("error: the sqlite source kind takes no option since ")
    assert not db.exists()


def test_a_missing_store_says_no_such_file_under_both_names(tmp_path, capsys):
    missing = tmp_path / "missing.sqlite"
    assert main(["load", str(missing), "--db", str(tmp_path / "x.duckdb"), "--quiet"]) == 2
    assert _one_line(capsys) == f"error: {missing}: no such file"
    proc = subprocess.run([sys.executable, "-m", "loaders", str(missing), "--db", str(tmp_path / "x.duckdb"), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr == f"error: {missing}: no such file\n"


def test_a_keyword_dsn_still_goes_to_postgres(tmp_path, capsys):
    dsn = "host=127.0.0.1 port=9 dbname=agents user=reader password=s3cret connect_timeout=2"
    assert main(["load", dsn, "--db", str(tmp_path / "x.duckdb"), "--quiet"]) == 2
    line = _one_line(capsys)
    assert "cannot connect" in line and "s3cret" not in line and "password=***" in line
