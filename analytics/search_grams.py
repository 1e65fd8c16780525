"""Trigram signatures as a search uses them: the fold that makes them safe, and the bits a
searched text requires.

A text's signature (`loaders.grams`: 256 bits, one per hash of three consecutive characters, and
of two when one is CJK, kana or hangul) is computed on its *folded* form. A message can contain
the searched text (as `analytics.text_match` finds it) only if its signature holds every bit of
the searched text's, in one of its spellings (`required`): a candidate test, never the answer —
the search still runs its exact match on the candidates (`analytics.search_index`).

The fold: DuckDB's `lower()` (one character to one), then the few lower-case variants RE2's
case-insensitive match pairs with another letter that `lower()` leaves apart (`FOLD`: final
sigma ς and σ, long s ſ and s, µ and μ, the Greek symbol forms, the Cyrillic historic forms, …).
So any two characters a case-insensitive RE2 match pairs, and the i, I and İ the pattern pairs
(`text_match._DOTTED_I`), fold to the same character, and a text matching the pattern holds the
folded pattern's trigrams (tests/analytics/test_search_index.py derives `FOLD` again from RE2
and DuckDB over every cased code point). Accents need nothing: the pattern tries the NFC and the
NFD spelling, and each spelling's trigrams are required separately.

>>> signature("ab") == (0, 0, 0, 0) and sum(bin(w).count("1") for w in signature("返金")) == 1
True
"""

from __future__ import annotations

from array import array

from analytics.text_match import spellings
from loaders import grams

WORDS = grams.WORDS

#: Lower-case variants -> the letter they fold to (after DuckDB's `lower()`); see the module docstring.
FOLD: dict[str, str] = {
    "\u00b5": "\u03bc", "\u017f": "s", "\u0345": "\u03b9", "\u03c2": "\u03c3", "\u03d0": "\u03b2",
    "\u03d1": "\u03b8", "\u03d5": "\u03c6", "\u03d6": "\u03c0", "\u03f0": "\u03ba", "\u03f1": "\u03c1",
    "\u03f5": "\u03b5", "\u1c80": "\u0432", "\u1c81": "\u0434", "\u1c82": "\u043e", "\u1c83": "\u0441",
    "\u1c84": "\u0442", "\u1c85": "\u0442", "\u1c86": "\u044a", "\u1c87": "\u0463", "\u1c88": "\ua64b",
    "\u1e9b": "\u1e61", "\u1fbe": "\u03b9",
}
_FOLD_TABLE = str.maketrans(FOLD)
#: `FOLD` as `loaders.grams.signatures` takes it: sorted (from, to) code points, native uint32 pairs.
FOLD_PAIRS = array("I", [cp for k, v in sorted(FOLD.items()) for cp in (ord(k), ord(v))]).tobytes()


def signature(lowered: str) -> tuple[int, ...]:
    """The signature of a text already lower-cased by DuckDB: `WORDS` unsigned 64-bit words."""
    return grams.signature([ord(c) for c in lowered.translate(_FOLD_TABLE)])


def signatures(column):
    """The signatures of a pyarrow string column of lower-cased texts without NULLs: a flat
    uint64 array, `WORDS` words a text."""
    return grams.signatures(column, FOLD_PAIRS)


def required(con, text: str) -> list[tuple[int, ...]]:
    """The signature bits a message must hold to contain `text`, one set per spelling
    (`text_match.spellings`); empty when some spelling has no bit (under three characters, and
    not two of which one is CJK, kana or hangul): every message is then a candidate."""
    out = []
    for spelling in spellings(text):
        ((lowered,),) = con.execute("SELECT lower(?)", [spelling]).fetchall()
        bits = signature(lowered)
        if not any(bits):
            return []
        out.append(bits)
    return list(dict.fromkeys(out))
