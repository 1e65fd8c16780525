"""From a source to a DuckDB database (or a Parquet dataset): `load()`.

`load()` dispatches on the output: a DuckDB database (`_load_database`), a Parquet dataset
(`_load_dataset`: a database load, then exported as a version), or a Parquet dataset decoded
on a Dask cluster (`loaders.distributed`). A database load runs in named stages: plan (the
source opened; for an incremental load, the threads that changed), decode (`loaders.jobs`:
in worker processes when the source splits by thread range, each range's parts ingested
while later ones are decoded), and commit (digests, the derived tables, the `loads` row,
one commit: the database changes only if the whole load succeeds; `loaders.writer`).

>>> load("demo/demo.sqlite", "demo.duckdb").messages  # doctest: +SKIP
412
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from loaders import jobs
from loaders.catalog import DATA_TABLES, ERROR_TABLE, SCHEMA_VERSION, staging_schemas
from loaders.cipher import AesKey
from loaders.digests import source_digests, stored_digests, write_digests
from loaders.jobs import RANGES_PER_WORKER, Job, batches, default_workers, open_with_key, the_key
from loaders.records import LoadError, SourceError, check_thread_count, max_threads
from loaders.registry import resolve
from loaders.scratch import remove_stale_scratch, scratch_dir
from loaders.source import Source, SourceOptions, SourceReader
from loaders.summary import TOOL_VERSION, DerivedTables, LoadSummary, Progress, load_row
from loaders.thread_keys import compile_thread_key
from loaders.writer import DatabaseWriter, PartFeed, connect_read_only, refuse_foreign_target


class _Previous(NamedTuple):
    """What an incremental load needs of the database it updates (read in one open)."""

    digests: dict[str, str]  # `thread_digests`
    reread: set[str]  # threads read again by every incremental load: waiting on a human, or stale
    token: str | None  # `meta.source_token`: the source as the last load found it (`_source_token`)


def _previous(db: Path) -> _Previous | None:
    """The database's digests and the threads to read again; None when it says it was written under
    another schema version (it cannot take new rows beside its old ones: the load is a
    full one). One that cannot be read fails the load with DuckDB's words."""
    import duckdb

    con = connect_read_only(db)
    try:
        try:
            found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        except duckdb.Error:
            found = []
        if found and found[0][0] != SCHEMA_VERSION:
            return None
        marked = con.execute("SELECT thread_id, stale_reason IS NOT NULL FROM threads "
                             "WHERE interrupt_pending OR stale_reason IS NOT NULL").fetchall()
        reread, stale = {t for t, _ in marked}, any(s for _, s in marked)
        token = con.execute("SELECT value FROM meta WHERE key = 'source_token'").fetchall()
        # A stale thread may decode now with the same bytes (a key given this time): no shortcut.
        return _Previous(stored_digests(con), reread, token[0][0] if token and not stale else None)
    finally:
        con.close()


def _changed_threads(reader: SourceReader, previous: _Previous) -> tuple[frozenset[str], list[str]]:
    """Threads whose checkpoint keys differ from what the database's loads read, and
    threads that were waiting on a human or stale: (to load, to drop).

    One digest per thread on each side (`loaders.digests`): the source's, and the
    one stored in `thread_digests` by the load that read the thread.

    A pending interrupt can change with no new checkpoint: a resume that meets the
    next `interrupt()` of the same task only adds writes to the checkpoint it
    resumed from. Those threads (few: the human-in-the-loop backlog) are read again
    every time. (A thread with no pending interrupt gets new writes only when a new
    checkpoint comes with them, except a task re-run from an unchanged checkpoint
    after an error: the database does not keep writes, so that case needs a full load.)
    A stale thread (its latest root checkpoint did not decode) is read again too: the
    key given this time, or a repaired row, may decode it with no key changed.
    """
    known = previous.digests
    seen = source_digests(reader)
    changed = frozenset(t for t, digest in seen.items() if known.get(t) != digest or t in previous.reread)
    gone = sorted(t for t in known if t not in seen)
    return changed, gone


def _source_token(
    reader: SourceReader, options: SourceOptions, thread_key_pattern: str | None, derived: DerivedTables | None,
) -> str | None:
    """What must be equal for a source to hold what the last load read: the reader's change
    token, the same source, options and thread-key pattern, and the derived tables' context
    (`DerivedTables`); None: no cheap token."""
    token = reader.change_token()
    if token is None:
        return None
    context = derived.context() if hasattr(derived, "context") else None
    return json.dumps([token, reader.describe(), asdict(options), thread_key_pattern, context], sort_keys=True, default=str)


