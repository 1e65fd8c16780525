"""The loader's message-level tables (`latency_pair_rows`, `thread_day_metrics`,
`thread_model_metrics`, `tool_rows`): `daily`, `by_model` / `top_models`, `overview`,
`latency_distribution`, `top_tools` and `trends.tool_calls` read them where they can
answer, and give exactly the live queries' answers, with and without filters."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta, timezone

import duckdb
import pandas as pd
import pytest

from analytics import metrics, trends
from analytics.db import connect
from analytics.derived import write_derived_tables
from analytics.errors import BadRequest
from analytics.filters import Filters, day_window
from analytics.frames import fetch_frame
from analytics.scope import ThreadConditions
from tests.analytics.conftest import edited_copy
from tests.analytics.metrics_db import build
from tests.analytics.test_materialized import _corpus_filters, store_filters

TABLES = (metrics.PAIRS_TABLE, metrics.THREAD_DAYS_TABLE, metrics.THREAD_MODELS_TABLE, metrics.TOOL_ROWS_TABLE)
LIVE: frozenset[str] = frozenset()


def _live(con, filters: Filters) -> dict:
    """Every changed function's answer from the live SQL (no table read)."""
    cur = con.execute(*metrics.overview_sql(filters, LIVE))
    names = [d[0] for d in cur.description]
    (row,) = cur.fetchall()
    return {
        "overview": dict(zip(names, row)),
        "daily": fetch_frame(con, *metrics.daily_sql(filters, LIVE)),
        "by_model": fetch_frame(con, *metrics.by_model_sql(filters, None, LIVE)),
        "top_models": fetch_frame(con, *metrics.by_model_sql(filters, 2, LIVE)),
        "latency": fetch_frame(con, *metrics.latency_distribution_sql(filters, LIVE)),
        "top_tools": fetch_frame(con, *metrics.top_tools_sql(filters, 20, LIVE)),
        "tool_calls": fetch_frame(con, *trends.tool_calls_sql(filters, "day", LIVE)),
    }


def _public(con, filters: Filters) -> dict:
    return {
        "overview": dict(metrics.overview(con, filters)),
        "daily": metrics.daily(con, filters),
        "by_model": metrics.by_model(con, filters),
        "top_models": metrics.top_models(con, filters, limit=2),
        "latency": metrics.latency_distribution(con, filters),
        "top_tools": metrics.top_tools(con, filters, limit=20),
        "tool_calls": trends.tool_calls(con, filters, by="day"),
    }


def assert_same(got: dict, want: dict, filters) -> None:
    assert got["overview"] == want["overview"], filters
    assert [type(v) for v in got["overview"].values()] == [type(v) for v in want["overview"].values()], filters
    for key in ("daily", "by_model", "top_models", "latency", "top_tools", "tool_calls"):
        pd.testing.assert_frame_equal(got[key], want[key], check_exact=True, obj=f"{key} {filters}")


def _day_filters(con) -> list[Filters]:
    """Whole-UTC-day windows (read from the tables) and others (the live query)."""
    (lo, hi), = con.execute("SELECT min(ts), max(ts) FROM messages").fetchall()
    first, last = lo.astimezone(timezone.utc).date(), hi.astimezone(timezone.utc).date()
    mid = first + (last - first) / 2
    out = [Filters(since=s, until=u) for s, u in (
        day_window(first, last), day_window(first, first), day_window(mid, last),
        day_window(last, None), day_window(None, mid))]
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    since, until = day_window(first, mid)
    out.append(Filters(tenants=(tenant,), since=since, until=until))
    # Not whole days: a minute into the day, an until at midnight, another zone's midnight.
    out.append(Filters(since=datetime.combine(mid, time(0, 1), timezone.utc)))
    out.append(Filters(until=datetime.combine(mid, time.min, timezone.utc)))
    out.append(Filters(since=datetime.combine(mid, time.min, timezone(timedelta(hours=2)))))
    return out


