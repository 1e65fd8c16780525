"""AppTests of the Compare page (pages/compare.py) on the labelled set (two app versions in checkpoint metadata)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from analytics.cohorts.compare import compare_cohorts
from analytics.filters import Filters
from tests.analytics.cohorts.conftest import labelled_db  # noqa: F401  (the fixture)
from tests.pages.conftest import metric, open_page
from ui.models import compare as model

V10, V11 = Filters(metadata=(("app_version", "1.0"),)), Filters(metadata=(("app_version", "1.1"),))


@pytest.fixture()
def labelled_app(labelled_db, tmp_path, monkeypatch):
    """The app on the labelled database (a private cache folder: nothing shared with a user's app)."""
    from streamlit.testing.v1 import AppTest

    from tests.pages.conftest import APP, TIMEOUT

    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(labelled_db[0]))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path))
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def test_a_first_visit_compares_the_two_app_versions(labelled_app, labelled_db):
    db, labels = labelled_db
    at = open_page(labelled_app, "compare")
    assert at.multiselect(key="compare.a_meta").value == ["app_version = 1.0"]
    assert at.multiselect(key="compare.b_meta").value == ["app_version = 1.1"]
    n10 = sum(1 for r in labels["threads"].values() if r["app_version"] == "1.0")
    assert metric(at, "Threads in A") == str(n10) and metric(at, "In both") == "0"
    assert any("**A**: app_version = 1.0" in m.value and "**B**: app_version = 1.1" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    want = compare_cohorts(db, V10, V11)
    assert table["figure"].tolist() == [model.figure(*r) for r in want[["kind", "name", "label"]].itertuples(index=False)]
    assert any(d.label == "Download every row (CSV)" for d in at.get("download_button"))


def test_cohorts_live_in_the_url_and_marked_rows_only(labelled_app, labelled_db):
    db, labels = labelled_db
    failed = sorted(t for t, r in labels["threads"].items() if r["outcome"] == "failed")
    tenant = failed[0].split(":")[0]
    at = open_page(labelled_app, "compare", a_meta="app_version = 1.0", b_meta="app_version = 1.0", b_tenant=tenant)
    assert at.multiselect(key="compare.b_tenant").value == [tenant]
    assert at.query_params["b_tenant"] == tenant
    at.checkbox(key="compare.marked").check().run()
    assert not at.exception
    shown = at.dataframe[0].value if at.dataframe else pd.DataFrame({"significant": []})
    assert (shown["significant"] == "✔").all()
    assert at.query_params["marked"] == "1"


def test_the_same_cohorts_say_so(labelled_app):
    at = open_page(labelled_app, "compare", a_meta="app_version = 1.1", b_meta="app_version = 1.1")
    assert any("same threads" in i.value for i in at.info) and not at.dataframe


def test_a_price_path_outside_the_source_roots_is_refused(labelled_app, tmp_path, monkeypatch):
    inside, outside = tmp_path / "roots", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    for folder in (inside, outside):
        (folder / "prices.toml").write_text('[models."gpt-4o-mini-2024-07-18"]\ninput = 1\noutput = 2\n', encoding="utf-8")
    monkeypatch.setenv("TRANSCRIPT_LENS_SOURCE_ROOTS", str(inside))
    at = open_page(labelled_app, "compare")
    at.text_input(key="compare.prices_path").input(str(outside / "prices.toml")).run()
    assert any("outside the folders" in e.value for e in at.error)
    assert "Cost per conversation" not in at.dataframe[0].value["figure"].tolist()
    at.text_input(key="compare.prices_path").input(str(inside / "prices.toml")).run()
    assert not at.error
    assert "Cost per conversation" in at.dataframe[0].value["figure"].tolist()
    by_outcome = at.dataframe[-1].value  # the cost by outcome, beneath the comparison
    assert by_outcome["cost_a"].sum() > 0 and (by_outcome["unpriced_tokens_a"] == 0).all()


def test_a_read_only_server_reads_no_price_path(labelled_app, tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-4o-mini-2024-07-18"]\ninput = 1\noutput = 2\n', encoding="utf-8")
    monkeypatch.setenv("TRANSCRIPT_LENS_READ_ONLY", "1")
    at = open_page(labelled_app, "compare")
    at.text_input(key="compare.prices_path").input(str(prices)).run()
    assert any("read-only" in e.value for e in at.error)
    assert "Cost per conversation" not in at.dataframe[0].value["figure"].tolist()


def test_on_a_store_without_a_version_key_a_first_visit_compares_two_models(app, con):
    """The demo's checkpoints carry no cohort metadata: the page opens on its two models, not a prompt."""
    models = [r[0] for r in con.execute(
        "SELECT DISTINCT model FROM thread_model_metrics WHERE model IS NOT NULL ORDER BY 1").fetchall()]
    assert len(models) >= 2
    at = open_page(app, "compare")
    assert at.multiselect(key="compare.a_model").value == [models[0]]
    assert at.multiselect(key="compare.b_model").value == [models[1]]
    assert not any("same threads" in i.value for i in at.info)
    want = compare_cohorts(con, Filters(models=(models[0],)), Filters(models=(models[1],)))
    assert at.dataframe[0].value["figure"].tolist() == [model.figure(*r) for r in want[["kind", "name", "label"]].itertuples(index=False)]


def test_a_signal_row_lists_each_cohorts_conversations_with_it(labelled_app, labelled_db):
    """The link under a selected signal row opens Conversations on exactly that cohort's threads with the signal."""
    from urllib.parse import parse_qs

    db, _ = labelled_db
    at = open_page(labelled_app, "compare")
    frame = compare_cohorts(db, V10, V11)
    row = next(i for i, r in enumerate(frame.itertuples()) if r.kind == "signal" and r.count_b)
    at.session_state["compare.table"] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    assert not at.exception
    links = [p.proto for p in at.get("page_link") if "cohort B" in p.proto.label]
    want = int(frame["count_b"].iloc[row])
    shown = model.figure("signal", frame["name"].iloc[row], frame["label"].iloc[row])
    assert len(links) == 1 and f"{want:,} conversations · {shown}" in links[0].label
    params = parse_qs(links[0].query_string)
    assert params["meta"] == ["app_version = 1.1"] and params["signal"] == [frame["name"].iloc[row]]
    listed = open_page(labelled_app, "conversations", **{k: v if len(v) > 1 else v[0] for k, v in params.items()})
    assert not listed.exception
    assert any(f"of {want:,} threads" in c.value for c in listed.caption)


def test_a_cleared_model_stays_cleared_away_and_back_in_a_shared_link_and_a_saved_view(app, demo_db, tmp_path, monkeypatch):
    """The demo's first visit compares its two models; a model filter the user clears stays cleared
    when they come back through the navigation, open the share link or the saved view."""
    from urllib.parse import parse_qs, urlsplit

    from analytics import workspace as ws_api
    from tests.pages.test_navigation import follow

    store = shutil.copyfile(demo_db, tmp_path / "lens.duckdb")  # a copy: the saved view goes to its own workspace
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(store))
    at = open_page(app, "compare")
    second = at.multiselect(key="compare.b_model").value
    at.multiselect(key="compare.a_model").set_value([]).run()
    assert not at.exception and at.query_params["a_model"] == ""
    follow(at, "Overview", "overview")
    follow(at, "Compare", "compare")
    assert at.multiselect(key="compare.a_model").value == []
    assert at.multiselect(key="compare.b_model").value == second

    shared = next(t.value for t in at.text_input if t.label.startswith("Link to this view"))
    params = parse_qs(urlsplit(shared).query, keep_blank_values=True)
    assert params["a_model"] == [""]
    fresh = open_page(app, "compare", **{k: v[0] for k, v in params.items()})
    assert fresh.multiselect(key="compare.a_model").value == []
    assert fresh.multiselect(key="compare.b_model").value == second

    at.text_input(key="views.name").set_value("any model against B").run()
    at.button(key="views.save").click().run()
    (view,) = ws_api.saved_views(store)
    assert view.params["a_model"] == [""]
    again = open_page(app, "compare", **{k: v[0] for k, v in view.params.items()})
    assert again.multiselect(key="compare.a_model").value == []


def test_a_link_without_the_model_param_opens_the_default_pair(app, con):
    models = [r[0] for r in con.execute(
        "SELECT DISTINCT model FROM thread_model_metrics WHERE model IS NOT NULL ORDER BY 1").fetchall()]
    at = open_page(app, "compare", b_tenant="acme")
    assert at.multiselect(key="compare.a_model").value == [models[0]]
    assert "a_model" not in at.query_params


def test_overlapping_cohorts_are_warned_on_the_page_and_the_deciding_columns_show(labelled_app, labelled_db):
    db, labels = labelled_db
    tenant = sorted(labels["threads"])[0].split(":")[0]
    at = open_page(labelled_app, "compare", a_meta="app_version = 1.0", b_meta="app_version = 1.0", b_tenant=tenant)
    both = int(metric(at, "In both"))
    assert both > 0
    assert [w.value for w in at.warning if "in both cohorts" in w.value] == [
        f"{both} threads are in both cohorts. The tests assume two separate samples: read their p and q values "
        "as approximate."]
    order = list(at.dataframe[0].proto.column_order) or list(at.dataframe[0].value.columns)
    assert {"difference", "ci95", "significant"} <= set(order)
    at = open_page(labelled_app, "compare")  # two versions: no thread in both, no warning
    assert metric(at, "In both") == "0" and not [w for w in at.warning if "in both cohorts" in w.value]


def test_a_price_table_nested_too_deep_is_refused_on_the_page(labelled_app, tmp_path, monkeypatch):
    """A 4 KB price table nested 2,000 deep: the page names the refusal, the comparison stands."""
    root = tmp_path / "roots"
    root.mkdir()
    deep = root / "prices.toml"
    deep.write_text('[models."gpt-4o-mini-2024-07-18"]\ninput = ' + "[" * 2000 + "]" * 2000 + "\n", encoding="utf-8")
    monkeypatch.setenv("TRANSCRIPT_LENS_SOURCE_ROOTS", str(root))
    at = open_page(labelled_app, "compare")
    at.text_input(key="compare.prices_path").input(str(deep)).run()
    assert not at.exception
    assert any("nested deeper than 200 levels (at line 2" in e.value for e in at.error)
    assert "Cost per conversation" not in at.dataframe[0].value["figure"].tolist()
