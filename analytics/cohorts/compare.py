"""`compare_cohorts()`: two cohorts (two `Filters`) side by side on every figure, with its uncertainty.

One row per figure (`COLUMNS`): the per-conversation means (`cohorts.MEANS`, and the cost with a
price table), the rate of each outcome signal, the share of each outcome and, when the
database has `conversation_topics`, of each topic. `difference` is b − a. Proportions: Wilson
intervals, Newcombe's interval for the difference, the two-proportion z test or Fisher's exact
test; means: Welch's interval and t test, with the Mann-Whitney U test's p beside it
(`p_rank`). `q_value`: Benjamini-Hochberg over every row of the comparison; `significant`:
q < `alpha`. docs/compare.md has the method and its caveats. Deterministic: no resampling.

>>> rows = compare_cohorts("lens.duckdb", Filters(metadata=(("app_version", "1.0"),)),
...                        Filters(metadata=(("app_version", "1.1"),)))  # doctest: +SKIP
>>> rows.query("significant")[["name", "value_a", "value_b", "q_value"]]  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from analytics import _pandas as pd
from analytics.cohorts import stats
from analytics.cohorts.cohorts import COST, MEANS, cohort_frame
from analytics.cohorts.prices import PriceTable, load_prices
from analytics.db import ConOrPath
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.signals import OUTCOMES, SIGNALS

#: The columns of `compare_cohorts()` (and of the `compare` CSV report).
COLUMNS = (
    "kind", "name", "label", "n_a", "n_b", "count_a", "count_b", "value_a", "value_b", "difference", "ratio",
    "ci_low", "ci_high", "interval", "p_value", "test", "p_rank", "q_value", "significant",
)
#: The row kinds, in their order.
KINDS = ("metric", "signal", "outcome", "topic")
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class _Row:
    kind: str
    name: str
    label: str
    n_a: int
    n_b: int
    count_a: int | None
    count_b: int | None
    value_a: float
    value_b: float
    ci_low: float
    ci_high: float
    interval: str
    p_value: float
    test: str
    p_rank: float


def proportion_row(kind: str, name: str, label: str, k_a: int, n_a: int, k_b: int, n_b: int) -> _Row:
    """One proportion's row: k of n in each cohort.

    >>> r = proportion_row("signal", "x", "x", 48, 80, 56, 70)
    >>> round(r.ci_low, 4), round(r.ci_high, 4), r.test
    (0.0524, 0.3339, 'z')
    """
    low, high = stats.newcombe(k_a, n_a, k_b, n_b)
    p, test = stats.proportion_test(k_a, n_a, k_b, n_b)
    return _Row(kind, name, label, n_a, n_b, k_a, k_b, k_a / n_a if n_a else math.nan, k_b / n_b if n_b else math.nan,
                low, high, "newcombe", p, test, math.nan)


def _moments(values: np.ndarray) -> tuple[float, float]:
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    var = float(values.var(ddof=1)) if n > 1 else math.nan
    return mean, var


def mean_row(name: str, label: str, a, b) -> _Row:
    """One mean's row over the known (non-null) values of each cohort.

    >>> r = mean_row("m", "m", np.array([0.0, 2.0]), np.array([3.0, 5.0]))
    >>> r.value_b - r.value_a, round(r.ci_low, 4), round(r.p_value, 4)
    (3.0, -3.0849, 0.1679)
    """
    mean_a, var_a = _moments(a)
    mean_b, var_b = _moments(b)
    low, high, p = stats.welch(mean_a, var_a, len(a), mean_b, var_b, len(b))
    return _Row("metric", name, label, len(a), len(b), None, None, mean_a, mean_b, low, high, "welch", p,
                "welch" if not math.isnan(p) else "none", stats.mann_whitney(a, b))


def _known(series: pd.Series) -> np.ndarray:
    return series.dropna().to_numpy(dtype=float)


def _rows(fa: pd.DataFrame, fb: pd.DataFrame, priced: bool) -> list[_Row]:
    rows = [mean_row(name, label, _known(fa[name]), _known(fb[name])) for name, label in MEANS.items()]
    if priced:
        rows.append(mean_row(COST, "Cost per conversation", _known(fa[COST]), _known(fb[COST])))
    n_a, n_b = len(fa), len(fb)
    rows += [proportion_row("signal", s, "Signal: " + s.replace("_", " "), int(fa[s].sum()), n_a, int(fb[s].sum()), n_b)
             for s in SIGNALS]
    rows += [proportion_row("outcome", o, "Outcome: " + o, int((fa["outcome"] == o).sum()), n_a, int((fb["outcome"] == o).sum()), n_b)
             for o in OUTCOMES]
    # (distinct values first: iterating a pyarrow-backed column value by value is slow at 100,000 rows)
    topics = sorted(set(fa["topic_label"].dropna().unique()) | set(fb["topic_label"].dropna().unique()))
    rows += [proportion_row("topic", t, "Topic: " + t, int((fa["topic_label"] == t).sum()), n_a, int((fb["topic_label"] == t).sum()), n_b)
             for t in topics]
    return rows


def compare_frames(fa: pd.DataFrame, fb: pd.DataFrame, priced: bool = False, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """The comparison of two `cohort_frame`s (`COLUMNS`)."""
    rows = _rows(fa, fb, priced)
    q = stats.benjamini_hochberg([r.p_value for r in rows])
    frame = pd.DataFrame([r.__dict__ for r in rows])
    frame["difference"] = frame["value_b"] - frame["value_a"]
    frame["ratio"] = [b / a if a else math.nan for a, b in zip(frame["value_a"], frame["value_b"])]
    frame["q_value"] = q
    frame["significant"] = frame["q_value"] < alpha
    for name in ("count_a", "count_b"):
        frame[name] = frame[name].astype("Int64")
    return frame[list(COLUMNS)]


def _unpriced(*frames: pd.DataFrame) -> list[str]:
    return sorted({m for f in frames for names in f["unpriced_models"].dropna().unique() for m in names.split(",")})


def compare_cohorts(db_or_con: ConOrPath, a: Filters, b: Filters,
                    prices: PriceTable | str | os.PathLike | Mapping | None = None,
                    alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """Cohort `a` against cohort `b` on every figure (`COLUMNS`; module docstring).

    `prices` (a `PriceTable`, a .toml / .csv file or a mapping) adds the cost per conversation.
    `frame.attrs` holds `threads_a`, `threads_b`, `overlap`: the threads in both cohorts
    (the tests assume two independent samples; an overlap weakens them), and `unpriced_models`:
    the models without a price, whose conversations the cost row leaves out.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise BadRequest(f"alpha must be a number between 0 and 1, got {alpha!r}")
    table = None if prices is None else load_prices(prices)
    both = cohort_frame(db_or_con, a, b, table)
    fa, fb = both[both["in_a"]], both[both["in_b"]]
    frame = compare_frames(fa, fb, table is not None, alpha)
    frame.attrs.update(threads_a=len(fa), threads_b=len(fb), overlap=int((both["in_a"] & both["in_b"]).sum()),
                       unpriced_models=_unpriced(fa, fb) if table is not None else [])
    return frame
