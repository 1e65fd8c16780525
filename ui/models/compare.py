"""The Compare page: two cohorts side by side on every figure, with intervals, p and q.

>>> page = compare_page("lens.duckdb", Filters(metadata=(("app_version", "1.0"),)),
...                     Filters(metadata=(("app_version", "1.1"),)))  # doctest: +SKIP
>>> page.table.head()  # doctest: +SKIP
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pandas as pd

from analytics.cohorts.compare import compare_cohorts
from analytics.cohorts.costs import costs
from analytics.cohorts.facets import CohortFacets, cohort_facets  # noqa: F401  (the page's choices)
from analytics.cohorts.prices import parse_prices
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters, day_window
from analytics.conversation_outcomes.signals import OUTCOMES
from ui.formats import plural
from ui.models.outcomes import OUTCOME_LABELS, SIGNAL_LABELS

#: Row kinds and how the page names them.
KIND_LABELS = {"metric": "Per conversation (mean)", "signal": "Signal rate", "outcome": "Outcome share",
               "topic": "Topic share"}
#: Each test by the name a reader knows it under (docs/compare.md); "none": too few values for one.
TEST_LABELS = {"z": "z test (two proportions)", "fisher": "Fisher's exact test", "welch": "Welch's t test", "none": "—"}
#: Rows a chart of the biggest differences shows, per chart.
CHART_ROWS = 10
#: The separator of a metadata choice's text ("app_version = 1.1").
META_SEP = " = "


def meta_choices(facets: CohortFacets) -> tuple[str, ...]:
    """The metadata choices as the widget shows them.

    >>> meta_choices(CohortFacets((), (("app_version", "1.0", 3), ("app_version", "1.1", 2))))
    ('app_version = 1.0', 'app_version = 1.1')
    """
    return tuple(f"{k}{META_SEP}{v}" for k, v, _ in facets.metadata)


@dataclass(frozen=True)
class Defaults:
    """What one cohort's widgets hold on a first visit."""

    meta: list[str]
    models: list[str]


def default_cohorts(facets: CohortFacets) -> tuple[Defaults, Defaults]:
    """The cohorts a first visit shows, so the page opens on a comparison rather than a prompt: the
    first two values of the first metadata key that has two or more (e.g. app_version 1.0 against
    1.1), else the first two models, else none (then the user chooses).

    >>> a, b = default_cohorts(CohortFacets((), (("app_version", "1.0", 3), ("app_version", "1.1", 2))))
    >>> a.meta, b.meta
    (['app_version = 1.0'], ['app_version = 1.1'])
    >>> a, b = default_cohorts(CohortFacets(("gpt-4o", "gpt-4o-mini"), ()))
    >>> a.models, b.models
    (['gpt-4o'], ['gpt-4o-mini'])
    """
    by_key: dict[str, list[str]] = {}
    for k, v, _ in facets.metadata:
        by_key.setdefault(k, []).append(v)
    for key, values in by_key.items():
        if len(values) >= 2:
            return Defaults([f"{key}{META_SEP}{values[0]}"], []), Defaults([f"{key}{META_SEP}{values[1]}"], [])
    if len(facets.models) >= 2:
        return Defaults([], [facets.models[0]]), Defaults([], [facets.models[1]])
    return Defaults([], []), Defaults([], [])


def cohort_filters(base: Filters, tenants=(), first=None, last=None, models=(), meta=()) -> Filters:
    """`base` narrowed by one cohort's widgets (each given one replaces `base`'s field).

    >>> cohort_filters(Filters(), meta=["app_version = 1.1"]).metadata
    (('app_version', '1.1'),)
    """
    changes: dict = {}
    if tenants:
        changes["tenants"] = tuple(tenants)
    if first or last:
        changes["since"], changes["until"] = day_window(first, last)
    if models:
        changes["models"] = tuple(models)
    if meta:
        changes["metadata"] = tuple(tuple(m.split(META_SEP, 1)) for m in meta)
    return replace(base, **changes)


