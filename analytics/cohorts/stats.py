"""The statistics of a two-cohort comparison: closed forms and exact sums (deterministic, no SciPy at run time).

Proportions: the Wilson score interval per cohort, Newcombe's hybrid score interval (his
method 10) for the difference, and a two-sided test: the pooled two-proportion z test, or
Fisher's exact test when an expected cell count is below 5. Means: Welch's interval for the
difference and Welch's t test; a rank test (Mann-Whitney U, normal approximation with tie
and continuity correction) beside it, since per-conversation figures are skewed. Across the
rows of one comparison: Benjamini-Hochberg q values.

>>> [round(v, 4) for v in wilson(81, 263)]
[0.2553, 0.3662]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054
#: An expected cell count below this sends a proportion to Fisher's exact test.
FISHER_BELOW = 5.0


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z.

    >>> round(normal_sf(1.959963984540054), 6)
    0.025
    """
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n (NaNs when n = 0).

    >>> [round(v, 4) for v in wilson(0, 10)]
    [0.0, 0.2775]
    """
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom)


def newcombe(k_a: int, n_a: int, k_b: int, n_b: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for p_b − p_a.

    >>> [round(v, 4) for v in newcombe(48, 80, 56, 70)]   # Newcombe (1998), example (a)
    [0.0524, 0.3339]
    """
    if n_a <= 0 or n_b <= 0:
        return math.nan, math.nan
    p_a, p_b = k_a / n_a, k_b / n_b
    lo_a, hi_a = wilson(k_a, n_a, z)
    lo_b, hi_b = wilson(k_b, n_b, z)
    d = p_b - p_a
    return (d - math.sqrt((p_b - lo_b) ** 2 + (hi_a - p_a) ** 2),
            d + math.sqrt((hi_b - p_b) ** 2 + (p_a - lo_a) ** 2))


def two_proportion_z(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided p of the pooled two-proportion z test (1.0 when both cohorts are all 0 or all 1).

    >>> round(two_proportion_z(10, 100, 20, 100), 4)
    0.0477
    """
    if n_a <= 0 or n_b <= 0:
        return math.nan
    pooled = (k_a + k_b) / (n_a + n_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if se == 0:
        return 1.0
    return 2 * normal_sf(abs(k_b / n_b - k_a / n_a) / se)


def _log_hypergeom(k: int, n_a: int, n_b: int, total_k: int) -> float:
    """log P(k successes in cohort a) given the margins (hypergeometric)."""
    def log_choose(n: int, r: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)
    return log_choose(n_a, k) + log_choose(n_b, total_k - k) - log_choose(n_a + n_b, total_k)


def fisher_exact(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided p of Fisher's exact test: the tables with the same margins no likelier than this one.

    >>> round(fisher_exact(3, 4, 1, 4), 4)   # Fisher's tea-tasting table [[3, 1], [1, 3]]
    0.4857
    """
    if n_a <= 0 or n_b <= 0:
        return math.nan
    total_k = k_a + k_b
    low, high = max(0, total_k - n_b), min(n_a, total_k)
    observed = _log_hypergeom(k_a, n_a, n_b, total_k)
    # (a relative tolerance, as SciPy's, so that ties in probability count as "as extreme")
    limit = observed + math.log1p(1e-7)
    p = sum(math.exp(lp) for lp in (_log_hypergeom(k, n_a, n_b, total_k) for k in range(low, high + 1)) if lp <= limit)
    return min(1.0, p)


def proportion_test(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float, str]:
    """(two-sided p, the test's name): Fisher's exact test when an expected count is below 5, else the z test.

    >>> proportion_test(3, 4, 1, 4)[1], proportion_test(10, 100, 20, 100)[1]
    ('fisher', 'z')
    """
    total = n_a + n_b
    if total == 0 or n_a == 0 or n_b == 0:
        return math.nan, "none"
    successes = k_a + k_b
    expected = [n * s / total for n in (n_a, n_b) for s in (successes, total - successes)]
    if min(expected) < FISHER_BELOW:
        return fisher_exact(k_a, n_a, k_b, n_b), "fisher"
    return two_proportion_z(k_a, n_a, k_b, n_b), "z"


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b).

    >>> round(betainc(2, 3, 0.4), 6)   # 1 − Σ_{j<2} C(4,j) 0.4^j 0.6^(4−j)
    0.5248
    """
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail P(|T| > |t|) of Student's t with `df` degrees of freedom (any real df > 0).

    >>> round(t_sf2(2.0, 2), 6)   # df = 2: 1 − t / sqrt(2 + t²)
    0.183503
    """
    if math.isinf(df):
        return 2 * normal_sf(abs(t))
    return betainc(df / 2, 0.5, df / (df + t * t))


