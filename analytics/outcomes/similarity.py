"""Near-duplicate texts: token-set Jaccard similarity over normalised tokens.

Two texts are near-duplicates when `|A ∩ B| / |A ∪ B| >= THRESHOLD` over their sets of
normalised word tokens (`lexicon.tokens`), each set holding at least `MIN_TOKENS`
tokens. Pairs are only compared when a cheap filter lets them through: the smaller set is
at least `THRESHOLD` of the larger (else the Jaccard cannot reach it), and, among many
texts (`repeats`), the sets share a token of their prefix filter (every set's tokens in
one fixed order, its first `|S| - ceil(t·|S|) + 1`: two sets reaching `t` share one).

>>> jaccard({"where", "is", "my", "order"}, {"where", "s", "my", "order"})
0.6
>>> repeats([(3, "Your order ships Monday."), (5, "Your order ships on Monday.")])
[5]
"""

from __future__ import annotations

import math
import string
from collections import Counter, defaultdict
from itertools import chain

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
    return repeated_sets([(o, token_set(t)) for o, t in items])


def token_order(sets) -> dict[str, int]:
    """{token: its place in the prefix filter's order}: rarest first, then by text."""
    freq = Counter(chain.from_iterable(sets))
    return {tok: i for i, tok in enumerate(sorted(freq, key=lambda tok: (freq[tok], tok)))}


def repeated_sets(items: list[tuple[int, frozenset[str]]], rank: dict[str, int] | None = None) -> list[int]:
    """`repeats` of texts already made token sets (`rank`: a `token_order` over at least these
    sets; any one order finds the same pairs, the rarest-first one the fewest candidates)."""
    return Repeats(rank if rank is not None else token_order(s for _, s in items)).of(items)


class Repeats:
    """`repeats` over many sequences of token sets (a load's threads), sharing the work.

    A load's replies share sentences across threads, so the same token sets and the same
    pairs come back: each distinct set gets an id, its prefix once, and each pair of
    distinct sets is compared at most once.

    >>> r = Repeats()
    >>> a, b = token_set("Your order ships Monday."), token_set("Your order ships on Monday.")
    >>> r.of([(3, a), (5, b)]), r.of([(1, b), (2, token_set("Thanks, bye now")), (4, a)])
    ([5], [4])
    """

    def __init__(self, rank: dict[str, int] | None = None) -> None:
        """`rank`: the prefix filter's order (a `token_order`); tokens not in it come after
        its own, in the order met (any one order finds the same pairs)."""
        self._rank = dict(rank or {})
        self._ids: dict[frozenset[str], int] = {}
        self._prefixes: list[tuple[str, ...]] = []
        self._sizes: list[int] = []
        self._sets: list[frozenset[str]] = []
        self._verdicts: dict[int, bool] = {}  # i * _STRIDE + j (i > j) -> near(set i, set j)

    def _id(self, s: frozenset[str]) -> int:
        i = self._ids.get(s)
        if i is None:
            rank = self._rank
            for tok in s:
                if tok not in rank:
                    rank[tok] = len(rank)
            i = self._ids[s] = len(self._sets)
            self._sets.append(s)
            self._sizes.append(len(s))
            self._prefixes.append(tuple(sorted(s, key=rank.__getitem__)[: len(s) - math.ceil(THRESHOLD * len(s)) + 1]))
        return i

    def of(self, items: list[tuple[int, frozenset[str]]]) -> list[int]:
        """The ordinals of `items` ((ordinal, token set), in order) that near-duplicate an earlier one."""
        seq = [(o, self._id(s)) for o, s in items if len(s) >= MIN_TOKENS]
        if len(seq) < 2:
            return []
        sizes, prefixes, sets, verdicts = self._sizes, self._prefixes, self._sets, self._verdicts
        index: dict[str, list[int]] = {}  # prefix token -> ids of earlier distinct sets
        seen: set[int] = set()
        out = []
        for ordinal, i in seq:
            if i in seen:  # (an equal set: near, and indexed already)
                out.append(ordinal)
                continue
            seen.add(i)
            size = sizes[i]
            low, high = THRESHOLD * size, size / THRESHOLD
            compared: set[int] = set()
            found = False
            for tok in prefixes[i]:
                for j in index.get(tok, ()):
                    if j in compared:
                        continue
                    compared.add(j)
                    if not low <= sizes[j] <= high:
                        continue
                    key = i * _STRIDE + j if i > j else j * _STRIDE + i
                    verdict = verdicts.get(key)
                    if verdict is None:
                        if len(verdicts) >= _MAX_VERDICTS:  # (a load of unrelated texts: no pair comes back)
                            verdicts.clear()
                        common = len(sets[i] & sets[j])
                        verdict = verdicts[key] = common >= THRESHOLD * (size + sizes[j] - common)
                    if verdict:
                        found = True
                        break
                if found:
                    break
            if found:
                out.append(ordinal)
            for tok in prefixes[i]:
                index.setdefault(tok, []).append(i)
        return out


_STRIDE = 1 << 32
_MAX_VERDICTS = 1 << 20
