"""Trigram signatures of texts: 256 bits a text, one per hash of three consecutive characters
(and of two, when one is CJK, kana or hangul), the search index's key.

Byte-level work only: `signatures` takes an Arrow string column of texts already folded by
the caller's rules (analytics/search_grams.py says what the bits are for and which fold
makes them safe for a case-insensitive search, and passes its extra folds as `folds`). The
hot loop is C (`loaders/_scan.c`'s `grams`, in `loaders/_grams.h`); `grams_py` is its
pure-Python twin, the one path under `TRANSCRIPT_LENS_PUREPYTHON=1`, fuzzed against it
(fuzz/ target `grams`).

>>> from array import array
>>> words = grams_py(array("i", [0, 3]).tobytes(), b"abc", 1, 4, b"")
>>> sum(bin(w).count("1") for w in array("Q", words))
1
"""

from __future__ import annotations

from array import array

from loaders import _native

WORDS = 4  # 64-bit words a signature
WIDE = 0x2E80  # from here on (CJK radicals, kana, CJK ideographs, hangul, …) a pair of characters has a bit too
_PAIR = 0x110000  # the third "character" of a pair's hash: above every code point, so no trigram's
_MASK = (1 << 64) - 1


def trigram_bit(a: int, b: int, c: int) -> int:
    """The bit (0–255) of the trigram of code points a, b, c (the arithmetic of `_grams.h`).

    >>> trigram_bit(97, 98, 99) == trigram_bit(97, 98, 99) < 256
    True
    """
    h = (a * 0x9E3779B97F4A7C15 + b * 0xC2B2AE3D27D4EB4F + c * 0x165667B19E3779F9) & _MASK
    h ^= h >> 29
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 32
    return h & 255


def signature(code_points: list[int]) -> tuple[int, ...]:
    """The signature of one text's (folded) code points: `WORDS` unsigned 64-bit words.

    >>> signature([ord(c) for c in "ab"])
    (0, 0, 0, 0)
    """
    words = [0] * WORDS
    for a, b, c in zip(code_points, code_points[1:], code_points[2:]):
        bit = trigram_bit(a, b, c)
        words[bit >> 6] |= 1 << (bit & 63)
    for a, b in zip(code_points, code_points[1:]):
        if a >= WIDE or b >= WIDE:
            bit = trigram_bit(a, b, _PAIR)
            words[bit >> 6] |= 1 << (bit & 63)
    return tuple(words)


def _code_points(raw: bytes) -> list[int]:
    """`raw`'s characters as `_grams.h` reads them: UTF-8, a byte that starts no whole
    sequence counting as one character of its own value."""
    try:
        return [ord(c) for c in raw.decode("utf-8")]
    except UnicodeDecodeError:
        pass
    out, i = [], 0
    while i < len(raw):
        b0 = raw[i]
        need = 1 if b0 < 0x80 else 2 if b0 & 0xE0 == 0xC0 else 3 if b0 & 0xF0 == 0xE0 else 4 if b0 & 0xF8 == 0xF0 else 0
        tail = raw[i + 1:i + need]
        if need <= 1 or len(tail) < need - 1 or any(t & 0xC0 != 0x80 for t in tail):
            out.append(b0)
            i += 1
            continue
        cp = b0 & (0x7F >> need)
        for t in tail:
            cp = (cp << 6) | (t & 0x3F)
        out.append(cp)
        i += need
    return out


def grams_py(offsets, data, n: int, width: int, folds) -> bytes:
    """The twin of `_scan.grams`: the signatures of the `n` texts of an Arrow string column
    (its offsets buffer, `width` bytes an offset, and its data buffer), each code point of 0x80
    or more first mapped by `folds` (native uint32 (from, to) pairs): n * 32 bytes."""
    offs, raw, folds = memoryview(offsets).cast("B"), bytes(memoryview(data).cast("B")), bytes(folds)
    if width not in (4, 8) or n < 0 or len(offs) // width < n + 1 or len(folds) % 8:
        raise ValueError("grams: bad width, n, offsets or folds")
    pairs = array("I", folds)
    ends = array("i" if width == 4 else "q", offs[:width * (n + 1)].tobytes())
    if any(o < 0 or o > len(raw) or (i and o < ends[i - 1]) for i, o in enumerate(ends)):
        raise ValueError("grams: offsets outside the data buffer")
    fold = dict(zip(pairs[0::2], pairs[1::2]))
    out = array("Q")
    for i in range(n):
        cps = [fold.get(c, c) if c >= 0x80 else c for c in _code_points(raw[ends[i]:ends[i + 1]])]
        out.extend(signature(cps))
    return out.tobytes()


def signatures(column, folds: bytes):
    """The signatures of a pyarrow string column without NULLs, as a flat pyarrow uint64 array
    (`WORDS` words a text): in C when it is built, else `grams_py`."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_string_view(column.type):
        column = column.cast(pa.string())
    width = 8 if pa.types.is_large_string(column.type) else 4
    _, offsets, data = column.buffers()
    n = len(column)
    offsets = memoryview(offsets)[column.offset * width:]  # (a slice: its offsets start further in)
    data = data if data is not None else b""
    grams = _native.scan.grams if _native.scan is not None else grams_py
    return pa.Array.from_buffers(pa.uint64(), n * WORDS, [None, pa.py_buffer(grams(offsets, data, n, width, folds))])
