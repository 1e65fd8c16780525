"""A text as a reader sees it: the one view the masking detector reads (and the search barrier's terms).

Escapes are read as the character they stand for — HTML character references (`&#64;`, `&#x40;`,
`&commat;`, `&nbsp;`, with or without their `;` where a browser reads them so), percent-encoding
(`%40`, `%2E`, the UTF-8 of `＠`: `%EF%BC%A0`; JavaScript's `%u0040`), JSON or Python escapes (`\\u0040`,
`\\x40`, `\\N{COMMERCIAL AT}`), octal escapes (`\\100`), CSS escapes of an `@` or a dot (`\\40 `, `\\2e `) and
quoted-printable inside a word when it stands for signs (`alice=40example=2Ecom`, `=EF=BC=A0`) —
twice over, so an escape escaped again (`%2540`, `&amp;#64;`) is read too; before them, a `+` a form
encoding wrote for a space, between two digits or in a query string's value (`form_spaces`). Then every decimal digit
of any script, and every superscript or subscript digit, is its ASCII digit; every space
separator, a tab, a vertical tab and a form feed a space; every line or paragraph separator a line
break; every dash a `-`; middle dots and bullets (`·`, `•`, `・`) a `.`; the full-width forms (`＠`,
`．`, `Ａ`), the ideographic full stops and every other character whose compatibility form (NFKC)
is one ASCII letter, digit or sign (`ａ`, `𝐚`, `①`) that character; every invisible character — a
format character (zero-width space and joiners, soft hyphen, bidi controls, tags) or a combining
mark (the accent of a decomposed `é`) — nothing. So `jose\\u0301@…`, `4111\\u200b1111…`,
`4111&nbsp;1111…`, `bob&#64;example&#46;com` and `Carol\\u00a0Danvers` read as what is on the
screen.

The detector (`analytics.redact`) runs on `view(text)` and maps what it finds back to `text`
through `where` (the index in `text` of each character of the view).

>>> view("Ｃarol\u00a0Dan\u200bvers ４１")[0]
'Carol Danvers 41'
>>> view("bob&#64;example%2Ecom")[0]
'bob@example.com'
>>> [view(t)[0] for t in ("carol%u0040x.io", "eve\\N{COMMERCIAL AT}x.io", "mallory\\100x.io", "alice\\\\40 x\\\\2e io")]
['carol@x.io', 'eve@x.io', 'mallory@x.io', 'alice@x.io']
"""

from __future__ import annotations

import functools
import html.entities
import re
import unicodedata

#: Superscript and subscript digits (`⁴¹¹¹`, `₄₁₁₁`), which a reader reads as digits: their ASCII digit.
RAISED_DIGITS = {0xB9: "1", 0xB2: "2", 0xB3: "3", 0x2070: "0", **{0x2070 + d: str(d) for d in range(4, 10)},
                 **{0x2080 + d: str(d) for d in range(10)}}
#: RE2: a character the view reads as a digit.
DIGIT = r"[\p{Nd}\x{B2}\x{B3}\x{B9}\x{2070}\x{2074}-\x{2079}\x{2080}-\x{2089}]"
#: Dots written between groups of digits or words (middle dot, bullet, hyphenation point, bullet
#: operator, dot operator, katakana middle dots): a reader reads each as a dot.
MIDDLE_DOTS = (0xB7, 0x2022, 0x2027, 0x2219, 0x22C5, 0x30FB, 0xFF65)
#: ASCII signs a character's compatibility form (NFKC) may be and the view reads it as.
_COMPATIBLE_SIGNS = set("@.-+_/:%&#;()")
#: How many times escapes are read: an escape escaped once more (`%2540`, `&amp;#64;`) is read too.
ESCAPE_ROUNDS = 2


@functools.cache
def fold_table() -> dict[int, str]:
    """The view's character folding as a `str.translate` table (module docstring): each
    character to one character or to none."""
    table: dict[int, str] = {9: " ", 11: " ", 12: " ", 0x85: "\n", 0x2028: "\n", 0x2029: "\n"}
    for ranges in ((0x80, 0x3400), (0xA000, 0x10000), (0x10000, 0x1FC00), (0xE0000, 0xE01F0)):
        for cp in range(*ranges):
            if cp in table or 0xD800 <= cp < 0xE000:
                continue
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
            else:
                compatible = unicodedata.normalize("NFKC", c)
                if (compatible != c and len(compatible) == 1 and compatible.isascii()
                        and (compatible.isalnum() or compatible in _COMPATIBLE_SIGNS)):
                    table[cp] = compatible
    table.update({0x3002: ".", 0xFF61: ".", 0xFE52: ".", 0xFE6B: "@", **RAISED_DIGITS,
                  **{cp: "." for cp in MIDDLE_DOTS}})
    return table


