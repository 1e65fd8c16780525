"""`analytics.align.pair` on long lists: a 100,000-entry stretch with no anchor aligns
(each entry compared with a bounded window of the other side, bench/bench_align.py times
it), and `similar`'s cheap bounds never change its answer."""

from __future__ import annotations

import difflib
import random
import re
from collections import namedtuple

from analytics.align import SIMILAR_WINDOW, SIMILARITY, merged_order, pair, similar

M = namedtuple("M", "message_id speaker content")


def _text(rng: random.Random) -> str:
    return " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(8))


def test_a_100k_entry_stretch_without_anchors_aligns_each_altered_entry_with_its_own():
    rng = random.Random(5)
    n = 100_000
    expected = [M(None, ("user", "assistant")[i % 2], _text(rng)) for i in range(n)]
    observed, want = [], {}
    for i, e in enumerate(expected):
        if i % 100 == 50:
            continue  # missing from the observed side
        want[len(observed)] = i
        observed.append(M(None, e.speaker, e.content + " (edited)"))  # no text is the transcript's: no anchor
        if i % 100 == 70:
            observed.append(M(None, e.speaker, "0"))  # an extra entry, like none of the others
    alignment = pair(expected, observed)
    assert alignment.pairs == want
    assert set(alignment.how.values()) == {"similar text"} and not alignment.moved
    order = merged_order(len(expected), len(observed), alignment)
    assert sum(1 for i, j in order if j is None) == n // 100  # the missing ones, each once
    assert sum(1 for i, j in order if i is None) == n // 100  # the extras


def test_an_altered_entry_is_looked_for_within_the_window_only():
    rng = random.Random(6)
    gap = [M(None, "user", _text(rng)) for _ in range(SIMILAR_WINDOW)]
    target = M(None, "user", "The review is on Tuesday at 10:00.")
    altered = M(None, "user", "The review is on Wednesday at 10:00.")
    assert pair([*gap[:-1], target], [altered]).pairs == {0: SIMILAR_WINDOW - 1}
    assert pair([*gap, target], [altered]).pairs == {}  # one entry past the window: not searched


def _difflib_rule(a: str, b: str) -> bool:
    """`similar` as difflib alone says it, without the bounds `pair` tries first."""
    a, b = re.sub(r"\s+", " ", a).strip(), re.sub(r"\s+", " ", b).strip()
    if not a or not b:
        return a == b
    if a.startswith(b) or b.startswith(a):
        return True
    matcher = difflib.SequenceMatcher(None, a[:10_000], b[:10_000], autojunk=False)
    return matcher.ratio() >= SIMILARITY


def test_similar_gives_difflibs_answer_on_random_and_near_texts():
    rng = random.Random(7)
    for _ in range(3000):
        a = "".join(rng.choice("ab cd\te") for _ in range(rng.randrange(0, 40)))
        if rng.random() < 0.5:
            b = "".join(c if rng.random() < 0.7 else rng.choice("abxy ") for c in a)  # near a
        else:
            b = "".join(rng.choice("abc dxy") for _ in range(rng.randrange(0, 40)))
        assert similar(a, b) == _difflib_rule(a, b), (a, b)
