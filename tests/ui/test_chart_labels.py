"""Chart axes as people read them: days as days, whole-number ticks for counts, bins told apart."""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as hs

from ui import charts
from ui.models.conversations import conversations_page

ISO = re.compile(r"\d{4}-\d{2}-\d{2}T")


def test_the_activity_axis_names_days_and_counts_in_whole_numbers(loaded):
    page = conversations_page(loaded)
    option = charts.lines(page.activity, "day", ["active_conversations", "messages", "user_messages"])
    days = option["xAxis"]["data"]
    assert days and not any(ISO.match(str(d)) for d in days)
    assert days == [charts.period_label(d, "day") for d in page.activity["day"]]
    assert option["yAxis"]["minInterval"] == 1  # never a tick at 0.5 conversations
    turns = charts.bars(page.turns, "user_turns", "threads", xlabel="user turns")
    assert turns["yAxis"]["minInterval"] == 1


def test_seconds_are_not_counts_and_narrow_bins_keep_their_decimals():
    latency = pd.DataFrame({"period": ["a", "b"], "seconds": [0.5, 1.25]})
    assert "minInterval" not in charts.lines(latency, "period", ["seconds"])["yAxis"]
    binned = pd.DataFrame({"bin_start": [1.0, 1.02, 1.04], "bin_end": [1.02, 1.04, 1.06], "model": "m",
                           "pairs": [3, 1, 2]})
    names = charts.histogram_bars(binned, "model", "seconds")["xAxis"]["data"]
    assert len(set(names)) == 3 and names[0] == "1.00–1.02"


def test_the_resume_timeline_legend_and_axes_have_human_names(con):
    from ui.models import resume_qa

    thread = con.execute("SELECT thread_id FROM threads ORDER BY thread_id LIMIT 1").fetchone()[0]
    qa = resume_qa.thread_qa(con, thread)
    option = charts.resume_timeline(qa.timeline, qa.markers)
    assert option["title"]["text"] == "Branch · source"  # the legend's name, not the column names `branch, source`
    assert all(" · " in name for name in option["legend"]["data"])
    assert "_" not in option["xAxis"]["name"] and "_" not in option["yAxis"]["name"]
    assert option["xAxis"]["type"] == "time" and option["useUTC"] is True  # UTC, as its name says, in any browser


def test_a_trend_of_topics_or_patterns_lists_every_label_as_written_below_the_chart():
    labels = ["run_tests: RuntimeError: pytest exited with code <n>", "lookup_order: ValueError: Order <id> not found",
              "0 · order, week, refund"]
    frame = pd.DataFrame({"period_start": ["2025-03-03", "2025-03-10"], **{label: [1, 2] for label in labels}})
    option = charts.period_trend(frame)
    assert [s["name"] for s in option["series"]] == labels  # data, not column names: underscores kept
    legend = option["legend"]
    assert legend["type"] != "scroll" and legend["orient"] == "vertical"  # every entry shown, none paged away
    # the chart grows by a legend row per label, so the plot keeps its height
    assert charts.height(option) - charts.HEIGHT == charts.LEGEND_ROW * len(labels)
    assert option["grid"]["bottom"] >= charts.LEGEND_ROW * len(labels)


def test_a_last_period_the_data_stops_inside_says_where_it_stops():
    weeks = pd.DataFrame({"period": [pd.Timestamp("2025-03-03").date(), pd.Timestamp("2025-03-10").date()],
                          "outcome": "resolved", "threads": [5, 1]})
    axis = charts.outcome_trend(weeks, "week", through=pd.Timestamp("2025-03-12").date())["xAxis"]["data"]
    assert axis == ["wk of Mar 3, 2025", "wk of Mar 10, 2025 (to Mar 12)"]  # the low bar: three days, not a drop
    assert charts.outcome_trend(weeks, "week", through=pd.Timestamp("2025-03-16").date())["xAxis"]["data"][-1] == \
        "wk of Mar 10, 2025"  # a whole week
    months = charts.period_label(pd.Timestamp("2025-02-01").date(), "month", pd.Timestamp("2025-02-27").date())
    assert months == "Feb 2025 (to Feb 27)"
    days = pd.DataFrame({"period_start": ["2025-03-03", "2025-03-10"], "ship": [1, 2]})
    assert charts.period_trend(days, by="week", through=pd.Timestamp("2025-03-11").date())["xAxis"]["data"][-1] == \
        "wk of Mar 10, 2025 (to Mar 11)"


def test_latency_bins_at_equal_ratios_are_each_a_bar_and_every_pair_is_counted():
    from ui.models.conversations import latency_histogram

    # Most replies within a second, a few over a minute: the model cuts bins at equal ratios.
    latency = pd.Series([0.9 + 0.001 * i for i in range(477)] + [2.0] * 30 + [65.0 + i for i in range(10)])
    binned = latency_histogram(latency, pd.Series(["m"] * len(latency)))
    option = charts.histogram_bars(binned, "model", "seconds")
    (series,) = option["series"]
    assert sum(v or 0 for v in series["data"]) == len(latency)  # bars that land on one grid bin add up
    assert [v for v in series["data"] if v] == binned["pairs"].tolist()  # each bin its own bar, in order
    names = option["xAxis"]["data"]
    assert len(names) == len(set(names)) == len(series["data"])
    assert names[0].startswith("0.9–") and names[-1].endswith(f"{latency.max():.1f}")


