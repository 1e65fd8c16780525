"""`ui.models.overview`: the overview's trend frames are the `analytics.trends` rows, reshaped;
the bucket is chosen from the filter bar's range."""

from __future__ import annotations

import json

from datetime import date

import pandas as pd
import pytest

from analytics import trends
from analytics.contents import Facets
from analytics.filters import Filters, day_window
from ui import charts
from ui.models import overview as model


@pytest.mark.parametrize("by", trends.BUCKETS)
def test_trend_frames_are_the_trend_rows(con, by):
    page = model.overview_page(con, by=by)
    rows = trends.trends(con, by=by)
    periods = rows["period"].dt.date
    assert page.by == by
    active = rows["messages"] > 0
    assert page.conversations["period"].tolist() == periods[active].tolist()
    assert page.conversations["conversations"].tolist() == rows.loc[active, "conversations"].tolist()
    by_role = page.messages_by_role.groupby("period")["messages"].sum()
    assert by_role.tolist() == rows.loc[active, "messages"].tolist()
    assert page.tokens["input_tokens"].sum() == rows["input_tokens"].sum()
    assert page.latency["reply_latency_p90_s"].tolist() == rows.loc[rows["latency_pairs"] > 0,
                                                                    "reply_latency_p90_s"].tolist()
    assert page.problems["tool_errors"].sum() == rows["tool_errors"].sum()
    assert page.problems["interrupts"].sum() == rows["interrupts"].sum()
    # Calls per period: every call of the trend rows, whatever tools the chart keeps apart.
    calls = page.tool_calls.groupby("period")["calls"].sum()
    want = rows[rows["tool_calls"] > 0].set_index(periods[rows["tool_calls"] > 0])["tool_calls"]
    assert calls.to_dict() == want.to_dict()
    assert page.model_mix["messages"].sum() == trends.model_mix(con, by=by)["messages"].sum()
    for panel in model.TREND_PANELS:  # every panel has a frame and draws
        frame = getattr(page, panel.field)
        assert isinstance(frame, pd.DataFrame) and len(frame)
        option = charts.trend(panel.field, frame, by)
        assert option["series"] and json.loads(json.dumps(option)) == option  # JSON as st.echarts_chart takes it
        assert option["xAxis"]["data"] == [charts.period_label(p, by) for p in sorted(frame["period"].unique())]


def test_tools_beyond_the_top_are_summed_as_other():
    calls = pd.DataFrame({
        "period": [date(2025, 3, 3)] * 4 + [date(2025, 3, 10)],
        "tool": ["a", "b", "c", "d", "d"],
        "calls": [5, 4, 1, 1, 2],
        "errors": [0, 1, 1, 0, 1],
    })
    kept = model._top_tools_only(calls, keep=2)
    assert set(kept["tool"]) == {"a", "b", model.OTHER_TOOLS}
    other = kept[kept["tool"] == model.OTHER_TOOLS].set_index("period")
    assert other["calls"].to_dict() == {date(2025, 3, 3): 2, date(2025, 3, 10): 2}
    assert other["errors"].to_dict() == {date(2025, 3, 3): 1, date(2025, 3, 10): 1}
    assert kept["calls"].sum() == calls["calls"].sum()


def test_auto_bucket_comes_from_the_filter_range():
    facets = Facets((), (), date(2025, 1, 1), date(2025, 12, 31), 10)
    assert model.resolve_bucket(model.AUTO, facets, Filters()) == "week"
    assert model.resolve_bucket("day", facets, Filters()) == "day"
    since, until = day_window(date(2025, 3, 1), date(2025, 3, 31))
    assert model.resolve_bucket(model.AUTO, facets, Filters(since=since, until=until)) == "day"
    # A window wider than the data counts only the data's days.
    since, until = day_window(date(2020, 1, 1), date(2025, 1, 20))
    assert model.bucket_range(facets, Filters(since=since, until=until)) == (date(2025, 1, 1), date(2025, 1, 20))
    wide = Facets((), (), date(2023, 1, 1), date(2025, 1, 1), 10)
    assert model.resolve_bucket(model.AUTO, wide, Filters()) == "month"


def test_period_labels_name_the_period_and_its_year():
    assert charts.period_label(date(2025, 3, 3), "day") == "Mar 3, 2025"
    assert charts.period_label(date(2025, 3, 3), "week") == "wk of Mar 3, 2025"  # a Monday
    assert charts.period_label(date(2024, 12, 1), "month") == "Dec 2024"
