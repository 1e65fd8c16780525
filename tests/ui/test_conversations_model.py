"""`ui.models.conversations.conversations_page` against the analytics queries it composes,
and against pandas sorts and filters of the whole table."""

from __future__ import annotations

import csv
import io
import re

import pandas as pd
import pytest

from analytics import metrics
from analytics.reporting import writer
from analytics.db import connect
from analytics.errors import BadRequest
from analytics.filters import Filters, Range
from analytics.frames import fetch_frame
from analytics.scope import ThreadConditions
from tests.analytics.conftest import edited_copy
from ui.models.conversations import conversations_csv, conversations_page, latency_histogram
from ui.models.outcomes import why_text


def pandas_sorted(frame: pd.DataFrame, column: str, descending: bool) -> list[str]:
    """The expected order, by pandas: thread ids first, then a stable sort on `column`, NULLs last."""
    frame = frame.sort_values("thread_id", kind="stable")
    return frame.sort_values(column, ascending=not descending, na_position="last", kind="stable")["thread_id"].tolist()


def every_page(con, page_size: int, **kwargs) -> list[str]:
    first = conversations_page(con, page_size=page_size, **kwargs)
    ids = first.table["thread_id"].tolist()
    for page in range(2, first.pages + 1):
        view = conversations_page(con, page=page, page_size=page_size, **kwargs)
        assert view.offset == (page - 1) * page_size and view.matching == first.matching
        ids += view.table["thread_id"].tolist()
    return ids


@pytest.mark.parametrize("column", ["duration_s", "latency_p90_s", "input_tokens", "first_ts", "models", "forks"])
def test_paging_a_sort_gives_every_thread_once_in_pandas_order(con, column):
    # The live query, not the load-time table the page reads: an independent source of the rows.
    full = fetch_frame(con, *metrics.conversations_sql())
    assert len(full) > 7
    for descending in (False, True):
        ids = every_page(con, 3, sort=column, descending=descending)
        assert ids == pandas_sorted(full, column, descending), (column, descending)
        assert sorted(ids) == sorted(full["thread_id"])  # each exactly once


def test_every_sort_column_pages_in_pandas_order(con):
    full = fetch_frame(con, *metrics.conversations_sql())
    # The preview column (a sort too) comes with the list, from the messages.
    full = full.merge(metrics.conversation_list(con)[["thread_id", metrics.PREVIEW_COLUMN]], on="thread_id")
    for column in metrics.SORT_COLUMNS:
        for descending in (False, True):
            ids = []
            for offset in range(0, len(full), 4):
                page = metrics.conversation_list(con, sort=column, descending=descending, limit=4, offset=offset)
                ids += page["thread_id"].tolist()
            assert ids == pandas_sorted(full, column, descending), (column, descending)


def test_ties_and_missing_values_are_broken_by_thread_id(loaded, tmp_path):
    db = edited_copy(
        loaded, tmp_path / "ties.duckdb",
        "UPDATE conversation_metrics SET duration_s = 42.0 WHERE thread_id IN "
        "(SELECT thread_id FROM conversation_metrics ORDER BY thread_id DESC LIMIT 4)",
        "UPDATE conversation_metrics SET duration_s = NULL WHERE thread_id IN "
        "(SELECT thread_id FROM conversation_metrics ORDER BY thread_id LIMIT 3)",
    )  # fmt: skip
    with connect(db) as c:
        full = fetch_frame(c, "SELECT * FROM conversation_metrics")
        for descending in (False, True):
            ids = every_page(c, 2, sort="duration_s", descending=descending)
            assert ids == pandas_sorted(full, "duration_s", descending)
            assert ids[-3:] == sorted(full.loc[full["duration_s"].isna(), "thread_id"])  # NULLs last both ways
        csv_ids = [r["thread_id"] for r in csv.DictReader(io.StringIO(conversations_csv(c, Filters(), "duration_s").decode()))]
        assert csv_ids == pandas_sorted(full, "duration_s", True)


def test_range_filters_keep_the_threads_pandas_keeps_and_the_charts_follow(con):
    full = metrics.conversations(con)
    ranges = (Range("user_turns", 2, None), Range("duration_s", None, full["duration_s"].median()),
              Range("tool_calls", 0, 5))  # fmt: skip
    keep = full[(full["user_turns"] >= 2) & (full["duration_s"] <= full["duration_s"].median())
                & full["tool_calls"].between(0, 5)]  # fmt: skip
    assert 0 < len(keep) < len(full)
    page = conversations_page(con, ranges=ranges, sort="thread_id", descending=False)
    assert page.table["thread_id"].tolist() == sorted(keep["thread_id"])
    assert page.matching == len(keep) and page.total == len(full)
    assert page.turns["threads"].sum() == len(keep)
    assert dict(zip(page.turns["user_turns"], page.turns["threads"])) == keep["user_turns"].value_counts().to_dict()
    lat = metrics.latency_distribution(con, Filters(thread_ids=tuple(keep["thread_id"])))
    assert page.latency_summary["pairs"] == len(lat)
    # A NULL is outside a bounded range (threads without a reply have no latency).
    bounded = conversations_page(con, ranges=(Range("latency_median_s", 0, None),))
    assert bounded.matching == full["latency_median_s"].notna().sum()
    with pytest.raises(BadRequest, match="range columns"):
        conversations_page(con, ranges=(Range("content; --", 1, 2),))


