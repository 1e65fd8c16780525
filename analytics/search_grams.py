"""Trigram signatures: the search index's key, for a stored text and for a searched one.

A text's signature is 256 bits: for every three consecutive characters of its *folded* form, one
bit chosen by a hash of the three, and for every two consecutive characters of which one is CJK,
kana or hangul (`WIDE` and above: two such characters make a word), one bit chosen by a hash of
the two. A message can contain the searched text (as `analytics.text_match`
finds it) only if its signature holds every bit of the searched text's, in one of its spellings
(`required`): a candidate test, never the answer — the search still runs its exact match on the
candidates (`analytics.search_index`).

The fold is what makes that test safe for every script: DuckDB's `lower()` (one character to one),
then the few lower-case variants RE2's case-insensitive match pairs with another letter that `lower()`
leaves apart (`FOLD`: final sigma ς and σ, long s ſ and s, µ and μ, the Greek symbol forms, the
Cyrillic historic forms, …). So any two characters a case-insensitive RE2 match pairs, and the i, I
and İ the pattern pairs (`text_match._DOTTED_I`), fold to the same character, and a text matching
the pattern holds the folded pattern's trigrams (tests/analytics/test_search_index.py derives
`FOLD` again from RE2 and DuckDB over every cased code point). Accents need nothing: the pattern
tries the NFC and the NFD spelling, and each spelling's trigrams are required separately.

The stored side is computed in C (`analytics/_grams.c`, over an Arrow column of `lower(content)`);
`signature` is its pure-Python twin (the only path under `TRANSCRIPT_LENS_PUREPYTHON=1` or without
a compiler), used for the searched text too.

>>> signature("ab") == (0, 0, 0, 0) and sum(bin(w).count("1") for w in signature("返金")) == 1
True
"""

from __future__ import annotations

import numpy as np

from analytics.text_match import spellings

try:
    from loaders._native import PURE_PYTHON
except ImportError:  # pragma: no cover (the loader package is always there)
    PURE_PYTHON = False

_grams = None
if not PURE_PYTHON:
    try:
        from analytics import _grams
    except ImportError:  # not built: the twin below gives the same bits, slower
        _grams = None

WORDS = 4  # 64-bit words of a signature
WIDE = 0x2E80  # from here on (CJK radicals, kana, CJK ideographs, hangul, …) a pair of characters has a bit too
_PAIR = 0x110000  # the third "character" of a pair's hash: above every code point, so no trigram's
_MASK = (1 << 64) - 1

#: Lower-case variants -> the letter they fold to (after DuckDB's `lower()`); see the module docstring.
FOLD: dict[str, str] = {
    "\u00b5": "\u03bc", "\u017f": "s", "\u0345": "\u03b9", "\u03c2": "\u03c3", "\u03d0": "\u03b2",
    "\u03d1": "\u03b8", "\u03d5": "\u03c6", "\u03d6": "\u03c0", "\u03f0": "\u03ba", "\u03f1": "\u03c1",
    "\u03f5": "\u03b5", "\u1c80": "\u0432", "\u1c81": "\u0434", "\u1c82": "\u043e", "\u1c83": "\u0441",
    "\u1c84": "\u0442", "\u1c85": "\u0442", "\u1c86": "\u044a", "\u1c87": "\u0463", "\u1c88": "\ua64b",
    "\u1e9b": "\u1e61", "\u1fbe": "\u03b9",
}
_FOLD_TABLE = str.maketrans(FOLD)
#: `FOLD` as the C function takes it: (from, to) code points, uint32 pairs.
_FOLD_PAIRS = np.array([(ord(k), ord(v)) for k, v in sorted(FOLD.items())], dtype=np.uint32).tobytes()


def trigram_bit(a: int, b: int, c: int) -> int:
    """The bit (0–255) of the trigram of code points a, b, c (the same arithmetic as `_grams.c`)."""
    h = (a * 0x9E3779B97F4A7C15 + b * 0xC2B2AE3D27D4EB4F + c * 0x165667B19E3779F9) & _MASK
    h ^= h >> 29
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 32
    return h & 255


def signature(lowered: str) -> tuple[int, ...]:
    """The signature of a text already lower-cased by DuckDB: `WORDS` unsigned 64-bit words."""
    cps = [ord(c) for c in lowered.translate(_FOLD_TABLE)]
    words = [0] * WORDS
    for a, b, c in zip(cps, cps[1:], cps[2:]):
        bit = trigram_bit(a, b, c)
        words[bit >> 6] |= 1 << (bit & 63)
    for a, b in zip(cps, cps[1:]):
        if a >= WIDE or b >= WIDE:
            bit = trigram_bit(a, b, _PAIR)
            words[bit >> 6] |= 1 << (bit & 63)
    return tuple(words)


def signatures(column) -> np.ndarray:
    """The signatures of a pyarrow string column of lower-cased texts (NULL: no bits), as an
    (n, `WORDS`) uint64 array."""
    import pyarrow as pa

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if _grams is None:
        return np.array([signature(t) if t is not None else (0,) * WORDS for t in column.to_pylist()],
                        dtype=np.uint64).reshape(-1, WORDS)
    column = column.fill_null("").cast(pa.large_string())
    _, offsets, data = column.buffers()
    n = len(column)
    if column.offset:  # (a slice: its offsets start further in)
        offsets = offsets[column.offset * 8:]
    raw = _grams.signatures(offsets, data if data is not None else b"", n, _FOLD_PAIRS)
    return np.frombuffer(raw, dtype=np.uint64).reshape(n, WORDS)


def required(con, text: str) -> list[tuple[int, ...]]:
    """The signature bits a message must hold to contain `text`, one set per spelling
    (`text_match.spellings`); empty when some spelling has no bit (under three characters, and
    not two of which one is `WIDE`): every message is then a candidate."""
    out = []
    for spelling in spellings(text):
        ((lowered,),) = con.execute("SELECT lower(?)", [spelling]).fetchall()
        bits = signature(lowered)
        if not any(bits):
            return []
        out.append(bits)
    return list(dict.fromkeys(out))
