"""Split loads: workers take thread ranges from a queue, the loading process ingests
each range's parts in order while later ranges are still being decoded."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

import loaders
from loaders import jobs
from loaders.sqlite.reader import SqliteReader
from loaders.catalog import DATA_TABLES
from tests.loaders.conformance import force_split
from tests.loaders.util import assert_same_tables, folder_fingerprint, load_db

TABLES = DATA_TABLES


@pytest.fixture
def forced_split(monkeypatch):
    """The fixture stores are small: split them anyway, into as many ranges as asked."""
    force_split(monkeypatch, SqliteReader)


def physical(db) -> dict[str, list[tuple]]:
    """Every table's rows in storage order (no ORDER BY, one thread)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute("SET threads = 1")
        return {t: con.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}
    finally:
        con.close()


def test_a_split_load_stores_rows_in_the_order_of_a_one_process_load(sqlite_store, tmp_path, forced_split):
    one, split = tmp_path / "one.duckdb", tmp_path / "split.duckdb"
    load_db(sqlite_store.path, one, workers=1)
    reader = SqliteReader(sqlite_store.path, loaders.SourceOptions())
    try:
        assert len(reader.split(2 * jobs.RANGES_PER_WORKER)) > 4  # many ranges, really
    finally:
        reader.close()
    load_db(sqlite_store.path, split, workers=2)
    assert physical(split) == physical(one)  # thread order, whatever order the ranges finished in


def test_ranges_are_ingested_while_later_ones_are_decoded(sqlite_store, tmp_path, forced_split, monkeypatch):
    # The worker of the last range holds it until the first range's parts were read
    # by the ingest; a load that ingested only at the end would wait forever (and fail).
    fed = tmp_path / "fed"
    real_stream = loaders.writer.PartFeed.stream

    def stream(self):
        reader = real_stream(self)

        def batches():
            for batch in reader:
                fed.touch()
                yield batch

        import pyarrow as pa

        return pa.RecordBatchReader.from_batches(self.schema, batches())

    monkeypatch.setattr(loaders.writer.PartFeed, "stream", stream)
    real_job = jobs.run_job
    last_range: list = []

    def job(j, tick, reader=None):
        reader_ranges = SqliteReader(sqlite_store.path, loaders.SourceOptions())
        try:
            ranges = reader_ranges.split(2 * jobs.RANGES_PER_WORKER)
        finally:
            reader_ranges.close()
        if j.thread_range == ranges[-1]:
            deadline = time.monotonic() + 20
            while not fed.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            last_range.append(fed.exists())
            if not fed.exists():
                raise RuntimeError("nothing was ingested while this range waited")
        return real_job(j, tick, reader)

    monkeypatch.setattr(jobs, "run_job", job)  # (inherited by the forked workers)
    db = tmp_path / "db.duckdb"
    load_db(sqlite_store.path, db, workers=2)
    monkeypatch.setattr(jobs, "run_job", real_job)
    plain = tmp_path / "plain.duckdb"
    load_db(sqlite_store.path, plain, workers=1)
    assert_same_tables(db, plain, with_errors=True)


def test_a_worker_failing_mid_load_fails_it_and_keeps_the_database(sqlite_store, tmp_path, forced_split, monkeypatch):
    db = tmp_path / "db.duckdb"
    load_db(sqlite_store.path, db, workers=1)
    before = folder_fingerprint(tmp_path)
    real_job = jobs.run_job

    def job(j, tick, reader=None):
        if j.prefix == "p3":
            raise RuntimeError("boom in range 3")
        return real_job(j, tick, reader)

    monkeypatch.setattr(jobs, "run_job", job)
    # Forked workers, which inherit the patch: a process that still runs other threads (a Dask
    # cluster's, left by tests before this one in the same worker) would start a fork server.
    monkeypatch.setattr(jobs, "mp_context", lambda: jobs.mp.get_context("fork"))
    with pytest.raises(RuntimeError, match="boom in range 3"):
        load_db(sqlite_store.path, db, workers=2)
    assert folder_fingerprint(tmp_path) == before  # no half database left, the old one unchanged
    assert not [t for t in threading.enumerate() if t.name.startswith("ingest-")]  # no INSERT left waiting


def test_progress_counts_every_thread_once_in_a_split_load(sqlite_store, tmp_path, forced_split):
    seen: list[tuple[int, int | None]] = []
    loaders.load(str(sqlite_store.path), tmp_path / "p.duckdb", workers=2, progress=lambda done, total: seen.append((done, total)))
    total = len(sqlite_store.manifest)
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
