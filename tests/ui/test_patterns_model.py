"""The Failure patterns page model on the demo database (real graphs, tools that fail)."""

from __future__ import annotations

import pytest

from ui.models.patterns import TREND_PATTERNS, patterns_page


@pytest.fixture(scope="module")
def demo():
    from ui.database import ensure_demo_db

    return ensure_demo_db()


def test_the_trend_lists_its_patterns_most_frequent_first_as_the_table_does(demo):
    view = patterns_page(str(demo))
    top = view.patterns["label"].head(TREND_PATTERNS).tolist()
    drawn = [c for c in view.trend.columns if c != "period_start"]
    assert drawn == top
    assert top != sorted(top)  # (the demo's most frequent pattern does not come first by name)
