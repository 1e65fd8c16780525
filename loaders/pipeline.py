"""From a source to a DuckDB database: `load()` and the batch generator it drives.

Decoding is the cost of a load (every checkpoint re-serializes the whole
message list), so threads are split across worker processes when the source
can be partitioned by thread-id range; each worker stages its rows as Arrow IPC
parts (`loaders.parts`) and the main process ingests them into a new database
that replaces the old one only at the end (`loaders.writer`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing as mp
import os
import queue as queue_mod
import shutil
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from loaders import cipher
from loaders.cipher import AesKey
from loaders.version import __version__
from loaders.records import LoadError, SourceError, check_thread_count, max_threads
from loaders.registry import resolve
from loaders.scratch import remove_stale_scratch, scratch_dir
from loaders.source import Source, SourceOptions, SourceReader
from loaders.transform import DEFAULT_THREAD_KEY_PATTERN, compile_thread_key, thread_batches
from loaders.catalog import DATA_TABLES, ERROR_TABLE, SCHEMA_VERSION, staging_schemas
from loaders.digests import source_digests, stored_digests, write_digests
from loaders.writer import DatabaseWriter, PartFeed, refuse_foreign_target

TOOL_VERSION = __version__  # stored in `loads` and `meta` (loaders/version.py)
# Thread ranges per worker of a split load: workers take them from a queue, so none
# idles while another still works, and each is ingested as soon as it is staged.
RANGES_PER_WORKER = 8

Batch = tuple[str, list]
Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class LoadSummary:
    """What a load did; also stored as its `loads` row."""

    load_id: int
    source: str
    source_kind: str
    mode: str
    db: str
    threads: int
    checkpoints: int
    messages: int
    errors: int
    seconds: float
    #: Threads an incremental load re-read or dropped (0: nothing had changed, the database
    #: was left untouched); None for a full load.
    changed: int | None = None

    def line(self) -> str:
        if self.changed == 0:
            return f"nothing changed in {self.source_kind} {self.source}: {self.db} is up to date ({self.seconds:.1f}s)"
        return (
            f"loaded {self.threads} threads, {self.checkpoints} checkpoints, {self.messages} messages "
            f"from {self.source_kind} {self.source} into {self.db} in {self.seconds:.1f}s"
            f" ({self.errors} row errors{', see load_errors' if self.errors else ''})"
        )


def batches(reader: SourceReader, thread_key_pattern: str | None = None, only: frozenset[str] | None = None) -> Iterator[Batch]:
    """Yield `(table, rows)` batches for every thread a reader holds, one thread at a time.

    `load_errors` batches carry `LoadError` records; every other table's rows
    are tuples in the table's column order, timestamps as integer microseconds
    since the Unix epoch (UTC; see `loaders.transform.ts_micros`). One
    `load_errors` batch per thread (maybe empty): progress counts them.

    >>> for table, rows in batches(reader):  # doctest: +SKIP
    ...     print(table, len(rows))
    """
    regex = compile_thread_key(thread_key_pattern)
    for bundle in reader.threads(only):
        yield from thread_batches(cipher.one_hint_per_thread(bundle), regex)


@dataclass(frozen=True)
class _Job:
    """One worker's share: a source and its options, a thread range and where to stage."""

    source: Source  # (the instance, not its kind: a worker needs no registry lookup)
    spec: str
    options: SourceOptions
    thread_key_pattern: str | None
    only: frozenset[str] | None
    folder: str
    prefix: str
    schemas: dict
    # How to open the parent's reader again without reading the source again (a
    # staged export); None: open `spec` as the source kind says.
    handoff: Callable[[SourceOptions], SourceReader] | None = None
    thread_range: tuple[str | None, str | None] = (None, None)
    # The key encrypted values are decrypted with (`loaders.cipher`; never part of the options,
    # which the `loads` table records).
    aes_key: cipher.AesKey | cipher.KeyProblem | None = None


def open_with_key(src: Source, spec: str, options: SourceOptions, key: cipher.AesKey | cipher.KeyProblem | None) -> SourceReader:
    """`src`'s reader of `spec`, opened with `key` in force: a kind that decodes values as it
    opens (the MongoDB kinds stage each metadata value decoded) decrypts them there."""
    with cipher.using(key):
        return src.open_reader(spec, options)


def _open_reader(job: _Job) -> SourceReader:
    if job.handoff is not None:
        return job.handoff(job.options)
    return open_with_key(job.source, job.spec, job.options, job.aes_key)


def _narrow(reader: SourceReader, job: _Job, part: int, thread_range) -> _Job:
    """Point an open reader at one range of threads (`SourceReader.narrow`: one reader,
    one connection and one snapshot serve all a worker's ranges)."""
    reader.narrow(thread_range)
    return replace(job, thread_range=thread_range, prefix=f"p{part}")