def test_the_page_with_a_text_filter_is_the_full_queries_answer(con):
    word = con.execute(
        "SELECT content FROM messages WHERE role = 'user' AND content_chars > 3 ORDER BY thread_id, ordinal LIMIT 1"
    ).fetchall()[0][0][:4]
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    for f in (Filters(text=word), Filters(text=word, tenants=(tenant,)), Filters(text="no such text at all")):
        for turns in (0, 2):
            page = conversations_page(con, f, min_turns=turns, page_size=1000)
            scoped = ThreadConditions(text=f.text, tenants=f.tenants, min_user_turns=turns)
            conv = fetch_frame(con, *metrics.conversations_sql(scoped))
            assert page.table["thread_id"].tolist() == pandas_sorted(conv, "last_ts", True)
            pd.testing.assert_frame_equal(
                page.table[list(metrics.CONVERSATION_COLUMNS)],
                conv.set_index("thread_id").loc[page.table["thread_id"]].reset_index(), check_exact=True)
            lat = fetch_frame(con, *metrics.latency_distribution_sql(scoped))
            pd.testing.assert_frame_equal(page.latency, latency_histogram(lat["latency_s"], lat["model"]))
            (total,), = con.execute(f"SELECT count(*) FROM threads t WHERE {f.thread_where()[0]}",
                                    f.thread_where()[1]).fetchall()
            assert page.total == total and page.matching == len(conv)


def test_every_chart_of_a_page_is_the_live_queries_answer_for_its_threads(con):
    """Tenant-only scopes (compared on the rows' own tenant), thread conditions (a scope table of
    the passing threads' ids or of the others') and windows that cut into a day: each chart is the
    live query's over the same conditions, no load-time table read."""
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    (lo, hi), = con.execute("SELECT min(ts), max(ts) FROM messages").fetchall()
    cases = [(Filters(tenants=(tenant,)), {}), (Filters(tenants=(tenant,)), {"min_turns": 2}),
             (Filters(), {"min_turns": 2}), (Filters(), {"pending_only": True}),
             (Filters(since=lo + (hi - lo) / 3, until=hi - (hi - lo) / 3), {})]  # fmt: skip
    live = frozenset()
    for f, kwargs in cases:
        page = conversations_page(con, f, page_size=1000, **kwargs)
        scoped = ThreadConditions(**vars(f), min_user_turns=kwargs.get("min_turns", 0),
                                  pending_only=kwargs.get("pending_only", False))  # fmt: skip
        conv = fetch_frame(con, *metrics.conversations_sql(scoped))
        assert 0 < page.matching == len(conv) < metrics.conversations(con).shape[0], (f, kwargs)
        assert page.table["thread_id"].tolist() == pandas_sorted(conv, "last_ts", True)
        seen = page.turns[page.turns["threads"] > 0]
        assert dict(zip(seen["user_turns"], seen["threads"])) == conv["user_turns"].value_counts().to_dict()
        # Both axes step evenly: every whole number of turns and every day between the ends, zeros in the gaps.
        assert page.turns["user_turns"].diff().dropna().eq(1).all(), (f, kwargs)
        assert page.activity["day"].diff().dropna().eq(pd.Timedelta(days=1)).all(), (f, kwargs)
        # The charts' oracle names the threads by id (a semi-join on them, not the tenant compare), live.
        scoped = Filters(thread_ids=tuple(conv["thread_id"]), since=f.since, until=f.until)
        lat = fetch_frame(con, *metrics.latency_distribution_sql(scoped, live))
        pd.testing.assert_frame_equal(page.latency, latency_histogram(lat["latency_s"], lat["model"]))
        models = fetch_frame(con, *metrics.by_model_sql(scoped, None, live))
        tokens = page.tokens_by_model.pivot(index="model", columns="kind", values="tokens")
        want = models.set_index("model")[["input_tokens", "output_tokens"]].dropna(how="all")
        assert tokens.to_dict() == want.rename(columns=lambda c: c.removesuffix("_tokens")).to_dict(), (f, kwargs)
        daily = fetch_frame(con, *metrics.daily_sql(scoped, live)).groupby("day")[["messages", "user_messages"]].sum()
        assert page.activity.set_index("day")[["messages", "user_messages"]].sum().to_dict() == daily.sum().to_dict()