def _cut_windows(con) -> list[Filters]:
    """Windows that cut into a day at one end or both, with whole days between them or none."""
    (lo, hi), = con.execute("SELECT min(ts), max(ts) FROM messages").fetchall()
    lo, hi = lo.astimezone(timezone.utc), hi.astimezone(timezone.utc)
    first, last = lo.date(), hi.date()

    def noon(day):
        return datetime.combine(day, time(12), timezone.utc)

    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    return [
        Filters(since=lo + timedelta(seconds=1), until=hi - timedelta(seconds=1)),  # both ends
        Filters(since=noon(first)), Filters(until=noon(last)),  # one end, the other open
        Filters(since=noon(first), until=noon(first) + timedelta(hours=1)),  # within one day
        Filters(since=noon(first), until=noon(first + timedelta(days=1))),  # two cut days, none whole
        Filters(since=day_window(first, None)[0], until=hi - timedelta(seconds=1)),  # whole first day, cut last
        Filters(tenants=(tenant,), since=lo + timedelta(seconds=1)),
        ThreadConditions(min_user_turns=2, until=hi - timedelta(seconds=1)),
    ]


def test_a_load_writes_current_tables(con):
    assert metrics.current_trend_tables(con) == set(TABLES)


def test_every_filter_gives_the_live_answers(con):
    filters = [Filters(), *store_filters(con), *_day_filters(con),
               ThreadConditions(min_user_turns=2), ThreadConditions(forks_only=True)]
    for f in filters:
        assert_same(_public(con, f), _live(con, f), f)


def test_hand_made_corpus_alike_on_both_paths():
    c = build(None)
    try:
        filters = [*_corpus_filters(), *_day_filters(c), *_cut_windows(c)]
        before = {f: _public(c, f) for f in filters}  # no tables yet: the live queries
        metrics.materialize_trends(c)
        metrics.materialize_conversations(c)  # (daily's threads started per day read it)
        assert metrics.current_trend_tables(c) == set(TABLES)
        for f in filters:
            assert_same(_public(c, f), before[f], f)
            assert_same(_public(c, f), _live(c, f), f)
    finally:
        c.close()


def test_a_window_cutting_into_days_reads_its_whole_days_and_sums_the_cut_days_live():
    c = build(None)  # messages on four UTC days: 02-27, 03-01, 03-02, 03-03
    try:
        metrics.materialize_trends(c)
        (lo, hi), = c.execute("SELECT min(ts), max(ts) FROM messages").fetchall()
        cut = Filters(since=lo + timedelta(seconds=1), until=hi - timedelta(seconds=1))
        live = _live(c, cut)
        assert_same(_public(c, cut), live, cut)
        c.execute(f"UPDATE {metrics.THREAD_DAYS_TABLE} SET messages = -1")
        c.execute(f"UPDATE {metrics.THREAD_MODELS_TABLE} SET messages = -1")
        daily = metrics.daily(c, cut).groupby("day")["messages"].sum()
        want = live["daily"].groupby("day")["messages"].sum()
        first, last = lo.astimezone(timezone.utc).date(), hi.astimezone(timezone.utc).date()
        assert list(daily.index) == list(want.index) and len(daily) == 4
        for day, messages in daily.items():
            if pd.Timestamp(day).date() in (first, last):  # cut by the window: its messages in the window, summed live
                assert messages == want[day] > 0, day
            else:  # whole days: the table's rows
                assert messages < 0, day
        by_model = metrics.by_model(c, cut).set_index("model")["messages"].sort_index()
        want = live["by_model"].set_index("model")["messages"].sort_index()
        assert list(by_model.index) == list(want.index)
        assert (by_model <= want).all() and (by_model < want).any()  # the whole days' table rows in the sums
    finally:
        c.close()


@pytest.fixture()
def doctored(loaded, tmp_path):
    """A copy whose tables say every latency is -1 s and every day has -1 messages."""
    return edited_copy(
        loaded, tmp_path / "doctored.duckdb",
        f"UPDATE {metrics.PAIRS_TABLE} SET latency_s = -1",
        f"UPDATE {metrics.THREAD_DAYS_TABLE} SET messages = -1",
        f"UPDATE {metrics.THREAD_MODELS_TABLE} SET messages = -1",
        f"UPDATE {metrics.TOOL_ROWS_TABLE} SET tool = 'doctored'",
    )