def _unchanged(db: Path, source: str, kind: str, seconds: float) -> LoadSummary:
    """The answer of an incremental load that found nothing to do: what the database holds
    (its file is not opened for writing, so a reader sees no new version)."""

    con = connect_read_only(db)
    try:
        load_id, threads, checkpoints, messages = con.execute(
            "SELECT (SELECT max(load_id) FROM loads), (SELECT count(*) FROM threads), "
            "(SELECT count(*) FROM checkpoints), (SELECT count(*) FROM messages)"
        ).fetchall()[0]
    finally:
        con.close()
    return LoadSummary(load_id, source, kind, "incremental", str(db), threads, checkpoints, messages, 0, seconds, 0)


class _StreamingIngest:
    """The loading process's half of a split load: one INSERT per table, started once
    the workers run, reading each range's parts in range order as they are staged."""

    def __init__(self, open_writer: Callable[[], tuple[DatabaseWriter, int]], schemas: dict) -> None:
        self._open_writer = open_writer
        self.feeds = {t: PartFeed(schemas[t]) for t in (*DATA_TABLES, ERROR_TABLE)}
        self._wait: Callable[..., None] | None = None

    def start(self) -> None:
        self.writer, self.load_id = self._open_writer()
        self._wait = self.writer.ingest_feeds(self.feeds, self.load_id)

    def add(self, result: dict) -> None:
        """A range's parts (`run_job`'s result), in range order."""
        for table, file in result["files"].items():
            self.feeds[table].add(file)

    def finish(self) -> tuple[DatabaseWriter, int]:
        """Every range added: wait for the INSERTs to end."""
        for feed in self.feeds.values():
            feed.close()
        self._wait()
        return self.writer, self.load_id

    def abandon(self) -> None:
        """The load failed: stop the INSERTs (their errors give way to the failure)."""
        for feed in self.feeds.values():
            feed.close(failed=True)
        if self._wait is not None:
            self._wait(raise_errors=False)



def load(
    source: str,
    db: str | Path,
    *,
    kind: str | None = None,
    thread_key_pattern: str | None = None,
    options: SourceOptions | Mapping[str, Any] | None = None,
    incremental: bool = False,
    progress: Progress | None = None,
    workers: int | None = None,
    derived: DerivedTables | None = None,
    aes_key: AesKey | bytes | None = None,
    format: str = "duckdb",
    scheduler: str | None = None,
) -> LoadSummary:
    """Load a checkpoint store into a DuckDB database, atomically.

    `options` are the source kind's (`Source.options`): its options class, or a
    mapping such as `{"schema": "agents"}` (None values = not given); one the
    kind does not take is a `SourceError` naming the kind.

    A full load replaces the database; `incremental=True` re-reads only the
    threads whose checkpoints changed since the previous load (new threads, new
    checkpoints of old threads), drops threads gone from the source, and changes
    the database in place in one transaction (a copy when another process has it
    open or the file has another name); when nothing changed it leaves the database untouched. Nothing
    changes unless the whole load succeeds. `derived` tables, if given, are
    written in the same commit (only the changed threads' rows after an
    incremental load). Values an
    `EncryptedSerializer` wrote are decrypted with `aes_key` (`loaders.cipher`;
    None: the key in `LANGGRAPH_AES_KEY`, if set); without a key they are reported.

    `format="parquet"`: `db` is a folder, written as a Parquet dataset (`loaders.dataset`):
    the load goes into the folder's working database, then every table is exported
    as a new version that becomes current in one pointer swap. `scheduler` (with
    parquet only; a full load): the threads are decoded as tasks on a Dask cluster,
    `local:N` or `tcp://HOST:PORT` (`loaders.distributed`).

    >>> load("demo/demo.sqlite", "demo.duckdb").messages  # doctest: +SKIP
    412
    """
    if format not in ("duckdb", "parquet"):
        raise ValueError(f"unknown output format {format!r} (duckdb or parquet)")
    common = dict(kind=kind, thread_key_pattern=thread_key_pattern, options=options, derived=derived, aes_key=aes_key)
    if scheduler is not None:
        if format != "parquet" or incremental:
            raise ValueError("--scheduler writes a full load as a Parquet dataset: give --format parquet, not --incremental")
        from loaders.distributed import load_distributed

        return load_distributed(source, db, scheduler=scheduler, **common)
    if format == "parquet":
        return _load_dataset(source, Path(db), incremental=incremental, progress=progress, workers=workers, **common)
    return _load_database(source, Path(db), incremental=incremental, progress=progress, workers=workers, **common)