def _run_job(job: _Job, tick: Callable[[int], None], reader: SourceReader | None = None) -> dict:
    """Decode one share of the threads into Arrow IPC parts; `reader` is an already
    open source (the caller's, or a worker's for all its ranges), else the job opens its own."""
    own = reader is None
    if own:
        reader = _open_reader(job)
        if job.thread_range != (None, None):
            reader.narrow(job.thread_range)
    from loaders.parts import PartWriter  # (pyarrow: only once there is something to stage)

    writer = PartWriter(Path(job.folder), job.schemas, job.prefix)
    # Rows are millions of small tuples and lists that form no cycles; the cyclic
    # collector would rescan all that are alive at every generation threshold.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with cipher.using(job.aes_key):
            for table, rows in batches(reader, job.thread_key_pattern, job.only):
                if table == ERROR_TABLE:
                    writer.append_errors(rows)
                    tick(1)
                else:
                    writer.append(table, rows)
        files = writer.close()  # (its last batches are built with the collector still off)
    finally:
        if gc_was_enabled:
            gc.enable()
        if own:
            reader.close()
    return {"part": int(job.prefix[1:]), "files": files, "counts": writer.counts}


class _NoPandas:
    """Import hook of decode workers: pandas is never needed there.

    pyarrow imports pandas on its first conversion only to ask whether the input
    is a pandas object; that import costs about a second per worker. Refusing it
    makes pyarrow assume there is no pandas, which is true for our inputs.
    """

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is not used in a Transcript Lens decode worker")
        return None


def _worker(job: _Job, tasks, q) -> None:
    """A decode worker: takes `(part, thread range)` tasks until it gets None, staging
    each range as parts `p<part>` and reporting it done (the loading process ingests the
    parts in order while later ranges are still being decoded)."""
    if "pandas" not in sys.modules:  # (already loaded when forked from a notebook: then it costs nothing)
        sys.meta_path.insert(0, _NoPandas())
    import loaders  # noqa: F401  (registers built-in sources in a spawned process)

    # The process ends with its job: a collection of all its rows when `_run_job`
    # re-enabled the collector (one ran at the first allocation after) buys nothing.
    gc.disable()
    # The loading process ingests what workers stage while they decode: it goes first,
    # so that it keeps up and little is left to ingest when the last range is decoded.
    with contextlib.suppress(OSError):
        os.nice(10)

    pending = 0
    last = time.monotonic()

    def tick(n: int) -> None:
        nonlocal pending, last
        pending += n
        now = time.monotonic()
        if now - last > 0.2:
            q.put(("progress", pending))
            pending, last = 0, now

    try:
        reader = _open_reader(job)
        try:
            while (task := tasks.get()) is not None:
                result = _run_job(_narrow(reader, job, *task), tick, reader)
                q.put(("progress", pending))
                pending = 0
                q.put(("done", result))
        finally:
            reader.close()
    except SourceError as exc:  # a damaged source: the parent fails with the same one-line error
        q.put(("source_error", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the load
        q.put(("error", (f"{type(exc).__name__}: {exc}", traceback.format_exc())))


def _mp_context():
    """How to start workers: fork starts one without re-importing anything, but
    forking a process that runs other threads (the Streamlit server) is unsafe.
    There a fork server (a clean single-threaded process, started once, with
    `loaders` imported) forks them: a spawned worker would pay an interpreter
    and the imports (~0.3 s) at every load."""
    methods = mp.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return mp.get_context("fork")
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["loaders"])
        return ctx
    return mp.get_context("spawn")


@contextlib.contextmanager
def _main_not_rerun(ctx):
    """Start non-forked workers without the parent's main module.

    A spawned or fork-server worker first runs the parent's `__main__` file
    again (as `__mp_main__`). Under `streamlit run` that is the page script:
    every worker re-ran the app (imports, and whatever the page does, a load
    included) before its job. The workers' code is `loaders.pipeline`, which
    they import by name; a stand-in `__main__` with no file is all they get.
    """
    main = sys.modules.get("__main__")
    if ctx.get_start_method() == "fork" or main is None:
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


class WorkerFailed(RuntimeError):
    """A decode worker raised, or died: the message names what (one line first); the
    worker's traceback, when it sent one, is a note (shown with the traceback)."""


def _run_parallel(
    job: _Job, ranges: list, workers: int, progress: Callable[[int], None],
    started: Callable[[], None] = lambda: None, staged: Callable[[dict], None] = lambda result: None,
) -> list[dict]:
    """Decode the thread ranges in `workers` processes, which take them in order from a
    queue (no worker idles while another has work). `staged(result)` is called for each
    range's parts in range order, as soon as it and every range before it are staged.
    `started()` is called once the workers run (a thread started before a fork would be
    copied into the workers half-way)."""
    ctx = _mp_context()
    q, tasks = ctx.Queue(), ctx.Queue()
    for task in enumerate(ranges):
        tasks.put(task)
    for _ in range(workers):
        tasks.put(None)
    procs = [ctx.Process(target=_worker, args=(job, tasks, q), daemon=True) for _ in range(workers)]
    with _main_not_rerun(ctx):
        for p in procs:
            p.start()
    started()
    results: list[dict] = []
    waiting: dict[int, dict] = {}
    try:
        while len(results) < len(ranges):
            try:
                kind, payload = q.get(timeout=0.5)
            except queue_mod.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    how = f"killed by signal {-dead[0]}" if dead[0] < 0 else f"exit code {dead[0]}"
                    raise WorkerFailed(f"a load worker died ({how})") from None
                continue
            if kind == "progress":
                progress(payload)
            elif kind == "done":
                waiting[payload["part"]] = payload
                while len(results) in waiting:
                    results.append(waiting.pop(len(results)))
                    staged(results[-1])
            elif kind == "source_error":
                raise SourceError(payload)
            else:
                message, worker_traceback = payload
                failed = WorkerFailed(f"a load worker failed: {message}")
                failed.add_note(f"in the worker:\n{worker_traceback}")
                raise failed
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)
    return results


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

    con = duckdb.connect(str(db), read_only=True)
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


