"""The loader's `conversation_metrics` table: written by every load, read by
`conversations()` / `conversation()` / the conversations report, and always equal
to the live query (`metrics.conversations_sql`) it replaces."""

from __future__ import annotations

import shutil
from datetime import timedelta

import duckdb
import pandas as pd
import pytest

from analytics import metrics, resume
from analytics.reporting import kinds, spec as specs, writer
from analytics.resume import risk_figures as resume_risks
from analytics.db import connect
from analytics.errors import BadRequest
from analytics.catalog import THREAD_COLUMNS_IN_METRICS
from analytics.filters import Filters, Range
from analytics.scope import ThreadConditions
from analytics.frames import fetch_frame
from tests.analytics.conftest import edited_copy
from tests.analytics.metrics_db import D2, T0, at, build
from tests.loaders.test_incremental import _grow
from tests.loaders.util import rows
from transcript_lens import load as load_db  # a load that writes the derived tables


def live(con, filters: Filters = Filters()) -> pd.DataFrame:
    """The live query, executed directly (never the table)."""
    return fetch_frame(con, *metrics.conversations_sql(filters))


def live_row(con, thread_id: str) -> dict:
    sql, params = metrics.conversations_sql(Filters(thread_ids=(thread_id,)))
    (row,) = con.execute(sql, params).fetchall()
    return dict(zip(metrics.CONVERSATION_COLUMNS, row))


def column_types(con, sql: str, params: list) -> list[tuple[str, str]]:
    rel = con.sql(sql, params=params)
    return [(c, str(t)) for c, t in zip(rel.columns, rel.types)]


def store_filters(con) -> list[Filters]:
    """Filters of every kind, with values taken from the loaded store."""
    tenants = [t for (t,) in con.execute("SELECT DISTINCT tenant_id FROM threads ORDER BY 1 NULLS FIRST").fetchall()]
    subs = [s for (s,) in con.execute("SELECT DISTINCT sub_tenant_id FROM threads WHERE sub_tenant_id IS NOT NULL")
            .fetchall()]  # fmt: skip
    (lo, mid, hi), = con.execute(
        "SELECT min(first_ts), quantile_disc(last_ts, 0.5), max(last_ts) FROM threads"
    ).fetchall()
    (word,), = con.execute(
        "SELECT content FROM messages WHERE role = 'user' AND content_chars > 3 ORDER BY thread_id, ordinal LIMIT 1"
    ).fetchall()
    (thread,), = con.execute("SELECT min(thread_id) FROM threads").fetchall()
    named = [t for t in tenants if t is not None]
    return [
        Filters(tenants=(named[0],)),
        Filters(tenants=tuple(named[:2])),
        Filters(sub_tenants=tuple(subs[:1])),
        Filters(thread_ids=(thread, "no-such-thread")),
        Filters(text=word[:4].upper()),  # case-insensitive
        Filters(text="%_\\ nothing contains this"),
        Filters(since=mid),
        Filters(until=mid),
        Filters(since=lo, until=mid),
        Filters(since=hi + timedelta(days=1)),  # no thread
        Filters(tenants=(named[0],), since=mid, text=word[:2]),
    ]


# --- the load writes it ----------------------------------------------------------------


def test_a_load_writes_the_table_with_the_live_columns_and_types(con):
    assert metrics.materialized(con)
    sql, params = metrics.conversations_sql(Filters())
    table = column_types(con, f"SELECT * FROM {metrics.MATERIALIZED_TABLE}", [])
    assert [c for c, _ in table] == list(metrics.CONVERSATION_COLUMNS)
    assert table == column_types(con, sql, params)


def test_the_table_holds_exactly_the_live_rows(con, sqlite_store):
    got = fetch_frame(con, f"SELECT * FROM {metrics.MATERIALIZED_TABLE} ORDER BY thread_id", [])
    pd.testing.assert_frame_equal(got, live(con), check_exact=True)
    assert set(got["thread_id"]) == set(sqlite_store.manifest)


# --- conversations() / conversation() read it ------------------------------------------------