def t_quantile(q: float, df: float) -> float:
    """The upper quantile t with P(T ≤ t) = q (q > 0.5): Newton's method on `t_sf2` from the normal
    quantile, bisection where a step would leave the bracket.

    >>> round(t_quantile(0.975, 2), 6)
    4.302653
    """
    target = 2 * (1 - q)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        lo, hi = hi, hi * 2
    t = min(max(Z95 if q == 1 - normal_sf(Z95) else hi / 2, lo), hi)
    for _ in range(100):
        f = t_sf2(t, df) - target
        if abs(f) <= 1e-15 * target:
            break
        if f > 0:
            lo = t
        else:
            hi = t
        # d/dt of the two-sided tail is −2 × Student's density at t
        log_density = (math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
                       - (df + 1) / 2 * math.log1p(t * t / df))
        step = f / (2 * math.exp(log_density))
        t = t + step if lo < t + step < hi else (lo + hi) / 2
        if hi - lo < 1e-14 * hi:
            break
    return t


def welch(mean_a: float, var_a: float, n_a: int, mean_b: float, var_b: float, n_b: int,
          z: float = Z95) -> tuple[float, float, float]:
    """(lower, upper, two-sided p) of Welch's interval and t test for mean_b − mean_a.

    Sample variances (n − 1). NaNs when a cohort has fewer than two values; the interval is
    the confidence of `z` (95 %: Z95).

    >>> [round(v, 4) for v in welch(1.0, 2.0, 2, 4.0, 2.0, 2)]   # t = 3/√2, df = 2
    [-3.0849, 9.0849, 0.1679]
    """
    if n_a < 2 or n_b < 2:
        return math.nan, math.nan, math.nan
    sa, sb = var_a / n_a, var_b / n_b
    se = math.sqrt(sa + sb)
    d = mean_b - mean_a
    if se == 0:
        return d, d, (1.0 if d == 0 else 0.0)
    df = (sa + sb) ** 2 / (sa * sa / (n_a - 1) + sb * sb / (n_b - 1))
    level = 1 - normal_sf(z)
    half = t_quantile(level, df) * se
    return d - half, d + half, t_sf2(d / se, df)


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of the Mann-Whitney U test (normal approximation, tie and continuity corrected).

    Mid-ranks from the sorted distinct values (NumPy: a cohort of 100k conversations is ranked
    at once, not value by value).

    >>> round(mann_whitney([1, 2, 3], [4, 5, 6]), 4)
    0.0809
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n_a, n_b = len(x), len(y)
    if n_a == 0 or n_b == 0:
        return math.nan
    n = n_a + n_b
    values, inverse, counts = np.unique(np.concatenate([x, y]), return_inverse=True, return_counts=True)
    mid_ranks = np.cumsum(counts) - (counts - 1) / 2.0
    u = float(mid_ranks[inverse[:n_a]].sum()) - n_a * (n_a + 1) / 2
    ties = float((counts.astype(float) ** 3 - counts).sum())
    mu = n_a * n_b / 2
    sigma = math.sqrt(n_a * n_b / 12 * ((n + 1) - ties / (n * (n - 1)))) if n > 1 else 0.0
    if sigma == 0:
        return 1.0
    return min(1.0, 2 * normal_sf(max(0.0, abs(u - mu) - 0.5) / sigma))


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg q values (false discovery rate), NaNs kept out of the count and returned as NaN.

    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
    [0.02, 0.04, 0.04, 0.02]
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(known)
    q = [math.nan] * len(p_values)
    running = 1.0
    for rank in range(m, 0, -1):
        p, i = known[rank - 1]
        running = min(running, p * m / rank)
        q[i] = running
    return q