# An escape: an HTML character reference (decimal, hex, named), a run of percent-encoded bytes,
# a JSON/Python/JavaScript escape (`\u0040`, `\U00000040`, `\x40`, `\u{40}`), CSS's escape of an
# `@` or a dot (`\40 `, `\2e `: hex digits, the space after them part of it), a quoted-printable
# run inside a word, before a letter (`alice=40example=2Ecom`: read only when it stands for signs, `_escape`).
_ESCAPE = re.compile(
    r"&#[0-9]{1,8};?|&#[xX][0-9A-Fa-f]{1,7};?|&[A-Za-z][A-Za-z0-9]{1,31};?|%u[0-9A-Fa-f]{4}|(?:%[0-9A-Fa-f]{2})+"
    r"|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}|\\u\{[0-9A-Fa-f]{1,6}\}"
    r"|\\N\{[A-Za-z0-9 -]{1,88}\}|\\[0-3][0-7]{2}|\\(?:40|2[eE])(?:[ \t]|(?![0-9A-Fa-f]))"
    r"|(?<=\w)(?:=[0-9A-F]{2})+(?=[^\W\d_])")
_CSS = re.compile(r"\\(?:40|2[eE])[ \t]?")
_MAY_ESCAPE = re.compile(r"[&%\\=]")
_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}")


def _character(code: int) -> str | None:
    """The character of a code point an escape names, or None (out of range, a surrogate, NUL)."""
    if 0 < code <= 0x10FFFF and not 0xD800 <= code < 0xE000:
        return chr(code)
    return None


def _percent(run: str) -> list[tuple[int, str]]:
    """A run of `%XX` as (offset in the run, character) pairs: UTF-8 sequences decoded, a byte that
    begins none kept as its three characters."""
    data = bytes(int(run[i + 1:i + 3], 16) for i in range(0, len(run), 3))
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(data):
        for size in (1, 2, 3, 4):
            try:
                c = data[i:i + size].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(c) == 1 and c != "\0":
                out.append((3 * i, c))
                i += size
                break
        else:
            out.extend((3 * i + k, run[3 * i + k]) for k in range(3))
            i += 1
    return out


def _escape(found: re.Match) -> tuple[list[tuple[int, str]], int] | None:
    """What one escape reads as: (offset in the escape, character) pairs and how many characters of
    the match it takes; None when it is no escape."""
    s = found.group()
    if s[:2] == "%u":  # (JavaScript's `escape()`: `%u0040`)
        c = _character(int(s[2:], 16))
        return ([(0, c)], len(s)) if c else None
    if s[0] == "%":
        return _percent(s), len(s)
    if s[0] == "=":  # quoted-printable: a sign or a character beyond ASCII, never a letter or a digit
        read = _percent(s)  # (`card=4111…` is a key and a number, not `cardA11…`)
        signs = all(not c.isascii() or (c.isprintable() and not c.isalnum() and c != " ") for _, c in read)
        return (read, len(s)) if signs and len(read) < len(s) else None
    if s[0] == "&" and s[1] == "#":
        digits = s[2:].rstrip(";")
        c = _character(int(digits[1:], 16) if digits[:1] in "xX" else int(digits))
        return ([(0, c)], len(s)) if c else None
    if s[0] == "&":
        if s.endswith(";") and s[1:] in html.entities.html5:
            return [(0, c) for c in html.entities.html5[s[1:]]], len(s)
        name = s[1:].rstrip(";")  # (without its `;`, the longest name HTML reads so: `&nbsp`, `&amp`)
        for size in range(len(name), 1, -1):
            c = html.entities.html5.get(name[:size])
            if c:
                return [(0, x) for x in c], size + 1
        return None
    if s[1] == "N":  # (Python's named escape: `\N{COMMERCIAL AT}`)
        try:
            return [(0, c) for c in unicodedata.lookup(s[3:-1])], len(s)
        except KeyError:
            return None
    if _CSS.fullmatch(s):  # (CSS's: `\40 `, `\2e `)
        return [(0, "@" if s[1] == "4" else ".")], len(s)
    if s[1] in "0123":  # (an octal escape of C, Python and the shell: `\100`)
        c = _character(int(s[1:], 8))
        return ([(0, c)], len(s)) if c else None
    c = _character(int(s[3:-1] if s[2] == "{" else s[2:], 16))
    return ([(0, c)], len(s)) if c else None


def _decoded(text: str) -> tuple[str, list[int]] | None:
    """`text` with its escapes read (one round), and the index in `text` of each character; None
    when it holds none."""
    if not _MAY_ESCAPE.search(text):
        return None
    out: list[str] = []
    where: list[int] = []
    at = 0
    for found in _ESCAPE.finditer(text):
        if found.start() < at:
            continue  # (the second half of a surrogate pair read with its first)
        pair = _SURROGATE.match(text, found.start()) if found.group()[:2] == "\\u" else None
        if pair:
            high, low = int(pair.group()[2:6], 16), int(pair.group()[8:12], 16)
            read, size = [(0, chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)))], len(pair.group())
        else:
            escape = _escape(found)
            if escape is None:
                continue
            read, size = escape
        out.append(text[at:found.start()])
        where.extend(range(at, found.start()))
        for offset, c in read:
            out.append(c)
            where.append(found.start() + offset)
        at = found.start() + size
    if not where and at == 0:
        return None
    out.append(text[at:])
    where.extend(range(at, len(text)))
    return "".join(out), where