def test_a_page_past_the_end_is_the_last_page_and_a_bad_sort_is_refused(con):
    n = metrics.conversations(con).shape[0]
    last = conversations_page(con, page=10_000, page_size=4)
    assert last.page == last.pages == -(-n // 4) and len(last.table) == n - 4 * (last.pages - 1)
    with pytest.raises(BadRequest, match="cannot sort by 'nope'; sort columns: thread_id"):
        conversations_page(con, sort="nope")


def test_preview_is_the_first_user_message_folded_and_cut(con):
    page = conversations_page(con, sort="thread_id", descending=False, page_size=1000)
    firsts = dict(con.execute(
        "SELECT thread_id, arg_min(content, ordinal) FROM messages WHERE role = 'user' AND content_chars > 0 "
        "GROUP BY thread_id").fetchall())  # fmt: skip
    for tid, preview in zip(page.table["thread_id"], page.table["first_user_message"]):
        if tid not in firsts:
            assert preview is None or pd.isna(preview)
            continue
        folded = re.sub(r"\s+", " ", firsts[tid][: 4 * metrics.PREVIEW_CHARS]).strip()
        want = folded if len(folded) <= metrics.PREVIEW_CHARS else folded[: metrics.PREVIEW_CHARS - 1] + "…"
        assert preview == want


def test_the_csv_is_every_filtered_row_in_the_sort_as_the_cli_writes_it(con, loaded, tmp_path):
    conditions = conversations_page(con, ranges=(Range("user_turns", 1, None),)).conditions
    data = conversations_csv(loaded, conditions, "duration_s", descending=True)
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    full = metrics.conversations(con)
    assert [r["thread_id"] for r in rows] == pandas_sorted(full[full["user_turns"] >= 1], "duration_s", True)
    assert list(rows[0]) == [*metrics.LIST_COLUMNS, "outcome", "signals", "outcome_reason"]
    cli = writer.write_report(loaded, "conversations", tmp_path / "cli.csv", conditions,
                               {"sort": "duration_s", "desc": True})  # fmt: skip
    assert cli.read_bytes() == data
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r["last_ts"]) for r in rows if r["last_ts"])
    assert {r["interrupt_pending"] for r in rows} <= {"true", "false"}


def test_the_tables_csv_is_its_columns_under_its_headers_in_the_sort(con, loaded):
    from ui.columns import CONVERSATION_TABLE, CSV_COLUMNS

    conditions = conversations_page(con).conditions
    data = conversations_csv(loaded, conditions, "duration_s", False, CSV_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    full = metrics.conversations(con)
    # Every matching thread, in the sort, under the table's headers in its order (a number's unit in its header).
    assert [r["Thread"] for r in rows] == pandas_sorted(full, "duration_s", False)
    assert list(rows[0]) == [c.label + (" (s)" if c.kind in ("duration", "seconds") else "") for c in CONVERSATION_TABLE]
    want = full.set_index("thread_id")
    with_outcomes = conversations_page(con, page_size=len(full)).table.set_index("thread_id")
    labels = {"resolved": "Resolved", "abandoned": "Abandoned", "failed": "Failed", "waiting": "Waiting", "unknown": "Unknown"}
    for r in rows:
        w, o = want.loc[r["Thread"]], with_outcomes.loc[r["Thread"]]
        assert r["Messages"] == str(w["messages"])
        assert (float(r["Duration (s)"]) if r["Duration (s)"] else None) == pytest.approx(
            None if pd.isna(w["duration_s"]) else w["duration_s"], abs=1e-3)
        assert r["Last active (UTC)"] == ("" if pd.isna(w["last_ts"]) else
                                          w["last_ts"].tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S"))
        assert r["Pending interrupt"] == ("yes" if w["interrupt_pending"] else "no")
        assert r["Outcome"] == labels.get(o["outcome"], "")
        assert "_" not in r["Signals"]  # the signals by name, as the table writes them
        # Why: the stored reason without the outcome's name, messages numbered from 1; empty when resolved
        assert r["Why"] == ("" if o["outcome"] == "resolved" else why_text(o["outcome_reason"]))
    assert any(r["Signals"] for r in rows)
    assert any(r["Why"] for r in rows)


def test_the_charts_step_evenly_through_quiet_days_and_unseen_turn_counts():
    """Per tenant, the demo's threads leave days without a message and turn counts no thread has:
    each is a zero row (a categorical axis would draw a ten-day gap as wide as one day)."""
    from ui.database import ensure_demo_db

    with connect(ensure_demo_db()) as c:
        tenants = [t for (t,) in c.execute("SELECT DISTINCT tenant_id FROM threads WHERE tenant_id IS NOT NULL")
                   .fetchall()]
        gaps = 0
        for tenant in tenants:
            page = conversations_page(c, Filters(tenants=(tenant,)))
            assert page.activity["day"].diff().dropna().eq(pd.Timedelta(days=1)).all(), tenant
            assert page.turns["user_turns"].diff().dropna().eq(1).all(), tenant
            gaps += int((page.activity["messages"] == 0).sum() + (page.turns["threads"] == 0).sum())
            assert int(page.turns["threads"].sum()) == page.matching
        assert gaps  # (the demo has them: else this test proves nothing)