def cohort_text(values: dict) -> str:
    """What one cohort's widgets chose, in words (`pages/compare.py`'s values by param name).

    >>> cohort_text({"tenant": ["acme"], "from": None, "to": None, "model": [], "meta": ["app_version = 1.1"]})
    'tenant acme · app_version = 1.1'
    >>> cohort_text({"tenant": [], "model": []})
    'the filters above'
    """
    parts = []
    if values.get("tenant"):
        parts.append("tenant " + ", ".join(values["tenant"]))
    if values.get("from") or values.get("to"):
        parts.append(f"{values.get('from') or '…'} → {values.get('to') or '…'}")
    if values.get("model"):
        parts.append("model " + ", ".join(values["model"]))
    parts += list(values.get("meta") or ())
    return " · ".join(parts) or "the filters above"


def conversation_params(shared: dict, cohort: dict, kind: str | None = None, name: str | None = None) -> dict:
    """The Conversations page's params that list a cohort's threads: the `shared` filters, each
    replaced by the `cohort`'s widget of its name when that holds a value (`tenant`, `from`, `to`,
    `model`, `meta`), narrowed to those with signal / outcome `name` when `kind` is one.

    >>> conversation_params({"tenant": "acme", "sub": "eu"}, {"tenant": [], "model": ["m2"]}, "signal", "agent_loop")
    {'tenant': 'acme', 'sub': 'eu', 'model': ['m2'], 'signal': 'agent_loop'}
    """
    out = dict(shared) | {k: v for k, v in cohort.items() if v}
    if kind in ("signal", "outcome") and name:
        out[kind] = name
    return out


@dataclass(frozen=True)
class ComparePage:
    """`frame`: `compare_cohorts()` (the CSV); `table`: what the page shows; `means` / `shares`: the
    biggest differences for the charts; the cohort sizes, their overlap, the unpriced models, and
    why the price table given could not be read (`price_problem`)."""

    frame: pd.DataFrame
    table: pd.DataFrame  # (its rows are `shown`'s, in order)
    shares: pd.DataFrame
    means: pd.DataFrame
    threads_a: int
    threads_b: int
    overlap: int
    unpriced_models: tuple[str, ...]
    price_problem: str | None = None
    #: With a price table: per outcome, each cohort's conversations and cost (`cost_by_outcome`).
    costs: pd.DataFrame | None = None
    shown: pd.DataFrame | None = None  # the `frame` rows the table shows

    @property
    def significant(self) -> int:
        return int(self.frame["significant"].sum())


def _value(kind: str, value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.1%}" if kind != "metric" else f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _difference(kind: str, d: float, low: float, high: float) -> tuple[str, str]:
    if math.isnan(d):
        return "—", "—"
    if kind != "metric":
        return f"{d * 100:+.1f} pp", "—" if math.isnan(low) else f"{low * 100:+.1f} to {high * 100:+.1f} pp"
    size = max(abs(v) for v in (d, low, high) if not math.isnan(v))
    fmt = "{:+,.3g}" if size < 1000 else "{:+,.0f}"
    return fmt.format(d), "—" if math.isnan(low) else f"{fmt.format(low)} to {fmt.format(high)}"


def verdict(page: "ComparePage") -> str:
    """One line on what the comparison found.

    >>> verdict(ComparePage(pd.DataFrame({"significant": [False]}), *[pd.DataFrame()] * 3, 10, 12, 0, ()))
    'No difference is marked (Benjamini-Hochberg q < 0.05 over 1 row): with 10 and 12 threads, what differs is within chance.'
    """
    n = len(page.frame)
    if page.significant:
        return (f"{page.significant} of {plural(n, 'row')} differ beyond chance (Benjamini-Hochberg q < 0.05): marked ✔ "
                "in the table and the charts.")
    return (f"No difference is marked (Benjamini-Hochberg q < 0.05 over {plural(n, 'row')}): with {page.threads_a:,} and "
            f"{plural(page.threads_b, 'thread')}, what differs is within chance.")


