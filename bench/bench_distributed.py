"""Throughput of loads into a Parquet dataset: one machine, and Dask with 1 and 2 workers, in one run.

    .venv/bin/python bench/bench_distributed.py --store bench/out/bench-2000x40.sqlite
    .venv/bin/python bench/bench_distributed.py                 # 300 x 40 (built once, cached in bench/out/)

Each way runs as `transcript-lens load --format parquet` in its own process on
the same store with a warm page cache (wall time measured from outside, the
local cluster's start included), `--repeat` times interleaved, shown by the
median. Prints source MB/s and transcript messages/s, per worker for Dask: the
figures docs/scale.md projects from.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import OUT, build_store, measure  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=300)
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--store", help="use this SqliteSaver file instead of building one")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    store = Path(args.store) if args.store else build_store(args.threads, args.turns)
    size_mb = store.stat().st_size / 1e6
    with store.open("rb") as fh:
        while fh.read(1 << 24):
            pass
    work = Path(tempfile.mkdtemp(prefix="bench-dist-", dir=OUT))
    base = [sys.executable, "-m", "transcript_lens", "load", str(store), "--format", "parquet", "--quiet"]
    ways = {
        "one machine (local load, 2 decode processes)": (base, 2),
        "dask local:1": ([*base, "--scheduler", "local:1"], 1),
        "dask local:2": ([*base, "--scheduler", "local:2"], 2),
    }
    runs: dict[str, list[float]] = {name: [] for name in ways}
    said = ""
    try:
        for i in range(max(1, args.repeat)):
            for name, (cmd, _) in ways.items():
                print(f"running: {name} ({i + 1}/{args.repeat}) ...", file=sys.stderr)
                folder = work / f"ds-{len(runs[name])}-{name.split()[1]}"
                wall, _, _, out = measure([*cmd, "--db", str(folder)])
                runs[name].append(wall)
                said = out.strip()
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    messages = int(said.split(" messages")[0].rsplit(" ", 1)[1])
    print()
    print(f"store: {store} ({size_mb:,.0f} MB); the last load said: {said}")
    print()
    print("| way | workers | wall s (median) | runs, s | MB/s | msgs/s | MB/s per worker |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for name, (_, workers) in ways.items():
        wall = statistics.median(runs[name])
        each = " / ".join(f"{w:.2f}" for w in runs[name])
        print(f"| {name} | {workers} | {wall:.2f} | {each} | {size_mb / wall:,.0f} | {messages / wall:,.0f} | "
              f"{size_mb / wall / workers:,.0f} |")


if __name__ == "__main__":
    main()
