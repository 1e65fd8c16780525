"""Near-duplicate texts: token-set Jaccard similarity over normalised tokens.

Two texts are near-duplicates when `|A ∩ B| / |A ∪ B| >= THRESHOLD` over their sets of
normalised word tokens (`lexicon.tokens`), each set holding at least `MIN_TOKENS`
tokens. Two sets are only intersected when the smaller is at least `THRESHOLD` of the
larger (else the Jaccard cannot reach it); over a load (`Repeats`), each pair of distinct
sets met in one thread is intersected once, its verdict remembered (the bench's replies
are built from eleven sentences: the same sets and pairs come back in every thread).

>>> jaccard({"where", "is", "my", "order"}, {"where", "s", "my", "order"})
0.6
>>> repeats([(3, "Your order ships Monday."), (5, "Your order ships on Monday.")])
[5]
"""

from __future__ import annotations

import string

from analytics.outcomes.lexicon import tokens

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

    A load's replies share sentences across threads, so the same token sets and the same
    pairs come back: each distinct set gets an id, and each pair of distinct sets met in one
    sequence is compared once (remembered near or far, up to `_MAX_PAIRS` remembered).

    >>> r = Repeats()
    >>> a, b = token_set("Your order ships Monday."), token_set("Your order ships on Monday.")
    >>> r.of([(3, a), (5, b)]), r.of([(1, b), (2, token_set("Thanks, bye now")), (4, a)])
    ([5], [4])
    """

    def __init__(self) -> None:
        self._ids: dict[frozenset[str], int] = {}
        self._sets: list[frozenset[str]] = []
        self._near: list[set[int]] = []  # id -> ids found near it (itself included)
        self._far: list[set[int]] = []  # id -> ids found not near it
        self._pairs = 0

    def _id(self, s: frozenset[str]) -> int:
        i = self._ids.get(s)
        if i is None:
            i = self._ids[s] = len(self._sets)
            self._sets.append(s)
            self._near.append({i})
            self._far.append(set())
        return i

    def of(self, items: list[tuple[int, frozenset[str]]]) -> list[int]:
        """The ordinals of `items` ((ordinal, token set), in order) that near-duplicate an earlier one."""
        seen: set[int] = set()
        out = []
        for ordinal, s in items:
            if len(s) < MIN_TOKENS:
                continue
            i = self._id(s)
            if seen and (not self._near[i].isdisjoint(seen) or self._compare(i, seen - self._far[i])):
                out.append(ordinal)
            seen.add(i)
        return out

    def _compare(self, i: int, others: set[int]) -> bool:
        """Whether set `i` is near one of `others` (none known near it), remembering each verdict."""
        if self._pairs > _MAX_PAIRS:
            for known in (*self._near, *self._far):
                known.clear()
            for j, known in enumerate(self._near):
                known.add(j)
            self._pairs = 0
        s, sets, near, far = self._sets[i], self._sets, self._near, self._far
        size = len(s)
        low, high = THRESHOLD * size, size / THRESHOLD
        for j in others:
            other = sets[j]
            self._pairs += 1
            if low <= len(other) <= high:
                common = len(s & other)
                if common >= THRESHOLD * (size + len(other) - common):
                    near[i].add(j)
                    near[j].add(i)
                    return True
            far[i].add(j)
            far[j].add(i)
        return False


_MAX_PAIRS = 1 << 19  # (about 30 MB of remembered verdicts)
