"""Command line: ``python -m storegen store PATH`` / ``python -m storegen bench PATH``.

Examples:
    .venv/bin/python -m storegen store /tmp/all.sqlite
    .venv/bin/python -m storegen store /tmp/two.sqlite --scenario edit --scenario replay_branch
    .venv/bin/python -m storegen bench /tmp/bench.sqlite --threads 2000 --turns 40
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from storegen.bench import build_bench_store
from storegen.build import build_sqlite_store
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
    a = ap.parse_args(argv)
    if a.cmd == "store":
        print(json.dumps(build_sqlite_store(a.path, a.scenario, seed=a.seed), indent=2))
    else:
        print(json.dumps(build_bench_store(a.path, a.threads, a.turns, a.seed, durability=a.durability)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