def test_conversations_reads_the_table_and_equals_the_live_query(loaded, con):
    pd.testing.assert_frame_equal(metrics.conversations(con), live(con), check_exact=True)
    pd.testing.assert_frame_equal(metrics.conversations(loaded), live(con), check_exact=True)  # a path, too


def test_every_filter_gives_the_live_rows(con):
    for filters in store_filters(con):
        sql, _ = metrics.conversations_query(con, filters)
        assert metrics.MATERIALIZED_TABLE in sql, filters
        pd.testing.assert_frame_equal(metrics.conversations(con, filters), live(con, filters), check_exact=True)
    # The filters are not vacuous: some select a part, some nothing.
    sizes = {len(live(con, f)) for f in store_filters(con)}
    assert 0 in sizes and len(sizes) > 2


def test_thread_conditions_on_the_table_give_the_live_rows(con):
    """`ThreadConditions.metrics_where`: every condition read from the row's own columns (the
    copies of `threads` columns, `THREAD_COLUMNS_IN_METRICS`, included) keeps the live query's threads."""
    (mid,), = con.execute("SELECT quantile_disc(last_ts, 0.5) FROM threads").fetchall()
    tenant = store_filters(con)[0].tenants
    cases = [
        ThreadConditions(min_user_turns=2), ThreadConditions(min_user_turns=2, turns_from_table=True),
        ThreadConditions(pending_only=True), ThreadConditions(forks_only=True),
        ThreadConditions(ranges=(Range("latency_median_s", 0, None), Range("tool_calls", None, 3))),
        ThreadConditions(tenants=tenant, since=mid, min_user_turns=1), ThreadConditions(until=mid, forks_only=True),
    ]
    sizes = set()
    for conditions in cases:
        sql, _ = metrics.conversations_query(con, conditions)
        assert metrics.MATERIALIZED_TABLE in sql and " threads " not in sql, conditions  # no join
        want = live(con, conditions)
        pd.testing.assert_frame_equal(metrics.conversations(con, conditions), want, check_exact=True)
        sizes.add(len(want))
    assert 0 in sizes or len(sizes) > 2
    threads = fetch_frame(con, "SELECT * FROM threads ORDER BY thread_id", [])
    table = fetch_frame(con, f"SELECT * FROM {metrics.MATERIALIZED_TABLE} ORDER BY thread_id", [])
    for column, copy in THREAD_COLUMNS_IN_METRICS.items():
        assert threads[column].tolist() == table[copy].tolist(), column


def test_conversation_is_the_live_row_for_every_thread(con):
    for (thread_id,) in con.execute("SELECT thread_id FROM threads").fetchall():
        assert dict(metrics.conversation(con, thread_id)) == live_row(con, thread_id), thread_id


def test_the_conversations_report_is_the_same_on_both_paths(con):
    filters = store_filters(con)[0]
    fast = writer.report_frame(con, "conversations", filters)
    # The report's rows are the live query's, rendered the same way.
    spec = specs.report_spec("conversations")
    sql, params = metrics.conversation_list_sql(con, filters, "thread_id", False, live=True)
    slow = writer._as_csv_rows(spec, kinds.with_outcomes(con, filters, sql, params, "thread_id", False), {}).df()
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)


# --- when it is read, and when not -------------------------------------------------------------


@pytest.fixture()
def doctored(loaded, tmp_path):
    """A copy whose table says every thread has -1 messages: shows which path answered."""
    return edited_copy(loaded, tmp_path / "doctored.duckdb", f"UPDATE {metrics.MATERIALIZED_TABLE} SET messages = -1")


def test_the_fast_path_is_taken_for_the_default_gap_and_any_filter(doctored, tmp_path):
    with connect(doctored) as c:
        (thread,), = c.execute("SELECT min(thread_id) FROM threads").fetchall()
        assert set(metrics.conversations(c)["messages"]) == {-1}
        assert metrics.conversation(c, thread)["messages"] == -1
        assert metrics.conversation(c, thread, gap_minutes=30)["messages"] == -1  # same value
        for filters in store_filters(c):
            assert set(metrics.conversations(c, filters)["messages"]) <= {-1}
        assert set(writer.report_frame(c, "conversations")["messages"]) == {-1}
        writer.write_report(c, "conversations", tmp_path / "c.csv")
    assert set(pd.read_csv(tmp_path / "c.csv")["messages"]) == {-1}