@dataclass
class _Plan:
    """What a database load reads and rewrites, decided before anything is decoded."""

    src: Source
    reader: SourceReader
    options: SourceOptions
    mode: str  # full / incremental
    only: frozenset[str] | None  # the threads to read (None: every thread)
    replaced: list[str] | None  # what the derived tables and digests rewrite (None: every thread)
    token: str | None  # the source's change token (`_source_token`)
    described: str


def _load_database(
    source: str, db: Path, *, kind: str | None, thread_key_pattern: str | None, options, incremental: bool,
    progress: Progress | None, workers: int | None, derived: DerivedTables | None, aes_key,
) -> LoadSummary:
    """`load()` into a DuckDB database: plan, decode, commit."""
    refuse_foreign_target(db)  # before anything is read or written
    src = resolve(str(source), kind)
    options = src.options(options)
    compile_thread_key(thread_key_pattern)  # fail before touching anything
    aes_key = the_key(aes_key)
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    reader = open_with_key(src, str(source), options, aes_key)
    remove_stale_scratch()  # what loads killed outright left behind
    folder = scratch_dir("parts")
    # Whatever the derived tables need is prepared in a thread while the source is compared or
    # decoded rather than after (`_prepare`); never across a fork (`_decode` says when it starts).
    prefetch = threading.Thread(target=_prepare, args=(derived,), daemon=True)
    try:
        plan = _plan(src, reader, options, db, incremental, thread_key_pattern, derived, prefetch)
        if isinstance(plan, LoadSummary):  # (nothing changed)
            return replace(plan, seconds=time.perf_counter() - t0)
        base = Job(src, str(source), options, thread_key_pattern, plan.only, str(folder), "p0", staging_schemas(),
                   aes_key=aes_key)
        with _Writers(db, plan) as writers:
            writer, load_id = _decode(plan, base, workers or default_workers(), progress, prefetch, writers)
            if prefetch.ident is not None:  # (started)
                prefetch.join()
            summary = _commit(writer, load_id, plan, str(db), derived, t0)
            writer.record_load(load_row(summary, started, thread_key_pattern, options), SCHEMA_VERSION, TOOL_VERSION)
            writer.record_source_token(plan.token)
            writer.commit()
    finally:
        reader.close()
        shutil.rmtree(folder, ignore_errors=True)
    return replace(summary, seconds=time.perf_counter() - t0)


def _plan(
    src: Source, reader: SourceReader, options: SourceOptions, db: Path, incremental: bool,
    thread_key_pattern: str | None, derived: DerivedTables | None, prefetch: threading.Thread,
) -> _Plan | LoadSummary:
    """Full or incremental, and which threads: a `LoadSummary` of the database as it is when
    not a byte of the source changed, or no thread did."""
    # A database written under another schema cannot take new rows beside its old ones:
    # an incremental load of it is a full one.
    previous = _previous(db) if incremental and db.exists() else None
    token = _source_token(reader, options, thread_key_pattern, derived)
    if previous is not None and token is not None and previous.token == token:
        # Not a byte of the source changed since the last load: nothing to compare.
        return _unchanged(db, reader.describe(), src.kind, 0.0)
    only: frozenset[str] | None = None
    gone: list[str] = []
    if previous is not None:
        # An incremental load prepares while the source builds its key digests, and waits for
        # it before it decodes: SQLite hands each row over in a step of its own, and every step
        # waits for the GIL an importing thread holds (on the 2,000 x 40 store the key
        # comparison took 0.27-0.35 s beside the imports when it came as a row a thread; it
        # comes as one value now, `loaders.sqlite.keys.one_step_digests`).
        prefetch.start()
        only, gone = _changed_threads(reader, previous)
        if not only and not gone:
            return _unchanged(db, reader.describe(), src.kind, 0.0)
        prefetch.join()
    return _Plan(src, reader, options, "full" if previous is None else "incremental", only,
                 None if only is None else sorted(only | set(gone)), token, reader.describe())