def load_row(summary: LoadSummary, started: datetime, thread_key_pattern: str | None, options: SourceOptions) -> list:
    """The `loads` row of a load that is about to commit (`writer.record_load`)."""
    return [
        summary.load_id, summary.source, summary.source_kind, summary.mode, started, datetime.now(timezone.utc),
        summary.threads, summary.checkpoints, summary.messages, summary.errors,
        thread_key_pattern or DEFAULT_THREAD_KEY_PATTERN, TOOL_VERSION, json.dumps(asdict(options)),
    ]


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
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
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
        """A range's parts (`_run_job`'s result), in range order."""
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


class DerivedTables(Protocol):
    """Tables computed from the loaded rows and written in the same commit as them
    (per-conversation metrics and the like).

    The loader does not know what they are: the query layer defines them and the
    composition root (`transcript_lens.load`, the CLI) hands them to `load()`, so
    that loaders never import analytics. `prepare()` runs in a thread while the
    workers decode (imports, say); `write(con, threads)` runs on the load's
    connection: `threads` None after a full load (write every row), else the
    threads an incremental load replaced or dropped (only their rows changed).
    """

    def prepare(self) -> None: ...

    def write(self, con, threads: list[str] | None) -> None: ...

    # Optional: `context() -> str`, what else besides the source decides what `write` leaves
    # (the standing erasure tombstones, say); part of the source's change token, so an
    # incremental load whose source did not change still runs when it did.


def the_key(aes_key: AesKey | bytes | None) -> AesKey | cipher.KeyProblem | None:
    """The key a load decrypts with: the one given, else `LANGGRAPH_AES_KEY`'s (if set)."""
    return cipher.key_from_env() if aes_key is None else aes_key if isinstance(aes_key, AesKey) else AesKey(aes_key)


