"""What erasure and the export log cost, as ratios measured in one run.

    .venv/bin/python bench/bench_erasure.py                    # 100 threads x 20 turns (built once, cached)
    .venv/bin/python bench/bench_erasure.py --threads 300 --turns 40

On a copy of one store's database: a full load with no tombstone, an erasure of one
thread (a rewrite of the whole database), a full load that holds that thread back
(its delete and the second rewrite), and the `daily` and `conversations` reports
with the export log (every write_report appends its row) against the log's append
alone. Each step runs `--repeat` times (default 3); medians are shown. Prints the
ratios: erasure / full load, load holding back / plain load, log append / report.

Then the tenant sweep: how erasing a whole tenant grows with its thread count. The
store's threads are copied under new ids into tenant `sweep` until it holds
`--sweep` threads (default 10,000), and then twice as many, in two databases of one
run; erasing the tenant from each is timed. A linear erasure prints a ratio near 2
(a rewrite per erased thread, or an id list tested on every row, gives about 4).

    .venv/bin/python bench/bench_erasure.py --sweep 10000

Last, one thread erased from a database whose workspace holds `--notes` notes (default 2,000)
on a kept thread, each its own text: every note is masked by the reason's rule
(`analytics.erasure.reason`), and the time is set beside erasing with one note.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Where built stores and scratch go: `$BENCH_OUT` (the tests point it at a temp folder), else bench/out/.
OUT = Path(os.environ.get("BENCH_OUT") or ROOT / "bench" / "out")


def _store(threads: int, turns: int) -> Path:
    from storegen import build_bench_store

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"bench-{threads}x{turns}.sqlite"
    if not path.exists():
        print(f"building {path.name} with real graphs (once; cached in bench/out/) ...", file=sys.stderr)
        tmp = path.with_suffix(".building")
        build_bench_store(str(tmp), threads=threads, turns=turns, progress=False)
        os.replace(tmp, path)
    return path


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _tenant_copy(template: Path, target: Path, threads: int) -> None:
    """`template`'s database with its threads copied under new ids into tenant `sweep` until that
    tenant holds `threads` threads (every thread table, rows and all)."""
    import duckdb

    from analytics.erasure.db import thread_tables

    shutil.copyfile(template, target)
    con = duckdb.connect(str(target))
    try:
        (have,) = con.execute("SELECT count(*) FROM threads").fetchone()
        copies = -(-threads // have)
        present = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for table in thread_tables():
            if table not in present:
                continue
            cols = [c for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [table]).fetchall()]
            swap = {"thread_id": "'sweep:' || i || ':' || thread_id", "tenant_id": "'sweep'"}
            select = ", ".join(swap.get(c, f'"{c}"') for c in cols)
            con.execute(f'INSERT INTO "{table}" SELECT {select} FROM "{table}", range(?) AS r(i) '
                        "WHERE thread_id NOT LIKE 'sweep:%'", [copies])
        con.execute("CREATE TEMP TABLE extra AS SELECT thread_id FROM threads WHERE tenant_id = 'sweep' "
                    "ORDER BY thread_id OFFSET ?", [threads])
        for table in thread_tables():
            if table in present:
                con.execute(f'DELETE FROM "{table}" WHERE thread_id IN (SELECT thread_id FROM extra)')
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _sweep(db: Path, threads: int) -> list[float]:
    """Seconds to erase tenant `sweep` at `threads` threads, and twice as many: (t1, t2)."""
    import analytics

    times = []
    for n in (threads, 2 * threads):
        copy = db.with_name(f"sweep-{n}.duckdb")
        _tenant_copy(db, copy, n)
        t0 = time.perf_counter()
        done = analytics.erase(copy, tenant="sweep", reason="bench", by="bench")
        times.append(time.perf_counter() - t0)
        assert done.threads == n, (done.threads, n)
    return times


def _noted(store: Path, folder: Path, notes: int) -> float:
    """Seconds to erase one thread of a fresh load of `store` whose workspace holds `notes` notes
    on a kept thread (one written by the API, the rest copied from it with their own text)."""
    import sqlite3
    from contextlib import closing

    import analytics
    import transcript_lens
    from analytics.workspace.store import Workspace

    folder.mkdir()
    db = folder / "lens.duckdb"
    transcript_lens.load(store, db)
    con = analytics.connect(db)
    try:
        victim, kept = [t for (t,) in con.execute(
            "SELECT thread_id FROM threads ORDER BY message_count DESC, thread_id LIMIT 2").fetchall()]
    finally:
        con.close()
    analytics.annotate(db, kept, note="note 0: the customer asked about refunds", author="bench")
    if notes > 1:
        with closing(sqlite3.connect(Workspace.beside(db).path)) as conn, conn:
            columns = [c for (c,) in conn.execute("SELECT name FROM pragma_table_info('annotations')")]
            made = {"annotation_id": "lower(hex(randomblob(16)))",
                    "note": "'note ' || n.i || ': the customer asked about refunds, case ' || (n.i * 7919)"}
            conn.execute(f"INSERT INTO annotations SELECT {', '.join(made.get(c, c) for c in columns)} "
                         "FROM annotations, (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
                         "WHERE i < ?) SELECT i FROM r) n", (notes - 1,))
    return _timed_erase(db, victim)


def _timed_erase(db: Path, thread: str) -> float:
    import analytics

    t0 = time.perf_counter()
    analytics.erase(db, thread=thread, reason="bench", by="bench")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweep", type=int, default=10_000, help="threads of the tenant erased (then twice as many)")
    ap.add_argument("--notes", type=int, default=2_000, help="notes on a kept thread of the last erasure")
    args = ap.parse_args()

    import duckdb

    import analytics
    import transcript_lens
    from analytics.export_log import record_export

    store = _store(args.threads, args.turns)
    with tempfile.TemporaryDirectory(prefix="tl-bench-erasure-") as tmp:
        os.environ["TRANSCRIPT_LENS_WORKSPACE"] = str(Path(tmp) / "ws.sqlite")
        db = Path(tmp) / "lens.duckdb"
        transcript_lens.load(store, db)
        con = duckdb.connect(str(db), read_only=True)
        (victim,) = con.execute("SELECT thread_id FROM threads ORDER BY message_count DESC LIMIT 1").fetchone()
        (messages,) = con.execute("SELECT count(*) FROM messages").fetchone()
        con.close()
        size = db.stat().st_size

        plain = _median(lambda: transcript_lens.load(store, db), args.repeat)

        pristine = Path(tmp) / "pristine.duckdb"
        shutil.copyfile(db, pristine)
        erase_times = []
        for i in range(args.repeat):
            shutil.copyfile(pristine, db)
            t0 = time.perf_counter()
            analytics.erase(db, thread=victim, reason="bench", by="bench")
            erase_times.append(time.perf_counter() - t0)
            if i < args.repeat - 1:
                analytics.lift(db, thread=victim, reason="bench", by="bench")
        erase = statistics.median(erase_times)

        held = _median(lambda: transcript_lens.load(store, db), args.repeat)  # the tombstone stands

        reports = {}
        for kind in ("daily", "conversations"):
            reports[kind] = _median(lambda: analytics.write_report(db, kind, Path(tmp) / f"{kind}.csv"), args.repeat)
        append = _median(lambda: record_export(db, "bench", arguments={}, rows=0, masked=False, target=None),
                         max(args.repeat, 20))
        analytics.lift(db, thread=victim, reason="bench", by="bench")
        transcript_lens.load(store, db)
        small, large = _sweep(db, args.sweep)
        del os.environ["TRANSCRIPT_LENS_WORKSPACE"]  # (each noted database its own workspace, beside it)
        one_note = statistics.median(_noted(store, Path(tmp) / f"one-{i}", 1) for i in range(args.repeat))
        noted = statistics.median(_noted(store, Path(tmp) / f"many-{i}", args.notes) for i in range(args.repeat))

    print(f"store {store.name}: {messages:,} messages, database {size / 1e6:.1f} MB; erased thread {victim}")
    print(f"full load                      {plain:8.3f} s")
    print(f"erase one thread (rewrite)     {erase:8.3f} s   = {erase / plain:.2f} x a full load")
    print(f"full load holding it back      {held:8.3f} s   = {held / plain:.2f} x a plain full load")
    for kind, seconds in reports.items():
        print(f"report {kind:<23} {seconds:8.3f} s   export-log append = {append / seconds:.1%} of it")
    print(f"export-log append alone        {append * 1000:8.2f} ms")
    print(f"erase a tenant of {args.sweep:,} threads  {small:8.3f} s")
    print(f"erase a tenant of {2 * args.sweep:,} threads  {large:8.3f} s   = {large / small:.2f} x (linear: about 2)")
    print(f"{'erase one thread, 1 note':<30} {one_note:8.3f} s")
    print(f"{f'erase one thread, {args.notes:,} notes':<30} {noted:8.3f} s   = {noted / one_note:.2f} x")


if __name__ == "__main__":
    main()
