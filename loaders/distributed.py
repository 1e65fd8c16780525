"""Loads past one machine: thread ranges decoded as tasks on a cluster, into a Parquet dataset.

The driver splits the source into thread-id ranges (`SourceReader.split`) and
hands one task per range to an engine (`loaders.engines`: Dask). Each task opens
the source itself (its own Postgres connection and snapshot; for SQLite, the
file at a path every worker sees), decodes its range exactly as a local load's
worker does, and writes the range's rows as Parquet parts into an attempt folder
of its own under the dataset's `.staging/` (shared storage). A task returns that
folder; only returned folders are used, so the parts of an attempt whose worker
was lost, or that raised and ran again, are never read: no duplicate rows.
Once every range is back, the driver moves the parts into a new version,
computes the per-load tables (digests, derived tables, `loads`, `meta`) with
DuckDB over those parts, and makes the version current (`loaders.dataset`); a
failed load leaves the current version as it was.

>>> load_distributed("checkpoints.sqlite", "lens/", scheduler="local:2")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from loaders import dataset
from loaders.catalog import DATA_TABLES, LOADS, META, SCHEMA_VERSION, THREAD_DIGESTS, staging_schemas
from loaders.cipher import AesKey, KeyProblem
from loaders.digests import write_digests
from loaders.engines import Engine, engine_for
from loaders.parts import ERROR_TABLE
from loaders.jobs import RANGES_PER_WORKER, Job, open_with_key, run_job, the_key
from loaders.registry import resolve
from loaders.source import SourceOptions
from loaders.summary import TOOL_VERSION, DerivedTables, LoadSummary, load_row
from loaders.thread_keys import compile_thread_key
from loaders.writer import DatabaseWriter, counts, record_load

_ROW_TABLES = (*DATA_TABLES, ERROR_TABLE)  # what tasks write; the driver writes the rest


@dataclass(frozen=True)
class RangeTask:
    """One range of threads to decode (picklable: it travels to a worker)."""

    index: int
    source: str
    kind: str
    options: SourceOptions
    thread_key_pattern: str | None
    thread_range: tuple[str | None, str | None]
    staging: str  # the load's folder under `.staging/`, on storage every worker shares
    load_id: int
    aes_key: AesKey | KeyProblem | None = None

    @property
    def part(self) -> str:
        return f"r{self.index:05d}"


def decode_range(task: RangeTask) -> str:
    """Run on a worker: decode one range into Parquet parts; return their folder (this attempt's own)."""
    import loaders  # noqa: F401  (registers the built-in source kinds in a fresh worker)

    attempt = Path(task.staging) / f"{task.part}-{uuid.uuid4().hex[:8]}"
    arrow = attempt / "arrow"
    arrow.mkdir(parents=True)
    job = Job(
        resolve(task.source, task.kind), task.source, task.options, task.thread_key_pattern, None, str(arrow), "p0",
        staging_schemas(), thread_range=task.thread_range, aes_key=task.aes_key,
    )
    staged = run_job(job, lambda n: None)
    tables = attempt / "tables"
    # The same ingest as a local load (JSON checks, computed columns), into a scratch database
    # that is never committed (the writer removes it), then out as Parquet.
    with DatabaseWriter(attempt / "range.duckdb") as writer:
        writer.ingest_all({t: [f] for t, f in staged["files"].items()}, task.load_id)
        for table in _ROW_TABLES:
            dataset.copy_table(writer.con, table, tables, part=task.part)
    shutil.rmtree(arrow, ignore_errors=True)
    return str(tables)


def load_distributed(
    source: str | os.PathLike,
    folder: str | os.PathLike,
    *,
    scheduler: str | None = None,
    engine: Engine | None = None,
    kind: str | None = None,
    thread_key_pattern: str | None = None,
    options: SourceOptions | Mapping[str, Any] | None = None,
    derived: DerivedTables | None = None,
    aes_key: AesKey | bytes | None = None,
    ranges_per_worker: int = RANGES_PER_WORKER,
) -> LoadSummary:
    """A full load of `source` into the dataset at `folder`, decoded on `engine` (or the one
    `scheduler` names: `local:N`, `tcp://HOST:PORT`). `folder` must be on storage every
    worker shares. Returns the load's summary once its version is current."""
    folder = Path(folder)
    dataset.refuse_foreign_folder(folder)
    src = resolve(str(source), kind)
    options = src.options(options)
    compile_thread_key(thread_key_pattern)
    key = the_key(aes_key)
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    own = engine is None
    if engine is None:
        if scheduler is None:
            raise ValueError("a distributed load needs a scheduler (local:N or tcp://HOST:PORT) or an engine")
        engine = engine_for(scheduler)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / ".staging" / uuid.uuid4().hex
    try:
        reader = open_with_key(src, str(source), options, key)
        try:
            described = reader.describe()
            ranges = reader.split(engine.workers * ranges_per_worker) if reader.capabilities.split else [(None, None)]
        finally:
            reader.close()
        load_id = _previous_load_id(folder) + 1
        tasks = [
            RangeTask(i, str(source), src.kind, options, thread_key_pattern, tuple(r), str(staging), load_id, key)
            for i, r in enumerate(ranges)
        ]
        staging.mkdir(parents=True)
        parts = engine.map(decode_range, tasks)
        version = dataset.new_version(folder)
        try:
            _gather(parts, version)
            summary = _finish(version, folder, load_id, derived, described, src.kind, started, thread_key_pattern, options)
        except BaseException:
            shutil.rmtree(version, ignore_errors=True)
            raise
        dataset.commit_version(folder, version)
        # A local load's working database no longer holds what is current: the next local load starts afresh.
        (folder / dataset.WORK_DB).unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if own:
            engine.close()
    return replace(summary, seconds=time.perf_counter() - t0)


def _previous_load_id(folder: Path) -> int:
    import duckdb

    if not dataset.is_dataset(folder):
        return 0
    con = duckdb.connect()
    try:
        dataset.create_views(con, {t: s for t, s in dataset.table_sources(folder).items() if t == LOADS.name})
        return con.execute("SELECT coalesce(max(load_id), 0) FROM loads").fetchone()[0]
    finally:
        con.close()


def _gather(parts: list[str], version: Path) -> None:
    """Move each range's returned parts into the version (names carry the range: no clash)."""
    for tables in map(Path, parts):
        for f in tables.rglob("*.parquet"):
            dest = version / f.relative_to(tables)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, dest)


