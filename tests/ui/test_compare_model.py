"""The Compare page model: cohorts from widget values, the table's formatting, the charts' rows."""

from __future__ import annotations

import datetime as dt
import math

import pandas as pd

from analytics.cohorts.compare import compare_frames
from analytics.filters import Filters
from tests.analytics.cohorts.conftest import labelled_db  # noqa: F401  (the fixture)
from ui.models import compare as model


def test_cohort_widgets_replace_the_shared_filters():
    base = Filters(tenants=("acme",), models=("m",))
    got = model.cohort_filters(base, tenants=["globex"], first=dt.date(2025, 1, 1), meta=["app_version = 1.1",
                                                                                         "note = a = b"])
    assert got.tenants == ("globex",) and got.models == ("m",)
    assert got.since == dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc) and got.until is None
    assert got.metadata == (("app_version", "1.1"), ("note", "a = b"))
    assert model.cohort_filters(base) == base


def _cohort(n, frustrated, messages):
    from analytics.cohorts.cohorts import MEANS
    from analytics.conversation_outcomes.signals import SIGNALS

    frame = pd.DataFrame({"thread_id": [f"t{i}" for i in range(n)]})
    for name in MEANS:
        frame[name] = [float(messages + i % 3) for i in range(n)]
    for name in SIGNALS:
        frame[name] = [name == "user_frustration" and i < frustrated for i in range(n)]
    frame["outcome"] = "resolved"
    frame["topic_label"] = None
    return frame


def test_table_and_charts_show_the_differences():
    frame = compare_frames(_cohort(200, 10, 5), _cohort(200, 60, 9))
    table = model.display_table(frame).set_index("figure")
    row = table.loc["Signal: user frustration"]
    assert (row["a"], row["b"], row["difference"], row["significant"]) == ("5.0%", "30.0%", "+25.0 pp", "✔")
    assert row["ci95"].endswith("pp") and row["q"] == "< 0.001" and row["n"] == "200 / 200"
    assert table.loc["Messages", "a"] == "6" and table.loc["Messages", "difference"] == "+4"
    shares, means = model.biggest(frame)
    assert shares.iloc[0]["marked"] == "Signal: user frustration ✔" and shares.iloc[0]["difference_pp"] == 25.0
    assert len(shares) == model.CHART_ROWS and math.isclose(means.iloc[0]["relative_pct"], 400 / 6, rel_tol=1e-3)


def test_tests_and_outcomes_are_named_as_a_reader_knows_them():
    table = model.display_table(compare_frames(_cohort(200, 10, 5), _cohort(200, 60, 9))).set_index("figure")
    assert table.loc["Messages", "test"] == "Welch's t test"
    assert table.loc["Signal: user frustration", "test"] in ("z test (two proportions)", "Fisher's exact test")
    assert "Outcome: Resolved" in table.index and "Outcome: resolved" not in table.index  # as the Outcomes page writes it
    assert not {"welch", "fisher", "z", "none"} & set(table["test"])


def test_first_visit_cohorts_come_from_a_metadata_key_with_two_values():
    from analytics.cohorts.facets import CohortFacets

    facets = CohortFacets(("m",), (("region", "eu", 4), ("version", "1", 2), ("version", "2", 3)))
    a, b = model.default_cohorts(facets)
    assert (a.meta, b.meta, a.models, b.models) == (["version = 1"], ["version = 2"], [], [])
    a, b = model.default_cohorts(CohortFacets(("m1", "m2"), (("region", "eu", 4),)))
    assert (a.meta, b.meta, a.models, b.models) == ([], [], ["m1"], ["m2"])
    a, b = model.default_cohorts(CohortFacets(("m1",), (("region", "eu", 4),)))
    assert (a, b) == (model.Defaults([], []), model.Defaults([], []))


def test_the_charts_draw_each_rows_95_interval_from_the_tables_numbers():
    """Each bar of the two charts has an error bar: the table's interval (`ci_low`, `ci_high`) on the
    bar's scale (points for a share; over A's mean, in %, for a mean), around the bar's value."""
    from ui import charts

    frame = compare_frames(_cohort(200, 10, 5), _cohort(200, 60, 9))
    rows = {model.figure(k, n, label): r for k, n, label, r in
            zip(frame["kind"], frame["name"], frame["label"], frame.itertuples(index=False))}
    shares, means = model.biggest(frame)
    for part, value, scale in ((shares, "difference_pp", lambda r: 100), (means, "relative_pct", lambda r: 100 / r.value_a)):
        for chart_row in part.itertuples(index=False):
            r = rows[chart_row.marked.removesuffix(" ✔")]
            if math.isnan(r.ci_low):
                assert math.isnan(chart_row.low) and chart_row.ci95 == "—"
                continue
            assert math.isclose(chart_row.low, r.ci_low * scale(r), abs_tol=0.01)
            assert math.isclose(chart_row.high, r.ci_high * scale(r), abs_tol=0.01)
            assert chart_row.low - 0.01 <= getattr(chart_row, value) <= chart_row.high + 0.01
        assert part["low"].notna().any()
        name = "shares" if value == "difference_pp" else "means"
        option = charts.compare_chart(name, part)
        (whiskers,) = [s["data"] for s in option["series"] if s["type"] == "boxplot"]
        # One error bar per bar, in the bars' order: from the interval's low end to its high end, flat at the value.
        assert len(whiskers) == len(part)
        assert ["".join(d.split()) for d in option["yAxis"]["data"]] == ["".join(m.split()) for m in part["marked"]]
        for w, (lo, d, hi) in zip(whiskers, part[["low", value, "high"]].itertuples(index=False)):
            assert w == "-" if math.isnan(lo) else w == [lo, d, d, d, hi]


def test_one_comparison_opens_its_database_once(labelled_db, monkeypatch):
    """The comparison and the cost by outcome of both cohorts read over one connection: opening the
    file costs a page as much as a query on it."""
    import analytics.db

    db, _ = labelled_db
    opened = []
    connect = analytics.db.connect
    monkeypatch.setattr(analytics.db, "connect", lambda *args, **kwargs: opened.append(args) or connect(*args, **kwargs))
    prices = ("csv", "model,input,output\ngpt-4o-mini-2024-07-18,1,4\n")
    page = model.compare_page(db, Filters(metadata=(("app_version", "1.0"),)), Filters(metadata=(("app_version", "1.1"),)), prices)
    assert len(opened) == 1
    assert page.costs["conversations_a"].sum() > 0 and page.threads_a > 0
