"""Every chart of the app as a plotly figure (lens_notebook.figures), series for series the app's."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest

import analytics
import lens_notebook as lens
from analytics.filters import Filters
from ui import charts
from ui.models.overview import TREND_PANELS, overview_page
from ui.models.conversations import conversations_page

ROOT = Path(__file__).resolve().parents[2]
THREAD = "acme:mobile:sess-3003"  # an interrupt, a resume, a tool call (demo/README.md)
#: The chart builders the pages call, each of which the notebook module turns into a figure.
COVERED = {"trend", "top_list", "conversations_chart", "resume_timeline", "branch_tree", "outcome_trend", "period_trend",
           "compare_chart"}
#: What the app calls on ui.charts that builds no chart (a drawn chart's height).
NOT_CHARTS = {"height"}


def _chart_calls(path: Path) -> set[str]:
    """Names called on `charts` (or imported from it) in a module."""
    tree = ast.parse(path.read_text())
    called = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and isinstance(n.func.value, ast.Name) and n.func.value.id == "charts"}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "ui.charts" for a in n.names if not a.name.isupper()}
    return (called | imported) - NOT_CHARTS


def test_every_chart_a_page_draws_is_one_the_notebook_makes():
    used = set().union(*(_chart_calls(p) for p in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]))
    assert used and used <= COVERED, (
        f"pages draw {sorted(used - COVERED)}: give each page chart a named builder in ui.charts (as "
        "conversations_chart) and its figure in lens_notebook.figures, then add it to COVERED")


def test_the_overview_has_a_figure_per_trend_and_top_list(demo_db):
    figures = lens.overview(demo_db, by="week")
    assert set(figures) == {p.field for p in TREND_PANELS} | set(charts.TOP_LISTS)
    assert all(isinstance(f, go.Figure) and f.data for f in figures.values())
    assert figures["messages_by_role"].layout.title.text == "Messages by role"


@pytest.mark.parametrize("by", ["day", "week", "month"])
def test_each_trend_figure_holds_the_app_chart_series(demo_db, by):
    page = overview_page(demo_db, by=by)
    figures = lens.overview_figures(page)
    for p in TREND_PANELS:
        option = charts.trend(p.field, getattr(page, p.field), by)
        fig = figures[p.field]
        assert [t.name for t in fig.data] == [s["name"] for s in option["series"]], p.field
        for trace, series in zip(fig.data, option["series"]):
            assert list(trace.x) == option["xAxis"]["data"] and list(trace.y) == series["data"], p.field
        kinds = {s["type"] for s in option["series"]}
        assert {t.type for t in fig.data} == {"scatter" if k == "line" else k for k in kinds}
        stacked = any(s.get("stack") for s in option["series"])
        assert fig.layout.barmode == ("stack" if stacked else "group")
        assert fig.layout.xaxis.title.text == option["xAxis"]["name"]


def test_the_top_lists_rank_top_down_with_every_column_on_hover(demo_db):
    page = overview_page(demo_db)
    fig = lens.overview_figures(page)["top_tools"]
    (bar,) = fig.data
    assert bar.orientation == "h" and fig.layout.yaxis.autorange == "reversed"
    assert list(bar.y) == page.top_tools["tool"].tolist() and list(bar.x) == page.top_tools["calls"].tolist()
    assert all(c in bar.hovertemplate for c in page.top_tools.columns)


def test_the_conversations_figures(demo_db):
    page = conversations_page(demo_db)
    figures = lens.conversations_figures(page)
    assert set(figures) == set(charts.CONVERSATION_CHARTS)
    latency = figures["latency"]
    assert latency.layout.bargap == 0 and latency.layout.barmode == "stack"  # a histogram: bins side by side
    assert sum(v or 0 for t in latency.data for v in t.y) == page.latency["pairs"].sum()
    turns = figures["turns"]
    assert turns.layout.xaxis.type == "category"
    assert sum(turns.data[0].y) == page.turns["threads"].sum()
    assert {t.name for t in figures["activity"].data} == {"active conversations", "messages", "user messages"}


def test_an_empty_chart_has_no_figure(demo_db):
    from analytics.filters import Filters

    assert lens.overview(demo_db, Filters(tenants=("no-such-tenant",))) == {}


def test_the_branch_tree_and_the_resume_timeline(demo_db):
    tree = lens.branch_tree((demo_db, THREAD))
    rows = analytics.checkpoint_tree(demo_db, THREAD)
    lanes = [f"branch {b} · " + ("current" if b == 1 else "abandoned") for b in sorted(rows["branch"].unique())]
    points = [t for t in tree.data if t.mode == "markers"]
    assert sorted(x for t in points for x in t.x) == sorted(rows["position"] + 1)  # each checkpoint once, counted from 1 as the chart counts
    assert {y for t in points for y in t.y} == set(lanes) and list(tree.layout.yaxis.categoryarray) == lanes
    timeline = lens.resume_timeline((demo_db, THREAD))
    assert sum(len(t.x) for t in timeline.data) > 0
    assert any(s.type == "rect" for s in timeline.layout.shapes)  # the resume point shaded


def test_the_notebook_module_needs_no_streamlit():
    code = "import sys, lens_notebook; print('streamlit' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_outcome_topic_pattern_and_compare_pages_have_their_figures(demo_db):
    assert [t.name for t in lens.outcomes(demo_db, by="week")["trend"].data]  # one trace per outcome
    assert lens.topics(demo_db)["trend"].data
    a, b = Filters(tenants=("acme",)), Filters(tenants=("globex",))
    figures = lens.compare(demo_db, a, b)
    assert set(figures) == set(charts.COMPARE_CHARTS) and all(f.data for f in figures.values())
    for f in figures.values():  # each bar with its 95 % interval, as the app's error bars
        (bars,) = f.data
        assert bars.error_x.array is not None and any(v is not None for v in bars.error_x.array)