def test_the_tables_are_read_where_they_answer(doctored):
    with connect(doctored) as c:
        tenant = c.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
        for f in (Filters(), Filters(tenants=(tenant,)), *_day_filters(c)[:3]):
            assert set(metrics.latency_distribution(c, f)["latency_s"]) <= {-1}
            assert (metrics.daily(c, f)["messages"] <= 0).all()  # sums of -1 per thread, 0 for a day only started
            assert (metrics.by_model(c, f)["messages"] < 0).all()
            assert metrics.overview(c, f)["messages"] <= 0
        # A window within one day (the store's messages are all of one day): that day is summed
        # live from its messages in the window, the pairs are read.
        f = _day_filters(c)[-3]
        assert (metrics.daily(c, f)["messages"] >= 0).all()
        assert (metrics.by_model(c, f)["messages"] > 0).all()
        assert set(metrics.latency_distribution(c, f)["latency_s"]) <= {-1}
        # Tool rows answer every window, whole days or not.
        for f in (Filters(), Filters(tenants=(tenant,)), *_day_filters(c)):
            assert set(metrics.top_tools(c, f)["tool"]) <= {"doctored"}
            assert set(trends.tool_calls(c, f)["tool"]) <= {"doctored"}
        assert set(metrics.top_tools(c)["tool"]) == {"doctored"}


def test_tables_written_by_another_definition_are_ignored(doctored):
    c = duckdb.connect(str(doctored))
    for table in TABLES:
        c.execute(f"COMMENT ON TABLE {table} IS '{table} sha256:0000'")
    c.close()
    with connect(doctored) as c:
        assert metrics.current_trend_tables(c) == set()
        assert_same(_public(c, Filters()), _live(c, Filters()), Filters())


def test_a_database_without_the_tables_runs_the_live_queries(loaded, tmp_path):
    db = edited_copy(loaded, tmp_path / "old.duckdb", *(f"DROP TABLE {table}" for table in TABLES))
    with connect(db) as c:
        assert metrics.current_trend_tables(c) == set()
        assert_same(_public(c, Filters()), _live(c, Filters()), Filters())


def test_user_turns_from_conversation_metrics_select_the_same_threads(con):
    assert metrics.materialized(con)
    for n in (1, 2, 3, 50):
        by_table = ThreadConditions(min_user_turns=n, turns_from_table=True)
        by_messages = ThreadConditions(min_user_turns=n)
        assert metrics.MATERIALIZED_TABLE in by_table.thread_where()[0]
        assert metrics.MATERIALIZED_TABLE not in by_messages.thread_where()[0]
        pd.testing.assert_frame_equal(metrics.conversations(con, by_table), metrics.conversations(con, by_messages))
        assert_same(_public(con, by_table), _live(con, by_messages), n)


def test_columns_pick_columns_of_the_same_rows(con):
    full = metrics.conversations(con)
    part = metrics.conversations(con, columns=("user_turns", "thread_id"))
    pd.testing.assert_frame_equal(part, full[["user_turns", "thread_id"]])
    pairs = metrics.latency_distribution(con)
    some = metrics.latency_distribution(con, columns=("latency_s", "model"))
    got = some.sort_values(["latency_s", "model"], ignore_index=True)
    pd.testing.assert_frame_equal(got, pairs[["latency_s", "model"]].sort_values(["latency_s", "model"], ignore_index=True))
    with pytest.raises(BadRequest):
        metrics.conversations(con, columns=("messages; DROP TABLE threads",))


def test_without_latency_or_conversations_the_other_columns_are_the_same(con):
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    for f in (Filters(), Filters(tenants=(tenant,)), *_day_filters(con)[-3:]):
        pd.testing.assert_frame_equal(
            metrics.daily(con, f, latency=False),
            metrics.daily(con, f).drop(columns=["latency_pairs", "latency_median_s"]), check_exact=True)
        pd.testing.assert_frame_equal(
            metrics.by_model(con, f, latency=False),
            metrics.by_model(con, f).drop(columns=["latency_pairs", "latency_median_s", "latency_p90_s"]),
            check_exact=True)
        pd.testing.assert_frame_equal(
            metrics.by_model(con, f, latency=False, conversations=False),
            metrics.by_model(con, f).drop(columns=["conversations", "latency_pairs", "latency_median_s", "latency_p90_s"]),
            check_exact=True)


