"""analytics.metrics against figures worked out by hand from tests/analytics/metrics_db.CORPUS.

Each expectation is derived in the test from the corpus records (plain loops),
or written out with its arithmetic, never copied from the function's output.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics import metrics
from analytics.catalog import ROLES
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from tests.analytics.dbutil import Msg, build_db
from tests.analytics.metrics_db import CORPUS, D2, T0, at, build, write



@pytest.fixture(scope="module")
def con():
    c = build(None)
    yield c
    c.close()


# --- an independent reading of the definitions in docs/metrics.md --------------------


def pairs_of(msgs: list) -> list[tuple[int, int, float]]:
    """(user ordinal, reply ordinal, seconds): each stamped user message and the next stamped reply.

    `msgs` in transcript order, each with `role` and `ts` (a dbutil Msg or an oracle row).
    """
    rows = [(m["role"], m["ts"]) if isinstance(m, dict) else (m.role, m.ts) for m in msgs]
    out = []
    for i, (role, ts) in enumerate(rows):
        if role != "user" or ts is None:
            continue
        for j in range(i + 1, len(rows)):
            if rows[j][0] == "assistant" and rows[j][1] is not None:
                out.append((i, j, (rows[j][1] - ts).total_seconds()))
                break
    return out


def quantile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (quantile_cont, numpy's default)."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def token_sum(msgs: list[Msg], kind: str) -> int | None:
    def tokens(m: Msg) -> int | None:
        if kind != "total":
            return getattr(m, f"{kind}_tokens")
        # dbutil writes total = input + output whenever either is known.
        if m.input_tokens is None and m.output_tokens is None:
            return None
        return (m.input_tokens or 0) + (m.output_tokens or 0)

    known = [t for t in map(tokens, msgs) if t is not None]
    return sum(known) if known else None


def expected_row(thread_id: str) -> dict:
    msgs = list(CORPUS.transcripts[thread_id])
    stamps = [m.ts for m in msgs if m.ts is not None]
    roles = Counter(m.role for m in msgs)
    lat = [p[2] for p in pairs_of(msgs)]
    calls = [c for m in msgs for c in (m.tool_calls or [])]
    models = sorted({m.model for m in msgs if m.model})
    roots = CORPUS.root_ts(thread_id)
    gaps = [b - a for a, b in zip(roots, roots[1:])]
    chars = {r: [len(m.content) for m in msgs if m.role == r] for r in ("user", "assistant")}
    return {
        "messages": len(msgs),
        **{f"{r}_messages": roles[r] for r in ROLES},
        "user_turns": roles["user"],
        "first_ts": min(stamps, default=None),
        "last_ts": max(stamps, default=None),
        "duration_s": (max(stamps) - min(stamps)).total_seconds() if stamps else None,
        "latency_pairs": len(lat),
        "latency_median_s": quantile(lat, 0.5),
        "latency_p90_s": quantile(lat, 0.9),
        "latency_max_s": max(lat, default=None),
        "tool_calls": len(calls),
        "distinct_tools": len({c["name"] for c in calls}),
        "tool_errors": sum(m.role == "tool" and m.tool_status == "error" for m in msgs),
        "input_tokens": token_sum(msgs, "input"),
        "output_tokens": token_sum(msgs, "output"),
        "total_tokens": token_sum(msgs, "total"),
        "models": ",".join(models) or None,
        "resume_points": sum(g > timedelta(minutes=30) for g in gaps),
        "mean_chars_user": sum(chars["user"]) / len(chars["user"]) if chars["user"] else None,
        "mean_chars_assistant": sum(chars["assistant"]) / len(chars["assistant"]) if chars["assistant"] else None,
    }


def plain(value):
    """pandas/numpy scalars → Python values (NaN/NA/NaT → None) for exact comparison."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value.item() if hasattr(value, "item") else value


def row_of(frame: pd.DataFrame, thread_id: str) -> dict:
    (row,) = frame[frame["thread_id"] == thread_id].to_dict("records")
    return {k: plain(v) for k, v in row.items()}


# --- conversations --------------------------------------------------------------------


def test_columns_are_the_documented_ones_in_order(con):
    assert tuple(metrics.conversations(con).columns) == metrics.CONVERSATION_COLUMNS


def test_one_row_per_thread_including_a_thread_without_messages(con):
    df = metrics.conversations(con)
    assert df["thread_id"].tolist() == sorted(CORPUS.transcripts)
    empty = row_of(df, "acme:web:empty")
    assert empty["messages"] == 0 and empty["latency_pairs"] == 0 and empty["first_ts"] is None


@pytest.mark.parametrize("thread_id", sorted(CORPUS.transcripts))
def test_every_figure_matches_the_hand_computation(con, thread_id):
    got = row_of(metrics.conversations(con), thread_id)
    for name, want in expected_row(thread_id).items():
        if isinstance(want, float):
            assert got[name] == pytest.approx(want, rel=1e-12), name
        else:
            assert got[name] == want, name


