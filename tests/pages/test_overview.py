"""AppTests of the overview page (pages/overview.py) on the demo database."""

from __future__ import annotations

import json

from datetime import date

import pandas as pd
from streamlit.testing.v1 import AppTest

from analytics import metrics, trends
from analytics.filters import Filters
from analytics.filters import day_window
from tests.pages.conftest import APP, TIMEOUT, metric, open_page
from ui import charts as charts_mod
from ui.models import overview as model


def n(value) -> str:
    return f"{value:,}"


def test_headline_numbers_are_the_analytics_figures(app, con):
    at = open_page(app, "overview")
    h = metrics.overview(con)
    assert metric(at, "Threads") == n(h["threads"])
    assert metric(at, "Messages") == n(h["messages"])
    assert metric(at, "Tenants") == n(h["tenants"])
    assert metric(at, "User turns") == n(h["user_turns"])
    assert metric(at, "Tokens") == n(h["total_tokens"])
    first, last = h["first_ts"], h["last_ts"]
    assert first.year == last.year  # the demo spans one year: it is named once, in the label
    assert metric(at, f"Date range {last.year}") == f"{first:%b} {first.day} → {last:%b} {last.day}"
    assert metric(at, "Tool calls") == n(h["tool_calls"])


def unfold_tables(at) -> None:
    """Unfold every chart's "Table" (drawn only when unfolded), as a click on each would."""
    folds = [f"ov_{p.field}_open" for p in model.TREND_PANELS] + [f"ov_{v[3]}_open" for v in charts_mod.TOP_LISTS.values()]
    for key in folds:
        at.session_state[key] = True
    at.run()
    assert not at.exception


def test_the_tables_are_drawn_when_unfolded(app):
    at = open_page(app, "overview")
    assert len(at.get("echarts_chart")) == len(model.trend_panels("activity")) + 3
    assert not at.dataframe and not at.get("download_button")  # folded: nothing built for the browser
    unfold_tables(at)
    assert len(at.dataframe) == len(model.trend_panels("activity")) + 3


def test_charts_and_top_tables(app, con):
    at = open_page(app, "overview")
    unfold_tables(at)
    shown = len(model.trend_panels("activity"))  # the first trend view
    charts = at.get("echarts_chart")
    assert len(charts) == shown + 3  # its trends, tenants, models, tools
    tables = [d.value for d in at.dataframe]
    assert len(tables) == shown + 3
    # Each chart draws its table: the bars add up to the table's column.
    first = json.loads(charts[0].proto.spec)
    assert sum(v or 0 for series in first["series"] for v in series["data"]) == tables[0]["conversations"].sum()
    tenants_chart = json.loads(charts[shown].proto.spec)
    assert [row[0] for row in tenants_chart["dataset"]["source"]] == tables[shown]["tenant_id"].tolist()
    tenants, models, tools = tables[-3:]
    expected = metrics.top_tools(con, limit=10)
    assert tools["tool"].tolist() == expected["tool"].tolist()
    assert tools["calls"].tolist() == expected["calls"].tolist()
    assert models["model"].tolist() == metrics.top_models(con)["model"].tolist()
    assert tenants["conversations"].tolist() == metrics.top_tenants(con)["conversations"].tolist()
    assert len(at.get("download_button")) == shown + 3


def trend_table(at, field: str) -> pd.DataFrame:
    """The table of trend `field`, switching to its view (AppTest does not expose a dataframe's key,
    so tables are found in page order; every trend draws on the demo)."""
    view = next(v for v in model.TREND_VIEWS if field in model.TREND_VIEWS[v][1])
    if at.radio(key="overview.trend").value != view:
        at.radio(key="overview.trend").set_value(view).run()
        assert not at.exception
    unfold_tables(at)  # (after the switch: a fold not drawn in a run forgets its state)
    return at.dataframe[[p.field for p in model.trend_panels(view)].index(field)].value


def test_bucket_switches_day_week_month_and_lives_in_the_url(app, con):
    at = open_page(app, "overview")
    assert at.radio(key="overview.by").value == model.AUTO  # the demo spans two weeks: days
    days = trend_table(at, "conversations")
    assert days["period"].tolist() == trends.trends(con, by="day").query("messages > 0")["period"].dt.date.tolist()

    at.radio(key="overview.by").set_value("week").run()
    assert not at.exception
    assert dict(at.query_params) == {"by": "week"}
    weeks = trend_table(at, "conversations")
    assert all(p.weekday() == 0 for p in weeks["period"])  # ISO weeks start on Monday
    want = trends.trends(con, by="week")
    assert weeks["conversations"].tolist() == want.query("messages > 0")["conversations"].tolist()
    roles = trend_table(at, "messages_by_role").groupby("period")["messages"].sum()
    assert roles.tolist() == want.query("messages > 0")["messages"].tolist()

    at.radio(key="overview.by").set_value("month").run()
    assert dict(at.query_params) == {"by": "month"}
    assert all(p.day == 1 for p in trend_table(at, "conversations")["period"])
    latency = trend_table(at, "latency")
    assert dict(at.query_params) == {"by": "month", "trend": "latency"}
    month = trends.trends(con, by="month")
    assert latency["reply_latency_p50_s"].tolist() == month["reply_latency_p50_s"].tolist()

    # A shared link opens the same bucket; back to Auto, the URL is clean.
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "overview", by="month", trend="latency")
    assert fresh.radio(key="overview.by").value == "month"
    assert fresh.radio(key="overview.trend").value == "latency"
    assert len(fresh.get("echarts_chart")) == len(model.trend_panels("latency")) + 3
    assert trend_table(fresh, "conversations")["period"].tolist() == trend_table(at, "conversations")["period"].tolist()
    at.radio(key="overview.by").set_value(model.AUTO).run()
    assert dict(at.query_params) == {}
    assert trend_table(at, "conversations")["period"].tolist() == days["period"].tolist()