def _finish(
    version: Path, folder: Path, load_id: int, derived: DerivedTables | None, described: str, kind: str,
    started: datetime, thread_key_pattern: str | None, options: SourceOptions,
) -> LoadSummary:
    """The per-load tables, computed by DuckDB over the version's parts and written beside them."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        dataset.version_views(con, version, _ROW_TABLES)
        for table in (LOADS, META, THREAD_DIGESTS):
            con.execute(table.ddl())
        if dataset.is_dataset(folder):  # the history of loads into this folder
            previous = dataset.table_sources(folder).get(LOADS.name)
            if previous is not None:
                con.execute("INSERT INTO loads SELECT * FROM read_parquet(?)", [previous.glob])
        write_digests(con, load_id, None)
        if derived is not None:
            derived.prepare()
            derived.write(con, None)
        c = counts(con, load_id)
        summary = LoadSummary(
            load_id, described, kind, "full", str(folder), c["threads"], c["checkpoints"], c["messages"], c["errors"],
            0.0,
        )
        record_load(con, load_row(summary, started, thread_key_pattern, options), SCHEMA_VERSION, TOOL_VERSION)
        written = dict(con.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall())
        for table in written:
            dataset.copy_table(con, table, version)
        dataset.write_tables_file(version, {**{t: None for t in _ROW_TABLES}, **written}, load_id)
    finally:
        con.close()
    return summary
