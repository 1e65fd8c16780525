"""Two checkouts' loaders on one store, interleaved in one run: what a change costs.

    git worktree add /tmp/before <commit> && (cd /tmp/before && ../main/.venv/bin/python setup.py -q build_ext --inplace)
    .venv/bin/python bench/bench_compare.py STORE --before /tmp/before [--after .] [--runs 5] [--workers 1]

Each run is `python -m loaders STORE` in a fresh process of the checkout (its own C
extensions), the runs alternating before/after so that the machine's drift hits both.
Prints each run's CPU (user + system of the process tree) and wall time, then the median
CPU of each and their ratio, after/before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# In a fresh parent, so the children's usage is only the load's (its workers included).
_TIMED = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(u.ru_utime + u.ru_stime, time.perf_counter() - t)\n"
)


def one_load(tree: Path, store: Path, db: Path, workers: int) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", _TIMED, sys.executable, "-m", "loaders", str(store), "--db", str(db), "--quiet",
         "--workers", str(workers)],
        capture_output=True, text=True, check=True, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
    )
    cpu, wall = map(float, out.stdout.split())
    return cpu, wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--before", type=Path, required=True, help="the checkout to compare against")
    ap.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    trees = {"before": a.before.resolve(), "after": a.after.resolve()}
    cpu: dict[str, list[float]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        for run in range(a.runs):
            for name, tree in trees.items():
                c, w = one_load(tree, a.store.resolve(), Path(tmp) / f"{name}.duckdb", a.workers)
                cpu[name].append(c)
                print(f"run {run + 1} {name:6} cpu {c:6.2f} s  wall {w:6.2f} s", flush=True)
    b, f = statistics.median(cpu["before"]), statistics.median(cpu["after"])
    print(f"median CPU before {b:.2f} s, after {f:.2f} s: after/before {f / b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
