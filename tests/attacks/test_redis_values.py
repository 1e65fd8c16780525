"""Redis documents over the per-value limit (`TRANSCRIPT_LENS_MAX_BLOB_BYTES`): measured on the
server (`JSON.DEBUG MEMORY`, else `MEMORY USAGE`) and never fetched, each one `load_errors` row
naming the limit, the rest of the thread loaded (docs/security.md, "One stored value"). A user the
server measures nothing for is refused in one line naming what to grant, unless the operator
allows unmeasured reads. The store is on the tests' own Redis Stack server, read as the
least-privileged user docs/sources.md gives, or as that user without `+json.debug`."""

from __future__ import annotations

import orjson
import pytest

from loaders.redis.source import UNMEASURED_ENV
from tests.attacks.harness import attack
from tests.attacks.redis_stores import long_redis_thread
from tests.attacks.test_long_thread import _rows
from tests.attacks.test_long_thread_redis import _sent, redis_stack  # noqa: F401 - (a fixture)
from tests.loaders.redis_util import READER_ACL, flush

SMALL = 64 << 10
LIMIT = {"TRANSCRIPT_LENS_MAX_BLOB_BYTES": str(SMALL)}


def _flooded(stack) -> bytes:
    """A two-checkpoint thread whose latest document holds a flood of tiny values; that document."""
    flush(stack)
    long_redis_thread(stack.url, "checkpoint", 2)
    client = stack.client()
    keys = sorted(client.keys("checkpoint:long:*"))
    doc = orjson.loads(client.execute_command("JSON.GET", keys[-1]))
    doc["checkpoint"]["channel_values"]["notes"] = [{} for _ in range(50_000)]
    client.execute_command("JSON.SET", keys[-1], "$", orjson.dumps(doc))
    return orjson.dumps(doc)


def _user(stack, name: str, *grants: str) -> str:
    """A URL of `name`: the reader's ACL without `+json.debug`, with `grants`."""
    acl = [rule for rule in READER_ACL if rule not in ("+json.debug",) and not rule.startswith(">")]
    stack.client().execute_command("ACL", "SETUSER", name, "reset", *acl, ">pw", *grants)
    return f"redis://{name}:pw@127.0.0.1:{stack.port}/0"


@pytest.mark.parametrize("who", ["reader", "memory usage only"])
def test_a_redis_document_over_the_limit_is_not_fetched(redis_stack, tmp_path, who):
    doc = _flooded(redis_stack)
    url = redis_stack.reader_url if who == "reader" else _user(redis_stack, "tl-memory", "+memory|usage")
    db = tmp_path / "out.duckdb"
    before = _sent(redis_stack)
    out = attack(["load", url, "--db", str(db)], tmp_path, env=LIMIT)
    sent = _sent(redis_stack) - before
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "checkpoint"
    assert reason.startswith("checkpoint document is a stored value of ")
    assert reason.endswith("over the limit of 65536 bytes for one value (TRANSCRIPT_LENS_MAX_BLOB_BYTES): skipped")
    assert _rows(db, "SELECT content FROM messages") == [("the first question",)]
    assert sent < len(doc), sent  # the flooded document never left the server


def test_a_user_the_server_measures_nothing_for_is_refused_unless_allowed(redis_stack, tmp_path):
    doc = _flooded(redis_stack)
    url = _user(redis_stack, "tl-blind")
    db = tmp_path / "out.duckdb"
    before = _sent(redis_stack)
    out = attack(["load", url, "--db", str(db)], tmp_path, env=LIMIT)
    sent = _sent(redis_stack) - before
    out.refused("JSON.DEBUG MEMORY and MEMORY USAGE refused", "+json.debug", f"{UNMEASURED_ENV}=1")
    out.within_budget().wrote_only([db]).never_prints(":pw@")  # (at most its lock file)
    assert not db.exists() and sent < len(doc), sent
    # The operator's choice: documents fetched unmeasured (the flooded one with them).
    allowed = attack(["load", url, "--db", str(db)], tmp_path, env={**LIMIT, UNMEASURED_ENV: "1"})
    allowed.succeeded().within_budget().wrote_only([db])
    assert _rows(db, "SELECT count(*) FROM load_errors") == [(0,)]
