"""`python -m loaders SOURCE --db PATH`: `transcript-lens load` under its old name.

The one file of loaders/ that may import the composition root (transcript_lens.cli):
the options, the progress bar, the exit codes (2 with one `error:` line, 130 when
interrupted, 141 when its output pipe is closed) and the derived tables are `transcript-lens load`'s.
"""

from __future__ import annotations

import argparse
import sys

from transcript_lens.cli import configure_load, run_load, run_quietly


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loaders")
    configure_load(parser)
    args = parser.parse_args(argv)
    return run_quietly(lambda: run_load(args))


if __name__ == "__main__":
    sys.exit(main())
