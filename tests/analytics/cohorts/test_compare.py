"""`compare_cohorts` on a real loaded store: cohorts by checkpoint metadata and model, every figure's
counts and means against values computed here from the labels and the per-thread tables, the
intervals and tests those counts give, topics when the database has them."""

from __future__ import annotations

import math

import pytest

import analytics
from analytics.cohorts import stats
from analytics.cohorts.cohorts import MEANS
from analytics.cohorts.compare import COLUMNS, compare_cohorts
from analytics.filters import Filters
from analytics.conversation_outcomes.signals import OUTCOMES, SIGNALS
from tests.analytics.conftest import edited_copy

V10, V11 = Filters(metadata=(("app_version", "1.0"),)), Filters(metadata=(("app_version", "1.1"),))


def _version(labels, version):
    return sorted(t for t, row in labels["threads"].items() if row["app_version"] == version)


def test_metadata_filter_keeps_the_threads_of_that_app_version(labelled_db):
    db, labels = labelled_db
    for version, filters in (("1.0", V10), ("1.1", V11)):
        got = analytics.conversations(db, filters)["thread_id"].tolist()
        assert sorted(got) == _version(labels, version) and got
    assert analytics.conversations(db, Filters(metadata=(("app_version", "9.9"),))).empty
    assert analytics.conversations(db, Filters(metadata=(("no_such_key", "1.0"),))).empty


def test_model_filter_keeps_threads_naming_the_model(labelled_db):
    db, _ = labelled_db
    con = analytics.connect(db)
    named = {r[0] for r in con.execute("SELECT DISTINCT thread_id FROM messages WHERE model = 'gpt-4o-mini-2024-07-18'").fetchall()}
    everyone = {r[0] for r in con.execute("SELECT thread_id FROM threads").fetchall()}
    con.close()
    assert named and named != everyone
    assert set(analytics.conversations(db, Filters(models=("gpt-4o-mini-2024-07-18",)))["thread_id"]) == named
    assert analytics.conversations(db, Filters(models=("other-model",))).empty


def test_every_signal_and_outcome_row_counts_each_cohorts_threads(labelled_db):
    db, labels = labelled_db
    rows = analytics.compare_cohorts(db, V10, V11)
    assert tuple(rows.columns) == COLUMNS
    assert rows.attrs["threads_a"] == len(_version(labels, "1.0")) and rows.attrs["overlap"] == 0
    per_thread = analytics.outcomes(db).set_index("thread_id")
    for kind, names in (("signal", SIGNALS), ("outcome", OUTCOMES)):
        for name in names:
            row = rows[(rows["kind"] == kind) & (rows["name"] == name)].iloc[0]
            flags = per_thread[name] if kind == "signal" else per_thread["outcome"] == name
            k_a = int(flags[_version(labels, "1.0")].sum())
            k_b = int(flags[_version(labels, "1.1")].sum())
            n_a, n_b = len(_version(labels, "1.0")), len(_version(labels, "1.1"))
            assert (row.count_a, row.count_b, row.n_a, row.n_b) == (k_a, k_b, n_a, n_b), name
            assert row.difference == pytest.approx(k_b / n_b - k_a / n_a)
            assert (row.ci_low, row.ci_high) == pytest.approx(stats.newcombe(k_a, n_a, k_b, n_b), nan_ok=True)
            assert row.p_value == pytest.approx(stats.proportion_test(k_a, n_a, k_b, n_b)[0])


def test_means_are_over_the_known_values_of_each_cohort(labelled_db):
    db, labels = labelled_db
    rows = analytics.compare_cohorts(db, V10, V11).set_index("name")
    metrics = analytics.conversations(db).set_index("thread_id")
    for name in MEANS:
        a = metrics.loc[_version(labels, "1.0"), name].dropna().astype(float)
        b = metrics.loc[_version(labels, "1.1"), name].dropna().astype(float)
        row = rows.loc[name]
        assert (row.n_a, row.n_b) == (len(a), len(b)), name
        assert (row.value_a, row.value_b) == pytest.approx((a.mean(), b.mean())), name
        low, high, p = stats.welch(a.mean(), a.var(ddof=1), len(a), b.mean(), b.var(ddof=1), len(b))
        assert (row.ci_low, row.ci_high, row.p_value) == pytest.approx((low, high, p), nan_ok=True), name
        assert row.p_rank == pytest.approx(stats.mann_whitney(list(a), list(b)), nan_ok=True), name


def test_a_real_difference_is_significant_and_q_is_benjamini_hochberg(labelled_db):
    db, labels = labelled_db
    resolved = tuple(t for t, r in labels["threads"].items() if r["outcome"] == "resolved")
    failed = tuple(t for t, r in labels["threads"].items() if r["outcome"] == "failed")
    rows = analytics.compare_cohorts(db, Filters(thread_ids=resolved), Filters(thread_ids=failed))
    share = rows[(rows["kind"] == "outcome") & (rows["name"] == "failed")].iloc[0]
    assert share.value_b > share.value_a and share.significant
    assert share.ci_low > 0
    assert rows["q_value"].tolist() == pytest.approx(stats.benjamini_hochberg(rows["p_value"].tolist()), nan_ok=True)
    assert rows["significant"].tolist() == [bool(q < 0.05) for q in rows["q_value"]]
    # the same cohorts: nothing differs
    same = analytics.compare_cohorts(db, V10, V10)
    assert not same["significant"].any() and same.attrs["overlap"] == same.attrs["threads_a"]


def test_comparison_is_deterministic(labelled_db):
    db, _ = labelled_db
    first = analytics.compare_cohorts(db, V10, V11)
    assert first.equals(analytics.compare_cohorts(db, V10, V11))


def test_topic_shares_when_the_database_has_topics(labelled_db, tmp_path):
    db, labels = labelled_db
    bare = edited_copy(db, tmp_path / "bare.duckdb", "DROP TABLE conversation_topics", "DROP TABLE topics")
    assert "topic" not in set(analytics.compare_cohorts(bare, V10, V11)["kind"])
    values = ", ".join(f"('{t}', {i % 3}, '{r['topic']}')" for i, (t, r) in enumerate(sorted(labels["threads"].items())))
    with_topics = edited_copy(db, tmp_path / "topics.duckdb", "DROP TABLE conversation_topics",
                              "CREATE TABLE conversation_topics (thread_id VARCHAR, topic_id INTEGER, topic_label VARCHAR)",
                              f"INSERT INTO conversation_topics VALUES {values}")
    rows = analytics.compare_cohorts(with_topics, V10, V11)
    topics = rows[rows["kind"] == "topic"].set_index("name")
    want = sorted({r["topic"] for r in labels["threads"].values()})
    assert sorted(topics.index) == want
    for topic in want:
        k_a = sum(1 for t in _version(labels, "1.0") if labels["threads"][t]["topic"] == topic)
        k_b = sum(1 for t in _version(labels, "1.1") if labels["threads"][t]["topic"] == topic)
        assert (topics.loc[topic, "count_a"], topics.loc[topic, "count_b"]) == (k_a, k_b)
    assert math.isclose(topics["value_a"].sum(), 1.0)


def test_without_the_signals_table_the_rules_compute_the_same_rows(labelled_db, tmp_path):
    db, _ = labelled_db
    bare = edited_copy(db, tmp_path / "bare.duckdb", "DROP TABLE conversation_signals")
    got = analytics.compare_cohorts(bare, V10, V11)
    want = analytics.compare_cohorts(db, V10, V11)
    assert got.equals(want)