@functools.cache
def _changes():
    """RE2: a character the view changes or drops (`fold_table`), or what may begin an escape (a
    superset of `_ESCAPE`): a text with neither is its own view. (RE2 for its speed: a search of
    this class of a thousand ranges with `re` costs a text as much as its translation.)"""
    import re2

    codes = sorted(fold_table())
    ranges, start = [], codes[0]
    for prev, cp in zip(codes, codes[1:] + [-1]):
        if cp != prev + 1:
            ranges.append(f"\\x{{{start:X}}}" + (f"-\\x{{{prev:X}}}" if prev > start else ""))
            start = cp
    options = re2.Options()
    options.log_errors = False
    return re2.compile("[" + "".join(ranges) + "]|&(?:#[0-9xX]|[A-Za-z][A-Za-z0-9])|%u?[0-9A-Fa-f]{2}|\\\\(?:[uUxN]|[0-3][0-7]{2}|40|2[eE])|=[0-9A-F]{2}"
                       "|[0-9]\\+[0-9]|[?&][^=&#\\s]+=[^&#\\s]*\\+", options)


_PLUS_IN_DIGITS = re.compile(r"(?<=[0-9])\+(?=[0-9])")
# A time's offset from UTC (`19:45:00.123456+00:00`, `20250305T1945+0100`): its `+` is a sign.
_TIME_OFFSET = re.compile(r"(?:[0-9]{2}:[0-9]{2}|[0-9]T[0-9]{4,6})(?:\.[0-9]{1,9})?(\+)[0-9]{2}(?::?[0-9]{2})?(?![0-9])")
# A query string's value (`?cc=…`, `&q=…`), up to the next `&`, `#` or white space.
_QUERY_VALUE = re.compile(r"(?<=[?&])[^=&#\s]+=([^&#\s]*)")


def form_spaces(text: str) -> str:
    """`text` with each `+` a form encoding wrote for a space read as one (a `+` for a `+` is `%2B`
    there): one between two digits (`cc=4111+1111+1111+1111`, a number posted in a form) and every one
    in a query string's value (`?q=alice+at+example+dot+com`) — but not a time's offset from UTC
    (`19:45:00.123456+00:00`), nor in a value holding an `@`, where
    it is more often an address's own `+` (`?to=bob+news@example.com`, written unencoded). Read
    before the escapes, as a form decoder reads it: `%2B44+20` is `+44 20`.

    >>> form_spaces("cc=4111+1111 ?q=bob+at+x&to=b+c@x.io, +44 20, C++, 2025-03-05T12:30+01:00")
    'cc=4111 1111 ?q=bob at x&to=b+c@x.io, +44 20, C++, 2025-03-05T12:30+01:00'
    """
    if "+" not in text:
        return text
    signs = {m.start(1) for m in _TIME_OFFSET.finditer(text)}
    text = _PLUS_IN_DIGITS.sub(lambda m: "+" if m.start() in signs else " ", text)
    return _QUERY_VALUE.sub(lambda m: m.group() if "@" in m.group(1) else m.group().replace("+", " "), text)


def view(text: str) -> tuple[str, list[int] | None]:
    """`(view, where)`: the text as a reader sees it and, when escapes were read or invisible
    characters dropped, the index in `text` of each character of the view (None: the same index).

    >>> view("a\u200bb@x")
    ('ab@x', [0, 2, 3, 4])
    >>> view("a%2540b")
    ('a@b', [0, 1, 6])
    """
    try:
        own = not _changes().search(text)  # (most texts: a search in C instead of a translation in Python)
    except UnicodeEncodeError:  # (a lone surrogate, which RE2 cannot read: the translation decides)
        own = False
    if own:
        return text, None
    where: list[int] | None = None
    seen = form_spaces(text)
    for _ in range(ESCAPE_ROUNDS):
        decoded = _decoded(seen)
        if decoded is None:
            break
        seen, inner = decoded
        where = inner if where is None else [where[i] for i in inner]
    table = fold_table()
    folded = seen.translate(table)
    if len(folded) == len(seen):
        return folded, where
    kept = [i for i, c in enumerate(seen) if table.get(ord(c)) != ""]
    return folded, kept if where is None else [where[i] for i in kept]


@functools.cache
def base(c: str) -> str:
    """The letter an accented character is written on (`é` → `e`), or `c` itself.

    >>> base("é"), base("e"), base("ß")
    ('e', 'e', 'ß')
    """
    return view(unicodedata.normalize("NFD", c))[0] or c
