"""`analytics.trends` against an independent pandas computation over the raw tables of a
database loaded from a real store: every bucket, with and without filters, split and unsplit,
the load-time-table path and the live one; bucket edges; the `report trends` CLI."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest

from analytics import metrics, trends
from analytics.cli import main
from analytics.db import connect
from analytics.derived import write_derived_tables
from analytics.errors import BadRequest
from analytics.filters import Filters, day_window
from analytics.frames import fetch_frame
from tests.analytics.conftest import edited_copy
from transcript_lens.cli import main as tl_main

ADDITIVE = ["messages", "user_messages", "assistant_messages", "tool_messages", "system_messages", "other_messages",
            "tool_calls", "tool_errors", "interrupts", "input_tokens", "output_tokens", "total_tokens",
            "latency_pairs"]
REQUIRED = ["period", "conversations", "messages", "user_messages", "assistant_messages", "tool_messages",
            "tool_calls", "input_tokens", "output_tokens", "reply_latency_p50_s", "reply_latency_p90_s"]


def bucket_start(ts: pd.Series, by: str) -> pd.Series:
    """The bucket's first UTC day, computed with pandas calendars (not the SQL's day arithmetic)."""
    day = ts.dt.tz_convert("UTC").dt.tz_localize(None).dt.normalize()
    if by == "day":
        return day
    if by == "week":
        return day - pd.to_timedelta(day.dt.weekday, unit="D")  # ISO: Monday is weekday 0
    return day.dt.to_period("M").dt.start_time


def raw(con):
    messages = con.execute("SELECT * FROM messages").df()
    threads = con.execute("SELECT * FROM threads").df()
    checkpoints = con.execute("SELECT thread_id, ts, is_root, has_interrupt FROM checkpoints").df()
    return messages, threads, checkpoints


def scope_threads(threads: pd.DataFrame, f: Filters) -> set[str]:
    keep = pd.Series(True, index=threads.index)
    if f.tenants:
        keep &= threads["tenant_id"].isin(f.tenants)
    if f.thread_ids:
        keep &= threads["thread_id"].isin(f.thread_ids)
    if f.since is not None:
        keep &= threads["last_ts"] >= pd.Timestamp(f.since)
    if f.until is not None:
        keep &= threads["first_ts"] <= pd.Timestamp(f.until)
    return set(threads.loc[keep.fillna(False), "thread_id"])


def in_window(ts: pd.Series, f: Filters) -> pd.Series:
    keep = ts.notna()
    if f.since is not None:
        keep &= ts >= pd.Timestamp(f.since)
    if f.until is not None:
        keep &= ts <= pd.Timestamp(f.until)
    return keep


def expected(con, f: Filters, by: str) -> pd.DataFrame:
    """docs/metrics.md "Trends over time", over the raw tables in pandas."""
    messages, threads, checkpoints = raw(con)
    scope = scope_threads(threads, f)
    all_msgs = messages[messages["thread_id"].isin(scope)]
    m = all_msgs[in_window(all_msgs["ts"], f)].copy()
    m["period"] = bucket_start(m["ts"], by)
    rows = {}
    for period, g in m.groupby("period"):
        tokens = {c: g[c].sum(min_count=1) for c in ("input_tokens", "output_tokens", "total_tokens")}
        rows[period] = dict(
            conversations=g["thread_id"].nunique(), messages=len(g),
            **{f"{r}_messages": int((g["role"] == r).sum()) for r in ("user", "assistant", "tool", "system", "other")},
            tool_calls=int(g["tool_call_count"].fillna(0).sum()),
            tool_errors=int(((g["role"] == "tool") & (g["tool_status"] == "error")).sum()),
            **{k: (None if pd.isna(v) else int(v)) for k, v in tokens.items()},
        )
    # Latency: each stamped question pairs with the next stamped assistant message by ordinal (whole thread).
    pairs = []
    for tid, g in all_msgs.sort_values("ordinal").groupby("thread_id"):
        replies = g[(g["role"] == "assistant") & g["ts"].notna()]
        for q in g[(g["role"] == "user") & in_window(g["ts"], f)].itertuples():
            later = replies[replies["ordinal"] > q.ordinal]
            if len(later):
                pairs.append((q.ts, (later.iloc[0]["ts"] - q.ts).total_seconds()))
    lat = pd.DataFrame(pairs, columns=["ts", "latency_s"])
    if len(lat):
        lat["ts"] = pd.to_datetime(lat["ts"], utc=True)
        lat["period"] = bucket_start(lat["ts"], by)
        for period, g in lat.groupby("period"):
            r = rows.setdefault(period, {})
            r.update(latency_pairs=len(g), reply_latency_p50_s=float(np.quantile(g["latency_s"], 0.5)),
                     reply_latency_p90_s=float(np.quantile(g["latency_s"], 0.9)))
    c = checkpoints[checkpoints["thread_id"].isin(scope) & checkpoints["is_root"] & checkpoints["has_interrupt"]]
    c = c[in_window(c["ts"], f)]
    for period, n in bucket_start(c["ts"], by).value_counts().items():
        rows.setdefault(period, {})["interrupts"] = int(n)
    out = pd.DataFrame.from_dict(rows, orient="index").rename_axis("period").reset_index().sort_values("period")
    for col in trends.TREND_COLUMNS[1:]:
        if col not in out:
            out[col] = np.nan
        if col not in ("input_tokens", "output_tokens", "total_tokens") and not col.startswith("reply_"):
            out[col] = out[col].fillna(0).astype("int64")
    return out[list(trends.TREND_COLUMNS)].reset_index(drop=True)


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["period"] = pd.to_datetime(out["period"]).astype("datetime64[ns]")
    for col in out.columns[1:]:
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
    return out.reset_index(drop=True)


def check(actual: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(comparable(actual), comparable(want), check_exact=False, atol=1e-6)


@pytest.fixture(scope="module")
def tenant(loaded):
    with connect(loaded) as con:
        return con.execute("SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL "
                           "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").fetchall()[0][0]


def _filters(con, tenant) -> list[Filters]:
    first, last = con.execute("SELECT min(ts), max(ts) FROM messages").fetchall()[0]
    mid = first + (last - first) / 2
    whole = day_window(first.date(), mid.date())  # whole UTC days: the load-time tables answer
    return [
        Filters(),
        Filters(tenants=(tenant,)),
        Filters(since=whole[0], until=whole[1]),
        Filters(since=first + timedelta(seconds=1), until=mid),  # not whole days: the live query
    ]


@pytest.mark.parametrize("by", trends.BUCKETS)
def test_trends_are_the_raw_tables_counted_in_pandas(con, tenant, by):
    assert metrics.current_trend_tables(con)  # the load wrote them: the fast path is under test too
    for f in _filters(con, tenant):
        want = expected(con, f, by)
        assert len(want), f
        check(trends.trends(con, f, by=by), want)
        # The live query (no load-time table) gives the same rows.
        check(fetch_frame(con, *trends.trends_sql(f, by, None, frozenset())), want)


@pytest.mark.parametrize("by", trends.BUCKETS)
@pytest.mark.parametrize("split", sorted(trends.SPLITS))
def test_split_rows_sum_to_the_unsplit_totals(con, tenant, by, split):
    for f in _filters(con, tenant)[:2]:
        whole = trends.trends(con, f, by=by)
        parts = trends.trends(con, f, by=by, split=split)
        assert list(parts.columns) == list(trends.columns(split))
        summed = parts.groupby("period", as_index=False)[ADDITIVE].sum(min_count=1)
        check(summed[["period", *ADDITIVE]], whole[["period", *ADDITIVE]])
        if split == "tenant":  # a thread has one tenant: its conversations add up too
            assert parts.groupby("period")["conversations"].sum().tolist() == whole["conversations"].tolist()
        else:  # a thread counts once per value it has in the period, so at least once
            assert (parts.groupby("period")["conversations"].sum().to_numpy() >= whole["conversations"]).all()


def test_tool_split_counts_each_call_for_its_tool(con):
    parts = trends.trends(con, by="month", split="tool")
    messages = con.execute("SELECT ts, tool_calls FROM messages WHERE tool_call_count > 0 AND ts IS NOT NULL").df()
    names = [c["name"] for calls in messages["tool_calls"] for c in json.loads(calls)]
    named = parts[parts["tool"].notna()].groupby("tool")["tool_calls"].sum()
    assert named.to_dict() == pd.Series(names).value_counts().to_dict()
    calls = trends.tool_calls(con, by="month").groupby("tool")["calls"].sum()
    assert calls.to_dict() == named.to_dict()


def test_tool_call_errors_are_the_tool_split_errors(con):
    # Two independent paths: tool_calls() counts error results by their tool; the tool split
    # joins every message to the call it answers. Also inside a window, which cuts results.
    ((first,),) = con.execute(
        "SELECT min(ts) FROM messages WHERE role = 'tool' AND tool_status = 'error' AND ts IS NOT NULL"
    ).fetchall()
    before = Filters(until=first - timedelta(microseconds=1))  # a window that leaves the error out
    for filters, found in ((Filters(), True), (Filters(since=first), True), (before, False)):
        split = trends.trends(con, filters, by="week", split="tool")
        split = split[split["tool"].notna() & (split["tool_errors"] > 0)]
        errors = trends.tool_calls(con, filters, by="week")
        errors = errors[errors["errors"] > 0]
        assert (len(errors) > 0) == found
        assert dict(zip(zip(errors["period"], errors["tool"]), errors["errors"])) == dict(
            zip(zip(split["period"], split["tool"]), split["tool_errors"]))


def test_model_mix_is_the_model_split_messages(con):
    mix = trends.model_mix(con, by="week")
    split = trends.trends(con, by="week", split="model")
    split = split[split["model"].notna()]
    merged = mix.merge(split, on=["period", "model"], suffixes=("", "_split"))
    assert len(merged) == len(mix) == len(split)
    assert (merged["messages"] == merged["messages_split"]).all()


EDGES = [  # (ts of the thread's n-th stamped message, its day, ISO week start, month)
    ("2024-12-31T23:59:59.999999Z", "2024-12-31", "2024-12-30", "2024-12-01"),
    ("2025-01-01T00:00:00Z", "2025-01-01", "2024-12-30", "2025-01-01"),  # the ISO week spans the year
    ("2025-03-09T23:59:59Z", "2025-03-09", "2025-03-03", "2025-03-01"),  # a Sunday
    ("2025-03-10T00:00:00Z", "2025-03-10", "2025-03-10", "2025-03-01"),  # the Monday after
]


def test_bucket_edges(loaded, tmp_path):
    with connect(loaded) as con:
        tid, ids = con.execute(
            "SELECT thread_id, list(message_id ORDER BY ordinal) FROM messages WHERE ts IS NOT NULL "
            "GROUP BY 1 HAVING count(*) >= 4 ORDER BY 1 LIMIT 1").fetchall()[0]
    updates = [
        f"UPDATE messages SET ts = TIMESTAMPTZ '{ts.replace('Z', '+00')}' "
        f"WHERE thread_id = '{tid}' AND message_id = '{ids[i]}'"
        for i, (ts, *_rest) in enumerate(EDGES)
    ]
    # Every later message of the thread on the last edge too.
    updates += [f"UPDATE messages SET ts = TIMESTAMPTZ '2025-03-10 00:00:00+00' "
                f"WHERE thread_id = '{tid}' AND message_id = '{mid}'" for mid in ids[4:]]
    db = edited_copy(loaded, tmp_path / "edges.duckdb", *updates)
    rw = duckdb.connect(str(db))
    try:
        write_derived_tables(rw)  # the per-day tables from the edited messages, as a load would
    finally:
        rw.close()
    only = Filters(thread_ids=(tid,))
    with connect(db) as con:
        for col, by in ((1, "day"), (2, "week"), (3, "month")):
            counts: dict[str, int] = {}
            for i, edge in enumerate(EDGES):
                counts[edge[col]] = counts.get(edge[col], 0) + (1 if i < 3 else 1 + len(ids[4:]))
            got = trends.trends(con, only, by=by)
            assert dict(zip(got["period"].dt.strftime("%Y-%m-%d"), got["messages"])) == counts, by
            check(got, expected(con, only, by))


def test_bad_bucket_or_split_is_a_bad_request(con):
    with pytest.raises(BadRequest):
        trends.trends(con, by="year")
    with pytest.raises(BadRequest):
        trends.trends(con, split="colour")


def test_default_bucket_follows_the_range():
    d = datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert trends.default_bucket(d, d + timedelta(days=62)) == "day"
    assert trends.default_bucket(d, d + timedelta(days=63)) == "week"
    assert trends.default_bucket(d, d + timedelta(days=180)) == "week"
    assert trends.default_bucket(d, d + timedelta(days=400)) == "month"
    assert trends.default_bucket(None, None) == "day"


@pytest.mark.parametrize("split", [None, "model", "tool", "tenant"])
def test_cli_writes_exactly_the_columns(loaded, tmp_path, split, tenant):
    out = tmp_path / "trends.csv"
    argv = ["report", "trends", "--db", str(loaded), "--by", "week", "--out", str(out), "--tenant", tenant]
    argv += ["--split", split] if split else []
    assert main(argv) == 0
    with out.open(newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header == list(trends.columns(split))
    assert set(REQUIRED) <= set(header)
    with connect(loaded) as con:
        frame = trends.trends(con, Filters(tenants=(tenant,)), by="week", split=split)
    assert len(rows) - 1 == len(frame)
    assert [r[0] for r in rows[1:]] == frame["period"].dt.strftime("%Y-%m-%d").tolist()  # ISO dates, UTC
    # The same registration under `transcript-lens report trends`.
    again = tmp_path / "again.csv"
    assert tl_main([a if a != str(out) else str(again) for a in argv]) == 0
    assert again.read_text() == out.read_text()


def test_report_file_is_report_frame_and_by_defaults_to_the_range(loaded, tmp_path):
    from analytics.reporting import writer

    for options in ({"by": "month", "split": "tool"}, {}):
        out = writer.write_report(loaded, "trends", tmp_path / "t.csv", options=options)
        got = pd.read_csv(out, dtype=str, keep_default_na=False)
        want = writer.report_frame(loaded, "trends", options=options)
        assert list(got.columns) == list(want.columns) == list(trends.columns(options.get("split")))
        assert got["period"].tolist() == want["period"].tolist()
    with connect(loaded) as con:
        h = metrics.overview(con)
        by = trends.default_bucket(h["first_ts"], h["last_ts"])
        assert got["period"].tolist() == trends.trends(con, by=by)["period"].dt.strftime("%Y-%m-%d").tolist()
