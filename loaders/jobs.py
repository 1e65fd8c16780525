"""The decode jobs of a load: one share of the threads decoded into Arrow IPC parts, in this
process or in worker processes that take thread ranges from a queue.

Decoding is the cost of a load (every checkpoint re-serializes the whole message list), so
threads are split across worker processes when the source can be partitioned by thread-id
range; each worker stages its rows as parts (`loaders.parts`) that the loading process
ingests while later ranges are decoded (`loaders.pipeline`). `loaders.distributed` runs the
same `run_job` as tasks of a Dask cluster.

>>> run_job(Job(src, "store.sqlite", options, None, None, "/tmp/parts", "p0", staging_schemas()), print)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import queue as queue_mod
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from loaders import cipher
from loaders.catalog import ERROR_TABLE
from loaders.cipher import AesKey
from loaders.records import SourceError
from loaders.source import Source, SourceOptions, SourceReader
from loaders.thread_keys import compile_thread_key
from loaders.transform.thread import thread_batches


# Thread ranges per worker of a split load: workers take them from a queue, so none
# idles while another still works, and each is ingested as soon as it is staged.
RANGES_PER_WORKER = 8

Batch = tuple[str, list]


def batches(reader: SourceReader, thread_key_pattern: str | None = None, only: frozenset[str] | None = None) -> Iterator[Batch]:
    """Yield `(table, rows)` batches for every thread a reader holds, one thread at a time.

    `load_errors` batches carry `LoadError` records; every other table's rows
    are tuples in the table's column order, timestamps as integer microseconds
    since the Unix epoch (UTC; see `loaders.transform.timestamps.ts_micros`). One
    `load_errors` batch per thread (maybe empty): progress counts them.

    >>> for table, rows in batches(reader):  # doctest: +SKIP
    ...     print(table, len(rows))
    """
    regex = compile_thread_key(thread_key_pattern)
    for bundle in reader.threads(only):
        yield from thread_batches(cipher.one_hint_per_thread(bundle), regex)


@dataclass(frozen=True)
class Job:
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


def open_job_reader(job: Job) -> SourceReader:
    if job.handoff is not None:
        return job.handoff(job.options)
    return open_with_key(job.source, job.spec, job.options, job.aes_key)


def narrow_job(reader: SourceReader, job: Job, part: int, thread_range) -> Job:
    """Point an open reader at one range of threads (`SourceReader.narrow`: one reader,
    one connection and one snapshot serve all a worker's ranges)."""
    reader.narrow(thread_range)
    return replace(job, thread_range=thread_range, prefix=f"p{part}")


def run_job(job: Job, tick: Callable[[int], None], reader: SourceReader | None = None) -> dict:
    """Decode one share of the threads into Arrow IPC parts; `reader` is an already
    open source (the caller's, or a worker's for all its ranges), else the job opens its own."""
    own = reader is None
    if own:
        reader = open_job_reader(job)
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


def _worker(job: Job, tasks, q) -> None:
    """A decode worker: takes `(part, thread range)` tasks until it gets None, staging
    each range as parts `p<part>` and reporting it done (the loading process ingests the
    parts in order while later ranges are still being decoded)."""
    if "pandas" not in sys.modules:  # (already loaded when forked from a notebook: then it costs nothing)
        sys.meta_path.insert(0, _NoPandas())
    import loaders  # noqa: F401  (registers built-in sources in a spawned process)

    # The process ends with its job: a collection of all its rows when `run_job`
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
        reader = open_job_reader(job)
        try:
            while (task := tasks.get()) is not None:
                result = run_job(narrow_job(reader, job, *task), tick, reader)
                q.put(("progress", pending))
                pending = 0
                q.put(("done", result))
        finally:
            reader.close()
    except SourceError as exc:  # a damaged source: the parent fails with the same one-line error
        q.put(("source_error", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the load
        q.put(("error", (f"{type(exc).__name__}: {exc}", traceback.format_exc())))


def mp_context():
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
    included) before its job. The workers' code is `loaders.jobs`, which
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


def run_parallel(
    job: Job, ranges: list, workers: int, progress: Callable[[int], None],
    started: Callable[[], None] = lambda: None, staged: Callable[[dict], None] = lambda result: None,
) -> list[dict]:
    """Decode the thread ranges in `workers` processes, which take them in order from a
    queue (no worker idles while another has work). `staged(result)` is called for each
    range's parts in range order, as soon as it and every range before it are staged.
    `started()` is called once the workers run (a thread started before a fork would be
    copied into the workers half-way)."""
    ctx = mp_context()
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
