"""An inline, word-level diff of two texts: what an edit changed, what a finding altered.

One rule for every place that shows old → new text (the edit log, the
transcript diff, Resume QA's expected/observed findings): `segments` splits
both texts into words and the whitespace between them and keeps the longest
matching runs (`difflib`, no junk heuristic), so a changed word reads as that
word struck out and its replacement, not as two unrelated paragraphs.
`inline` writes the same as text, git's word-diff style: `[-old-]{+new+}`.

>>> inline("The review is on Tuesday at 10:00.", "The review is on Wednesday at 10:00.")
'The review is on [-Tuesday-]{+Wednesday+} at 10:00.'
"""

from __future__ import annotations

import difflib
import re
from typing import Literal, NamedTuple

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)

#: Texts longer than this (characters, both sides together) are compared line by line, not word by word:
#: a word diff of two long documents costs quadratic time for little reading value.
WORD_DIFF_MAX_CHARS = 20_000
#: Texts longer than this (both sides together) are shown replaced whole, not diffed: a line diff
#: keeps an object per line of each side (millions for a text of empty lines).
DIFF_MAX_CHARS = 1_000_000


class Segment(NamedTuple):
    """A run of text that both sides share (`=`), only the old one has (`-`) or only the new one (`+`)."""

    op: Literal["=", "-", "+"]
    text: str


def _tokens(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else _TOKENS.findall(text)


def segments(old: str | None, new: str | None) -> list[Segment]:
    """The diff of `old` → `new` as consecutive segments (adjacent ones of one kind merged).

    >>> segments("a b", "a c")
    [Segment(op='=', text='a '), Segment(op='-', text='b'), Segment(op='+', text='c')]
    >>> segments(None, "new")
    [Segment(op='+', text='new')]
    """
    a, b = old or "", new or ""
    if len(a) + len(b) > DIFF_MAX_CHARS:
        return [Segment(op, text) for op, text in (("-", a), ("+", b)) if text]  # type: ignore[arg-type]
    by_line = len(a) + len(b) > WORD_DIFF_MAX_CHARS
    ta, tb = _tokens(a, by_line), _tokens(b, by_line)
    out: list[Segment] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if out and out[-1].op == op:
            out[-1] = Segment(op, out[-1].text + text)
        else:
            out.append(Segment(op, text))  # type: ignore[arg-type]

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "equal":
            add("=", "".join(ta[i1:i2]))
        else:
            add("-", "".join(ta[i1:i2]))
            add("+", "".join(tb[j1:j2]))
    return out


def inline(old: str | None, new: str | None) -> str:
    """`segments` as one text: removed runs in `[-…-]`, added ones in `{+…+}`.

    >>> inline("same", "same")
    'same'
    >>> inline("", "hello")
    '{+hello+}'
    """
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return "".join(marks[s.op].format(s.text) for s in segments(old, new))
