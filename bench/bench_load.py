"""Load benchmark: the loader against the naive saver walk and the decode floor, in one run.

    .venv/bin/python bench/bench_load.py                       # 300 threads x 40 turns (built once, cached)
    .venv/bin/python bench/bench_load.py --threads 2000 --turns 40     # 2,000 x 40: ~6 min to build (7 GB), ~5 min to run
    .venv/bin/python bench/bench_load.py --store path/to/checkpoints.sqlite --skip-naive
    .venv/bin/python bench/bench_load.py --threads 2000 --turns 40 --incremental   # incremental / full ratios only

Every way of reading runs in its own subprocess on the same store with a warm
page cache; wall time and CPU are measured from outside, and the peak PSS of
the whole process tree (the loader's worker processes included) in one more,
sampled run of each (sampling takes CPU from what it samples). The raw read, the floor
and the loader run `--repeat` times (default 3), interleaved, and are shown by
their medians; the naive walk runs once. Prints one table and the ratios the
performance targets are stated in (docs/performance.md).

`--incremental` measures only reloads, all with `transcript-lens load`
(derived tables included), interleaved `--repeat` times in one run on a copy of
the store grown by 5 threads of a real graph: a full load of the grown store, an
incremental load after the 5 new threads (from the database of the store before
they were added, restored untimed before each run), and an incremental load
after nothing changed. Prints the medians and the two ratios with their targets.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where built stores and scratch go: `$BENCH_OUT` (the tests point it at a temp folder), else bench/out/.
OUT = Path(os.environ.get("BENCH_OUT") or ROOT / "bench" / "out")


# --- the ways of reading, each run as `bench_load.py --child KIND STORE` ----------------------

def child_raw(store: str) -> tuple[int, int]:
    """Read the raw checkpoint rows with sqlite3 (no decoding at all)."""
    con = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
    n = size = 0
    for (blob,) in con.execute("SELECT checkpoint FROM checkpoints"):
        n += 1
        size += len(blob)
    return n, size


def child_floor(store: str) -> tuple[int, int]:
    """The decode floor: every checkpoint unpacked, message payloads left as undecoded bytes."""
    import ormsgpack

    con = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
    hook = lambda code, data: data  # noqa: E731
    n = payloads = 0
    for (blob,) in con.execute("SELECT checkpoint FROM checkpoints"):
        cp = ormsgpack.unpackb(blob, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
        payloads += len(cp.get("channel_values", {}).get("messages") or ())
        n += 1
    return n, payloads


def child_naive(store: str) -> tuple[int, int]:
    """What users write today: per-thread `saver.list()` and first-seen logic. `store` is
    a copy made before the clock starts: the saver's setup() writes to the file."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(store, check_same_thread=False))
    threads = [r[0] for r in saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    rows = 0
    for thread_id in threads:
        first_seen: dict[str, tuple] = {}
        latest = None
        for tup in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}):
            cp = tup.checkpoint
            key = (cp["ts"], cp["id"])
            if latest is None or cp["id"] > latest["id"]:
                latest = cp
            for m in cp["channel_values"].get("messages", []):
                if m.id is not None and (m.id not in first_seen or key < first_seen[m.id]):
                    first_seen[m.id] = key
        for m in (latest or {}).get("channel_values", {}).get("messages", []):
            _ = (m.type, m.content, first_seen.get(m.id))
            rows += 1
    return len(threads), rows


CHILDREN = {"raw": child_raw, "floor": child_floor, "naive": child_naive}


# --- measuring from outside -----------------------------------------------------------------

def _tree_rss_kb(pid: int) -> int:
    """Memory of a process and all its descendants, from /proc: the sum of their PSS
    (proportional set size), so pages a forked worker shares with its parent are
    counted once, not once per process as a sum of RSS would."""
    total = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def measure(cmd: list[str], sample_memory: bool = False) -> tuple[float, float, float, str]:
    """Run `cmd`; return (wall seconds, peak tree PSS in MB or 0, CPU seconds of the tree, stdout).

    CPU is user + system time of the process and every descendant it waited for
    (the loader joins its workers), so it counts what both cores did. Memory is
    sampled only when asked: reading every process's smaps_rollup walks its page
    tables, which takes CPU from what is measured (more from a large process tree
    than from a small process), so timed runs go unsampled.
    """
    peak = 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while sample_memory and not done.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.1)  # smaps_rollup walks page tables: sampling faster slows what is measured

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, peak / 1024, cpu, out


