"""Command line: ``python -m storegen store PATH`` / ``python -m storegen bench PATH``.

Examples:
    .venv/bin/python -m storegen store /tmp/all.sqlite
    .venv/bin/python -m storegen store /tmp/two.sqlite --scenario edit --scenario replay_branch
    .venv/bin/python -m storegen bench /tmp/bench.sqlite --threads 2000 --turns 40
    .venv/bin/python -m storegen labelled /tmp/labelled.sqlite     # and /tmp/labelled.labels.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from storegen.bench import build_bench_store
from storegen.build import build_sqlite_store
from storegen.labelled import build_labelled_store, composition, labels_path
from storegen.scenarios import SCENARIOS


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m storegen", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("store", help="write the scenario store (SqliteSaver file)")
    st.add_argument("path")
    st.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="repeatable; default: all")
    st.add_argument("--seed", type=int, default=0)
    be = sub.add_parser("bench", help="write a large benchmark store")
    be.add_argument("path")
    be.add_argument("--threads", type=int, default=300)
    be.add_argument("--turns", type=int, default=40)
    be.add_argument("--seed", type=int, default=0)
    be.add_argument("--durability", choices=["sync", "async", "exit"], default="sync")
    la = sub.add_parser("labelled", help="write the labelled outcome set and its labels (PATH's stem + .labels.json)")
    la.add_argument("path")
    la.add_argument("--seed", type=int, default=0)
    la.add_argument("--scale", type=float, default=1.0, help="multiplies every pattern's count (1.0: ~270 conversations)")
    a = ap.parse_args(argv)
    if a.cmd == "labelled":
        labels = build_labelled_store(a.path, a.seed, a.scale)
        print(json.dumps({"labels": str(labels_path(a.path)), "threads": len(labels["threads"]), **composition(labels)}))
    elif a.cmd == "store":
        print(json.dumps(build_sqlite_store(a.path, a.scenario, seed=a.seed), indent=2))
    else:
        print(json.dumps(build_bench_store(a.path, a.threads, a.turns, a.seed, durability=a.durability)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