def test_the_last_day_on_an_axis_has_room_for_its_whole_label():
    # ECharts centres a category's label under its bar: the last one reaches half its width past the
    # plot area, which the grid's right margin must hold (at ECharts' 12 px axis font, under 6 px a character).
    days = pd.date_range("2026-09-01", "2026-10-16", freq="D")
    option = charts.bars(pd.DataFrame({"day": days, "conversations": 1}), "day", "conversations")
    widest = max(len(str(name)) for name in option["xAxis"]["data"])
    assert widest == len("Oct 16, 2026") and option["grid"]["right"] >= widest * 6 / 2


def test_a_period_without_rows_keeps_its_place_on_a_trend_axis():
    """Outcomes over time, a topic's weeks, a latency trend: a quiet period is an empty slot (bars),
    a zero (counted lines) or a gap (a measure), never dropped from the axis (which would draw two
    days apart as one)."""
    from datetime import date

    days = [date(2025, 3, 3), date(2025, 3, 3), date(2025, 3, 6)]
    shares = pd.DataFrame({"period": days, "outcome": ["resolved", "failed", "resolved"], "threads": [2, 1, 1],
                           "share": [0.67, 0.33, 1.0]})
    option = charts.outcome_trend(shares, "day")
    assert option["xAxis"]["data"] == ["Mar 3, 2025", "Mar 4, 2025", "Mar 5, 2025", "Mar 6, 2025"]
    resolved = next(s for s in option["series"] if s["name"] == "resolved")
    assert resolved["data"] == [2, None, None, 1]

    weeks = pd.DataFrame({"period_start": [date(2025, 3, 3), date(2025, 3, 17)], "refunds": [4, 1]})
    topic = charts.period_trend(weeks, by="week")
    assert len(topic["xAxis"]["data"]) == 3 and topic["series"][0]["data"] == [4, 0, 1]

    latency = pd.DataFrame({"period": [date(2025, 3, 1), date(2025, 5, 1)], "reply_latency_p50_s": [1.5, 2.5],
                            "reply_latency_p90_s": [3.0, 4.0]})
    trend = charts.trend("latency", latency, "month")
    assert trend["xAxis"]["data"] == ["Mar 2025", "Apr 2025", "May 2025"]
    assert trend["series"][0]["data"] == [1.5, None, 2.5]  # no measure that month: a gap, not 0 s


LONG_MODELS = ["claude-3-5-sonnet-20241022", "gpt-4o-mini-2024-07-18", "a-very-long-model-name-2024-07-18-preview"]


def _fits(name: str, drawn: str) -> bool:
    """`drawn` (an axis label) is `name` whole, on lines each within the axis's label width."""
    lines = drawn.split("\n")
    return "".join(drawn.split()) == "".join(name.split()) and all(
        len(line) <= charts.LABEL_LINE for line in lines)


def test_a_top_list_names_what_it_counts_and_draws_long_names_whole_on_lines():
    frame = pd.DataFrame({"model": LONG_MODELS, "messages": [40, 12, 3]})
    option = charts.top_list("top_models", frame)
    assert option["xAxis"]["name"] == "messages"
    dims = option["dataset"]["dimensions"]
    (series,) = option["series"]
    drawn = [row[dims.index(series["encode"]["y"])] for row in option["dataset"]["source"]]
    assert all(_fits(name, label) for name, label in zip(LONG_MODELS, drawn)), drawn
    assert series["encode"]["itemName"] == "model"  # the tooltip names the model whole
    assert option["yAxis"]["axisLabel"]["width"] == charts.LABEL_PX and option["yAxis"]["axisLabel"]["interval"] == 0


def test_every_bar_chart_of_names_draws_each_name_whole():
    """Tokens by model (names under bars), the Compare page's differences (names beside them): no
    name skipped for room, none cut."""
    tokens = pd.DataFrame({"model": LONG_MODELS * 2, "kind": ["input"] * 3 + ["output"] * 3, "tokens": [5, 4, 3, 2, 1, 1]})
    option = charts.conversations_chart("tokens_by_model", tokens)
    assert all(_fits(n, d) for n, d in zip(LONG_MODELS, option["xAxis"]["data"])), option["xAxis"]["data"]
    assert option["xAxis"]["axisLabel"]["interval"] == 0
    rows = pd.DataFrame({"marked": ["Share of conversations with a tool error ✔", "Abandoned"],
                         "difference_pp": [3.0, -1.0], "low": [1.0, -2.0], "high": [5.0, 0.5],
                         "ci95": ["+1.0 to +5.0 pp", "−2.0 to +0.5 pp"], "q": [0.01, 0.5]})
    compare = charts.compare_chart("shares", rows)
    dims = compare["dataset"]["dimensions"]
    drawn = [r[dims.index(compare["series"][0]["encode"]["y"])] for r in compare["dataset"]["source"]]
    assert all(_fits(n, d) for n, d in zip(rows["marked"], drawn)), drawn
    assert compare["yAxis"]["data"] == drawn  # the interval whiskers sit on the bars' rows
    days = charts.bars(pd.DataFrame({"day": pd.to_datetime(["2025-03-03"]), "n": [1]}), "day", "n")
    assert days["xAxis"]["data"] == ["Mar 3, 2025"]  # a period's name stays on one line


@settings(max_examples=300)
@given(hs.text(alphabet=hs.sampled_from("ab-_:/. ✔"), max_size=60), hs.integers(min_value=1, max_value=20))
def test_a_wrapped_name_is_the_name_on_lines_within_the_width(name, width):
    """Any name ends wrapped (a line filled to the width before a space once never ended), keeps
    every character but the spaces at its breaks, and no line is longer than the width."""
    drawn = charts.wrap_label(name, width)
    assert "".join(drawn.split()) == "".join(name.split())
    assert all(len(line) <= width for line in drawn.split("\n"))
