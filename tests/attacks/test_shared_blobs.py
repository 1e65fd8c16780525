"""Postgres-shaped stores keep a thread's `messages` list once per version, and any number of
checkpoints may name one: a store of two blobs and small rows asks for checkpoints × messages
list entries, and as many events when the two lists are each other reversed. The per-thread
limits on list entries and on events hold every source to the budget (docs/security.md,
"Message lists per thread"; `transform.limits.within_list_entries`, `records.max_thread_events`).
"""

from __future__ import annotations

import pytest

from tests.attacks.harness import attack
from tests.attacks.pg_stores import shared_blob_thread
from tests.attacks.test_long_thread import _rows
from tests.loaders.pg_util import fresh_database

# 600 checkpoints naming two 10,000-message lists, each the other reversed: 6M list entries and
# 6M `reordered` events (the load took 1.5 GB); the store is 2 blobs of 1.8 MB and 600 small rows.
CHECKPOINTS, MESSAGES = 600, 10_000


def test_checkpoints_alternating_between_a_list_and_its_reverse_load_within_the_budget(tmp_path):
    with fresh_database() as dsn:
        shared_blob_thread(dsn, CHECKPOINTS, MESSAGES, reverse=True)
        db = tmp_path / "out.duckdb"
        out = attack(["load", dsn, "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "messages"
    assert reason == ("message events of this checkpoint and the later ones not recorded: the thread's events pass "
                      "the per-thread limit of 1,000,000 (TRANSCRIPT_LENS_MAX_THREAD_EVENTS)")
    # 10,000 added, then 10,000 reordered at each checkpoint: the first 100 checkpoints' events.
    assert _rows(db, "SELECT count(*) FROM message_events") == [(1_000_000,)]
    # The transcript is whole: the latest checkpoint's list (an even count of copies: the reversed one).
    assert _rows(db, "SELECT count(*), min_by(content, ordinal) FROM messages") == [(MESSAGES, f"m{MESSAGES - 1}")]
    assert _rows(db, "SELECT stale_reason FROM threads") == [(None,)]


@pytest.mark.parametrize("form", ["live", "copy-csv", "pg_dump-Fc"])
def test_checkpoints_past_the_list_entry_limit_load_without_messages_from_every_postgres_form(tmp_path, form):
    """Every checkpoint names one list of 100 messages; at a limit of 1,000 entries the first 10
    checkpoints (by id) keep their lists and the rest load without them, the thread stale."""
    from tests.loaders.pg_util import export_csv, pg_dump

    with fresh_database() as dsn:
        shared_blob_thread(dsn, 50, 100, reverse=False)
        source = (dsn if form == "live" else str(export_csv(dsn, tmp_path / "csv")) if form == "copy-csv"
                  else str(pg_dump(dsn, tmp_path / "dump.custom", "-Fc")))
        db = tmp_path / "out.duckdb"
        out = attack(["load", source, "--db", str(db)], tmp_path, env={"TRANSCRIPT_LENS_MAX_LIST_ENTRIES": "1000"})
    out.succeeded().within_budget()
    [(cid, reason)] = _rows(db, "SELECT checkpoint_id, reason FROM load_errors")
    assert reason == ("the thread's message lists hold more than 1,000 entries in all, over the per-thread limit "
                      "(TRANSCRIPT_LENS_MAX_LIST_ENTRIES): this checkpoint and the later ones load without messages")
    ids = [c for (c,) in _rows(db, "SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id")]
    assert len(ids) == 50 and cid == ids[10]
    assert _rows(db, "SELECT count(*) FROM checkpoints WHERE message_versions IS NOT NULL") == [(10,)]
    [(transcript_cp, stale)] = _rows(db, "SELECT transcript_checkpoint_id, stale_reason FROM threads")
    assert transcript_cp == ids[9] and "TRANSCRIPT_LENS_MAX_LIST_ENTRIES" in stale
    assert _rows(db, "SELECT count(*) FROM messages") == [(100,)]
