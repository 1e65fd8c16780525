"""Resume QA SQL on hand-built databases: what real LangGraph stores rarely show, and scale.

- chain order when `metadata.step` is missing and `ts` goes backwards (the
  recursive walk over parent links), with process-id carry-forward;
- transcript entries the loader could not decode, and non-conversational roles;
- a generated corpus whose resume points and risks are known by construction,
  checked set-based over every thread (and timed). For a bigger benchmark:

    .venv/bin/python -m tests.analytics.test_resume_sql /tmp/resume_1m.duckdb --threads 20000 --messages 50
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import analytics
from analytics import observed, resume
from analytics.filters import Filters
from loaders import catalog

T0 = datetime(2025, 5, 1, 10, 0, tzinfo=UTC)


def _db(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    con.execute(catalog.ddl())
    return con


def _checkpoint(con, thread, cid, parent, ts, step=None, metadata=None, versions=(), interrupt=False):
    con.execute(
        "INSERT INTO checkpoints VALUES (?, '', ?, ?, ?, ?, 'loop', NULL, ?, ?, TRUE, FALSE, FALSE, TRUE, NULL, ?, ?)",
        [thread, cid, parent, ts, step, len(versions), list(versions), interrupt, json.dumps(metadata or {})],
    )


def _thread(con, thread, latest, messages=0):
    con.execute(
        "INSERT INTO threads (thread_id, session_id, checkpoint_count, root_checkpoint_count, subgraph_checkpoint_count,"
        " namespace_count, message_count, latest_checkpoint_id, transcript_checkpoint_id, latest_is_leaf, branch_count,"
        " fork_count, interrupt_pending, removed_message_count, edited_message_count)"
        " VALUES (?, ?, 0, 0, 0, 1, ?, ?, ?, TRUE, 1, 0, FALSE, 0, 0)",
        [thread, thread, messages, latest, latest],
    )


@pytest.fixture()
def skewed(tmp_path) -> Path:
    """One thread whose chain order is neither its ts order nor its step order (no steps at all).

    cp1 10:00 w1 → cp2 10:01 w1 → cp3 08:59 w2 (clock behind) → cp4 11:00 (no writer key)
    → cp5 11:05 w2 → cp6 11:06 w1
    """
    path = tmp_path / "skewed.duckdb"
    con = _db(path)
    rows = [
        ("cp1", None, T0, {"writer": "w1"}),
        ("cp2", "cp1", T0 + timedelta(minutes=1), {"writer": "w1"}),
        ("cp3", "cp2", T0 - timedelta(minutes=1), {"writer": "w2", "host": "b"}),
        ("cp4", "cp3", T0 + timedelta(hours=1), {}),
        ("cp5", "cp4", T0 + timedelta(hours=1, minutes=5), {"writer": "w2", "host": "b"}),
        ("cp6", "cp5", T0 + timedelta(hours=1, minutes=6), {"writer": "w1", "host": "b"}),
    ]
    for cid, parent, ts, meta in rows:
        _checkpoint(con, "t", cid, parent, ts, None, meta)
    _thread(con, "t", "cp6")
    con.close()
    return path


def test_chain_order_without_steps_and_with_ts_going_backwards(skewed):
    points = resume.resume_points(skewed, "t")
    assert points[["before_checkpoint_id", "after_checkpoint_id", "reason"]].values.tolist() == [
        ["cp2", "cp3", "process_change"],
        ["cp3", "cp4", "idle_gap"],
        ["cp5", "cp6", "process_change"],
    ]
    assert points["gap_s"].tolist() == [-120.0, 3660.0, 60.0]  # measured on ts, even backwards
    assert points["resume_no"].tolist() == [1, 2, 3]
    # cp4 carries no writer key: cp5's w2 is compared with cp3's w2 (no change), not with nothing.
    assert points["process_change"].fillna("").tolist() == ["writer: w1 → w2", "", "writer: w2 → w1"]
    # The page's chain (a Python walk of the parent links) agrees.
    line = resume.timeline(skewed, "t")
    assert line["checkpoint_id"].tolist() == ["cp1", "cp2", "cp3", "cp4", "cp5", "cp6"]
    assert line["resume"].fillna("").tolist() == [
        "",
        "before #1",
        "after #1, before #2",
        "after #2",
        "before #3",
        "after #3",
    ]
    assert line["resume_no"].fillna(0).tolist() == [0, 1, 2, 2, 3, 3]


def test_a_key_that_only_some_checkpoints_carry_does_not_invent_changes(tmp_path):
    path = tmp_path / "carry.duckdb"
    con = _db(path)
    # w1 → (an operator's update_state, no key) → w1: the same worker throughout.
    for i, (meta, minutes) in enumerate([({"worker": "w1"}, 0), ({}, 1), ({"worker": "w1"}, 2), ({"worker": "w1"}, 3)]):
        _checkpoint(con, "t", f"cp{i}", f"cp{i - 1}" if i else None, T0 + timedelta(minutes=minutes), i, meta)
    _thread(con, "t", "cp3")
    con.close()
    assert resume.resume_points(path, "t").empty
    assert len(resume.resume_points(path, "t", gap_minutes=0.5)) == 3  # every minute-long step above 30 s


def test_window_skips_other_roles_and_undecodable_entries(tmp_path):
    path = tmp_path / "roles.duckdb"
    con = _db(path)
    versions = [
        (0, "m0", "system", "You are helpful."),
        (1, "m1", "user", "hi"),
        (2, "m2", "assistant", ""),  # a tool-calling turn with no text is still an assistant message
        (3, "m3", "tool", "{'ok': true}"),
        (4, "m4", "other", "Review: fine."),
        (6, None, "assistant", "done"),  # no id, so no ts
    ]
    for v, mid, role, content in versions:
        con.execute(
            "INSERT INTO message_versions (thread_id, version, message_id, role, content, first_checkpoint_id, first_ts) "
            "VALUES ('t', ?, ?, ?, ?, 'cp1', ?)",
            [v, mid, role, content, T0],
        )
    # Version 5 sits in the list but has no message_versions row: the loader could not decode it.
    _checkpoint(con, "t", "cp1", None, T0, 0, {}, versions=[0, 1, 2, 3, 4, 5, 6])
    _thread(con, "t", "cp1")
    con.close()
    window = resume.expected_window(path, "t")
    assert window[["position", "speaker", "content", "ordinal"]].values.tolist() == [
        [0, "user", "hi", 1],
        [1, "assistant", "", 2],
        [2, "assistant", "done", 6],
    ]
    assert window["ts"].isna().tolist() == [False, False, True]
    assert resume.expected_window(path, "t", cap=1)["ordinal"].tolist() == [6]
    assert resume.expected_window(path, "t", cap=0).empty


# --- a generated corpus with known answers ----------------------------------------------------------


def build_corpus(path: str | Path, threads: int = 2000, messages: int = 50) -> Path:
    """`threads` threads of `messages` messages, one root checkpoint per message.

    By construction (thread number n):
    - n % 7 == 0: a 4-hour pause before checkpoint `messages // 2` (an idle-gap resume point);
    - n % 10 == 0: `writer` w1 before that checkpoint, w2 from it on (a process change);
    - every 5th message is a tool message; the others alternate user / assistant;
    - n % 13 == 0: the last user message has no id (so no ts);
    - n % 17 == 0: an interrupt is pending.
    """
    path = Path(path)
    con = _db(path)
    half = messages // 2
    con.execute("CREATE TEMP TABLE th AS SELECT i AS n, 'ten' || (i % 50) || ':web:s' || i AS thread_id FROM range(?) t(i)",
                [threads])  # fmt: skip
    con.execute(
        """
        INSERT INTO checkpoints
        SELECT th.thread_id, '', printf('cp-%08d-%04d', th.n, k),
               CASE WHEN k = 0 THEN NULL ELSE printf('cp-%08d-%04d', th.n, k - 1) END,
               TIMESTAMPTZ '2025-01-01 00:00:00+00'
                   + to_seconds(th.n * 60 + k * 30 + CASE WHEN th.n % 7 = 0 AND k >= $half THEN 14400 ELSE 0 END),
               k - 1, CASE WHEN k % 2 = 1 THEN 'input' ELSE 'loop' END, NULL, k,
               CASE WHEN k = 0 THEN []::INTEGER[] ELSE range(0, k)::INTEGER[] END,
               TRUE, k = $m, k = $m, TRUE, NULL, th.n % 17 = 0 AND k = $m,
               CASE WHEN th.n % 10 = 0
                    THEN json_object('source', 'loop', 'step', k - 1, 'writer', CASE WHEN k < $half THEN 'w1' ELSE 'w2' END)
                    ELSE json_object('source', 'loop', 'step', k - 1) END
        FROM th, range(0, $m + 1) r(k)
        """,
        {"half": half, "m": messages},
    )
    con.execute(
        """
        INSERT INTO message_versions (thread_id, version, message_id, lc_type, role, name, content, content_chars,
                                      non_text_blocks, tool_calls, tool_call_count, tool_call_id, tool_status,
                                      first_checkpoint_id, first_ts)
        SELECT th.thread_id, v, CASE WHEN th.n % 13 = 0 AND v = $m - 2 THEN NULL ELSE printf('m-%d-%d', th.n, v) END,
               NULL, CASE WHEN v % 5 = 4 THEN 'tool' WHEN v % 2 = 0 THEN 'user' ELSE 'assistant' END, NULL,
               'message ' || v || ' of thread ' || th.n, 30, 0, NULL, 0, NULL, NULL,
               printf('cp-%08d-%04d', th.n, v + 1),
               TIMESTAMPTZ '2025-01-01 00:00:00+00'
                   + to_seconds(th.n * 60 + (v + 1) * 30 + CASE WHEN th.n % 7 = 0 AND v + 1 >= $half THEN 14400 ELSE 0 END)
        FROM th, range(0, $m) r(v)
        """,
        {"half": half, "m": messages},
    )
    con.execute(
        """
        INSERT INTO messages (thread_id, tenant_id, sub_tenant_id, session_id, ordinal, role, content, message_id, ts,
                              checkpoint_id, version)
        SELECT v.thread_id, split_part(v.thread_id, ':', 1), 'web', split_part(v.thread_id, ':', 3), v.version, v.role,
               v.content, v.message_id, CASE WHEN v.message_id IS NOT NULL THEN v.first_ts END,
               CASE WHEN v.message_id IS NOT NULL THEN v.first_checkpoint_id END, v.version
        FROM message_versions AS v
        """
    )
    con.execute(
        """
        INSERT INTO threads
        SELECT th.thread_id, 'ten' || (th.n % 50), 'web', 's' || th.n, min(c.ts), max(c.ts), count(*), count(*), 0, 1,
               $m, printf('cp-%08d-%04d', th.n, $m), printf('cp-%08d-%04d', th.n, $m), NULL, TRUE, 1, 0,
               th.n % 17 = 0, NULL, 0, 0
        FROM th JOIN checkpoints AS c ON c.thread_id = th.thread_id
        GROUP BY th.n, th.thread_id
        """,
        {"m": messages},
    )
    con.close()
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("corpus") / "corpus.duckdb", threads=2000, messages=50)


def test_resume_points_over_every_thread_are_the_constructed_ones(corpus):
    points = resume.resume_points(corpus)
    by_thread = points.set_index("thread_id")
    n = by_thread.index.str.extract(r":s(\d+)$", expand=False).astype(int)
    expected = {f"ten{i % 50}:web:s{i}" for i in range(2000) if i % 7 == 0 or i % 10 == 0}
    assert set(points["thread_id"]) == expected and len(points) == len(expected)  # one point each
    reasons = dict(zip(by_thread.index, by_thread["reason"]))
    for thread, i in zip(by_thread.index, n):
        want = {(True, True): "idle_gap+process_change", (True, False): "idle_gap", (False, True): "process_change"}
        assert reasons[thread] == want[(i % 7 == 0, i % 10 == 0)]
    assert (points["after_checkpoint_id"].str.endswith("-0025")).all()
    assert (points["before_message_count"] == 24).all()


def test_risks_over_every_thread_are_the_constructed_ones(corpus):
    table = resume.risks(corpus, cap=30)
    assert len(table) == 2000
    n = table["thread_id"].str.extract(r":s(\d+)$", expand=False).astype(int)
    assert (table["conversational_messages"] == 40).all()  # 50 messages, every 5th a tool result
    assert (table["truncated_by"] == 10).all() and (table["window_size"] == 30).all()
    assert ((table["window_no_id"] == 1) == (n % 13 == 0)).all()
    assert ((table["window_no_ts"] == 1) == (n % 13 == 0)).all()
    assert (table["interrupt_pending"] == (n % 17 == 0)).all()
    assert table["flags"].str.startswith("no_id_in_window").sum() == (n % 13 == 0).sum()
    assert table["risk_score"].is_monotonic_decreasing
    acme = resume.risks(corpus, Filters(tenants=("ten3",)), cap=30)
    assert len(acme) == 40 and set(acme["tenant_id"]) == {"ten3"}


def test_resume_report_over_every_thread(corpus):
    report = observed.resume_report(corpus, gap_minutes=30, cap=5)
    assert set(report["kind"]) == {"expected"}
    points = report.drop_duplicates(["thread_id", "resume_no"])
    assert len(points) == len({i for i in range(2000) if i % 7 == 0 or i % 10 == 0})
    assert report.groupby("thread_id").size().eq(5).all()  # 24 messages before each resume, 5 kept


def main(argv: list[str] | None = None) -> int:
    from ui.models import resume_qa  # the page's call, timed with the rest

    p = argparse.ArgumentParser(description="Time resume QA on a generated corpus")
    p.add_argument("db")
    p.add_argument("--threads", type=int, default=20000)
    p.add_argument("--messages", type=int, default=50)
    a = p.parse_args(argv)
    if not Path(a.db).exists():
        started = time.perf_counter()
        build_corpus(a.db, a.threads, a.messages)
        print(f"built {a.db} in {time.perf_counter() - started:.1f} s")
    con = analytics.connect(a.db)
    messages = con.sql("SELECT count(*) FROM messages").fetchall()[0][0]
    for name, call in [
        ("risks (all threads)", lambda: resume.risks(con)),
        ("resume_points (all threads)", lambda: resume.resume_points(con)),
        ("resume_report (all threads)", lambda: observed.resume_report(con)),
        ("thread_qa (one thread)", lambda: resume_qa.thread_qa(con, "ten0:web:s0")),
    ]:
        started = time.perf_counter()
        call()
        print(f"{name}: {time.perf_counter() - started:.2f} s on {messages:,} messages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def test_resume_counts_sql_counts_the_same_points(corpus):
    sql, params = resume.resume_counts_sql(Filters(tenants=("ten0", "ten7")))
    con = analytics.connect(corpus)
    try:
        counts = dict(con.sql(sql, params=params).fetchall())
    finally:
        con.close()
    points = resume.resume_points(corpus, filters=Filters(tenants=("ten0", "ten7")))
    assert counts == points.groupby("thread_id").size().to_dict() and len(counts) > 0
