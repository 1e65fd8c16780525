"""Long threads and write floods in the live stores: peak memory of a load per input.

Each store is written on the test servers (a private Redis Stack server, the PostgreSQL and
MariaDB servers of scripts/test-services.sh; databases created and dropped here): a thread's
first rows through the real saver, the rest copied in its exact format (tests/attacks/
redis_stores.py, pg_stores.py, mysql_stores.py). Each is loaded by `transcript-lens
load` in a measured subprocess (tests/attacks/harness.py) and printed as one line: the input,
the store's size (Redis `used_memory`, the database's size on disk), exit status, peak memory
(MB), seconds, the checkpoint limit in force. A peak over the budget (1024 MB) is marked `OVER`.

    .venv/bin/python bench/thread_caps_sweep.py               # the default sizes (a few minutes)
    .venv/bin/python bench/thread_caps_sweep.py --scale 0.001 --cap 20  # a smoke run on tiny sizes

Inputs: a Redis thread of 45,000 checkpoints (at the default limit and cut at 2,000); 80,000
special writes on one Redis checkpoint; a Postgres thread of 5,000 checkpoints cut at 2,000
whose 3,000 later `messages` blobs hold 384 KiB of zeros each (1.1 GB that TOAST keeps in a few
MB), and the same thread in MySQL (InnoDB's compressed row format); 350,000 special writes on
one checkpoint in Postgres and 270,000 in MySQL. Every store is under 100 MB. A measurement,
not a test (tests/attacks/ holds the checks).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from tests.attacks.harness import MEMORY_BUDGET_MB, attack  # noqa: E402
from tests.attacks.mysql_stores import first_checkpoint, mysql_long_thread, mysql_write_flood, store_size  # noqa: E402
from tests.attacks.pg_stores import long_pg_thread  # noqa: E402
from tests.attacks.redis_stores import long_redis_thread, special_write_flood  # noqa: E402
from tests.loaders.mysql_util import fresh_mysql_database  # noqa: E402
from tests.loaders.pg_util import fresh_database, saver_for  # noqa: E402
from tests.loaders.redis_util import redis_stack_server  # noqa: E402

MB = 1 << 20
CAP = 2_000


def pg_write_flood(dsn: str, writes: int) -> None:
    with saver_for(dsn) as saver:
        saver.put_writes(first_checkpoint(saver, "flood"), [("__error__", "boom")], "task-0")
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) "
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, 'task-' || i, task_path, idx, channel, type, blob "
                    "FROM checkpoint_writes, generate_series(1, %s - 1) AS i", [writes])


def pg_size(dsn: str) -> int:
    with psycopg.connect(dsn) as con:
        return con.execute("SELECT pg_database_size(current_database())").fetchone()[0]


def inputs(stack: ExitStack, work: Path, scale: float, cap: int = CAP):
    """(name, spec, store bytes, checkpoint limit or None) of each input, built on the servers.
    A long thread is at least three times `cap` (the limit it is cut at)."""
    n = lambda count, least: max(int(count * scale), least)  # noqa: E731
    redis = stack.enter_context(redis_stack_server(work))
    client = redis.client()
    long_redis_thread(redis.url, "checkpoint", n(45_000, 3 * cap))
    used = int(client.info("memory")["used_memory"])
    yield "redis, one long thread", redis.url, used, None
    yield "redis, one long thread", redis.url, used, cap
    client.flushall()
    special_write_flood(redis.url, "checkpoint", n(80_000, 1000))
    yield "redis, special writes flood", redis.url, int(client.info("memory")["used_memory"]), None
    client.flushall()
    pg = stack.enter_context(fresh_database())
    long_pg_thread(pg, n(5_000, 3 * cap), past=cap, pad=max(int((384 << 10) * scale), 1024))
    yield "postgres, long thread, big blobs", pg, pg_size(pg), cap
    pg = stack.enter_context(fresh_database())
    pg_write_flood(pg, n(350_000, 1000))
    yield "postgres, special writes flood", pg, pg_size(pg), None
    my = stack.enter_context(fresh_mysql_database())
    mysql_long_thread(my, n(5_000, 3 * cap), past=cap, pad=max(int((384 << 10) * scale), 1024))
    yield "mysql, long thread, big blobs", my.admin_dsn, store_size(my.name), cap
    my = stack.enter_context(fresh_mysql_database())
    mysql_write_flood(my, n(270_000, 1000))
    yield "mysql, special writes flood", my.admin_dsn, store_size(my.name), None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input sizes relative to the defaults")
    parser.add_argument("--cap", type=int, default=CAP, help="the checkpoint limit the long threads are cut at")
    args = parser.parse_args(argv)
    over = 0
    with tempfile.TemporaryDirectory(prefix="thread-caps-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        for i, (name, spec, size, cap) in enumerate(inputs(stack, work, args.scale, args.cap)):
            run = work / f"run{i}"
            run.mkdir()
            env = {"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(cap)} if cap else {}
            started = time.monotonic()
            out = attack(["load", spec, "--db", str(run / "out.duckdb")], run, env=env)
            seconds = time.monotonic() - started
            error = (out.stderr.strip().splitlines() or [""])[-1][:110]
            flag = " OVER" if out.peak_mb > MEMORY_BUDGET_MB else ""
            over += bool(flag) or out.returncode != 0
            print(f"{name:34} {size / MB:7.1f} MB  limit {cap or 'default':>7}  exit {out.returncode}  "
                  f"peak {out.peak_mb:6.0f} MB{flag}  {seconds:6.1f} s  {error}", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
