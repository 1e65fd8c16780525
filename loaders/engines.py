"""Where a distributed load's tasks run: one small interface, one engine (Dask) behind it.

A distributed load (`loaders.distributed`) hands an engine a picklable function
and one picklable task per thread range; the engine runs them on its workers and
returns every result in task order, running a task again when it raised or its
worker was lost. Nothing else is asked of an engine, so Ray (`ray.remote` tasks
with `max_retries`) or Spark (`sc.parallelize(tasks, len(tasks)).map(fn)`, which
re-runs lost partitions) would each be one more class here (docs/scale.md).

>>> with engine_for("local:2") as engine:  # doctest: +SKIP
...     engine.map(len, ["ab", "c"])
[2, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

#: Times a task that raised is run again (a lost worker's tasks are rescheduled by Dask itself,
#: up to its `distributed.scheduler.allowed-failures`, 3 by default).
RETRIES = 2

#: Seconds a load waits with no task finishing before it gives up. A worker lost for good (a
#: nanny that cannot restart it, a cluster with no worker left) otherwise leaves the driver
#: waiting forever; a range is a fraction of the store, so half an hour without one finishing
#: means the cluster is stuck, not busy.
STALL_SECONDS = 1800.0


class StalledError(TimeoutError):
    """No task of a distributed load finished within the engine's stall timeout."""


class Engine(Protocol):
    """Runs tasks on workers: `map(fn, tasks)` gives `[fn(t) for t in tasks]`, in order, or
    raises when a task failed every attempt. `workers`: how many it runs side by side."""

    workers: int

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]: ...

    def close(self) -> None: ...


class DaskEngine:
    """Dask's distributed scheduler: `tcp://HOST:PORT` (a running cluster), or `local:N`
    (a `LocalCluster` of N single-threaded worker processes, started here and closed
    with the engine)."""

    def __init__(self, scheduler: str, stall_seconds: float | None = STALL_SECONDS) -> None:
        from distributed import Client, LocalCluster

        self._cluster, self.stall_seconds = None, stall_seconds
        if scheduler.startswith("local:"):
            n = int(scheduler.removeprefix("local:"))
            if n < 1:
                raise ValueError(f"--scheduler local:N needs N >= 1 worker processes, not {n}")
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self._cluster)
        else:
            self.client = Client(scheduler, timeout=30)
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))

    @classmethod
    def on(cls, client, stall_seconds: float | None = STALL_SECONDS) -> DaskEngine:
        """An engine on a `distributed.Client` the caller opened (and closes)."""
        engine = cls.__new__(cls)
        engine._cluster, engine.client, engine.stall_seconds = None, client, stall_seconds
        engine.workers = max(1, len(client.scheduler_info().get("workers", {})))
        engine.close = lambda: None
        return engine

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        # pure=False: a task run again is a new run, never an answer remembered from a lost one.
        futures = self.client.map(fn, list(tasks), pure=False, retries=RETRIES)
        try:
            self._wait_making_progress(futures)
            return self.client.gather(futures)
        except BaseException:
            self.client.cancel(futures)
            raise

    def _wait_making_progress(self, futures) -> None:
        """Return when every task is done (finished or failed); raise `StalledError` when none
        finished for `stall_seconds`, naming the tasks still waiting and the workers left."""
        from distributed import wait

        pending = set(futures)
        while pending:
            try:
                done, pending = wait(pending, timeout=self.stall_seconds, return_when="FIRST_COMPLETED")
            except TimeoutError:
                waiting = sorted(futures.index(f) for f in pending)
                workers = len(self.client.scheduler_info().get("workers", {}))
                raise StalledError(
                    f"no task of the distributed load finished in {self.stall_seconds:g} s: tasks {waiting} "
                    f"of {len(futures)} still waiting, {workers} worker(s) in the cluster"
                ) from None
            if any(f.status == "error" for f in done):
                return  # gather raises the task's own error

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self) -> DaskEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def engine_for(scheduler: str) -> DaskEngine:
    """The engine a `--scheduler` value names: `local:N` or `tcp://HOST:PORT` (Dask)."""
    if scheduler.startswith(("local:", "tcp://", "tls://")):
        return DaskEngine(scheduler)
    raise ValueError(f"unknown scheduler {scheduler!r}: local:N or tcp://HOST:PORT (a Dask scheduler)")
