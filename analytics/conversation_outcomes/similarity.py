"""Near-duplicate texts: token-set Jaccard similarity over normalised tokens.

Two texts are near-duplicates when `|A ∩ B| / |A ∪ B| >= THRESHOLD` over their sets of
normalised word tokens (`lexicon.tokens`), each set holding at least `MIN_TOKENS`
tokens. Two sets are only intersected when the smaller is at least `THRESHOLD` of the
larger (else the Jaccard cannot reach it); over a load (`Repeats`), as bit masks while
the load's vocabulary is small.

>>> jaccard({"where", "is", "my", "order"}, {"where", "s", "my", "order"})
0.6
>>> repeats([(3, "Your order ships Monday."), (5, "Your order ships on Monday.")])
[5]
"""

from __future__ import annotations

import string

from analytics.conversation_outcomes.lexicon import tokens

THRESHOLD = 0.6
MIN_TOKENS = 3


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def token_set(text: str) -> frozenset[str]:
    """`set(lexicon.tokens(text))`, a few times faster for the common case (the hot path of
    a load): text without `"` that is ASCII once a few punctuation marks (`_PUNCTUATION`)
    are spaces. Its tokens are then the runs of ASCII letters, digits and `_`, lowercased
    (all `normalise` does to such text), cut out by one `str.translate`."""
    if '"' not in text:
        plain = text
        if not plain.isascii():
            for mark in _PUNCTUATION:
                if mark in plain:
                    plain = plain.replace(mark, " ")
        if plain.isascii():
            return frozenset(plain.translate(_ASCII_WORDS).split())
    return frozenset(tokens(text))


#: Non-ASCII marks that are never part of a token nor change one, nor open a quote: not
#: word characters, unchanged by casefolding and NFD, and NFKC makes no word character of
#: them (tests/analytics/outcomes/test_similarity.py checks each). Dashes, typographic
#: apostrophes, the ellipsis, spaces, a bullet, currency signs.
_PUNCTUATION = ("\u2013", "\u2014", "\u2019", "\u2018", "\u2026", "\u00a0", "\u2022", "\u20ac", "\u00a3")
#: ASCII upper case to lower case, every other ASCII character but a word character to a space.
_ASCII_WORDS = str.maketrans({
    **{i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")},
    **{ord(c): c.lower() for c in string.ascii_uppercase},
})


def clause_set(parts: list[list[str]]) -> frozenset[str]:
    """The token set of a text already split by `lexicon.clauses` (the same tokens as `token_set`)."""
    return frozenset(tok for part in parts for tok in part)


def near(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two token sets are near-duplicates (both of `MIN_TOKENS` or more)."""
    if len(a) < MIN_TOKENS or len(b) < MIN_TOKENS:
        return False
    return min(len(a), len(b)) >= THRESHOLD * max(len(a), len(b)) and jaccard(a, b) >= THRESHOLD


def repeats(items: list[tuple[int, str]]) -> list[int]:
    """The ordinals of the texts that near-duplicate an earlier one of `items` ((ordinal, text), in order)."""
    return Repeats().of([(o, token_set(t)) for o, t in items])


class Repeats:
    """`repeats` over many sequences of token sets (a load's threads), sharing the work.

    Each distinct set gets an id once per load, and, while the load's vocabulary is small
    (`_MAX_BITS` tokens; the bench's replies are built from eleven sentences), a bit mask:
    two sets' intersection is then one `&` of small integers.

    >>> r = Repeats()
    >>> a, b = token_set("Your order ships Monday."), token_set("Your order ships on Monday.")
    >>> r.of([(3, a), (5, b)]), r.of([(1, b), (2, token_set("Thanks, bye now")), (4, a)])
    ([5], [4])
    """

    def __init__(self) -> None:
        self._ids: dict[frozenset[str], int] = {}
        self._sets: list[frozenset[str]] = []
        self._masks: list[int | None] = []  # None: the set has a token past `_MAX_BITS`
        self._bits: dict[str, int] = {}

    def _id(self, s: frozenset[str]) -> int:
        i = self._ids.get(s)
        if i is None:
            i = self._ids[s] = len(self._sets)
            self._sets.append(s)
            bits = self._bits
            for tok in s:
                if tok not in bits and len(bits) < _MAX_BITS:
                    bits[tok] = len(bits)
            self._masks.append(sum(1 << bits[tok] for tok in s) if all(tok in bits for tok in s) else None)
        return i

    def of(self, items: list[tuple[int, frozenset[str]]]) -> list[int]:
        """The ordinals of `items` ((ordinal, token set), in order) that near-duplicate an earlier one."""
        seen_ids: set[int] = set()
        seen: list[tuple[int | None, int, frozenset[str]]] = []  # (mask, size, set) of distinct earlier sets
        out = []
        for ordinal, s in items:
            size = len(s)
            if size < MIN_TOKENS:
                continue
            i = self._id(s)
            if i in seen_ids:  # (an equal set)
                out.append(ordinal)
                continue
            mask = self._masks[i]
            low, high = THRESHOLD * size, size / THRESHOLD
            for other_mask, other_size, other in seen:
                if low <= other_size <= high:
                    if mask is not None and other_mask is not None:
                        common = (mask & other_mask).bit_count()
                    else:
                        common = len(s & other)
                    if common >= THRESHOLD * (size + other_size - common):
                        out.append(ordinal)
                        break
            seen_ids.add(i)
            seen.append((mask, size, s))
        return out


_MAX_BITS = 4096
