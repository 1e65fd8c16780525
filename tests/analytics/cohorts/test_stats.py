"""The intervals and tests against published references and closed forms.

References: Newcombe (1998), "Two-sided confidence intervals for the single proportion" (Table I,
Wilson score, method 3) and "Interval estimation for the difference between independent
proportions" (Table II, method 10); Fisher's tea-tasting table; Student's t with 1 and 2
degrees of freedom (closed forms); SciPy 1.17.1 for Welch, Mann-Whitney and Benjamini-Hochberg
on fixed samples (the values below were computed with it once and are written here: SciPy is
no dependency of this project).
"""

from __future__ import annotations

import math

import pytest

from analytics.cohorts import stats


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (81, 263, 0.2553, 0.3662),   # Newcombe 1998a, Table I
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_matches_newcombe_table(k, n, low, high):
    lo, hi = stats.wilson(k, n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


@pytest.mark.parametrize(("a", "b", "low", "high"), [
    ((48, 80), (56, 70), 0.0524, 0.3339),      # Newcombe 1998b, Table II (a): 56/70 − 48/80
    ((3, 10), (9, 10), 0.1705, 0.8090),        # (b): 9/10 − 3/10
    ((2, 7), (6, 7), 0.0582, 0.8062),          # (c): 6/7 − 2/7
    ((0, 29), (5, 56), -0.0381, 0.1926),       # (d): 5/56 − 0/29
    ((0, 20), (0, 10), -0.1611, 0.2775),       # (e): 0/10 − 0/20
    ((0, 20), (10, 10), 0.6791, 1.0),          # (g): 10/10 − 0/20
])
def test_newcombe_matches_table(a, b, low, high):
    lo, hi = stats.newcombe(*a, *b)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_fisher_exact_two_sided():
    assert stats.fisher_exact(3, 4, 1, 4) == pytest.approx(0.4857142857)   # 34/70
    assert stats.fisher_exact(2, 10, 7, 10) == pytest.approx(0.06977851869492736)
    assert stats.fisher_exact(0, 10, 5, 10) == pytest.approx(0.032507739938080496)


def test_small_counts_go_to_fisher_large_to_z():
    p, test = stats.proportion_test(0, 10, 5, 10)
    assert test == "fisher" and p == pytest.approx(0.032507739938080496)
    p, test = stats.proportion_test(10, 100, 20, 100)
    # pooled 0.15: z = 0.1 / sqrt(0.15 · 0.85 · 0.02) = 1.98030…
    assert test == "z" and p == pytest.approx(2 * stats.normal_sf(0.1 / math.sqrt(0.15 * 0.85 * 0.02)))
    assert p == pytest.approx(0.04767, abs=1e-5)


def test_t_tail_closed_forms():
    for t in (0.3, 1.0, 2.5, 12.0):
        assert stats.t_sf2(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi, rel=1e-10)   # Cauchy
        assert stats.t_sf2(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-10)
    assert stats.t_sf2(2.5, 7.3) == pytest.approx(0.03965023466560043, rel=1e-9)   # SciPy, fractional df
    assert stats.t_quantile(0.975, 2) == pytest.approx(4.302652729911275, rel=1e-9)


def _moments(values):
    n = len(values)
    mean = sum(values) / n
    return mean, sum((v - mean) ** 2 for v in values) / (n - 1), n


A = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
B = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9]


def test_welch_matches_scipy():
    low, high, p = stats.welch(*_moments(A), *_moments(B))
    assert p == pytest.approx(0.3813652419695989, rel=1e-8)
    assert (low, high) == (pytest.approx(-1.322404240230242, rel=1e-8), pytest.approx(3.322404240230242, rel=1e-8))


def test_mann_whitney_matches_scipy_with_ties():
    assert stats.mann_whitney(A, B) == pytest.approx(0.5200007496800839, rel=1e-9)
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6]) == pytest.approx(0.08085559837005224, rel=1e-9)
    assert stats.mann_whitney([1, 1, 1], [1, 1]) == 1.0   # every value tied: no evidence


def test_benjamini_hochberg_matches_scipy():
    ps = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216]
    want = [0.01, 0.04, 0.084, 0.084, 0.084, 0.1, 0.10571428571428572, 0.216, 0.216, 0.216]
    assert stats.benjamini_hochberg(ps) == pytest.approx(want)
    q = stats.benjamini_hochberg([0.02, math.nan, 0.01])
    assert q[0] == pytest.approx(0.02) and math.isnan(q[1]) and q[2] == pytest.approx(0.02)
