"""How many values a stored value holds, counted in its bytes before it is decoded.

Decoding builds one Python object per msgpack value (50-200 bytes each): a 20 MB message
whose `content` is 5M one-key maps took a load to 1.1 GB, under every byte limit. So a
value is decoded only if it holds at most `max_elements()` values (`MAX_ELEMENTS`, or
`TRANSCRIPT_LENS_MAX_ELEMENTS`); a larger one is a row error naming the limit
(docs/security.md, "Values in one stored value").

What is counted: every msgpack value read, map keys and array entries included; an
extension value is one value, and with `deep` the values its payload holds too (nested
extensions up to `DEEP_LEVELS` levels: what `decode.unpack` resolves when a message or a
write is made plain). A checkpoint is counted flat: only its messages are decoded further,
one at a time, each counted deep. Every value takes at least one byte, so a value of at
most `limit` bytes is never counted (`over_limit`).

`count` is `loaders/_scan.c`'s `elements` when it is built, else its twin `count_py`; both
stop at `limit + 1`, and stop early (with the count so far) at malformed bytes, which
ormsgpack then reports (`tests/loaders/test_elements.py`, fuzz target `elements`).

>>> count_py(bytes([0x92, 0x80, 0xc0]), 10)
3
>>> count_py(bytes([0x92, 0x80, 0xc0]), 1)
2
"""

from __future__ import annotations

import re

from loaders import _native
from loaders.records import _positive_env

MAX_ELEMENTS = 2_000_000
ENV = "TRANSCRIPT_LENS_MAX_ELEMENTS"
# Extension values inside extension values that `deep` counts into (decode.MAX_EXT_DEPTH).
DEEP_LEVELS = 16


def max_elements() -> int:
    """The limit in force (`MAX_ELEMENTS`, or the environment's; a bad value is a `SourceError`).

    >>> import os; max_elements() == int(os.environ.get(ENV, MAX_ELEMENTS))
    True
    """
    return _positive_env(ENV, MAX_ELEMENTS)


def limit_words(limit: int) -> str:
    """The end of every refusal: names the limit and the variable that sets it.

    >>> limit_words(2_000_000)
    'over the limit of 2,000,000 values for one stored value (TRANSCRIPT_LENS_MAX_ELEMENTS)'
    """
    return f"over the limit of {limit:,} values for one stored value ({ENV})"


# Header byte -> (kind, width): how the twin reads a value's header.
_FIXED, _SIZED, _EXT, _ARRAY, _MAP, _BAD = range(6)


def _header_table() -> list[tuple[int, int]]:
    table = [(_BAD, 0)] * 256
    for t in range(0x00, 0x80):
        table[t] = (_FIXED, 0)
    for t in range(0xe0, 0x100):
        table[t] = (_FIXED, 0)
    for t in range(0x80, 0x90):
        table[t] = (_MAP, -(t & 0x0f))  # a negative width: the count is in the byte
    for t in range(0x90, 0xa0):
        table[t] = (_ARRAY, -(t & 0x0f))
    for t in range(0xa0, 0xc0):
        table[t] = (_FIXED, t & 0x1f)  # fixstr: its body is a fixed skip
    for t in (0xc0, 0xc2, 0xc3):
        table[t] = (_FIXED, 0)
    table[0xc4], table[0xc5], table[0xc6] = (_SIZED, 1), (_SIZED, 2), (_SIZED, 4)
    table[0xc7], table[0xc8], table[0xc9] = (_EXT, 1), (_EXT, 2), (_EXT, 4)
    table[0xca], table[0xcb] = (_FIXED, 4), (_FIXED, 8)
    for t, w in zip(range(0xcc, 0xd4), (1, 2, 4, 8, 1, 2, 4, 8)):
        table[t] = (_FIXED, w)
    for t, n in zip(range(0xd4, 0xd9), (1, 2, 4, 8, 16)):
        table[t] = (_EXT, -n)  # fixext: body length in the byte
    table[0xd9], table[0xda], table[0xdb] = (_SIZED, 1), (_SIZED, 2), (_SIZED, 4)
    table[0xdc], table[0xdd] = (_ARRAY, 2), (_ARRAY, 4)
    table[0xde], table[0xdf] = (_MAP, 2), (_MAP, 4)
    return table


_HEADERS = _header_table()


def _walk(data: bytes, i: int, end: int, budget: int, levels: int) -> int:
    """Values read from data[i:end] (one top value and what it holds), at most budget + 1;
    stops at the first malformed header or length, with what it counted."""
    n, left, headers = 0, 1, _HEADERS
    while left:
        if i >= end:
            return n
        kind, width = headers[data[i]]
        i += 1
        left -= 1
        n += 1
        if n > budget:
            return n
        if kind == _BAD:
            return n
        if width > 0 and kind != _FIXED:
            if i + width > end:
                return n
            length = int.from_bytes(data[i:i + width], "big")
            i += width
        else:
            length = -width
        if kind == _FIXED:
            i += width
        elif kind == _SIZED:
            i += length
        elif kind == _EXT:
            body = i + 1  # the type byte, then the payload
            if body + length > end:
                return n
            if levels > 0:
                n += _walk(data, body, body + length, budget - n, levels - 1)
                if n > budget:
                    return n
            i = body + length
        elif kind == _ARRAY:
            left += length
        else:
            left += 2 * length
        if i > end or left > end - i:
            return n
    return n


def count_py(data: bytes, limit: int, deep: bool = False) -> int:
    """The values `data` holds, at most `limit + 1` (the twin of `_scan.elements`)."""
    return _walk(bytes(data), 0, len(data), limit, DEEP_LEVELS if deep else 0)


count = _native.scan.elements if _native.scan is not None else count_py


def over_limit(data: bytes, deep: bool = False, limit: int | None = None) -> str | None:
    """Why msgpack `data` must not be decoded (it holds more than the limit's values), or None.

    >>> over_limit(bytes([0x93, 1, 2, 3]), limit=3)
    'more than 3 values, over the limit of 3 values for one stored value (TRANSCRIPT_LENS_MAX_ELEMENTS)'
    """
    limit = max_elements() if limit is None else limit
    if len(data) <= limit or count(data, limit, deep) <= limit:
        return None
    return f"more than {limit:,} values, {limit_words(limit)}"


# A JSON string (its escapes included), and the characters that start or separate values.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_PUNCTUATION = (b"[", b"{", b",", b":")


def json_over_limit(data: bytes, limit: int | None = None) -> str | None:
    """The same rule for a JSON value: its values are counted, from above, as one plus each `[`,
    `{`, `,` and `:` outside strings (`[]` counts two, `{"a": 1}` three).

    >>> json_over_limit(b'[1, 2, "a,b,c"]', limit=2)
    'more than 2 values, over the limit of 2 values for one stored value (TRANSCRIPT_LENS_MAX_ELEMENTS)'
    >>> json_over_limit(b'[1, 2, "a,b,c"]', limit=4) is None
    True
    """
    limit = max_elements() if limit is None else limit
    if len(data) <= limit:
        return None
    bare = _JSON_STRING.sub(b"", bytes(data))
    if 1 + sum(bare.count(c) for c in _JSON_PUNCTUATION) <= limit:
        return None
    return f"more than {limit:,} values, {limit_words(limit)}"
