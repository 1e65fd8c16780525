"""A text as a reader sees it: the one view both the masking detector and the search barrier read.

Every decimal digit of any script, and every superscript or subscript digit, is its ASCII digit;
every space separator a space; every dash
a `-`; the full-width forms (`＠`, `．`, `Ａ`) and the ideographic full stops their ASCII
characters; every invisible character — a format character (zero-width space and joiners, soft
hyphen, bidi controls, tags) or a combining mark (the accent of a decomposed `é`) — nothing. So
`jose\u0301@…`, `4111\u200b1111…` and `Carol\u00a0Danvers` read as what is on the screen.

The detector (`analytics.redact`) runs on `view(text)`. The search barrier runs in DuckDB on the
stored text, so for a configured term it needs the reverse: `stored_spellings(term)`, the RE2
expression of every stored text whose view reads as the term.

>>> view("Ｃarol\u00a0Dan\u200bvers ４１")[0]
'Carol Danvers 41'
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: RE2: any run of invisible characters (dropped by the view).
INVISIBLE = r"[\p{Cf}\p{Mn}\p{Me}]*"
#: Superscript and subscript digits (`⁴¹¹¹`, `₄₁₁₁`), which a reader reads as digits: their ASCII digit.
RAISED_DIGITS = {0xB9: "1", 0xB2: "2", 0xB3: "3", 0x2070: "0", **{0x2070 + d: str(d) for d in range(4, 10)},
                 **{0x2080 + d: str(d) for d in range(10)}}
#: RE2: a character the view reads as a digit.
DIGIT = r"[\p{Nd}\x{B2}\x{B3}\x{B9}\x{2070}\x{2074}-\x{2079}\x{2080}-\x{2089}]"


@functools.cache
def fold_table() -> dict[int, str]:
    """The view as a `str.translate` table (module docstring)."""
    table: dict[int, str] = {}
    for ranges in ((0x80, 0x3400), (0xA000, 0x10000), (0x10000, 0x1FC00), (0xE0000, 0xE01F0)):
        for cp in range(*ranges):
            c = chr(cp)
            cat = unicodedata.category(c)
            if cat == "Nd":
                table[cp] = str(unicodedata.decimal(c))
            elif cat == "Zs":
                table[cp] = " "
            elif cat == "Pd" or cp == 0x2212:
                table[cp] = "-"
            elif cat in ("Cf", "Mn", "Me"):
                table[cp] = ""
            elif 0xFF01 <= cp <= 0xFF5E:
                table[cp] = chr(cp - 0xFEE0)
    table.update({0x3002: ".", 0xFF61: ".", 0xFE52: ".", 0xFE6B: "@", **RAISED_DIGITS})
    return table


def view(text: str) -> tuple[str, list[int] | None]:
    """`(view, where)`: the text as a reader sees it and, when invisible characters were dropped
    from it, the index in `text` of each character of the view (None: the same index).

    >>> view("a\u200bb@x")
    ('ab@x', [0, 2, 3, 4])
    """
    seen = text.translate(fold_table())
    if len(seen) == len(text):
        return seen, None
    table = fold_table()
    return seen, [i for i, c in enumerate(text) if table.get(ord(c)) != ""]


def _base(c: str) -> str:
    """The letter an accented character is written on (`é` → `e`), or `c` itself."""
    return view(unicodedata.normalize("NFD", c))[0] or c


def letters_either_way(spelling: str) -> str:
    """A Python `re` pattern of `spelling` (as the view reads it) in which an accented letter may
    also be its base letter, so `José A\u0301lvarez` (one accent composed, one decomposed, which
    the view reads as `José Alvarez`) is found by the term `José Álvarez`.

    >>> letters_either_way("Jo.é")
    'Jo\\\\.[ée]'
    """
    return "".join(f"[{c}{_base(c)}]" if _base(c) != c and len(_base(c)) == 1 else re.escape(c) for c in spelling)


@functools.cache
def _sources() -> dict[str, str]:
    """{a character of the view: every other character the view reads as it}."""
    found: dict[str, list[str]] = {}
    for cp, to in fold_table().items():
        if len(to) == 1:
            found.setdefault(to, []).append(chr(cp))
    return {to: "".join(cs) for to, cs in found.items()}


def _re2_char(c: str) -> str:
    return f"\\x{{{ord(c):X}}}"


def stored_spellings(term: str) -> str:
    """RE2 (case left to the caller's `(?i)`): every stored text whose view reads as `term` in any
    of its spellings — each character as any character the view folds to it (a digit any `\\p{Nd}`,
    a space any space separator), an accented letter composed, decomposed or bare, invisible
    characters between any two.

    >>> import re2
    >>> rx = re2.compile("(?i)" + stored_spellings("José Álvarez"))
    >>> [bool(rx.search(t)) for t in ("jose\u0301\u00a0A\u0301lvarez", "José Álvarez", "JOSE ALVAREZ", "José Alvarex")]
    [True, True, True, False]
    """
    out = []
    for c in unicodedata.normalize("NFC", term):
        seen_as = {s for s in (view(c)[0], _base(c)) if s}
        if not seen_as:
            continue  # an invisible character of the term: the view has none
        if any(s.isdigit() for s in seen_as):
            cls = r"\p{Nd}"
        elif " " in seen_as:
            cls = r"[\s\p{Zs}]"
        else:
            members = {c, *seen_as, *(x for s in seen_as for x in _sources().get(s, ""))}
            cls = "[" + "".join(_re2_char(m) for m in sorted(members)) + "]"
        out.append(cls + INVISIBLE)
    return "".join(out)