class _Writers:
    """Opens the load's `DatabaseWriter` when the decode asks for it (after any worker is
    forked: DuckDB runs threads of its own), and closes it when the load ends."""

    def __init__(self, db: Path, plan: _Plan) -> None:
        self.db, self.plan, self.writer = db, plan, None

    def open(self) -> tuple[DatabaseWriter, int]:
        incremental = self.plan.mode == "incremental"
        self.writer = DatabaseWriter(self.db, start_from_existing=incremental, in_place=incremental).__enter__()
        if incremental:
            self.writer.delete_threads(self.plan.replaced)
        else:
            self.writer.previous_loads()
        return self.writer, self.writer.next_load_id()

    def __enter__(self) -> _Writers:
        return self

    def __exit__(self, *exc) -> None:
        if self.writer is not None:
            self.writer.__exit__(*exc)


def _decode(plan: _Plan, base: Job, workers: int, progress: Progress | None, prefetch: threading.Thread,
            writers: _Writers) -> tuple[DatabaseWriter, int]:
    """Every thread of the plan decoded, staged and ingested: in `workers` processes taking
    thread ranges (a full load of a source that splits), else in this process."""
    reader = plan.reader
    total = len(plan.only) if plan.only is not None else reader.thread_count()
    check_thread_count(plan.described, total, max_threads())
    ranges = None
    if plan.only is None and workers > 1 and reader.capabilities.split:
        ranges = reader.split(workers * RANGES_PER_WORKER)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    if not (ranges and len(ranges) > 1):
        if plan.mode == "full":
            prefetch.start()  # (no worker will be forked: a thread may run from now on, beside the decode)
        # One pass over the reader that was opened (and, for exports, staged) above:
        # the same snapshot that decided `only`, and no second staging.
        result = jobs.run_job(base, tick, reader)
        writer, load_id = writers.open()
        writer.ingest_all({t: [f] for t, f in result["files"].items()}, load_id)
        return writer, load_id
    handoff = reader.handoff() if reader.capabilities.handoff else None
    if handoff is not None:
        # A staged export or a SQLite snapshot: workers read ours (kept until the load ends).
        base = replace(base, handoff=handoff)
    else:
        # Workers open the source themselves (a file read in place, a database).
        reader.close()
    ingest = _StreamingIngest(writers.open, base.schemas)

    def workers_started() -> None:
        prefetch.start()
        ingest.start()

    try:
        jobs.run_parallel(base, ranges, workers, tick, started=workers_started, staged=ingest.add)
    except BaseException:
        ingest.abandon()
        raise
    return ingest.finish()


def _commit(writer: DatabaseWriter, load_id: int, plan: _Plan, db: str, derived: DerivedTables | None,
            t0: float) -> LoadSummary:
    """Digests and derived tables written for what the load replaced; what the load did."""
    write_digests(writer.con, load_id, plan.replaced)
    if derived is not None:
        # (A reader that could not count its threads beforehand: counted before the load-time
        # tables, which grow with them, are built.)
        check_thread_count(plan.described, len(plan.replaced) if plan.replaced is not None else
                           writer.con.execute("SELECT count(*) FROM threads").fetchone()[0], max_threads())
        derived.write(writer.con, plan.replaced)
    counts = writer.counts(load_id)
    return LoadSummary(
        load_id, plan.described, plan.src.kind, plan.mode, db,
        counts["threads"], counts["checkpoints"], counts["messages"], counts["errors"],
        time.perf_counter() - t0, None if plan.replaced is None else len(plan.replaced),
    )


def _prepare(derived: DerivedTables | None) -> None:
    """The imports a load needs later (pyarrow, for its staged parts; the derived tables'
    queries), run in a thread beside work that leaves the GIL free."""
    staging_schemas()
    if derived is not None:
        derived.prepare()


def _load_dataset(source: str, folder: Path, **kw: Any) -> LoadSummary:
    """`load(format="parquet")`: into the folder's working database, then exported as a new version."""
    from loaders import dataset

    t0 = time.perf_counter()
    dataset.refuse_foreign_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    summary = load(source, folder / dataset.WORK_DB, **kw)
    dataset.export_load(folder / dataset.WORK_DB, folder, summary.load_id)
    return replace(summary, db=str(folder), seconds=time.perf_counter() - t0)


__all__ = ["DerivedTables", "LoadError", "LoadSummary", "SourceError", "batches", "load"]  # (batches: `loaders.jobs`)
