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
    return frozenset(tokens(text))


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
    sets = [(o, s) for o, s in items if len(s) >= MIN_TOKENS]
    if len(sets) < 2:
        return []
    rank = rank if rank is not None else token_order(s for _, s in sets)
    index: dict[str, list[int]] = defaultdict(list)  # prefix token -> positions in `sets`
    seen_exact: set[frozenset[str]] = set()
    out = []
    for i, (ordinal, s) in enumerate(sets):
        if s in seen_exact:  # (a set equal to an indexed one: found as that one is, so not indexed again)
            out.append(ordinal)
            continue
        seen_exact.add(s)
        prefix = sorted(s, key=rank.__getitem__)[: len(s) - math.ceil(THRESHOLD * len(s)) + 1]
        if _near_earlier(s, prefix, index, sets):
            out.append(ordinal)
        for tok in prefix:
            index[tok].append(i)
    return out


def _near_earlier(s: frozenset[str], prefix: list[str], index: dict[str, list[int]], sets) -> bool:
    """`near(s, t)` for some earlier `t` sharing a prefix token (inlined: the hot loop of a load)."""
    size = len(s)
    low, high = THRESHOLD * size, size / THRESHOLD
    compared: set[int] = set()
    for tok in prefix:
        for j in index.get(tok, ()):
            if j in compared:
                continue
            compared.add(j)
            other = sets[j][1]
            if low <= len(other) <= high:
                common = len(s & other)
                if common >= THRESHOLD * (size + len(other) - common):
                    return True
    return False