def test_thread_a_by_hand(con):
    a = row_of(metrics.conversations(con), "acme:web:s1")
    # Replies 12.5 - 10 = 2.5 s and 3604 - 3600 = 4 s; the last question has no id, hence no ts.
    assert (a["latency_pairs"], a["latency_max_s"]) == (2, 4.0)
    assert a["latency_median_s"] == pytest.approx((2.5 + 4.0) / 2)
    assert a["latency_p90_s"] == pytest.approx(2.5 + 0.9 * (4.0 - 2.5))
    # lookup_user twice, get_billing once (failed).
    assert (a["tool_calls"], a["distinct_tools"], a["tool_errors"]) == (3, 2, 1)
    assert (a["input_tokens"], a["output_tokens"], a["total_tokens"]) == (100 + 150 + 200 + 300, 20 + 30 + 10 + 40, 850)
    assert a["models"] == "claude-3,gpt-4o"
    # 09:00:15 → 10:00:00 is the one idle gap over 30 min; the off-branch
    # checkpoint (+20000 s) and the subgraph ones (+9000 s) do not count.
    assert a["resume_points"] == 1
    assert (a["root_checkpoints"], a["subgraph_checkpoints"]) == (10, 2)
    assert a["last_checkpoint_ts"] == at(20000)  # threads.last_ts: any root checkpoint, any branch
    assert a["last_ts"] == at(3611)  # the transcript's last stamped message
    assert (a["forks"], a["branches"], a["interrupt_pending"]) == (1, 2, True)
    assert (a["removed_messages"], a["edited_messages"]) == (1, 2)


def test_back_to_back_questions_share_the_next_stamped_reply(con):
    b = row_of(metrics.conversations(con), "acme:mobile:s2")
    # 10:00:00 and 10:00:30 both answered at 10:00:40; 10:01:40 skips the reply
    # without id and is answered at 10:02:40: latencies 40, 10, 60.
    assert b["latency_pairs"] == 3
    assert b["latency_median_s"] == pytest.approx(40.0)
    assert b["latency_p90_s"] == pytest.approx(40 + 0.8 * (60 - 40))
    assert b["other_messages"] == 1


def test_no_usage_means_unknown_tokens_not_zero(con):
    c = row_of(metrics.conversations(con), "globex::s3")
    assert (c["input_tokens"], c["total_tokens"], c["models"]) == (None, None, None)


def test_filters_select_threads_and_keep_whole_transcripts(con):
    by_tenant = metrics.conversations(con, Filters(tenants=("acme",)))
    assert by_tenant["thread_id"].tolist() == ["acme:mobile:s2", "acme:web:empty", "acme:web:s1"]
    assert metrics.conversations(con, Filters(text="BILLING"))["thread_id"].tolist() == ["acme:web:s1"]
    assert metrics.conversations(con, Filters(sub_tenants=("mobile",)))["thread_id"].tolist() == ["acme:mobile:s2"]
    # A window selects threads active in it; their figures still cover every message.
    windowed = metrics.conversations(con, Filters(since=D2))
    assert windowed["thread_id"].tolist() == ["acme:mobile:s2", "globex::s3"]
    assert row_of(windowed, "globex::s3")["messages"] == len(CORPUS.transcripts["globex::s3"])


def test_resume_gap_is_a_parameter(con):
    short = row_of(metrics.conversations(con, gap_minutes=3 / 60), "acme:web:s1")
    roots = CORPUS.root_ts("acme:web:s1")
    assert short["resume_points"] == sum(b - a > timedelta(seconds=3) for a, b in zip(roots, roots[1:]))
    for bad in (0, -1, float("nan"), timedelta(minutes=5), "30"):
        with pytest.raises(BadRequest):
            metrics.conversations(con, gap_minutes=bad)


def test_path_and_connection_answer_alike(tmp_path, con):
    path = write(tmp_path / "m.duckdb")
    pd.testing.assert_frame_equal(metrics.conversations(path), metrics.conversations(con))


def test_conversation_is_the_same_row_as_plain_values(con):
    one = metrics.conversation(con, "acme:web:s1")
    assert one == row_of(metrics.conversations(con), "acme:web:s1")
    assert isinstance(one["first_ts"], datetime) and one["first_ts"].tzinfo is not None
    with pytest.raises(NotFound):
        metrics.conversation(con, "no:such:thread")


# --- latency pairs, corpus trends -----------------------------------------------------


def test_latency_distribution_lists_every_pair(con):
    got = metrics.latency_distribution(con)
    want = sorted(
        (tid, u, r, secs) for tid, msgs in CORPUS.transcripts.items() for u, r, secs in pairs_of(list(msgs))
    )
    assert list(zip(got.thread_id, got.user_ordinal, got.assistant_ordinal, got.latency_s)) == want
    assert got.loc[got.thread_id == "acme:web:s1", "model"].tolist() == ["gpt-4o", "claude-3"]


