"""One resume gap: `gap_minutes` (minutes, a float) for metrics and resume QA alike, checked and converted once."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from analytics import metrics, resume
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap, gap_option, gap_us


def test_the_threshold_in_microseconds():
    assert DEFAULT_GAP_MINUTES == 30.0 and gap_us(DEFAULT_GAP_MINUTES) == 30 * 60 * 1_000_000
    assert gap_us(0.05) == 3_000_000 and gap_us(5) == 300_000_000 and isinstance(gap_us(1.5), int)
    for bad in (0, -2, math.inf, math.nan, True, "30", None, timedelta(minutes=30)):
        with pytest.raises(BadRequest, match="gap_minutes"):
            check_gap(bad)


def test_report_options():
    assert gap_option({}) == gap_option({"gap_minutes": None}) == DEFAULT_GAP_MINUTES
    assert gap_option({"gap_minutes": 0.5}) == 0.5
    with pytest.warns(DeprecationWarning):
        assert gap_option({"resume_gap_minutes": 7}) == 7.0
    assert gap_option({"gap_minutes": 2, "resume_gap_minutes": 7}) == 2.0  # the current name wins
    with pytest.raises(BadRequest):
        gap_option({"gap_minutes": -1})


def test_metrics_and_resume_read_the_same_threshold(con, sqlite_store):
    # On linear single-process threads both count exactly the idle gaps above the threshold.
    threads = tuple(sqlite_store.threads_of("simple_chat"))
    assert threads
    for gap in (DEFAULT_GAP_MINUTES, 1.0, 0.05, 0.001):
        counts = metrics.conversations(con, Filters(thread_ids=threads), gap_minutes=gap)
        points = resume.resume_points(con, filters=Filters(thread_ids=threads), gap_minutes=gap)
        assert set(points["reason"]) <= {"idle_gap"}
        per_thread = points.groupby("thread_id").size().to_dict()
        assert {t: per_thread.get(t, 0) for t in counts["thread_id"]} == dict(
            zip(counts["thread_id"], counts["resume_points"])
        ), gap
    assert metrics.conversations(con, Filters(thread_ids=threads), gap_minutes=0.001)["resume_points"].sum() > 0
