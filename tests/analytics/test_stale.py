"""Stale transcripts in the analytics API, the reports and the CLI.

The database is tests/stale_store.py's store (real graphs, real savers, part of it written
through LangGraph's `EncryptedSerializer`) loaded without its key by `transcript_lens.load`
(derived tables included, as every user-facing load writes them): two threads are stale.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import analytics
from analytics import metrics, transcript
from analytics.errors import StaleTranscript
from analytics.filters import Filters
from tests.loaders.util import rows
from tests.stale_store import load_without_key, MIXED, PLAIN, SECRET, write_stale_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return write_stale_store(tmp_path_factory.mktemp("stale-analytics") / "stale.sqlite")


@pytest.fixture(scope="module")
def db(store, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("stale-db") / "stale.duckdb"
    return load_without_key(store, db)


def threads(db: Path) -> dict[str, dict]:
    return {r["thread_id"]: r for r in rows(db, "SELECT * FROM threads")}


def test_the_conversation_metrics_carry_the_threads_columns_and_the_filter_keeps_the_stale(db):
    want = threads(db)
    with analytics.connection(db) as con:
        assert metrics.materialized(con)  # the load-time table answers, not the live query
    every = metrics.conversations(db).set_index("thread_id")
    for thread, row in want.items():
        assert every.loc[thread, "transcript_checkpoint_id"] == row["transcript_checkpoint_id"] or (
            row["transcript_checkpoint_id"] is None and every.isna().loc[thread, "transcript_checkpoint_id"])
        assert (every.loc[thread, "stale_reason"] if not every.isna().loc[thread, "stale_reason"] else None) == row["stale_reason"]
    stale = sorted(t for t, r in want.items() if r["stale_reason"] is not None)
    assert stale == [MIXED, SECRET]
    assert sorted(metrics.conversations(db, Filters(stale=True))["thread_id"]) == stale
    assert sorted(metrics.conversation_list(db, Filters(stale=True))["thread_id"]) == stale
    # With another condition, and through the live query (a non-default resume gap reads no table).
    assert metrics.conversations(db, Filters(stale=True, tenants=("acme",)), gap_minutes=5)["thread_id"].tolist() == stale
    assert metrics.conversations(db, Filters(stale=True, tenants=("globex",))).empty
    assert metrics.overview(db, Filters(stale=True))["threads"] == 2
    assert metrics.overview(db)["stale_threads"] == 2 and metrics.overview(db, Filters(tenants=("globex",)))["stale_threads"] == 0


def test_the_thread_listing_carries_the_reason(db):
    listed = transcript.threads(db).set_index("thread_id")
    assert listed.loc[MIXED, "stale_reason"] == threads(db)[MIXED]["stale_reason"]
    assert listed.isna().loc[PLAIN, "stale_reason"]


def test_read_warns_and_says_it_in_attrs(db, store):
    with pytest.warns(StaleTranscript, match=f"stale transcript, from root checkpoint {store.last_plain[MIXED]}"):
        frame = analytics.read(db, MIXED)
    assert frame.attrs == {"transcript_checkpoint_id": store.last_plain[MIXED],
                           "stale_reason": threads(db)[MIXED]["stale_reason"]}
    assert frame["content"].tolist() == store.contents(MIXED, store.last_plain[MIXED])
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleTranscript)
        current = analytics.read(db, PLAIN)  # no warning for a current transcript
        at_checkpoint = analytics.read(db, MIXED, checkpoint_id=store.last_plain[MIXED])  # a checkpoint asked for
    assert current.attrs == {"transcript_checkpoint_id": store.latest[PLAIN], "stale_reason": None}
    assert at_checkpoint["content"].tolist() == frame["content"].tolist()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "transcript_lens", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_the_transcript_command_prints_one_warning_line_for_a_stale_thread(db, store):
    done = cli("transcript", "--db", str(db), "--thread", MIXED, "--format", "csv")
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warned == [f"warning: thread {MIXED}: stale transcript, from root checkpoint {store.last_plain[MIXED]} "
                      f"({threads(db)[MIXED]['stale_reason']})"]
    assert "StaleTranscript" not in done.stderr  # ours, not Python's warning lines
    assert [r["content"] for r in csv.DictReader(done.stdout.splitlines())] == store.contents(MIXED, store.last_plain[MIXED])
    current = cli("transcript", "--db", str(db), "--thread", PLAIN)
    assert current.returncode == 0 and "warning" not in current.stderr


def test_the_conversations_report_has_the_columns_and_keeps_only_the_stale_with_stale(db, tmp_path):
    out = tmp_path / "conv.csv"
    done = cli("report", "conversations", "--db", str(db), "--out", str(out), "--stale")
    assert done.returncode == 0, done.stderr
    got = {r["thread_id"]: r for r in csv.DictReader(out.open())}
    want = threads(db)
    assert sorted(got) == [MIXED, SECRET]
    assert {t: (r["transcript_checkpoint_id"], r["stale_reason"]) for t, r in got.items()} == {
        t: (want[t]["transcript_checkpoint_id"] or "", want[t]["stale_reason"]) for t in got}


@pytest.fixture(scope="module")
def older(db, tmp_path_factory) -> Path:
    """The database as the previous schema wrote it: no staleness columns, `meta` saying 3."""
    import duckdb

    old = tmp_path_factory.mktemp("older") / "older.duckdb"
    old.write_bytes(db.read_bytes())
    con = duckdb.connect(str(old))
    con.execute("ALTER TABLE threads DROP COLUMN stale_reason")
    con.execute("ALTER TABLE threads DROP COLUMN transcript_checkpoint_id")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    return old


def test_a_database_of_an_older_schema_is_refused_in_one_line_that_says_to_load_it_again(older):
    from loaders.catalog import SCHEMA_VERSION

    with pytest.raises(analytics.AnalyticsError, match=r"written under schema 3 and this Transcript Lens reads schema "
                       + SCHEMA_VERSION + ": load its source again"):
        analytics.connect(older)
    done = cli("transcript", "--db", str(older), "--thread", MIXED)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