def _tool_oracle(con) -> tuple[pd.DataFrame, pd.DataFrame]:
    """top_tools() (no limit) and tool_calls(by="day") by pandas, from the messages."""
    msgs = con.execute("SELECT thread_id, ts, role, name, tool_calls, tool_call_id, tool_status FROM messages").df()
    calls = [(m.thread_id, m.ts, c.get("id"), c.get("name"))
             for m in msgs.itertuples() if isinstance(m.tool_calls, str) for c in json.loads(m.tool_calls)]  # fmt: skip
    named: dict = {}
    for thread, _, call_id, name in calls:
        if call_id is not None and name is not None:
            named[(thread, call_id)] = min(named.get((thread, call_id), name), name)
    results = msgs[msgs["role"] == "tool"].assign(
        tool=[named.get((m.thread_id, m.tool_call_id), m.name) for m in msgs[msgs["role"] == "tool"].itertuples()],
        error=lambda f: f["tool_status"] == "error")
    call_frame = pd.DataFrame(calls, columns=["thread_id", "ts", "call_id", "tool"]).dropna(subset=["tool"])
    top = (call_frame.groupby("tool").agg(calls=("tool", "size"), conversations=("thread_id", "nunique"))
           .join(results.dropna(subset=["tool"]).groupby("tool").agg(results=("tool", "size"), errors=("error", "sum")),
                 how="outer").fillna(0).astype("int64").reset_index()
           .sort_values(["calls", "errors", "tool"], ascending=[False, False, True]).reset_index(drop=True))  # fmt: skip
    day = lambda ts: ts.dt.tz_convert("UTC").dt.date  # noqa: E731
    stamped = call_frame.dropna(subset=["ts"])
    per_day = (stamped.assign(period=day(stamped["ts"])).groupby(["period", "tool"]).size().rename("calls").to_frame()
               .join(results[results["error"]].dropna(subset=["ts", "tool"]).pipe(lambda f: f.assign(period=day(f["ts"])))
                     .groupby(["period", "tool"]).size().rename("errors"), how="outer")
               .fillna(0).astype("int64").reset_index())  # fmt: skip
    return top, per_day


def test_tool_rows_name_results_by_their_call_and_keep_calls_without_ts(loaded, tmp_path):
    db = edited_copy(
        loaded, tmp_path / "tools.duckdb",
        # A result's own name loses to the call it answers; an unanswered one keeps its own.
        "UPDATE messages SET name = 'renamed' WHERE role = 'tool' AND tool_call_id IS NOT NULL",
        "UPDATE messages SET tool_call_id = 'nope', name = 'orphan' WHERE rowid = "
        "(SELECT max(rowid) FROM messages WHERE role = 'tool')",
        # A call without ts: in top_tools (no window), in no period.
        "UPDATE messages SET ts = NULL WHERE rowid = (SELECT min(rowid) FROM messages WHERE tool_call_count > 0)",
    )  # fmt: skip
    c = duckdb.connect(str(db))
    write_derived_tables(c)
    c.close()
    with connect(db) as c:
        assert metrics.TOOL_ROWS_TABLE in metrics.current_trend_tables(c)
        top, per_day = _tool_oracle(c)
        assert "orphan" in set(top["tool"]) and "renamed" not in set(top["tool"]) and top["errors"].sum() > 0
        for fast in (LIVE, metrics.current_trend_tables(c)):
            got = fetch_frame(c, *metrics.top_tools_sql(Filters(), 100, fast))
            pd.testing.assert_frame_equal(got, top, check_dtype=False, obj=f"top_tools {fast}")
            got = fetch_frame(c, *trends.tool_calls_sql(Filters(), "day", fast))
            got = got.assign(period=pd.to_datetime(got["period"]).dt.date)
            pd.testing.assert_frame_equal(got.sort_values(["period", "tool"]).reset_index(drop=True),
                                          per_day.sort_values(["period", "tool"]).reset_index(drop=True),
                                          check_dtype=False, obj=f"tool_calls {fast}")  # fmt: skip
