"""The resume gap: the idle time between consecutive root checkpoints that counts as a restart.

One name and one unit everywhere: `gap_minutes`, a number of minutes (a float),
default `DEFAULT_GAP_MINUTES` = 30; `metrics.conversations` (its
`resume_points` column counts idle gaps only) and `analytics.resume` (idle
gaps and process changes) take the same parameter, and `python -m analytics
report` has one flag for it, `--gap-minutes`.

Why minutes as a float, not a `timedelta`: minutes are what people type and
read — the CLI flag, the app's "Idle gap (minutes)" box and its `gap=` URL
parameter — so no boundary converts, and a float still says seconds where a
test needs them (0.05 = 3 s). SQL compares integer microseconds, computed here
once (`gap_us`), so every query reads the same threshold the same way.

>>> gap_us(DEFAULT_GAP_MINUTES)
1800000000
"""

from __future__ import annotations

import argparse
import math
import numbers
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from analytics.errors import BadRequest
from analytics.cli_types import number

#: Idle time between consecutive root checkpoints that counts as a restart, in minutes.
DEFAULT_GAP_MINUTES = 30.0

#: The `report` flag; `write_report` / `report_frame` take its value as `options["gap_minutes"]`.
GAP_FLAG = "--gap-minutes"
#: Its former spelling (the conversations report's): still accepted, hidden from --help, with a warning.
DEPRECATED_GAP_FLAG = "--resume-gap-minutes"


def check_gap(gap_minutes: object) -> float:
    """The idle-gap threshold in minutes: a positive finite number.

    >>> check_gap(30)
    30.0
    """
    if isinstance(gap_minutes, bool) or not isinstance(gap_minutes, numbers.Real):
        raise BadRequest(f"gap_minutes must be a number of minutes, got {gap_minutes!r}")
    value = float(gap_minutes)
    if not math.isfinite(value) or value <= 0:
        raise BadRequest(f"gap_minutes must be > 0, got {gap_minutes!r}")
    return value


def gap_us(gap_minutes: object) -> int:
    """The threshold in whole microseconds, as the queries compare it (`epoch_us` differences).

    >>> gap_us(0.05)  # 3 seconds
    3000000
    """
    return round(check_gap(gap_minutes) * 60e6)


class _DeprecatedFlag(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(f"warning: {option_string} is deprecated; use {GAP_FLAG}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_gap_argument(parser: argparse.ArgumentParser) -> None:
    """`--gap-minutes MIN` (and its hidden former spelling) on `parser`, into `gap_minutes`."""
    parser.add_argument(
        GAP_FLAG,
        dest="gap_minutes",
        type=number(hi=52_560_000),
        metavar="MIN",
        help="conversations, resume: idle gap between checkpoints that counts as a resume point "
        f"(default {DEFAULT_GAP_MINUTES:g})",
    )
    parser.add_argument(DEPRECATED_GAP_FLAG, dest="gap_minutes", type=number(hi=52_560_000), action=_DeprecatedFlag,
                        help=argparse.SUPPRESS)  # fmt: skip


def gap_option(options: Mapping[str, Any]) -> float:
    """The gap a report was asked for: `options["gap_minutes"]` (the CLI's `--gap-minutes`), else the default.

    >>> gap_option({}), gap_option({"gap_minutes": 5})
    (30.0, 5.0)
    """
    minutes = options.get("gap_minutes")
    if minutes is None and options.get("resume_gap_minutes") is not None:
        warnings.warn("the 'resume_gap_minutes' option is deprecated; use 'gap_minutes'", DeprecationWarning, 2)
        minutes = options["resume_gap_minutes"]
    return check_gap(DEFAULT_GAP_MINUTES if minutes is None else minutes)