def build_store(threads: int, turns: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"bench-{threads}x{turns}.sqlite"
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        from storegen import build_bench_store

        print(f"building {path.name} with real graphs (once; cached in bench/out/) ...", file=sys.stderr)
        tmp = path.with_suffix(".building")
        build_bench_store(str(tmp), threads=threads, turns=turns)
        os.replace(tmp, path)
    return path


def add_threads(store: Path, count: int) -> None:
    """Append `count` new threads to a store with a real graph (for the incremental reload)."""
    sys.path.insert(0, str(ROOT))
    from storegen import open_sqlite_saver, run_scenarios

    saver = open_sqlite_saver(str(store))
    run_scenarios(saver, ["simple_chat"], threads={f"bench:new:t{i}": "simple_chat" for i in range(count)})
    saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    saver.conn.close()


def incremental_bench(store: Path, repeat: int, workers: int | None) -> None:
    """Incremental / full load ratios after 5 new threads and after nothing changed (see the module doc)."""
    import duckdb

    OUT.mkdir(parents=True, exist_ok=True)  # (--store: nothing was built there yet)
    work = Path(tempfile.mkdtemp(prefix="bench-inc-", dir=OUT))
    try:
        grown, base, inc, full = work / "grown.sqlite", work / "base.duckdb", work / "inc.duckdb", work / "full.duckdb"
        print(f"copying {store.name} ...", file=sys.stderr)
        shutil.copyfile(store, grown)
        load = [sys.executable, "-m", "loaders", "--quiet"]
        if workers:
            load += ["--workers", str(workers)]
        measure([*load, str(grown), "--db", str(base)])
        add_threads(grown, 5)
        with grown.open("rb") as fh:  # warm the page cache for every run alike
            while fh.read(1 << 24):
                pass
        runs: dict[str, list[float]] = {"full": [], "after 5 new threads": [], "after nothing changed": []}
        said = {}
        for i in range(max(1, repeat)):
            print(f"running: full, incremental x2 ({i + 1}/{repeat}) ...", file=sys.stderr)
            runs["full"].append(measure([*load, str(grown), "--db", str(full)])[0])
            shutil.copyfile(base, inc)  # (untimed) the database as it was before the 5 threads
            wall, _, _, said["after 5 new threads"] = measure([*load, str(grown), "--db", str(inc), "--incremental"])
            runs["after 5 new threads"].append(wall)
            wall, _, _, said["after nothing changed"] = measure([*load, str(grown), "--db", str(inc), "--incremental"])
            runs["after nothing changed"].append(wall)
        counts = []
        for db in (inc, full):
            con = duckdb.connect(str(db), read_only=True)
            counts.append(con.execute(
                "SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM messages), (SELECT count(*) FROM conversation_metrics)"
            ).fetchall()[0])
            con.close()
        if counts[0] != counts[1]:
            raise SystemExit(f"incremental and full loads differ: {counts}")
        threads, messages, _ = counts[1]
        median = {name: statistics.median(r) for name, r in runs.items()}
        print()
        print(f"store: {store} ({store.stat().st_size / 1e6:,.0f} MB before growth; {threads:,} threads, "
              f"{messages:,} transcript rows after); {os.cpu_count()} cores; {repeat} interleaved runs each")
        for name, out in said.items():
            print(f"  {name}, the loader said: {out.strip()}")
        print()
        print("| load (transcript-lens load, derived tables included) | wall s (median) | runs, s | / full |")
        print("|---|---:|---|---:|")
        for name, r in runs.items():
            print(f"| {name} | {median[name]:.2f} | {' / '.join(f'{w:.2f}' for w in r)} | {median[name] / median['full']:.1%} |")
        print()
        for name, target in (("after 5 new threads", 0.15), ("after nothing changed", 0.05)):
            ratio = median[name] / median["full"]
            print(f"incremental {name} / full = {ratio:.1%} (target <= {target:.0%}: {'met' if ratio <= target else 'NOT met'})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=300)
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--store", help="use this SqliteSaver file instead of building one")
    ap.add_argument("--skip-naive", action="store_true", help="skip the slow saver walk")
    ap.add_argument("--workers", type=int, help="loader worker processes (default: the loader's own choice)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of the raw read, the floor and the loader, interleaved; the table shows medians (default 3)")
    ap.add_argument("--incremental", action="store_true",
                    help="measure only incremental reloads against full ones (after 5 new threads, after nothing changed)")
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("child_store", nargs="?", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        t0 = time.perf_counter()
        a, b = CHILDREN[args.child](args.child_store)
        print(a, b, time.perf_counter() - t0)
        return

    store = Path(args.store) if args.store else build_store(args.threads, args.turns)
    if args.incremental:
        incremental_bench(store, args.repeat, args.workers)
        return
    size_mb = store.stat().st_size / 1e6
    with store.open("rb") as fh:  # warm the page cache so every way starts equal
        while fh.read(1 << 24):
            pass
    me = [sys.executable, str(Path(__file__).resolve())]
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    db = work / "bench.duckdb"
    loader_cmd = [sys.executable, "-m", "loaders", str(store), "--db", str(db), "--quiet"]
    if args.workers:
        loader_cmd += ["--workers", str(args.workers)]

    naive_copy = work / "naive-copy.sqlite"  # copied just before the naive walk's clock starts
    fast = [
        ("raw sqlite3 read", [*me, "--child", "raw", str(store)]),
        ("floor (payloads as bytes)", [*me, "--child", "floor", str(store)]),
        ("loader (python -m loaders)", loader_cmd),
    ]
    # A shared machine's speed drifts by tens of percent between minutes: the fast
    # ways run interleaved, several times, and each is shown by its median.
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in fast}
    for i in range(max(1, args.repeat)):
        for name, cmd in fast:
            print(f"running: {name} ({i + 1}/{args.repeat}) ...", file=sys.stderr)
            wall, rss, cpu, out = measure(cmd)
            runs[name].append((wall, rss, cpu))
            if name.startswith("loader"):
                loaded = out.strip()
    # Peak memory from one more run of each, sampled (timed runs are not: see `measure`).
    peaks = {}
    for name, cmd in fast:
        print(f"running: {name} (memory) ...", file=sys.stderr)
        peaks[name] = measure(cmd, sample_memory=True)[1]
    results: dict[str, tuple[float, float, float]] = {
        name: (statistics.median(w for w, _, _ in r), peaks[name], statistics.median(c for _, _, c in r))
        for name, r in runs.items()
    }
    if not args.skip_naive:
        print("running: naive saver.list() walk (once) ...", file=sys.stderr)
        shutil.copyfile(store, naive_copy)
        # (sampled: a 40 MB process, sampled every 100 ms over minutes, loses next to nothing)
        wall, rss, cpu, _ = measure([*me, "--child", "naive", str(naive_copy)], sample_memory=True)
        naive_copy.unlink(missing_ok=True)
        results["naive saver.list() walk"] = (wall, rss, cpu)
        runs["naive saver.list() walk"] = [(wall, rss, cpu)]

    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    messages, checkpoints, threads = con.execute(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM threads)"
    ).fetchall()[0]
    payloads = con.execute("SELECT sum(len(message_versions)) FROM checkpoints WHERE is_root").fetchall()[0][0]
    con.close()

    print()
    print(f"store: {store} ({size_mb:,.0f} MB, {threads:,} threads, {checkpoints:,} checkpoints, "
          f"{payloads:,} message payloads, {messages:,} transcript rows); {os.cpu_count()} cores")
    print(f"loader said: {loaded}")
    print()
    print("| way to read the store | wall s (median) | runs, s | CPU s (median) | transcript msgs/s | MB/s | peak memory MB (PSS, process tree) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, (wall, rss, cpu) in results.items():
        each = " / ".join(f"{w:.2f}" for w, _, _ in runs[name])
        print(f"| {name} | {wall:.2f} | {each} | {cpu:.2f} | {messages / wall:,.0f} | {size_mb / wall:,.0f} | {rss:,.0f} |")
    loader = results["loader (python -m loaders)"][0]
    floor = results["floor (payloads as bytes)"][0]
    print()
    print(f"loader / floor = {loader / floor:.2f}x (target <= 1.0x)")
    # CPU is steadier than wall time on a shared machine, and shows the work done on both cores.
    print(f"CPU: loader {results['loader (python -m loaders)'][2]:.2f} s on {os.cpu_count()} cores, "
          f"floor {results['floor (payloads as bytes)'][2]:.2f} s on one")
    if "naive saver.list() walk" in results:
        print(f"naive / loader = {results['naive saver.list() walk'][0] / loader:.1f}x (target >= 40x)")

    # Incremental reload: a few new threads appended by a real graph, then --incremental.
    copy = work / "grown.sqlite"
    shutil.copyfile(store, copy)
    inc_db = work / "inc.duckdb"
    shutil.copyfile(db, inc_db)
    add_threads(copy, 5)
    inc_cmd = [sys.executable, "-m", "loaders", str(copy), "--db", str(inc_db), "--incremental", "--quiet"]
    inc_copy = work / "inc-before.duckdb"
    shutil.copyfile(inc_db, inc_copy)
    wall_inc, _, _, out_inc = measure(inc_cmd)
    shutil.copyfile(inc_copy, inc_db)  # the same incremental load again, for its memory
    rss_inc = measure(inc_cmd, sample_memory=True)[1]
    wall_full, _, _, _ = measure([sys.executable, "-m", "loaders", str(copy), "--db", str(work / "full.duckdb"), "--quiet"])
    print(f"incremental reload after 5 new threads: {wall_inc:.2f} s (full reload {wall_full:.2f} s; peak memory {rss_inc:,.0f} MB)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
