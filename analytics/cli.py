"""`python -m analytics …`: a thin shell over the analytics API.

Each domain module registers its own subcommand with `@command`, the way a
plugin would; this module only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

_COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def command(name: str, configure: Callable[[argparse.ArgumentParser], None]):
    """Register `python -m analytics NAME`; the decorated function runs it.

    >>> @command("hello", lambda p: p.add_argument("--db"))  # doctest: +SKIP
    ... def hello(args): return 0
    """

    def wrap(run: Callable[[argparse.Namespace], int]):
        _COMMANDS[name] = (configure, run)
        return run

    return wrap


def main(argv: list[str] | None = None) -> int:
    # Importing the package registers every built-in command.
    import analytics  # noqa: F401
    from analytics.errors import AnalyticsError

    parser = argparse.ArgumentParser(prog="python -m analytics", description="Transcript Lens analytics")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (configure, _) in sorted(_COMMANDS.items()):
        configure(sub.add_parser(name))
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command][1](args)
    except (AnalyticsError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
