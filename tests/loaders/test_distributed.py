"""Loads on Dask (`--scheduler`): a real `distributed.LocalCluster` (a scheduler and 2 worker
processes over TCP) decodes thread ranges into a Parquet dataset equal, row for row, to the
single-machine load — also when a worker is killed after writing its range's parts."""

from __future__ import annotations

import os
import signal

import pytest

import analytics
import transcript_lens
from loaders import dataset
from loaders.engines import DaskEngine
from loaders.sqlite.reader import SqliteReader
from tests.loaders.conformance import force_split
from tests.loaders.util import table_snapshot

distributed = pytest.importorskip("distributed")

# A lost worker that is never replaced must fail a test, not hang the suite: every engine here
# gives up after STALL seconds without a task finishing, and pytest-timeout ends anything else
# (a cluster that will not start or close) with the stacks of every thread.
STALL = 120.0
pytestmark = pytest.mark.timeout(600)


def _cluster():
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, protocol="tcp",
    )


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture()
def own_client():
    """A cluster of the test's own, for a test that kills a worker: the others never wait for
    the nanny to bring it back."""
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def oracle(sqlite_store, tmp_path_factory):
    """The single-machine load of the fixture store, as a dataset."""
    folder = tmp_path_factory.mktemp("oracle") / "lens"
    transcript_lens.load(sqlite_store.path, folder, format="parquet", workers=1)
    return _rows(folder)


def _rows(folder) -> dict[str, list[tuple]]:
    con = analytics.connect(folder)
    try:
        return table_snapshot(con)
    finally:
        con.close()


def _ranges(folder) -> int:
    """How many thread ranges wrote the dataset's messages (parts are named r<range>_<n>)."""
    return len({p.name.split("_")[0] for p in (dataset.current_version(folder) / "messages").rglob("*.parquet")})


def _load(source, folder, engine):
    from loaders.distributed import load_distributed

    return load_distributed(source, folder, engine=engine, derived=transcript_lens.LoadTimeTables())


def test_a_dask_load_equals_the_single_machine_load(sqlite_store, oracle, client, tmp_path, monkeypatch):
    force_split(monkeypatch, SqliteReader)  # (a small store is otherwise one range)
    folder = tmp_path / "lens"
    summary = _load(sqlite_store.path, folder, DaskEngine.on(client, stall_seconds=STALL))
    assert summary.threads == len(sqlite_store.manifest)
    got = _rows(folder)
    assert sorted(got) == sorted(oracle)
    for table in oracle:
        assert got[table] == oracle[table], table
    assert _ranges(folder) > 1
    assert not any((folder / ".staging").iterdir())


