"""Near-duplicates: the prefix filter finds every pair the plain all-pairs comparison finds."""

from __future__ import annotations

import random

from analytics.conversation_outcomes.similarity import near, repeats, token_set


def _all_pairs(items):
    sets = [(o, token_set(t)) for o, t in items]
    return [o for i, (o, s) in enumerate(sets) if any(near(s, t) for _, t in sets[:i])]


def test_prefix_filter_loses_no_pair():
    rng = random.Random(7)
    words = [f"w{i}" for i in range(12)]
    for _ in range(200):
        items = [(i, " ".join(rng.sample(words, rng.randint(2, 7)))) for i in range(rng.randint(2, 9))]
        assert repeats(items) == _all_pairs(items), items


def test_rephrasing_and_distinct_texts():
    assert near(token_set("Where is my order A-1043?"), token_set("where is my order A-1043??"))
    assert not near(token_set("Where is my order?"), token_set("How do I reset my password?"))
    assert not near(token_set("yes"), token_set("yes"))  # too short to say anything
