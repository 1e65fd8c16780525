"""Output whose reader has gone (`… | head -1`): the command stops quietly, as a Unix tool
stopped by SIGPIPE does: exit 141, no traceback, nothing more written.

Python ignores SIGPIPE, so a write to a closed pipe raises `BrokenPipeError` wherever the
command happens to be writing (pandas' CSV writer, `print`, the flush at exit). Every entry
point that writes to stdout runs its command through `run`, the one place that turns it into
the exit status: `transcript_lens.cli.main` (every `transcript-lens` subcommand, `python -m
transcript_lens`), `analytics.cli.main` (`python -m analytics`) and `loaders/__main__.py`
(`python -m loaders`, through `transcript_lens.cli`).

>>> run(lambda: 0)
0
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

#: The exit status of a process killed by SIGPIPE, as a shell reports it.
EXIT = 128 + signal.SIGPIPE


def run(command: Callable[[], int | None]) -> int | None:
    """`command()`'s exit status, what it printed flushed; `EXIT` if its output pipe was closed."""
    try:
        code = command()
        sys.stdout.flush()  # (what is still buffered meets the closed pipe here, not at exit)
        return code
    except BrokenPipeError:
        _discard_stdout()
        return EXIT


def _discard_stdout() -> None:
    """Send what is still buffered, and anything printed until exit, nowhere (not a second
    `BrokenPipeError` when the interpreter flushes stdout at exit)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # (not a file: a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