def overlap_warning(page: "ComparePage") -> str | None:
    """What an overlap between the cohorts means for the tests, or None when they are disjoint.

    >>> overlap_warning(ComparePage(pd.DataFrame({"significant": [False]}), *[pd.DataFrame()] * 3, 10, 12, 4, ()))
    '4 threads are in both cohorts. The tests assume two separate samples: read their p and q values as approximate.'
    """
    if not page.overlap:
        return None
    return (f"{plural(page.overlap, 'thread')} {'is' if page.overlap == 1 else 'are'} in both cohorts. The tests assume "
            "two separate samples: read their p and q values as approximate.")


def _p(p: float) -> str:
    return "—" if p is None or math.isnan(p) else "< 0.001" if p < 0.001 else f"{p:.3f}"


def figure(kind: str, name: str, label: str) -> str:
    """A row's name on the page: a signal or an outcome by the name the Outcomes page gives it.

    >>> figure("signal", "slow_hitl", "Signal: slow hitl"), figure("metric", "messages", "Messages")
    ('Signal: slow human-in-the-loop', 'Messages')
    >>> figure("outcome", "resolved", "Outcome: resolved")
    'Outcome: Resolved'
    """
    if kind == "signal" and name in SIGNAL_LABELS:
        return f"Signal: {SIGNAL_LABELS[name]}"
    if kind == "outcome" and name in OUTCOME_LABELS:
        return f"Outcome: {OUTCOME_LABELS[name]}"
    return label


def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows as the page shows them: names, formatted values, difference and interval, p, q, a mark."""
    rows = []
    for r in frame.itertuples(index=False):
        diff, ci = _difference(r.kind, r.difference, r.ci_low, r.ci_high)
        rows.append({
            "figure": figure(r.kind, r.name, r.label), "kind": KIND_LABELS.get(r.kind, r.kind),
            "a": _value(r.kind, r.value_a), "b": _value(r.kind, r.value_b), "difference": diff, "ci95": ci,
            "p": _p(r.p_value), "test": TEST_LABELS.get(r.test, r.test), "q": _p(r.q_value), "significant": "✔" if r.significant else "",
            "n": f"{r.n_a:,} / {r.n_b:,}",
        })
    return pd.DataFrame(rows, columns=["figure", "kind", "a", "b", "difference", "ci95", "p", "test", "q", "significant", "n"])


def csv_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every row of `frame` as its CSV holds it: the page's rows (`display_table`: names, the values
    and the difference as the table writes them, each test by its name), "Marked" a flag (yes / no)."""
    table = display_table(frame)
    # (an interval from below zero starts with a minus sign, not a hyphen: a CSV cell starting with
    # "-" is read as a formula, so the download would guard it with a quote)
    return table.assign(significant=table["significant"] != "", ci95=table["ci95"].str.replace(r"^-", "\u2212", regex=True))


def _interval_text(low: float, high: float, unit: str) -> str:
    """A chart's 95 % interval in its tooltip.

    >>> _interval_text(-1.234, 5.0, "pp"), _interval_text(float("nan"), float("nan"), "%")
    ('-1.2 to +5.0 pp', '—')
    """
    return "—" if math.isnan(low) or math.isnan(high) else f"{low:+.1f} to {high:+.1f} {unit}"


