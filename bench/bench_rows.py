"""The SQLite reader's two row sources on one store, interleaved in one run: CPU per way.

    .venv/bin/python bench/bench_rows.py STORE [--rounds 5] [--threads N]

Each round reads the store's threads with `SqliteReader.threads` (every checkpoint
scanned and its payloads numbered, the special writes read, nothing transformed) once
through the C row source (`loaders/_rows.c`: the query stepped with SQLite's C API, each
blob scanned where SQLite holds it) and once through the sqlite3 cursor (its twin: a
7-tuple and a copy of every blob per row, then `_scan.row`), each in a fresh process so
that neither inherits the other's page-cache state or allocations. Prints user and
system CPU of each read and the medians; the ratio is what the C rows save of a
worker's reading (docs/performance.md). Wall time is left out: CPU is what the
loader's workers share two cores with.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_READ = """
import resource, sys
sys.path.insert(0, sys.argv[1])
from loaders.sqlite import reader as sqlite_reader
from loaders.source import SourceOptions
if sys.argv[3] == "cursor":
    sqlite_reader.native_rows = None
elif sqlite_reader.native_rows is None:
    raise SystemExit("loaders._rows is not built")
limit = int(sys.argv[4])
reader = sqlite_reader.SqliteSource().open(sys.argv[2], SourceOptions())
before = resource.getrusage(resource.RUSAGE_SELF)
checkpoints = threads = 0
for bundle in reader.threads(None):
    checkpoints += len(bundle.checkpoints)
    threads += 1
    if threads == limit:
        break
after = resource.getrusage(resource.RUSAGE_SELF)
reader.close()
print(checkpoints, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
"""


def read_once(store: Path, way: str, threads: int) -> tuple[int, float, float]:
    out = subprocess.run([sys.executable, "-c", _READ, str(ROOT), str(store), way, str(threads)],
                         capture_output=True, text=True, check=True)
    n, user, system = out.stdout.split()
    return int(n), float(user), float(system)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="read only the first N threads (default: all)")
    a = ap.parse_args(argv)
    with a.store.open("rb") as fh:  # a warm page cache for every way
        while fh.read(1 << 24):
            pass
    cpu: dict[str, list[float]] = {"cursor": [], "c-rows": []}
    for r in range(a.rounds):
        for way in cpu:
            n, user, system = read_once(a.store, way, a.threads)
            cpu[way].append(user + system)
            print(f"round {r + 1} {way:6} {n:,} checkpoints: user {user:.2f} s, system {system:.2f} s", flush=True)
    c, f = statistics.median(cpu["cursor"]), statistics.median(cpu["c-rows"])
    print(f"median CPU: cursor {c:.2f} s, C rows {f:.2f} s: C rows / cursor {f / c:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
