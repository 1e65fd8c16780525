"""The retention report / deletion manifest (analytics.retention) against LangGraph's own view of
the store: which root checkpoints still hold a message payload the transcript no longer has."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone

import pytest

import analytics
import transcript_lens
from analytics import Filters
from analytics.cli import main as analytics_main
from storegen import build_sqlite_store
from tests import oracle

THREADS = {
    "globex::s2": "edit",
    "globex:mobile:sess-010": "replay_branch",
    "initech:support:sess-020": "remove_message",
    "acme:web:sess-001": "simple_chat",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("retention")
    path = folder / "store.sqlite"
    build_sqlite_store(path, threads=THREADS)
    db = folder / "lens.duckdb"
    transcript_lens.load(path, db)
    return path, db


def _expected(path, tmp_path) -> dict[str, set[str]]:
    """thread → root checkpoints whose message list holds a payload (id + value) that the
    latest root checkpoint's list does not: computed with the saver's own decoder."""
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(path, copy)
    saver = oracle.open_sqlite(copy)
    out: dict[str, set[str]] = {}
    for thread_id, tuples in oracle.tuples_by_thread(saver).items():
        roots = [t for t in tuples if t.config["configurable"]["checkpoint_ns"] == ""]
        latest = max(roots, key=lambda t: t.checkpoint["id"])
        keep = {(m.id, oracle.message_value(m)) for m in latest.checkpoint["channel_values"].get("messages", [])}
        held = set()
        for t in roots:
            msgs = t.checkpoint["channel_values"].get("messages") or []
            if any((m.id, oracle.message_value(m)) not in keep for m in msgs):
                held.add(t.checkpoint["id"])
        out[thread_id] = held
    return out


def test_manifest_lists_exactly_the_checkpoints_that_still_hold_gone_content(store, tmp_path):
    path, db = store
    expected = _expected(path, tmp_path)
    got = analytics.retention(db)
    listed = {t: set(got.loc[got.thread_id == t, "checkpoint_id"]) for t in THREADS}
    assert listed == {t: expected.get(t, set()) for t in THREADS}
    assert listed["acme:web:sess-001"] == set()  # a thread that only grew holds nothing gone
    reasons = got.groupby("thread_id").reason.agg(set).to_dict()
    assert reasons == {"globex::s2": {"edited"}, "globex:mobile:sess-010": {"abandoned_branch"},
                       "initech:support:sess-020": {"removed"}}
    assert (got.checkpoint_ns == "").all() and (got.gone_messages > 0).all()


def test_threads_past_the_age_limit_are_one_row_each(store):
    _, db = store
    last = {t: ts for t, ts in analytics.conversations(db)[["thread_id", "last_checkpoint_ts"]].itertuples(index=False)}
    as_of = min(last.values()) + timedelta(days=10)
    # Older than 10 days plus one minute before `as_of`: none; older than zero days: all;
    # in between, exactly the threads whose last checkpoint is before the cutoff.
    none = analytics.retention(db, older_than_days=10 + 1 / 1440, as_of=as_of)
    assert "older_than" not in set(none.reason)
    middle = sorted(last.values())[2]
    some = analytics.retention(db, older_than_days=(as_of - middle) / timedelta(days=1), as_of=as_of)
    assert set(some.loc[some.reason == "older_than", "thread_id"]) == {t for t, ts in last.items() if ts < middle}
    assert not set(some.loc[some.reason != "older_than", "thread_id"]) & {t for t, ts in last.items() if ts < middle}
    as_of = max(last.values()) + timedelta(days=10)
    everything = analytics.retention(db, older_than_days=0, as_of=as_of)
    assert set(everything.reason) == {"older_than"} and set(everything.thread_id) == set(THREADS)
    assert everything.checkpoint_id.isna().all()
    scoped = analytics.retention(db, Filters(tenants=("globex",)), older_than_days=0, as_of=as_of)
    assert set(scoped.thread_id) == {"globex::s2", "globex:mobile:sess-010"}
    with pytest.raises(analytics.BadRequest, match="older-than"):
        analytics.retention(db, older_than_days=-1)


def test_cli_writes_the_manifest_as_csv_and_json(store, tmp_path):
    _, db = store
    csv_out, json_out = tmp_path / "m.csv", tmp_path / "m.json"
    assert analytics_main(["report", "retention", "--db", str(db), "--out", str(csv_out)]) == 0
    assert analytics_main(["report", "retention", "--db", str(db), "--out", str(json_out), "--older-than", "36500"]) == 0
    rows = json.loads(json_out.read_text())
    frame = analytics.retention(db)
    assert [r["checkpoint_id"] for r in rows] == frame.checkpoint_id.tolist()
    assert csv_out.read_text().splitlines()[0].split(",") == list(analytics.retention(db).columns)
    assert len(csv_out.read_text().splitlines()) == len(rows) + 1
    assert rows[0]["checkpoint_ts"].endswith("Z") and isinstance(rows[0]["gone_messages"], int)
