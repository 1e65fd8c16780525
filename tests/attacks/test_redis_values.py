"""Redis documents over the per-value limit (`TRANSCRIPT_LENS_MAX_BLOB_BYTES`): measured on the
server (`JSON.DEBUG MEMORY`) and never fetched, each one `load_errors` row naming the limit, the
rest of the thread loaded (docs/security.md, "One stored value"). The store is on the tests' own
Redis Stack server, read as the least-privileged user docs/sources.md gives."""

from __future__ import annotations

import orjson

from tests.attacks.harness import attack
from tests.attacks.redis_stores import long_redis_thread
from tests.attacks.test_long_thread import _rows
from tests.attacks.test_long_thread_redis import _sent, redis_stack  # noqa: F401 - (a fixture)
from tests.loaders.redis_util import flush

SMALL = 64 << 10


def test_a_redis_document_over_the_limit_is_not_fetched(redis_stack, tmp_path):
    flush(redis_stack)
    long_redis_thread(redis_stack.url, "checkpoint", 2)
    client = redis_stack.client()
    keys = sorted(client.keys("checkpoint:long:*"))
    doc = orjson.loads(client.execute_command("JSON.GET", keys[-1]))
    doc["checkpoint"]["channel_values"]["notes"] = [{} for _ in range(50_000)]  # a flood of tiny values
    client.execute_command("JSON.SET", keys[-1], "$", orjson.dumps(doc))
    db = tmp_path / "out.duckdb"
    before = _sent(redis_stack)
    out = attack(["load", redis_stack.reader_url, "--db", str(db)], tmp_path,
                 env={"TRANSCRIPT_LENS_MAX_BLOB_BYTES": str(SMALL)})
    sent = _sent(redis_stack) - before
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "checkpoint"
    assert reason.startswith("checkpoint document is a stored value of ")
    assert reason.endswith("over the limit of 65536 bytes for one value (TRANSCRIPT_LENS_MAX_BLOB_BYTES): skipped")
    assert _rows(db, "SELECT content FROM messages") == [("the first question",)]
    assert sent < len(orjson.dumps(doc)), sent  # the flooded document never left the server