def test_another_resume_gap_runs_the_live_query(doctored):
    with connect(doctored) as c:
        (thread,), = c.execute("SELECT min(thread_id) FROM threads").fetchall()
        assert (metrics.conversations(c, gap_minutes=5)["messages"] >= 0).all()
        assert metrics.conversation(c, thread, gap_minutes=5)["messages"] >= 0
        frame = writer.report_frame(c, "conversations", options={"gap_minutes": 5})
        assert (frame["messages"] >= 0).all()
        with pytest.warns(DeprecationWarning, match="gap_minutes"):  # the former option name still works
            frame = writer.report_frame(c, "conversations", options={"resume_gap_minutes": 5})
        assert (frame["messages"] >= 0).all()
        with pytest.raises(BadRequest):
            metrics.conversations(c, gap_minutes=0)  # checked on either path


def test_a_table_written_by_another_definition_is_ignored(doctored):
    c = duckdb.connect(str(doctored))
    c.execute(f"COMMENT ON TABLE {metrics.MATERIALIZED_TABLE} IS 'conversations_sql sha256:0000'")
    c.close()
    with connect(doctored) as c:
        assert not metrics.materialized(c)
        pd.testing.assert_frame_equal(metrics.conversations(c), live(c), check_exact=True)


def test_a_database_without_the_table_runs_the_live_query(loaded, tmp_path):
    db = edited_copy(loaded, tmp_path / "old.duckdb", f"DROP TABLE {metrics.MATERIALIZED_TABLE}")
    with connect(db) as c:
        sql, _ = metrics.conversations_query(c)
        assert metrics.MATERIALIZED_TABLE not in sql
        pd.testing.assert_frame_equal(metrics.conversations(c), live(c), check_exact=True)


# --- the hand-made corpus (threads without messages or tenant, off-branch checkpoints) ----------


def _corpus_alike_on_both_paths(c, read, materialize, materialized) -> None:
    """`read(c, filters)` on the hand-made corpus equals itself after `materialize(c)`, for every filter."""
    before = {f: read(c, f) for f in _corpus_filters()}
    materialize(c)
    assert materialized(c)
    for f, want in before.items():
        pd.testing.assert_frame_equal(read(c, f), want, check_exact=True)


def test_hand_made_corpus_alike_on_both_paths():
    c = build(None)
    try:
        _corpus_alike_on_both_paths(c, metrics.conversations, metrics.materialize_conversations, metrics.materialized)
        assert dict(metrics.conversation(c, "acme:web:empty")) == live_row(c, "acme:web:empty")
    finally:
        c.close()


def _corpus_filters() -> list[Filters]:
    return [
        Filters(),
        Filters(tenants=("acme",)),
        Filters(sub_tenants=("mobile",)),
        Filters(text="BILLING"),
        Filters(since=D2),
        Filters(until=T0),
        Filters(since=at(-3 * 86400), until=at(100)),
        Filters(thread_ids=("legacy-thread", "acme:web:empty")),
    ]


# --- reloads refresh it -------------------------------------------------------------------------


def test_an_incremental_reload_refreshes_the_table(sqlite_store, tmp_path):
    src = tmp_path / "grow.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db = tmp_path / "inc.duckdb"
    load_db(src, db)
    grown = sqlite_store.thread("simple_chat")
    table = f"SELECT * FROM {metrics.MATERIALIZED_TABLE} ORDER BY thread_id"
    before = {r["thread_id"]: r for r in rows(db, table)}
    assert "zeta:new:s1" not in before

    _grow(src, grown)
    assert load_db(src, db, incremental=True).mode == "incremental"

    after = {r["thread_id"]: r for r in rows(db, table)}
    assert "zeta:new:s1" in after
    assert after[grown]["messages"] == before[grown]["messages"] + 2
    assert after[grown]["user_turns"] == before[grown]["user_turns"] + 1
    with connect(db) as c:
        assert metrics.materialized(c)
        pd.testing.assert_frame_equal(metrics.conversations(c), live(c), check_exact=True)
    full = tmp_path / "full.duckdb"
    load_db(src, full)
    assert rows(db, table) == rows(full, table)