def biggest(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(shares, means): the proportions with the largest |difference| in percentage points, and the
    means with the largest relative difference in %, `CHART_ROWS` each, for the charts; each with
    its 95 % interval in the chart's unit (`low`, `high`, NaN without one; `ci95` its text).

    A share's interval is the table's (`ci_low`, `ci_high`) in points. A mean's is the table's
    interval of B − A over A's mean, in % (the bar, `ratio − 1`, is B − A over A's mean too):
    A's mean is taken as known, so it is the interval of the difference, on the bar's scale."""
    props = frame[(frame["kind"] != "metric") & frame["difference"].notna()].copy()
    props["difference_pp"] = (props["difference"] * 100).round(2)
    props["low"], props["high"] = (props["ci_low"] * 100).round(2), (props["ci_high"] * 100).round(2)
    props = props.reindex(props["difference_pp"].abs().sort_values(ascending=False, kind="stable").index).head(CHART_ROWS)
    means = frame[(frame["kind"] == "metric") & frame["ratio"].notna()].copy()
    means["relative_pct"] = ((means["ratio"] - 1) * 100).round(2)
    scale = 100 / means["value_a"].where(means["value_a"] != 0)
    means["low"], means["high"] = (means["ci_low"] * scale).round(2), (means["ci_high"] * scale).round(2)
    means = means.reindex(means["relative_pct"].abs().sort_values(ascending=False, kind="stable").index).head(CHART_ROWS)
    for part, unit in ((props, "pp"), (means, "%")):
        part["q"] = part["q_value"].map(_p)
        part["ci95"] = [_interval_text(lo, hi, unit) for lo, hi in zip(part["low"].astype(float), part["high"].astype(float))]
        labels = [figure(k, n, label) for k, n, label in zip(part["kind"], part["name"], part["label"])]
        part["marked"] = [f"{label} ✔" if s else label for label, s in zip(labels, part["significant"])]
    return (props[["marked", "difference_pp", "low", "high", "ci95", "q"]].reset_index(drop=True),
            means[["marked", "relative_pct", "low", "high", "ci95", "q"]].reset_index(drop=True))


def cost_by_outcome(db: ConOrPath, a: Filters, b: Filters, table) -> pd.DataFrame:
    """Per outcome: each cohort's conversations with tokens, their cost and the unpriced tokens
    (`analytics.costs(by="outcome")` of each cohort side by side)."""
    parts = []
    for side, filters in (("a", a), ("b", b)):
        part = costs(db, table, by="outcome", filters=filters)[["outcome", "conversations", "cost", "unpriced_tokens"]]
        parts.append(part.rename(columns={c: f"{c}_{side}" for c in part.columns if c != "outcome"}).set_index("outcome"))
    both = parts[0].join(parts[1], how="outer")
    order = [o for o in OUTCOMES if o in both.index] + [o for o in both.index if o not in OUTCOMES]
    out = both.reindex(order).reset_index().fillna({c: 0 for c in both.columns})
    return out.assign(outcome=out["outcome"].map(lambda o: OUTCOME_LABELS.get(o, o)))  # as every page names them


def compare_page(db: ConOrPath, a: Filters, b: Filters, prices: tuple[str, str] | None = None,
                 significant_only: bool = False) -> ComparePage:
    """Everything the page shows for cohorts `a` and `b` (one comparison); `prices`: a price
    table's (kind, text), "toml" or "csv" (`analytics.cohorts.prices`), for the cost row."""
    table, problem = None, None
    if prices is not None:
        try:
            table = parse_prices(prices[1], prices[0], "the price table")
        except BadRequest as exc:
            problem = str(exc)  # the comparison still stands, without the cost row
    with connection(db) as con:  # (one open of the file for the three queries: each open is ~0.02 CPU s)
        frame = compare_cohorts(con, a, b, table)
        by_outcome = None if table is None else cost_by_outcome(con, a, b, table)
    shown = frame[frame["significant"]] if significant_only else frame
    shares, means = biggest(frame)
    return ComparePage(frame, display_table(shown), shares, means, frame.attrs["threads_a"], frame.attrs["threads_b"],
                       frame.attrs["overlap"], tuple(frame.attrs.get("unpriced_models", ())), problem, by_outcome,
                       shown.reset_index(drop=True))
