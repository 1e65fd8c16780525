"""A Redis thread of more checkpoints than a load reads, or more special writes than it keeps:
past the limits only the documents' ids are fetched, then the documents of the checkpoints and
writes that are read (docs/security.md, "Checkpoints per thread"). The store is on the tests'
own Redis Stack server (tests/loaders/redis_util.py); what the server sent is its own count
(`INFO stats`, `total_net_output_bytes`), so "not fetched" is measured, not inferred.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import loaders
from loaders import records
from tests.attacks.harness import attack
from tests.attacks.redis_stores import long_redis_thread, special_write_flood
from tests.attacks.test_long_thread import CAP, CHECKPOINTS, _assert_cut, _rows
from tests.loaders.redis_util import RedisStack, flush, redis_stack_server

PAD = 4096  # characters in each checkpoint document beside its message: a fetched document shows


@pytest.fixture(scope="module")
def redis_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisStack]:
    with redis_stack_server(tmp_path_factory.mktemp("redis_stack")) as server:
        yield server


def _sent(stack: RedisStack) -> int:
    return int(stack.client().info("stats")["total_net_output_bytes"])


def test_a_redis_thread_past_the_limit_fetches_only_its_first_documents(redis_stack, tmp_path):
    flush(redis_stack)
    doc_bytes = long_redis_thread(redis_stack.url, "checkpoint", CHECKPOINTS, pad=PAD)
    long_redis_thread(redis_stack.url, "checkpoint", 1, thread_id="short")
    db = tmp_path / "out.duckdb"
    before = _sent(redis_stack)
    out = attack(["load", redis_stack.url, "--db", str(db)], tmp_path,
                 env={"TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS": str(CAP)})
    sent = _sent(redis_stack) - before
    out.succeeded().within_budget().wrote_only([db])
    _assert_cut(db)
    assert _rows(db, "SELECT checkpoint_count, stale_reason FROM threads WHERE thread_id = 'short'") == [(1, None)]
    assert _rows(db, "SELECT thread_id, content FROM messages ORDER BY thread_id") == [
        ("long", "the first question"), ("short", "the first question")]
    # The CAP documents read, and a few hundred bytes of ids for each of the others; all
    # CHECKPOINTS documents would be CHECKPOINTS * doc_bytes (twice as much here).
    assert sent < CAP * doc_bytes + CHECKPOINTS * 300 + (1 << 20), (sent, doc_bytes)


def test_a_flood_of_special_writes_on_redis_keeps_the_last_as_every_reader(redis_stack, tmp_path, monkeypatch):
    """`records.SpecialWritesTail`'s rule: the last writes by key, the earlier ones one error row."""
    monkeypatch.setattr(records, "SPECIAL_WRITES_MAX", 50)
    flush(redis_stack)
    doc_bytes = special_write_flood(redis_stack.url, "checkpoint", 300, value="boom " * 400)
    db = tmp_path / "flood.duckdb"
    before = _sent(redis_stack)
    summary = loaders.load(redis_stack.url, db)
    sent = _sent(redis_stack) - before
    assert summary.errors == 1
    assert _rows(db, "SELECT thread_id, checkpoint_id, stage, reason FROM load_errors") == [(
        "flood", None, "write", "250 earlier special writes (__interrupt__ / __resume__ / __error__) skipped: "
        "a thread's last 50 or 64 MiB of them are read")]
    # Of the 300 write documents only the 50 kept are fetched whole (all: 300 * doc_bytes, 0.8 MB).
    assert sent < 50 * doc_bytes + 300 * 300 + (64 << 10), (sent, doc_bytes)


def test_the_writes_of_the_checkpoints_a_cut_redis_thread_skips_are_not_read(redis_stack, tmp_path, monkeypatch):
    """Writes past the last checkpoint read are left unread before the last special writes are
    chosen: a flood on a skipped checkpoint leaves the interrupt of the last one read."""
    from langgraph.checkpoint.redis import RedisSaver

    monkeypatch.setenv("TRANSCRIPT_LENS_MAX_THREAD_CHECKPOINTS", "20")
    monkeypatch.setattr(records, "SPECIAL_WRITES_MAX", 50)
    flush(redis_stack)
    long_redis_thread(redis_stack.url, "checkpoint", 50)
    first = min(k.decode().rsplit(":", 1)[-1] for k in redis_stack.client().keys("checkpoint:long:*"))
    with RedisSaver.from_conn_string(redis_stack.url) as saver:
        conf = {"thread_id": "long", "checkpoint_ns": ""}
        saver.put_writes({"configurable": {**conf, "checkpoint_id": f"{first}-0000019"}}, [("__interrupt__", "approve?")], "ask")
        for i in range(100):
            saver.put_writes({"configurable": {**conf, "checkpoint_id": f"{first}-0000030"}}, [("__error__", "boom")],
                             f"flood-{i:03d}")
    db = tmp_path / "out.duckdb"
    summary = loaders.load(redis_stack.url, db)
    assert summary.errors == 1  # the cut, and no special write skipped
    assert _rows(db, "SELECT interrupt_pending, latest_checkpoint_id FROM threads") == [(True, f"{first}-0000019")]