def test_an_incremental_reload_rebuilds_a_table_of_another_definition_whole(sqlite_store, tmp_path):
    """The derived tables share one narrowed view of the changed threads; a table written
    by another query (here the second of six) is rebuilt from every thread all the same."""
    from analytics.catalog import DERIVED_TABLES

    src = tmp_path / "grow.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db = tmp_path / "inc.duckdb"
    load_db(src, db)
    stale = DERIVED_TABLES[1].name
    c = duckdb.connect(str(db))
    c.execute(f"DELETE FROM {stale}")  # (what an older definition left: nothing the reload may keep)
    c.execute(f"COMMENT ON TABLE {stale} IS '{stale} sha256:0000'")
    c.close()
    _grow(src, sqlite_store.thread("simple_chat"))
    assert load_db(src, db, incremental=True).mode == "incremental"

    full = tmp_path / "full.duckdb"
    load_db(src, full)
    for table in DERIVED_TABLES:
        assert rows(db, f"SELECT * FROM {table.name} ORDER BY ALL"), table.name
        assert rows(db, f"SELECT * FROM {table.name} ORDER BY ALL") == rows(full, f"SELECT * FROM {table.name} ORDER BY ALL"), table.name
    with connect(db) as c:
        assert stale in metrics.current_trend_tables(c)  # (labelled with the current query again)


# --- risk_figures: the Resume QA overview's table ---------------------------------------------


def live_risks(con, filters: Filters = Filters(), cap: int = resume.DEFAULT_CAP) -> pd.DataFrame:
    """`risks()`'s live query, executed directly (never the table)."""
    return fetch_frame(con, *resume.risks_sql(filters, cap), resume.RISK_COLUMNS)


def test_a_load_writes_risk_figures_with_the_live_columns_types_and_rows(con, sqlite_store):
    assert resume_risks._risks_materialized(con)
    sql, params = resume.risks_sql()
    assert column_types(con, f"SELECT * FROM {resume.RISKS_TABLE}", []) == column_types(con, sql, params)
    pd.testing.assert_frame_equal(resume.risks(con), live_risks(con), check_exact=True)
    assert set(resume.risks(con)["thread_id"]) == set(sqlite_store.manifest)
    # Not vacuous: the store's restart, edit and fork scenarios are flagged.
    assert (resume.risks(con)["risk_score"] > 0).any()


def test_risks_with_every_filter_equal_the_live_query(con):
    for filters in store_filters(con):
        pd.testing.assert_frame_equal(resume.risks(con, filters), live_risks(con, filters), check_exact=True)


@pytest.fixture()
def doctored_risks(loaded, tmp_path):
    """A copy whose risk table gives every thread a score of -1: shows which path answered."""
    return edited_copy(loaded, tmp_path / "doctored-risks.duckdb", f"UPDATE {resume.RISKS_TABLE} SET risk_score = -1")


def test_risks_read_the_table_for_the_default_cap_only(doctored_risks):
    with connect(doctored_risks) as c:
        assert set(resume.risks(c)["risk_score"]) == {-1}
        for filters in store_filters(c):
            assert set(resume.risks(c, filters)["risk_score"]) <= {-1}
        other = resume.risks(c, cap=5)
        assert (other["risk_score"] >= 0).all()
        pd.testing.assert_frame_equal(other, live_risks(c, cap=5), check_exact=True)


def test_a_risk_table_written_by_another_definition_is_ignored(doctored_risks):
    c = duckdb.connect(str(doctored_risks))
    c.execute(f"COMMENT ON TABLE {resume.RISKS_TABLE} IS 'risks_sql sha256:0000'")
    c.close()
    with connect(doctored_risks) as c:
        assert not resume_risks._risks_materialized(c)
        pd.testing.assert_frame_equal(resume.risks(c), live_risks(c), check_exact=True)


def test_the_hand_made_corpus_risks_alike_on_both_paths():
    c = build(None)
    try:
        _corpus_alike_on_both_paths(c, resume.risks, resume.materialize_risks, resume_risks._risks_materialized)
    finally:
        c.close()