class KillAfterStaging:
    """An engine whose range 1 task kills its own worker process (SIGKILL, like the OOM killer)
    the first time, after writing all its parts but before returning them."""

    def __init__(self, engine: DaskEngine, marker) -> None:
        self.engine, self.marker, self.workers = engine, str(marker), engine.workers

    def map(self, fn, tasks):
        marker = self.marker

        def run(task):
            out = fn(task)
            if task.index == 1 and not os.path.exists(marker):
                open(marker, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        return self.engine.map(run, tasks)

    def close(self) -> None:
        pass


def test_a_killed_worker_s_range_is_run_again_without_duplicate_rows(sqlite_store, oracle, own_client, tmp_path,
                                                                    monkeypatch):
    force_split(monkeypatch, SqliteReader)
    folder, marker = tmp_path / "lens", tmp_path / "killed-once"
    _load(sqlite_store.path, folder, KillAfterStaging(DaskEngine.on(own_client, stall_seconds=STALL), marker))
    assert marker.exists()  # the worker did die
    got = _rows(folder)
    for table in oracle:
        assert got[table] == oracle[table], table


class Sabotaged:
    """An engine whose tasks first run `before(task)` on their worker (raise, hang)."""

    def __init__(self, engine: DaskEngine, before) -> None:
        self.engine, self.before, self.workers = engine, before, engine.workers

    def map(self, fn, tasks):
        before = self.before

        def run(task):
            before(task)
            return fn(task)

        return self.engine.map(run, tasks)

    def close(self) -> None:
        pass


def _storage_gone_for_range_0(task) -> None:
    if task.index == 0:
        raise OSError("shared storage went away")


def _range_1_hangs_until(released, task) -> None:
    """Range 1 hangs until the file `released` exists (the test writes it once the load has failed),
    so the hung task frees its worker at once instead of after a fixed sleep."""
    if task.index == 1:
        import time

        deadline = time.monotonic() + 120
        while not os.path.exists(released) and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def current(sqlite_store, tmp_path, monkeypatch):
    """A dataset folder holding a single-machine load, split into ranges for the next load."""
    force_split(monkeypatch, SqliteReader)
    folder = tmp_path / "lens"
    transcript_lens.load(sqlite_store.path, folder, format="parquet", workers=1)
    return folder


def _only_version(folder, before) -> bool:
    return dataset.current_version(folder) == before and [p.name for p in folder.glob("v-*")] == [before.name]


def test_a_range_that_fails_every_attempt_fails_the_load_and_keeps_the_current_version(sqlite_store, client, current):
    before = dataset.current_version(current)
    with pytest.raises(OSError, match="shared storage went away"):
        _load(sqlite_store.path, current, Sabotaged(DaskEngine.on(client, stall_seconds=STALL), _storage_gone_for_range_0))
    assert _only_version(current, before)


def test_a_stalled_load_fails_naming_the_waiting_tasks_and_keeps_the_current_version(sqlite_store, client, current,
                                                                                     tmp_path):
    """A task that never finishes (a worker hung on a dead mount, a cluster with no worker left)
    ends the load with an error after the stall timeout instead of waiting forever."""
    from functools import partial

    from loaders.engines import StalledError

    before = dataset.current_version(current)
    released = tmp_path / "released"
    try:
        with pytest.raises(StalledError, match=r"in 3 s: tasks \[1\] of \d+ still waiting, 2 worker"):
            _load(sqlite_store.path, current,
                  Sabotaged(DaskEngine.on(client, stall_seconds=3), partial(_range_1_hangs_until, str(released))))
    finally:
        released.touch()
    assert _only_version(current, before)


def test_a_held_out_store_loaded_on_a_local_cluster_gives_the_oracle_s_messages(tmp_path):
    """A load from the command line (`--format parquet --scheduler local:2`),
    on a store no other test uses (another seed), read by DuckDB straight from the files."""
    import shutil
    import subprocess
    import sys

    import duckdb

    from storegen import build_sqlite_store
    from tests import oracle

    store = tmp_path / "held-out.sqlite"
    build_sqlite_store(store, seed=24)
    copy = shutil.copyfile(store, tmp_path / "oracle-copy.sqlite")  # (the saver's setup() writes)
    saver = oracle.open_sqlite(copy)
    want = oracle.expected_messages(saver)
    saver.conn.close()
    folder = tmp_path / "lens"
    out = subprocess.run(
        [sys.executable, "-m", "transcript_lens", "load", str(store), "--db", str(folder), "--format", "parquet",
         "--scheduler", "local:2", "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    glob = str(dataset.current_version(folder) / "messages" / "**" / "*.parquet")
    cur = con.execute(
        f"SELECT {', '.join(oracle.MESSAGE_KEYS)} FROM read_parquet(?, hive_partitioning = true) ORDER BY thread_id, ordinal",
        [glob],
    )
    got = [dict(zip(oracle.MESSAGE_KEYS, r)) for r in cur.fetchall()]
    assert got == want and len(want) > 50


def test_a_dask_load_of_a_live_postgres_equals_the_single_machine_load(client, tmp_path, monkeypatch):
    """Each task opens its own Postgres connection and snapshot for its range."""
    from loaders.postgres_reader import PostgresReader
    from tests.loaders.pg_util import fresh_database, saver_for, write_scenarios

    force_split(monkeypatch, PostgresReader)
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            write_scenarios(saver)
        local, spread = tmp_path / "local", tmp_path / "spread"
        transcript_lens.load(dsn, local, format="parquet", workers=1)
        _load(dsn, spread, DaskEngine.on(client, stall_seconds=STALL))
    assert _ranges(spread) > 1
    want, got = _rows(local), _rows(spread)
    assert sorted(got) == sorted(want)
    for table in want:
        assert got[table] == want[table], table