def default_workers() -> int:
    """Worker processes for a load: the cores we may use, at most 4."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    return max(1, min(4, n))


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
    if scheduler is not None:
        if format != "parquet" or incremental:
            raise ValueError("--scheduler writes a full load as a Parquet dataset: give --format parquet, not --incremental")
        from loaders.distributed import load_distributed

        return load_distributed(
            source, db, scheduler=scheduler, kind=kind, thread_key_pattern=thread_key_pattern, options=options,
            derived=derived, aes_key=aes_key,
        )
    if format == "parquet":
        return _load_dataset(
            source, Path(db), kind=kind, thread_key_pattern=thread_key_pattern, options=options, incremental=incremental,
            progress=progress, workers=workers, derived=derived, aes_key=aes_key,
        )
    db = Path(db)
    refuse_foreign_target(db)  # before anything is read or written
    src = resolve(str(source), kind)
    options = src.options(options)
    compile_thread_key(thread_key_pattern)  # fail before touching anything
    aes_key = the_key(aes_key)
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    workers = workers or default_workers()
    reader = open_with_key(src, str(source), options, aes_key)
    remove_stale_scratch()  # what loads killed outright left behind
    folder = scratch_dir("parts")
    try:
        # A database written under another schema cannot take new rows beside its old ones:
        # an incremental load of it is a full one.
        previous = _previous(db) if incremental and db.exists() else None
        mode = "full" if previous is None else "incremental"
        only: frozenset[str] | None = None
        gone: list[str] = []
        token = _source_token(reader, options, thread_key_pattern, derived)
        if previous is not None and token is not None and previous.token == token:
            # Not a byte of the source changed since the last load: nothing to compare.
            return _unchanged(db, reader.describe(), src.kind, time.perf_counter() - t0)
        # Whatever the derived tables need is prepared while workers decode rather than
        # after them; a full single-process load prepares while it decodes (no worker is
        # forked). An incremental load prepares while the source builds its key digests,
        # and waits for it before it decodes: SQLite hands each row over in a step of its
        # own, and every step waits for the GIL an importing thread holds (on the 2,000 x 40
        # store the key comparison took 0.27-0.35 s beside the imports when it came as a row
        # a thread; it comes as one value now, `sqlite_source._one_step_digests`).
        prefetch = threading.Thread(target=_prepare, args=(derived,), daemon=True)
        if previous is not None:
            prefetch.start()
            only, gone = _changed_threads(reader, previous)
            if not only and not gone:
                return _unchanged(db, reader.describe(), src.kind, time.perf_counter() - t0)
            prefetch.join()
        # What the derived tables and digests rewrite: every thread (None), or those replaced or dropped.
        replaced = None if only is None else sorted(only | set(gone))
        total = len(only) if only is not None else reader.thread_count()
        described = reader.describe()
        thread_cap = max_threads()
        check_thread_count(described, total, thread_cap)
        ranges = None
        if only is None and workers > 1 and reader.capabilities.split:
            ranges = reader.split(workers * RANGES_PER_WORKER)

        schemas = staging_schemas()
        base = _Job(src, str(source), options, thread_key_pattern, only, folder, "p0", schemas, aes_key=aes_key)
        done = 0

        def tick(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(done, total)

        if progress:
            progress(0, total)
        split = bool(ranges and len(ranges) > 1)
        if not split and previous is None:
            prefetch.start()  # (no worker will be forked: a thread may run from now on, beside the decode)
        with contextlib.ExitStack() as stack:

            def open_writer() -> tuple[DatabaseWriter, int]:
                # (after the workers are forked: DuckDB runs threads of its own)
                incremental = mode == "incremental"
                writer = stack.enter_context(DatabaseWriter(db, start_from_existing=incremental, in_place=incremental))
                if incremental:
                    writer.delete_threads(replaced)
                else:
                    writer.previous_loads()
                return writer, writer.next_load_id()

            if split:
                handoff = reader.handoff() if reader.capabilities.handoff else None
                if handoff is not None:
                    # A staged export or a SQLite snapshot: workers read ours (kept until the load ends).
                    base = replace(base, handoff=handoff)
                else:
                    # Workers open the source themselves (a file read in place, a database).
                    reader.close()
                ingest = _StreamingIngest(open_writer, schemas)

                def workers_started() -> None:
                    prefetch.start()
                    ingest.start()

                try:
                    _run_parallel(base, ranges, workers, tick, started=workers_started, staged=ingest.add)
                except BaseException:
                    ingest.abandon()
                    raise
                writer, load_id = ingest.finish()
            else:
                # One pass over the reader that was opened (and, for exports, staged) above:
                # the same snapshot that decided `only`, and no second staging.
                result = _run_job(base, tick, reader)
                writer, load_id = open_writer()
                writer.ingest_all({t: [f] for t, f in result["files"].items()}, load_id)
            if prefetch.ident is not None:  # (started)
                prefetch.join()
            write_digests(writer.con, load_id, replaced)
            if derived is not None:
                # (A reader that could not count its threads beforehand: counted before the
                # load-time tables, which grow with them, are built.)
                check_thread_count(described, len(replaced) if replaced is not None else
                                   writer.con.execute("SELECT count(*) FROM threads").fetchone()[0], thread_cap)
                derived.write(writer.con, replaced)
            counts = writer.counts(load_id)
            summary = LoadSummary(
                load_id, described, src.kind, mode, str(db),
                counts["threads"], counts["checkpoints"], counts["messages"], counts["errors"],
                time.perf_counter() - t0, None if replaced is None else len(replaced),
            )
            writer.record_load(load_row(summary, started, thread_key_pattern, options), SCHEMA_VERSION, TOOL_VERSION)
            writer.record_source_token(token)
            writer.commit()
    finally:
        reader.close()
        shutil.rmtree(folder, ignore_errors=True)
    return replace(summary, seconds=time.perf_counter() - t0)


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


__all__ = ["DerivedTables", "LoadError", "LoadSummary", "SourceError", "batches", "load"]
