"""The detectors' findings are merged in linear time (`analytics/redact_merge.py`), with the
spans the pairwise rule gives: each finding checked against every one taken before it (the oracle
below, kept here as the definition; it cost the square of the number of findings in a text)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from analytics.reader_view import view
from analytics.redact import Finding, RedactConfig, _Finder, _in_text
from analytics.redact_merge import merge_findings


def pairwise(detected):
    """The rule as first written: each finding against everything taken so far."""
    taken = []
    for findings in detected:
        for f in findings:
            if f.end <= f.start:
                continue
            over = [t for t in taken if f.start < t.end and t.start < f.end]
            if not over:
                taken.append(f)
            elif any(f.start < t.start or t.end < f.end for t in over):
                longest = max([f, *over], key=lambda x: x.end - x.start)
                taken = [t for t in taken if t not in over] + [Finding(
                    min(f.start, *(t.start for t in over)), max(f.end, *(t.end for t in over)),
                    longest.kind, longest.value)]
    taken.sort()
    return taken


_span = st.tuples(st.integers(0, 60), st.integers(1, 12))
# A detector: a few runs, each sorted by start (as a regex's matches are), overlapping each other.
_detector = st.lists(st.lists(_span, max_size=8).map(sorted), min_size=1, max_size=3)


@settings(max_examples=600, deadline=None)
@given(st.lists(_detector, min_size=1, max_size=5))
def test_the_merge_gives_the_pairwise_rules_spans(detectors):
    counter = iter(range(10**6))
    detected = [[Finding(s, s + n, f"K{d}", f"v{next(counter)}") for run in runs for s, n in run]
                for d, runs in enumerate(detectors)]
    assert merge_findings(detected) == pairwise(detected)


def test_random_texts_with_overlapping_matches_mask_as_the_pairwise_rule_does():
    # Configured patterns overlapping addresses, phones, cards and each other.
    config = RedactConfig(patterns={"A": r"x+", "B": r"[0-9]{3}", "C": r"ex[a-z]*"}, terms=("Ann Lee", "Lee Ex"))
    finder = _Finder.of(config)
    pieces = ["bob@example.com", "xx", "+44 20 7946 0958", "4111 1111 1111 1111", "Ann Lee", "Ex", " ", " ",
              "10.0.0.7", "415 555 2671", "123-45-6789", "exx", "GB82 WEST 1234 5698 7654 32", ", ", "x@y.example"]
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        seen, where = view(text)
        detected = [[_in_text(f, where, len(text)) for f in found] for found in finder.detected(seen)]
        assert finder.find(text) == pairwise(detected), text
