"""How Transcript Lens writes counts, durations and times for a person to read: one way, in the
app (`ui.formats` hands these on to every page and chart) and in the command line's text output
(`analytics.reporting.readable`). CSV and JSON keep machine values (`analytics.reporting.writer`).

>>> duration(2587), plural(1, "row"), plural(1234, "message")
('43 m 07 s', '1 row', '1,234 messages')
"""

from __future__ import annotations

import math
import re
from typing import Any

from analytics import _pandas as pd

MISSING = "—"


def is_missing(value: Any) -> bool:
    """None, pandas' NA / NaT, or a float NaN: a cell with nothing in it.

    >>> import pandas
    >>> [is_missing(v) for v in (None, pandas.NA, float("nan"), 0, "")]
    [True, True, True, False, False]
    """
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)


def number(value: Any) -> str:
    """A count with thousands separators ("—" when unknown).

    >>> number(1234), number(None)
    ('1,234', '—')
    """
    return MISSING if is_missing(value) else f"{value:,}"


def seconds(value: Any) -> str:
    """Seconds to a tenth ("—" when unknown): a reply time.

    >>> seconds(5.66)
    '5.7 s'
    """
    return MISSING if is_missing(value) else f"{float(value):.1f} s"


def duration(value: Any) -> str:
    """Seconds as a span of two units at most, the second left out when it is zero ("—" when unknown).

    >>> [duration(v) for v in (0.4, 42, 605.4, 2280, 8040, 10800, 11100, 97200, 190000, None)]
    ['0.4 s', '42 s', '10 m 05 s', '38 m', '2 h 14 m', '3 h', '3 h 05 m', '1 d 03 h', '2 d 04 h', '—']
    """
    if is_missing(value):
        return MISSING
    s = float(value)
    if math.isinf(s):
        return MISSING
    if abs(s) < 10:
        return f"{s:.1f} s"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    # (unit, its seconds, the next unit below, its seconds): the largest unit that fits first
    unit, size, sub, sub_size = ("m", 60, "s", 1) if s < 3600 else ("h", 3600, "m", 60) if s < 86400 else \
        ("d", 86400, "h", 3600)
    whole, rest = divmod(s, size)
    part = rest // sub_size
    return f"{whole} {unit}" + (f" {part:02d} {sub}" if part else "")


def minute_text(ts: Any) -> str:
    """A UTC time to the minute for a table cell ("—" when unknown); ISO text is read as a time.

    >>> minute_text("2025-03-05T19:45:00.000000Z"), minute_text(None)
    ('2025-03-05 19:45', '—')
    """
    if is_missing(ts) or ts == "":
        return MISSING
    return utc(ts).strftime("%Y-%m-%d %H:%M")


def utc(ts: Any):
    """`ts` (a datetime, a Timestamp or ISO text) as a pandas Timestamp in UTC (naive: taken as UTC)."""
    t = pd.Timestamp(ts)
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and `word`, in the plural unless `n` is 1 (`many`: an irregular plural; `word_plural`
    writes the regular ones).

    >>> plural(1, "row"), plural(0, "row"), plural(2, "reply"), plural(3, "branch"), plural(2, "child", "children")
    ('1 row', '0 rows', '2 replies', '3 branches', '2 children')
    """
    return f"{n:,} {word if n == 1 else many or word_plural(word)}"


def word_plural(word: str) -> str:
    """The regular English plural of `word`; of a phrase, of its last word ("user → assistant pair").

    >>> [word_plural(w) for w in ("row", "reply", "day", "branch", "box", "status", "tool result")]
    ['rows', 'replies', 'days', 'branches', 'boxes', 'statuses', 'tool results']
    """
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|sh|ch|x|z)$", word):
        return word + "es"
    return word + "s"


def text(value: Any) -> str:
    """A text cell: the value, or "—" (never "None")."""
    return MISSING if is_missing(value) or value == "" else str(value)

