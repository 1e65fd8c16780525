"""The Postgres loaders against a plain `COPY ... TO` of the three checkpoint tables.

    .venv/bin/python bench/pg_live_vs_copy.py [--threads 100] [--turns 20] [--admin-dsn DSN] [--keep]

Builds storegen's benchmark store (a tool-using support agent, real graphs
through a real SqliteSaver), copies it into a fresh Postgres database through
`PostgresSaver.put` / `put_writes` (what the saver itself writes for those
checkpoints), then times, each in a fresh process:

- the floor: `COPY <table> TO STDOUT` of checkpoints, checkpoint_blobs and
  checkpoint_writes (CSV, bytes discarded) over one connection;
- the live source alone (open, stream every thread, no transform);
- `loaders.load` from the DSN with 1 worker and with the default workers;
- `loaders.load` from a COPY CSV folder and a plain pg_dump of the same data, likewise
  (an export is staged once; its workers read the stage).

Prints one JSON line per measurement (seconds, peak RSS) and drops the database
unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Where built stores and scratch go: `$BENCH_OUT` (the tests point it at a temp folder), else bench/out/.
OUT = Path(os.environ.get("BENCH_OUT") or ROOT / "bench" / "out")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _rss_mb() -> dict[str, float]:
    # VmHWM, not ru_maxrss: ru_maxrss of an exec'd child still counts the
    # parent image it was forked from.
    with open("/proc/self/status") as fh:
        hwm_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    kids_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"peak_rss_mb": round(hwm_kb / 1024, 1), "peak_rss_workers_mb": round(kids_kb / 1024, 1)}


def child(what: str, src: str, db: str, workers: int) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    t0 = time.perf_counter()
    extra: dict = {}
    if what == "copy":
        import psycopg

        total = 0
        with psycopg.connect(src) as con:
            for table in TABLES:
                with con.cursor().copy(f"COPY {table} TO STDOUT WITH (FORMAT csv, HEADER true)") as copy:
                    for block in copy:
                        total += len(block)
        extra["bytes"] = total
    elif what == "reader":
        from loaders import SourceOptions
        from loaders.registry import resolve

        reader = resolve(src).open(src, SourceOptions())
        threads = checkpoints = 0
        for bundle in reader.threads():
            threads += 1
            checkpoints += len(bundle.checkpoints)
        reader.close()
        extra.update(threads=threads, checkpoints=checkpoints)
    else:
        import transcript_lens

        summary = transcript_lens.load(src, db, workers=workers)
        extra.update(threads=summary.threads, checkpoints=summary.checkpoints, messages=summary.messages, errors=summary.errors)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 2), **extra, **_rss_mb()}))


def measure(label: str, what: str, src: str, db: str = "", workers: int = 1) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, src, db or "-", str(workers)],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{label} failed:\n{out.stderr}")
    result = {"measure": label, **json.loads(out.stdout.strip().splitlines()[-1])}
    print(json.dumps(result), flush=True)
    return result


def copy_into_postgres(sqlite_path: Path, dsn: str) -> int:
    """Every checkpoint and write of the SQLite store, re-written by PostgresSaver."""
    import sqlite3

    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    src = SqliteSaver(sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, check_same_thread=False))
    n = 0
    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        for tup in src.list(None):
            conf = tup.config["configurable"]
            parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            put_conf = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf["checkpoint_ns"]}}
            if parent:
                put_conf["configurable"]["checkpoint_id"] = parent
            # All current versions count as new: ON CONFLICT DO NOTHING keeps one row per version.
            saver.put(put_conf, tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes or []:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                saver.put_writes(
                    {"configurable": {**put_conf["configurable"], "checkpoint_id": conf["checkpoint_id"]}}, writes, task_id
                )
            n += 1
    src.conn.close()
    return n


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--admin-dsn", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--keep", action="store_true", help="keep the database and the exports")
    ap.add_argument("--reuse", metavar="NAME", help="measure a database (and exports) kept by an earlier --keep run")
    a = ap.parse_args()

    import psycopg
    from psycopg import sql

    from storegen import build_bench_store
    from tests.loaders.pg_util import dsn_for, export_csv, pg_dump

    OUT.mkdir(parents=True, exist_ok=True)
    store = OUT / f"pg_bench_{a.threads}x{a.turns}.sqlite"
    if not store.exists():
        print(json.dumps({"built": build_bench_store(store, a.threads, a.turns, progress=False)}), flush=True)
    name = a.reuse or f"tl_bench_{secrets.token_hex(4)}"
    dsn = dsn_for(name, a.admin_dsn)
    work = OUT / name
    if not a.reuse:
        with psycopg.connect(a.admin_dsn, autocommit=True) as con:
            con.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        if not a.reuse:
            t0 = time.perf_counter()
            copy_into_postgres(store, dsn)
            with psycopg.connect(dsn, autocommit=True) as con:
                con.execute("VACUUM ANALYZE")
            print(json.dumps({"copy_in_seconds": round(time.perf_counter() - t0, 1)}), flush=True)
            work.mkdir()
            export_csv(dsn, work / "csv", tables=TABLES)
            pg_dump(dsn, work / "data.sql")
        csv, plain = work / "csv", work / "data.sql"
        with psycopg.connect(dsn, autocommit=True) as con:
            sizes = {t: con.execute("SELECT pg_total_relation_size(%s)", [t]).fetchone()[0] for t in TABLES}
            n = con.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
            blobs = con.execute("SELECT count(*) FROM checkpoint_blobs WHERE channel = 'messages'").fetchone()[0]
        print(json.dumps({"database": name, "checkpoints": n, "messages_blobs": blobs,
                          "table_mb": {t: round(s / 2**20, 1) for t, s in sizes.items()},
                          "csv_mb": round(sum(f.stat().st_size for f in csv.iterdir()) / 2**20, 1),
                          "dump_mb": round(plain.stat().st_size / 2**20, 1)}), flush=True)
        measure("COPY TO STDOUT x3 (floor)", "copy", dsn)
        measure("live source only (stream + decode blobs)", "reader", dsn)
        measure("load live, 1 worker", "load", dsn, str(work / "w1.duckdb"), 1)
        measure("load live, default workers", "load", dsn, str(work / "wn.duckdb"), 0)
        measure("load COPY CSV folder, 1 worker", "load", str(csv), str(work / "csv.duckdb"), 1)
        measure("load COPY CSV folder, default workers", "load", str(csv), str(work / "csvn.duckdb"), 0)
        measure("load plain pg_dump, 1 worker", "load", str(plain), str(work / "dump.duckdb"), 1)
        measure("load plain pg_dump, default workers", "load", str(plain), str(work / "dumpn.duckdb"), 0)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
            with psycopg.connect(a.admin_dsn, autocommit=True) as con:
                con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