def test_latency_window_keeps_pairs_by_question_time(con):
    # The 23:59:50 question is in a window ending at midnight; its 00:00:10 reply is not, the pair still is.
    until = datetime(2025, 3, 3, tzinfo=timezone.utc)
    got = metrics.latency_distribution(con, Filters(tenants=("globex",), until=until))
    assert got["latency_s"].tolist() == [20.0]


def stamped_rows():
    for tid, msgs in CORPUS.transcripts.items():
        for m in msgs:
            if m.ts is not None:
                yield tid, m


def tenant_of(thread_id: str) -> str | None:
    parts = thread_id.split(":", 2)
    return parts[0] if len(parts) == 3 else None


def test_daily_counts_messages_by_utc_day_and_tenant(con):
    got = metrics.daily(con)
    assert tuple(got.columns) == metrics.DAILY_COLUMNS
    want: dict[tuple, Counter] = {}
    for tid, m in stamped_rows():
        want.setdefault((m.ts.date(), tenant_of(tid)), Counter())[m.role] += 1
    keys = [(d.date(), plain(t)) for d, t in zip(got["day"], got["tenant_id"])]
    assert sorted(keys, key=str) == sorted(want, key=str)
    for (day, tenant), roles in want.items():
        same_tenant = got["tenant_id"].isna() if tenant is None else got["tenant_id"] == tenant
        row = got[(got["day"].dt.date == day) & same_tenant]
        assert int(row["messages"].iloc[0]) == sum(roles.values())
        for r in ROLES:
            assert int(row[f"{r}_messages"].iloc[0]) == roles[r]


def test_daily_by_hand_across_midnight(con):
    got = metrics.daily(con, Filters(tenants=("globex",)))
    assert [d.date().isoformat() for d in got["day"]] == ["2025-03-02", "2025-03-03"]
    # Started on the 2nd (23:59:50), active both days; the pair belongs to the question's day.
    assert got["conversations_started"].tolist() == [1, 0]
    assert got["active_conversations"].tolist() == [1, 1]
    assert got["messages"].tolist() == [1, 2]
    assert got["latency_pairs"].tolist() == [1, 0]
    assert got["latency_median_s"].iloc[0] == 20.0
    assert got["total_tokens"].isna().all()


def test_daily_tokens_and_window(con):
    got = metrics.daily(con, Filters(tenants=("acme",), since=D2))
    # Only 2025-03-02: thread B's stamped messages (its reply without id has no day).
    assert [d.date().isoformat() for d in got["day"]] == ["2025-03-02"]
    stamped_b = [m for m in CORPUS.transcripts["acme:mobile:s2"] if m.ts is not None]
    assert int(got["messages"].iloc[0]) == len(stamped_b)
    assert int(got["input_tokens"].iloc[0]) == 10 + 20
    assert int(got["total_tokens"].iloc[0]) == (10 + 5) + (20 + 8)
    assert int(got["conversations_started"].iloc[0]) == 1


def test_by_model(con):
    got = metrics.by_model(con).set_index("model")
    counts = Counter(m.model for msgs in CORPUS.transcripts.values() for m in msgs if m.model)
    assert got["messages"].to_dict() == dict(counts)
    assert got.index.tolist() == sorted(counts, key=lambda k: (-counts[k], k))
    # gpt-4o answers: 2.5 s (A), 40 s and 10 s (B), 5 s (D).
    assert got.loc["gpt-4o", "latency_median_s"] == pytest.approx((5.0 + 10.0) / 2)
    assert got.loc["claude-3", "input_tokens"] == 200 + 300
    assert metrics.top_models(con, limit=1)["model"].tolist() == [got.index[0]]


def test_overview(con):
    got = metrics.overview(con)
    every = [m for msgs in CORPUS.transcripts.values() for m in msgs]
    stamps = [m.ts for m in every if m.ts is not None]
    assert got["threads"] == len(CORPUS.transcripts)
    assert got["tenants"] == 2  # acme, globex; the legacy thread has none
    assert got["messages"] == len(every)
    assert got["user_turns"] == sum(m.role == "user" for m in every)
    assert got["total_tokens"] == token_sum(every, "total")
    assert (got["first_ts"], got["last_ts"]) == (min(stamps), max(stamps))
    lat = [p[2] for msgs in CORPUS.transcripts.values() for p in pairs_of(list(msgs))]
    assert got["latency_pairs"] == len(lat)
    assert got["latency_median_s"] == pytest.approx(quantile(lat, 0.5))


def test_overview_window_counts_messages_in_it(con):
    got = metrics.overview(con, Filters(until=T0 - timedelta(days=1)))
    assert (got["threads"], got["messages"]) == (1, 2)  # only the legacy thread, both its messages