def test_auto_bucket_follows_the_date_range(app, con):
    at = open_page(app, "overview", **{"from": "2025-03-05", "to": "2025-03-06"})
    assert model.bucket_label(model.AUTO, "day") in at.radio(key="overview.by").options
    since, until = day_window(date(2025, 3, 5), date(2025, 3, 6))
    assert trend_table(at, "conversations")["period"].tolist() == [date(2025, 3, 5), date(2025, 3, 6)]
    assert trend_table(at, "tokens")["input_tokens"].sum() == trends.trends(
        con, Filters(since=since, until=until))["input_tokens"].sum()


def test_tenant_and_day_filters_come_from_the_url(app, con):
    at = open_page(app, "overview", tenant="initech", **{"from": "2025-03-05", "to": "2025-03-12"})
    assert at.multiselect(key="overview.tenant").value == ["initech"]
    since, until = day_window(date(2025, 3, 5), date(2025, 3, 12))
    h = metrics.overview(con, Filters(tenants=("initech",), since=since, until=until))
    everything = metrics.overview(con)
    assert h["messages"] < everything["messages"]
    assert metric(at, "Threads") == n(h["threads"])
    assert metric(at, "Messages") == n(h["messages"])


def test_changing_a_filter_updates_the_url_and_the_link_restores_it(app, con):
    at = open_page(app, "overview")
    at.multiselect(key="overview.tenant").set_value(["acme", "umbrella"]).run()
    at.date_input(key="overview.from").set_value(date(2025, 3, 4)).run()
    at.text_input(key="overview.q").set_value("refund").run()
    assert not at.exception
    params = dict(at.query_params)
    assert params == {"tenant": ["acme", "umbrella"], "from": "2025-03-04", "q": "refund"}
    expected = metrics.overview(con, Filters(tenants=("acme", "umbrella"), since=day_window(date(2025, 3, 4), None)[0],
                                             text="refund"))
    assert metric(at, "Threads") == n(expected["threads"])

    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "overview", **params)
    assert fresh.multiselect(key="overview.tenant").value == ["acme", "umbrella"]
    assert fresh.date_input(key="overview.from").value == date(2025, 3, 4)
    assert fresh.text_input(key="overview.q").value == "refund"
    assert metric(fresh, "Threads") == n(expected["threads"])

    # Back to the defaults: the URL is clean again.
    at.multiselect(key="overview.tenant").set_value([]).run()
    at.date_input(key="overview.from").set_value(None).run()
    at.text_input(key="overview.q").set_value("").run()
    assert dict(at.query_params) == {}


def test_unknown_values_in_a_link_are_ignored(app, con):
    at = open_page(app, "overview", tenant=["acme", "no-such-tenant"], **{"from": "not-a-date"})
    assert not at.exception
    assert at.multiselect(key="overview.tenant").value == ["acme"]
    assert at.date_input(key="overview.from").value is None
    assert metric(at, "Threads") == n(metrics.overview(con, Filters(tenants=("acme",)))["threads"])


def test_the_sub_tenant_choices_are_the_chosen_tenants_own(app, con):
    own = {r[0] for r in con.execute("SELECT DISTINCT sub_tenant_id FROM threads WHERE tenant_id = 'acme'").fetchall()}
    every = {r[0] or "(no sub-tenant)" for r in con.execute("SELECT DISTINCT sub_tenant_id FROM threads").fetchall()}
    assert own < every  # (the demo has other tenants' sub-tenants to leave out)
    at = open_page(app, "overview", tenant="acme")
    assert set(at.multiselect(key="overview.sub").options) == own
    at.multiselect(key="overview.tenant").set_value([]).run()
    assert set(at.multiselect(key="overview.sub").options) == every


def test_the_first_render_draws_no_code_block(app):
    """A code block anywhere on the page (the sidebar included, folded or not) makes the browser load
    and compile Streamlit's syntax highlighter (1.5 MB of JavaScript) before the page is drawn."""
    at = open_page(app, "overview")
    assert not at.code, [c.value for c in at.code]
