"""Argument types of the command line that keep a number within what the code after it can hold.

`type=int` takes `99999999999999999999` and `type=float` takes `1e309` (infinity) and `nan`;
each then failed far from the flag, as a traceback (a DuckDB binder error on `LIMIT`, SQLite's
"Python int too large", `timedelta` overflowing). These refuse it at the flag, as argparse
refuses `abc`: `argument --limit: 99999999999999999999 is out of range (at most …)`.

>>> integer()("12"), number(hi=10)("2.5")
(12, 2.5)
>>> integer()("99999999999999999999")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: 99999999999999999999 is out of range (at most 9,223,372,036,854,775,807)
>>> number(hi=10)("inf")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: inf is out of range (a finite number, at most 10)
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

#: A signed 64-bit integer's range: DuckDB's BIGINT and SQLite's INTEGER.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def integer(lo: int = INT64_MIN, hi: int = INT64_MAX) -> Callable[[str], int]:
    """An integer in [`lo`, `hi`] (by default what a 64-bit integer column holds)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range (at {'most' if value > hi else 'least'} "
                                             f"{hi if value > hi else lo:,})")
        return value

    return parse


def number(hi: float, lo: float = -math.inf) -> Callable[[str], float]:
    """A finite number at most `hi` (and at least `lo`)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range (a finite number, at most {hi:g})")
        return value

    return parse