def test_top_tools_names_results_by_their_call(con):
    got = metrics.top_tools(con)
    assert got.to_dict("records") == [
        {"tool": "lookup_user", "calls": 2, "conversations": 1, "results": 2, "errors": 0},
        {"tool": "get_billing", "calls": 1, "conversations": 1, "results": 1, "errors": 1},
    ]
    assert metrics.top_tools(con, limit=1)["tool"].tolist() == ["lookup_user"]
    with pytest.raises(BadRequest):
        metrics.top_tools(con, limit=0)


def test_top_tools_in_a_window(con):
    # From 10:00:00 on: the 10:00:04 message calls get_billing and lookup_user once each; both answer in the window.
    later = metrics.top_tools(con, Filters(since=at(3600)))
    assert later.to_dict("records") == [
        {"tool": "get_billing", "calls": 1, "conversations": 1, "results": 1, "errors": 1},
        {"tool": "lookup_user", "calls": 1, "conversations": 1, "results": 1, "errors": 0},
    ]
    # 09:00:13 to 09:00:14 holds only the result of a call made at 09:00:12.5: named by that call.
    result_only = metrics.top_tools(con, Filters(since=at(13), until=at(14)))
    assert result_only.to_dict("records") == [
        {"tool": "lookup_user", "calls": 0, "conversations": 0, "results": 1, "errors": 0},
    ]


def test_top_tenants(con):
    got = metrics.top_tenants(con)
    assert [plain(t) for t in got["tenant_id"]] == ["acme", "globex", None]
    acme = [m for tid, msgs in CORPUS.transcripts.items() if tid.startswith("acme:") for m in msgs]
    row = got.iloc[0]
    assert (row["conversations"], row["messages"], row["total_tokens"]) == (3, len(acme), token_sum(acme, "total"))


# --- the same definitions on random transcripts -----------------------------------------

_stamp = st.one_of(st.none(), st.integers(0, 10_000))
_msg = st.builds(
    lambda role, stamp, model, tokens: Msg(
        role,
        "x" * ((stamp or 0) % 7),
        ts=None if stamp is None else at(stamp),
        message_id="AUTO" if stamp is not None else None,
        model=model if role == "assistant" else None,
        input_tokens=tokens if role == "assistant" else None,
    ),
    st.sampled_from(["user", "user", "assistant", "assistant", "tool", "other"]),
    _stamp,
    st.sampled_from([None, "m1", "m2"]),
    st.one_of(st.none(), st.integers(0, 50)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_msg, max_size=25))
def test_pairs_roles_and_tokens_on_random_transcripts(msgs):
    c = build_db(None, {"t:s:1": msgs})
    try:
        got = row_of(metrics.conversations(c), "t:s:1")
        lat = [p[2] for p in pairs_of(msgs)]
        assert got["latency_pairs"] == len(lat)
        assert got["latency_median_s"] == (None if not lat else pytest.approx(quantile(lat, 0.5)))
        assert got["latency_max_s"] == max(lat, default=None)
        assert [got[f"{r}_messages"] for r in ROLES] == [sum(m.role == r for m in msgs) for r in ROLES]
        assert got["input_tokens"] == token_sum(msgs, "input")
        assert got["models"] == (",".join(sorted({m.model for m in msgs if m.model})) or None)
        dist = metrics.latency_distribution(c)
        assert list(zip(dist.user_ordinal, dist.assistant_ordinal)) == [(u, r) for u, r, _ in pairs_of(msgs)]
    finally:
        c.close()


# --- a store written by real graphs, through the real loader ----------------------------


def test_loaded_store_agrees_with_the_oracle(loaded, oracle_rows, sqlite_store):
    got = metrics.conversations(loaded).set_index("thread_id")
    assert set(got.index) == set(sqlite_store.manifest)
    by_thread = defaultdict(list)
    for r in oracle_rows:
        by_thread[r["thread_id"]].append(r)
    assert by_thread, "the oracle saw no messages"
    for tid, rows in by_thread.items():
        rows.sort(key=lambda r: r["ordinal"])
        row = got.loc[tid]
        roles = Counter(r["role"] for r in rows)
        assert [int(row[f"{r}_messages"]) for r in ROLES] == [roles[r] for r in ROLES], tid
        assert int(row["user_turns"]) == roles["user"], tid
        stamps = [r["ts"] for r in rows if r["ts"] is not None]
        assert plain(row["first_ts"]) == min(stamps, default=None), tid
        assert plain(row["last_ts"]) == max(stamps, default=None), tid
        lat = [p[2] for p in pairs_of(rows)]
        assert int(row["latency_pairs"]) == len(lat), tid
        assert plain(row["latency_max_s"]) == max(lat, default=None), tid
