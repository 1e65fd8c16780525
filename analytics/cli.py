"""`python -m analytics …` and the analytics half of `transcript-lens`: thin shells over the API.

Each domain module registers its own subcommand with `@command`, the way a
plugin would; this module only builds parsers and dispatches. `add_commands`
puts the registered subcommands into any argparse tree: `main` below (prog
`python -m analytics`) and `transcript_lens.cli` (prog `transcript-lens`) use
it, so both take the same options and give the same exit codes.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from analytics import closed_pipe


class _Command(NamedTuple):
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    help: str | None


_COMMANDS: dict[str, _Command] = {}


def command(name: str, configure: Callable[[argparse.ArgumentParser], None], help: str | None = None):
    """Register the subcommand NAME (`help`: its line in the command list); the decorated function runs it.

    >>> @command("hello", lambda p: p.add_argument("--db"), help="say hello")  # doctest: +SKIP
    ... def hello(args): return 0
    """

    def wrap(run: Callable[[argparse.Namespace], int]):
        _COMMANDS[name] = _Command(configure, run, help)
        return run

    return wrap


def names() -> list[str]:
    """The registered subcommands (every built-in one: `analytics.register_all`)."""
    import analytics

    analytics.register_all()
    return sorted(_COMMANDS)


def add_commands(subparsers: argparse._SubParsersAction, only: Iterable[str] | None = None) -> None:
    """Add the registered subcommands (or those named in `only`) to an argparse tree.

    Each parser's `run` default runs its command: `args.run(args)` returns the exit
    status, 2 with one `error: …` line for a mistake the API reports.
    """
    wanted = set(names() if only is None else only)
    for name in names():
        if name in wanted:
            spec = _COMMANDS[name]
            parser = subparsers.add_parser(name, help=spec.help)
            spec.configure(parser)
            add_policy_arguments(parser)
            parser.set_defaults(run=functools.partial(_run, spec.run))


def add_policy_arguments(parser: argparse.ArgumentParser, nested: bool = False) -> None:
    """What every command that reads a database takes: masking (analytics.policy).

    `nested`: for a command's own subcommands (`annotations export`), which take the flags
    too; left out there, they do not undo the same flags given before the subcommand."""
    from analytics.redact import CONFIG_ENV, ENV

    absent = {"default": argparse.SUPPRESS} if nested else {}
    group = parser.add_argument_group("personal data")
    group.add_argument("--redact", action="store_true",
                       help=f"mask emails, phone numbers, cards, IBANs, IP addresses, SSNs and configured terms in "
                            f"everything written (also {ENV}=1)", **absent)
    group.add_argument("--redact-config", metavar="FILE.toml",
                       help=f"extra patterns and terms to mask, a [redact] table (also {CONFIG_ENV}; docs/privacy.md)",
                       **absent)


@contextlib.contextmanager
def _policy_environment(args: argparse.Namespace) -> Iterator[None]:
    # The command's flags become this process's deployment policy for the command's
    # duration: every connection the API opens then reads through it (analytics.policy).
    from analytics.redact import CONFIG_ENV, ENV, RedactConfig

    wanted = {}
    if getattr(args, "redact", False):
        wanted[ENV] = "1"
    if getattr(args, "redact_config", None):
        RedactConfig.from_toml(args.redact_config)  # a bad file is an error before anything is read
        wanted[CONFIG_ENV] = str(args.redact_config)
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def masked_parsing(argv: list[str]) -> Iterator[None]:
    """Parse `argv` inside this block: under masking — `--redact` among the arguments, or the
    deployment's (`TRANSCRIPT_LENS_REDACT`) — what argparse prints (an error line quoting a typed
    value: `invalid choice: 'bob@example.com'`, `unrecognized arguments: …`; usage, help) is masked
    as every other line a command prints (`analytics.masking.masked_output`), with the patterns of
    a `--redact-config` given there when it can be read."""
    words = [a for a in argv if isinstance(a, str)]
    wanted = "--redact" in words
    if not wanted and os.environ.get("TRANSCRIPT_LENS_REDACT", "") in ("", "0"):  # (analytics.policy's rule)
        yield  # nothing to mask: the masker is not even imported (a load does not pay for it)
        return
    from analytics.masking import masked_output
    from analytics.redact import CONFIG_ENV, RedactConfig

    config = None
    for i, word in enumerate(words):
        if word == "--redact-config" and i + 1 < len(words):
            config = words[i + 1]
        elif word.startswith("--redact-config="):
            config = word.split("=", 1)[1]
    saved = os.environ.get(CONFIG_ENV)
    if wanted and config:
        try:
            RedactConfig.from_toml(config)
            os.environ[CONFIG_ENV] = config
        except Exception:  # noqa: BLE001 - an unreadable config is the command's own error, later
            pass
    try:
        with masked_output(on=wanted):
            yield
    finally:
        if saved is None:
            os.environ.pop(CONFIG_ENV, None)
        else:
            os.environ[CONFIG_ENV] = saved


def _run(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    from analytics.errors import AnalyticsError
    from analytics.export_log import acting_as
    from analytics.masking import masked_output
    from analytics.terminal import visible_output

    # Everything printed shows the store's control characters as escapes (analytics.terminal);
    # under masking, every line (rows, headers, listings, errors) is masked before that.
    with visible_output():
        try:
            _utf8_only(args)
            with _policy_environment(args):
                with masked_output(), acting_as(origin="cli"):  # exports it makes are logged as the CLI's
                    try:
                        return run(_stdout_dash(args))
                    except (AnalyticsError, FileNotFoundError) as exc:
                        print(f"error: {exc}", file=sys.stderr)
                        return 2
        except (AnalyticsError, FileNotFoundError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2


def _utf8_only(args: argparse.Namespace) -> None:
    """Refuse an argument that is not UTF-8 (`$'\\xff'`: Python holds its bytes as lone surrogates,
    which DuckDB and every writer refuse deep inside, as a traceback), naming the argument."""
    from analytics.errors import BadRequest

    for name, value in vars(args).items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise BadRequest(f"argument {name}: not valid UTF-8 text (the command line is read as UTF-8)") from None


def _stdout_dash(args: argparse.Namespace) -> argparse.Namespace:
    # `--out -` means stdout for every command that writes a file (as in sqlite-utils and most
    # Unix tools): the commands read `out=None` as stdout. A file literally named `-` is `./-`.
    if getattr(args, "out", None) == "-":
        args.out = None
    return args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analytics", description="Transcript Lens analytics")
    add_commands(parser.add_subparsers(dest="command", required=True))
    argv = sys.argv[1:] if argv is None else list(argv)
    with masked_parsing(argv):
        args = parser.parse_args(argv)
    return closed_pipe.run(lambda: args.run(args))
