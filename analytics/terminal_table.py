"""Text tables the command line prints (`search`, `transcript`, `report … --table`), aligned on what a
terminal shows: each cell with its control characters — a tab and a line break too — written as the
visible escapes `analytics.terminal` prints them as, measured in a terminal's columns (a CJK character
or an emoji two, a combining accent or a zero-width character none), so a cell holding `ESC [ 2 J`
or `日本` keeps its row's columns under their headers.

>>> print(aligned([("id", ["s1\\x1b[2J", "日本"]), ("n", ["7", "12"])], right={"n"}))
id          n
s1\\x1b[2J   7
日本       12
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection, Sequence

from analytics.terminal import _escape

# The control characters `analytics.terminal.CONTROL` escapes, a tab and a line break too (a cell is
# printed on its row's one line, its width known).
_CELL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def table_cell(text: str) -> str:
    """`text` as a table's cell prints it: every control character, a tab and a line break too, a visible escape.

    >>> table_cell("s1\\x1b[2J\\tx")
    's1\\\\x1b[2J\\\\x09x'
    """
    return _CELL_CONTROL.sub(_escape, text)


def width(text: str) -> int:
    """How many columns of a terminal `text` takes: a wide or full-width character (CJK, most emoji)
    two, a combining mark or a format character (zero-width) none, any other one.

    >>> width("ab"), width("日本"), width("e\\u0301"), width("a\\u200bb")
    (2, 4, 1, 2)
    """
    return len(text) if text.isascii() else sum(_columns(c) for c in text)


@functools.cache
def _columns(c: str) -> int:
    if unicodedata.category(c) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def aligned(columns: Sequence[tuple[str, Sequence[str]]], right: Collection[str] = ()) -> str:
    """`columns` (header, cells) as lines of text, each cell `table_cell`'d and padded to its column's
    `width`, two spaces between columns, the columns named in `right` aligned right, no trailing space."""
    shown = [(name, [table_cell(c) if isinstance(c, str) else "" for c in cells]) for name, cells in columns]
    sizes = [max([width(name), *map(width, cells)]) for name, cells in shown]
    rows = zip(*(cells for _, cells in shown)) if shown else ()
    lines = [[name for name, _ in shown], *rows]
    return "\n".join("  ".join(_pad(cell, size, name in right) for cell, size, (name, _) in zip(line, sizes, shown)).rstrip()
                     for line in lines)


def _pad(text: str, size: int, right: bool) -> str:
    fill = " " * max(0, size - width(text))
    return fill + text if right else text + fill
