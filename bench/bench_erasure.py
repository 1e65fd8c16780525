"""What erasure and the export log cost, as ratios measured in one run.

    .venv/bin/python bench/bench_erasure.py                    # 100 threads x 20 turns (built once, cached)
    .venv/bin/python bench/bench_erasure.py --threads 300 --turns 40

On a copy of one store's database: a full load with no tombstone, an erasure of one
thread (a rewrite of the whole database), a full load that holds that thread back
(its delete and the second rewrite), and the `daily` and `conversations` reports
with the export log (every write_report appends its row) against the log's append
alone. Each step runs `--repeat` times (default 3); medians are shown. Prints the
ratios: erasure / full load, load holding back / plain load, log append / report.
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
OUT = ROOT / "bench" / "out"


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=100)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import duckdb

    import analytics
    import transcript_lens
    from analytics.exports import record_export

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

    print(f"store {store.name}: {messages:,} messages, database {size / 1e6:.1f} MB; erased thread {victim}")
    print(f"full load                      {plain:8.3f} s")
    print(f"erase one thread (rewrite)     {erase:8.3f} s   = {erase / plain:.2f} x a full load")
    print(f"full load holding it back      {held:8.3f} s   = {held / plain:.2f} x a plain full load")
    for kind, seconds in reports.items():
        print(f"report {kind:<23} {seconds:8.3f} s   export-log append = {append / seconds:.1%} of it")
    print(f"export-log append alone        {append * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
