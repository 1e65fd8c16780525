"""`conversation_signals` after an incremental load: only the replaced threads' facts are
computed again, every row is finished against the store's new latest time, and the table
equals a full load's."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

import transcript_lens
from analytics.conversation_outcomes import materialize
from storegen import Reply
from tests.analytics.outcomes.stores import START, Script, Unanswered, User, write_store


def _table(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT * FROM conversation_signals ORDER BY thread_id").fetchall()
    finally:
        con.close()


def _row(db, thread: str) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rel = con.sql("SELECT * FROM conversation_signals WHERE thread_id = ?", params=[thread])
        return dict(zip(rel.columns, rel.fetchall()[0]))
    finally:
        con.close()


@pytest.fixture
def computed(monkeypatch):
    """The thread ids whose facts each load computes (a spy on `thread_facts`)."""
    seen: list[list[str]] = []
    real = materialize.thread_facts

    def spy(*args, **kwargs):
        table = real(*args, **kwargs)
        seen.append(sorted(table.column("thread_id").to_pylist()))
        return table

    monkeypatch.setattr(materialize, "thread_facts", spy)
    return seen


def test_incremental_recomputes_changed_threads_and_equals_a_full_load(tmp_path, computed):
    src, db, full = tmp_path / "src.sqlite", tmp_path / "lens.duckdb", tmp_path / "full.duckdb"
    write_store(src, {
        # unanswered 10 minutes before the store's end: not (yet) abandoned
        "acme:web:waiting-user": Script([Reply("Which order?")], [User("Where is my order?", 0),
                                                                   Unanswered("It is A-1043", 20 * 60)]),
        "acme:web:done": Script([Reply("It shipped.")], [User("Where is A-1043?", 0)], start=START + dt.timedelta(minutes=30)),
    })
    transcript_lens.load(src, db, workers=1)
    assert not _row(db, "acme:web:waiting-user")["abandoned"]
    assert computed == [["acme:web:done", "acme:web:waiting-user"]]

    # Two hours later a new thread arrives: the waiting user's thread is unchanged, but now idle past the window.
    write_store(src, {"acme:web:later": Script([Reply("Hi!")], [User("Hello", 0)], start=START + dt.timedelta(hours=2))})
    computed.clear()
    assert transcript_lens.load(src, db, incremental=True).changed == 1
    assert computed == [["acme:web:later"]]
    row = _row(db, "acme:web:waiting-user")
    assert row["abandoned"] and row["outcome"] == "abandoned" and row["abandoned_ordinals"] == [2]

    transcript_lens.load(src, full, workers=1)
    assert _table(db) == _table(full)
