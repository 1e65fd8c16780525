"""How the app writes durations, times, counts and plurals: one way, on every page and chart.

No Streamlit here, so the page models (`ui.models`) write their texts with it too;
`ui.render` hands the same functions to the pages.

>>> duration(2587), plural(1, "row"), plural(1234, "message")
('43 m 07 s', '1 row', '1,234 messages')
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

import pandas as pd

from ui.models.frames import is_missing

MISSING = "—"


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


#: `seconds` as a printf format (a table's number column draws its cells with it).
SECONDS_FORMAT = "%.1f s"
#: A share as a table's number column draws it, from a value in percent (a share × 100): "2.7 %".
PERCENT_FORMAT = "%.1f %%"


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


def clock(ts: Any) -> str:
    """A time to the second in UTC, or "time unknown" (the store has no per-message clock).

    >>> clock(pd.Timestamp("2025-03-03 10:05:00", tz="UTC")), clock(None)
    ('2025-03-03 10:05:00 UTC', 'time unknown')
    """
    if is_missing(ts):
        return "time unknown"
    if isinstance(ts, (datetime, pd.Timestamp)):
        return _utc(ts).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(ts)


def minute_text(ts: Any) -> str:
    """A UTC time to the minute for a table cell ("2025-03-05 19:45"; "—" when unknown)."""
    if is_missing(ts):
        return MISSING
    return _utc(ts).strftime("%Y-%m-%d %H:%M")


def _utc(ts: Any) -> pd.Timestamp:
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


def article(phrase: str) -> str:
    """`phrase` after the indefinite article its first sound takes ("an" before a vowel sound).

    >>> article("other message"), article("user message"), article("hour"), article("assistant reply")
    ('an other message', 'a user message', 'an hour', 'an assistant reply')
    >>> article("unknown outcome"), article("error"), article("one-off")
    ('an unknown outcome', 'an error', 'a one-off')
    """
    low = phrase.lower()
    vowel = low[:1] in ("a", "e", "i", "o", "u")
    if re.match(r"(uni|use|usu|one|once|eu)", low):  # a "y" or "w" sound: a user, a one-off
        vowel = False
    elif re.match(r"(hour|honest|honou?r)", low):  # a silent h
        vowel = True
    return f"{'an' if vowel else 'a'} {phrase}"


def download_label(n: int, word: str) -> str:
    """A "download every row" button's label.

    >>> download_label(31, "row"), download_label(1, "hit"), download_label(0, "hit")
    ('Download all 31 rows (CSV)', 'Download the 1 hit (CSV)', 'No hits to download')
    """
    if n == 0:  # (the button is disabled then: ui.render.download_data)
        return f"No {word_plural(word)} to download"
    return f"Download {'the' if n == 1 else 'all'} {plural(n, word)} (CSV)"


def text(value: Any) -> str:
    """A text cell: the value, or "—" (never "None")."""
    return MISSING if is_missing(value) or value == "" else str(value)


_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~|`+)(?=\S)(.+?)(?<=\S)\1")
_HEADING = re.compile(r"(?m)^ {0,3}#{1,6}\s+")


def unmarked(text: str) -> str:
    """Markdown read as plain text, for a snippet cut out of a message (its syntax would show raw):
    emphasis, code spans and headings lose their marks, a link or image keeps its text.

    >>> unmarked("talking to **ledger-svc** via `curl`; see [the runbook](http://x/rb) ## not a heading")
    'talking to ledger-svc via curl; see the runbook ## not a heading'
    >>> unmarked("# Summary\\n2 * 3 * 4 stays")
    'Summary\\n2 * 3 * 4 stays'
    """
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _HEADING.sub("", text)
