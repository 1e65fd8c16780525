"""Run `transcript-lens ARGS` in this process and write its peak memory to `$TL_PEAK_FILE`.

The peak is this process's VmHWM (its own high-water mark since exec: `ru_maxrss` would still
count the pytest image it was forked from) and the largest of its children's (decode workers).

    python -m tests.attacks.measure load store.sqlite --db out.duckdb
"""

from __future__ import annotations

import os
import resource
import sys


def _peak_kb() -> int:
    with open("/proc/self/status") as fh:
        own = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def main() -> int:
    from transcript_lens.cli import main as cli

    try:
        code = cli(sys.argv[1:])
    except SystemExit as exc:  # argparse and explicit exits
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        if os.environ.get("TL_PEAK_FILE"):
            with open(os.environ["TL_PEAK_FILE"], "w") as fh:
                fh.write(str(_peak_kb()))
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
