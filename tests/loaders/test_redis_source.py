"""The redis source kind against a real Redis Stack server (tests/loaders/redis_util.py).

Stores are written by the real `RedisSaver` and `ShallowRedisSaver` running real
graphs; the conformance kit (test_conformance.py) already holds the full saver's
store to the SqliteSaver reference, read through a user that may only read. Here,
what is particular to Redis: the saver's own view (tests/oracle.py over the saver),
the shallow layout, that nothing but reads is sent, damaged documents, and a store
that changes while it is read. Each store has its own key prefixes on the one server.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage

import loaders
from loaders import SourceError
from loaders.redis.source import RedisOptions, RedisSource
from storegen import DEFAULT_THREADS, run_scenarios
from tests import oracle
from tests.e2e.util import free_port
from tests.loaders.pg_util import echo_graph
from tests.loaders.redis_util import READER_PASSWORD, redis_stack_server
from tests.loaders.util import load_db, rows

MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)
CHECKPOINT_COLS = ", ".join(oracle.CHECKPOINT_KEYS)
# What a reader may send (INFO commandstats names). No write, no FT.* command.
READ_COMMANDS = {"scan", "json.mget", "get", "zrange", "ping", "hello", "client|setinfo", "select", "json.debug"}  # (json.debug: MEMORY, a size)
# The scenarios a shallow saver can run (the others go back in the thread's history).
SHALLOW_SCENARIOS = ("simple_chat", "tool_calls", "subgraph", "interrupt_pending", "interrupt_resumed",
                     "list_content", "remove_message")


def full_saver(url: str, prefix: str):
    from langgraph.checkpoint.redis import RedisSaver

    return RedisSaver.from_conn_string(url, checkpoint_prefix=prefix, checkpoint_write_prefix=f"{prefix}_write")


def shallow_saver(url: str, prefix: str):
    from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

    return ShallowRedisSaver.from_conn_string(url, checkpoint_prefix=prefix, checkpoint_write_prefix=f"{prefix}_write")


def saver_view(db, saver) -> tuple[list, list, list, list]:
    """(messages, checkpoints) loaded and as the oracle reads them through the saver."""
    return (
        rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal"), oracle.expected_messages(saver),
        rows(db, f"SELECT {CHECKPOINT_COLS} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id"),
        oracle.expected_checkpoints(saver),
    )


class Listed:
    """Checkpoint tuples a shallow saver listed, as the oracle reads a saver (`list(None)`).
    The shallow savers' `list()` (0.5.2) returns the root namespace as the storage
    sentinel `__empty__`, where their `get_tuple()` and every other saver say `""`."""

    def __init__(self, tuples) -> None:
        self.tuples = [self._root_named(t) for t in tuples]

    @staticmethod
    def _root_named(tup):
        conf = dict(tup.config["configurable"])
        if conf.get("checkpoint_ns") == "__empty__":
            conf["checkpoint_ns"] = ""
        return tup._replace(config={**tup.config, "configurable": conf})

    def list(self, config):
        assert config is None
        return iter(self.tuples)


def test_a_full_store_loads_as_its_saver_reads_it(graphs_redis, tmp_path):
    db = tmp_path / "redis.duckdb"
    summary = load_db(graphs_redis.reader_url, db)
    assert (summary.source_kind, summary.errors) == ("redis", 0)
    with full_saver(graphs_redis.url, "checkpoint") as saver:
        got_messages, messages, got_checkpoints, checkpoints = saver_view(db, saver)
    assert messages and got_messages == messages
    assert got_checkpoints == checkpoints
    pending = rows(db, "SELECT thread_id, interrupt_value->'$[0][0].value'->>'action' AS a FROM threads WHERE interrupt_pending")
    assert pending == [{"thread_id": "initech:support:sess-021", "a": "issue_refund"}]


def test_a_shallow_store_loads_as_its_saver_reads_it(redis_stack, tmp_path):
    threads = {t: s for t, s in DEFAULT_THREADS.items() if s in SHALLOW_SCENARIOS}
    with shallow_saver(redis_stack.url, "shallow") as saver:
        saver.setup()
        run_scenarios(saver, threads=threads)
        db = tmp_path / "shallow.duckdb"
        summary = loaders.load(redis_stack.reader_url, db, options={"key_prefix": "shallow"})
        got_messages, messages, got_checkpoints, checkpoints = saver_view(db, Listed(saver.list(None)))
    assert summary.errors == 0 and summary.threads == len(threads)
    assert got_messages == messages and {m["thread_id"] for m in messages} == set(threads)
    assert got_checkpoints == checkpoints
    # One checkpoint per thread and namespace: the latest, with no parent.
    assert rows(db, "SELECT count(*) AS n FROM checkpoints WHERE parent_checkpoint_id IS NOT NULL") == [{"n": 0}]
    assert rows(db, "SELECT thread_id FROM threads WHERE interrupt_pending") == [{"thread_id": "initech:support:sess-021"}]


@pytest.mark.parametrize("shallow", [False, True], ids=["AsyncRedisSaver", "AsyncShallowRedisSaver"])
def test_the_async_savers_stores_load_as_they_read_them(redis_stack, tmp_path, shallow):
    from langgraph.checkpoint.redis.aio import AsyncRedisSaver
    from langgraph.checkpoint.redis.ashallow import AsyncShallowRedisSaver

    prefix = "async_shallow" if shallow else "async_full"

    async def write_and_list() -> list:
        cls = AsyncShallowRedisSaver if shallow else AsyncRedisSaver
        async with cls.from_conn_string(redis_stack.url, checkpoint_prefix=prefix,
                                        checkpoint_write_prefix=f"{prefix}_write") as saver:
            await saver.asetup()
            graph = echo_graph(saver)
            configs = [{"configurable": {"thread_id": f"{prefix}:{i}", "checkpoint_ns": ""}} for i in (1, 2)]
            for i, config in enumerate(configs):
                for text in ("hello", "again"):
                    await graph.ainvoke({"messages": [HumanMessage(content=text, id=f"{i}/{text}")]}, config)
            if shallow:  # (its alist() (0.5.2) leaves the checkpoint's ts empty; aget_tuple() does not)
                return [await saver.aget_tuple(config) for config in configs]
            return [t async for t in saver.alist(None)]

    listed = Listed(asyncio.run(write_and_list()))
    db = tmp_path / "async.duckdb"
    summary = loaders.load(redis_stack.reader_url, db, options={"key_prefix": prefix})
    assert (summary.threads, summary.errors) == (2, 0)
    got_messages, messages, got_checkpoints, checkpoints = saver_view(db, listed)
    assert len(messages) == 8 and got_messages == messages
    assert got_checkpoints == checkpoints


def test_the_reader_sends_nothing_but_reads(redis_stack, graphs_redis, tmp_path):
    admin = redis_stack.client()
    admin.config_resetstat()
    load_db(graphs_redis.url, tmp_path / "all.duckdb")  # a user that may do anything
    called = {name.removeprefix("cmdstat_") for name in admin.info("commandstats")} - {"config|resetstat", "info"}
    assert "json.mget" in called and "scan" in called
    assert called <= READ_COMMANDS
    # The conformance case reads through this user: it may not write, nor make an index.
    reader = redis_stack.client().__class__.from_url(redis_stack.reader_url)
    for command in (("SET", "k", "v"), ("JSON.SET", "k", "$", "1"), ("FT.CREATE", "i", "SCHEMA", "f", "TEXT"), ("DEL", "checkpoint:x")):
        with pytest.raises(Exception, match="(?i)no permission|noperm"):
            reader.execute_command(*command)


def test_damaged_documents_are_load_errors(redis_stack, tmp_path):
    url = redis_stack.url
    with full_saver(url, "dmg") as saver:
        saver.setup()
        run_scenarios(saver, threads={"dmg:a": "simple_chat", "dmg:b": "interrupt_pending", "dmg:c": "simple_chat"})
    admin = redis_stack.client()
    latest_a = admin.get("dmg_latest:dmg:a:__empty__")
    latest_c = admin.get("dmg_latest:dmg:c:__empty__")
    admin.json().set(latest_a, "$.checkpoint", 5)
    admin.json().delete(latest_c, "$.checkpoint_id")
    [interrupt] = [k for k in admin.scan_iter(match="dmg_write:dmg:b:*") if admin.json().get(k, "$.channel") == ["__interrupt__"]]
    admin.json().set(interrupt, "$.blob", "!!not base64 nor json")
    admin.json().set("dmg:orphan", "$", {"checkpoint": {}})
    admin.json().set("dmg:list", "$", [1, 2])
    admin.json().set("dmg:long", "$", {"thread_id": "t" * 5000})

    db = tmp_path / "damaged.duckdb"
    summary = loaders.load(url, db, options={"key_prefix": "dmg"})
    errors = rows(db, "SELECT thread_id, stage, reason FROM load_errors ORDER BY ALL")
    assert summary.errors == len(errors) == 6
    reasons = " | ".join(f"{e['thread_id']}: {e['reason']}" for e in errors)
    assert "dmg:a: checkpoint is a int, not a mapping" in reasons
    assert "dmg:c: checkpoint document without text checkpoint_ns and checkpoint_id" in reasons
    assert "dmg:b: __interrupt__: invalid json" in reasons
    assert "None: document 'dmg:orphan' has no text thread_id" in reasons
    assert "None: document 'dmg:list' has no text thread_id" in reasons
    assert "None: document 'dmg:long' has a thread_id that is 5000 bytes long, over the 4096-byte limit" in reasons
    # Every thread is still there, from what could be read.
    assert [r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads ORDER BY 1")] == ["dmg:a", "dmg:b", "dmg:c"]


def test_a_delta_channel_thread_says_it_is_not_rebuilt(redis_stack, tmp_path):
    from storegen.delta import write_delta_threads

    with full_saver(redis_stack.url, "delta") as saver:
        saver.setup()
        write_delta_threads(saver, ["chat"])
    db = tmp_path / "delta.duckdb"
    summary = loaders.load(redis_stack.url, db, options={"key_prefix": "delta"})
    errors = rows(db, "SELECT thread_id, stage, reason FROM load_errors")
    assert summary.errors == 1 and errors == [{"thread_id": "delta:chat", "stage": "messages", "reason": (
        "DeltaChannel messages not rebuilt: the redis kind does not read a DeltaChannel's writes; "
        "its checkpoints load without messages")}]
    # No transcript from the last snapshot passed off as the thread's: no messages, every checkpoint kept.
    assert rows(db, "SELECT count(*) AS n FROM messages") == [{"n": 0}]
    assert rows(db, "SELECT count(*) AS n FROM checkpoints WHERE message_versions IS NOT NULL") == [{"n": 0}]
    assert rows(db, "SELECT count(*) AS n FROM checkpoints")[0]["n"] > 3


def test_a_thread_that_grows_or_goes_while_the_store_is_read(redis_stack):
    with full_saver(redis_stack.url, "live") as saver:
        saver.setup()
        run_scenarios(saver, threads={"live:1": "simple_chat", "live:2": "interrupt_pending", "live:3": "simple_chat"})
        reader = RedisSource().open(redis_stack.reader_url, {"key_prefix": "live"})  # the keys are listed here
        try:
            echo_graph(saver).invoke({"messages": [HumanMessage(content="one more", id="late-1")]},
                                     {"configurable": {"thread_id": "live:1"}})
            saver.delete_thread("live:3")
            bundles = {b.thread_id: b for b in reader.threads()}
        finally:
            reader.close()
        now = {tup.config["configurable"]["checkpoint_id"] for tup in saver.list({"configurable": {"thread_id": "live:1"}})}
    assert sorted(bundles) == ["live:1", "live:2"]
    assert {c.checkpoint_id for c in bundles["live:1"].checkpoints} == now  # the checkpoints written after the scan too
    assert not any(b.errors for b in bundles.values())


def test_a_store_that_is_not_there_is_one_clear_error(redis_stack, tmp_path):
    empty = redis_stack.reader_url.removesuffix("/0") + "/3"  # (the stores are all in database 0)
    with pytest.raises(SourceError, match=r"^redis://tl-reader:\*\*\*@127.0.0.1:\d+/3: no checkpoint document under "
                                          r"'checkpoint:\*' \(a langgraph-checkpoint-redis store in another database"):
        RedisSource().open(empty)
    with redis_stack_server(tmp_path, modules=False) as plain:
        with pytest.raises(SourceError, match=r": the server has no RedisJSON module, which langgraph-checkpoint-redis"):
            RedisSource().open(plain.url)


def test_a_bad_uri_or_prefix_is_one_clear_error():
    spec = f"redis://app:S3cret-down@127.0.0.1:{free_port()}/0"
    with pytest.raises(SourceError) as caught:
        RedisSource().open(spec)
    message = str(caught.value)
    assert message.startswith("redis://app:***@127.0.0.1") and "cannot read the store" in message
    assert "S3cret-down" not in message and "\n" not in message
    with pytest.raises(SourceError, match="key_prefix 'a,b,c': expected CHECKPOINT_PREFIX"):
        RedisOptions(key_prefix="a,b,c")
    assert RedisSource().describe(f"unix://:{READER_PASSWORD}@/run/redis.sock?db=1") == "unix://:***@/run/redis.sock?db=1"


def test_a_pointer_or_registry_of_the_wrong_type_is_a_row_error(redis_stack, tmp_path):
    with full_saver(redis_stack.url, "wt") as saver:
        saver.setup()
        run_scenarios(saver, threads={"wt:a": "simple_chat", "wt:b": "simple_chat"})
        checkpoints = {tup.config["configurable"]["checkpoint_id"] for tup in saver.list({"configurable": {"thread_id": "wt:a"}})}
    admin = redis_stack.client()
    head = admin.get("wt_latest:wt:b:__empty__").rsplit(b":", 1)[-1]
    admin.delete("wt_latest:wt:a:__empty__", b"write_keys_zset:wt:b:__empty__:" + head)
    admin.hset("wt_latest:wt:a:__empty__", "not", "a key")
    admin.set(b"write_keys_zset:wt:b:__empty__:" + head, "not a sorted set")
    db = tmp_path / "wrongtype.duckdb"
    summary = loaders.load(redis_stack.url, db, options={"key_prefix": "wt"})
    errors = rows(db, "SELECT thread_id, reason FROM load_errors ORDER BY thread_id")
    assert summary.errors == 2 and [e["thread_id"] for e in errors] == ["wt:a", "wt:b"]
    assert errors[0]["reason"].startswith("key 'wt_latest:wt:a:__empty__' not readable (WRONGTYPE")
    # The thread loads whole from its documents.
    assert {r["checkpoint_id"] for r in rows(db, "SELECT checkpoint_id FROM checkpoints WHERE thread_id = 'wt:a'")} == checkpoints


def test_a_pending_interrupt_is_read_whatever_has_writes_says(redis_stack, tmp_path):
    """The saver leaves `has_writes` false when a write races its checkpoint (async durability);
    the write is in the store all the same, and the thread waits on a human."""
    with full_saver(redis_stack.url, "hw") as saver:
        saver.setup()
        run_scenarios(saver, threads={"hw:1": "interrupt_pending"})
    admin = redis_stack.client()
    admin.json().set(admin.get("hw_latest:hw:1:__empty__"), "$.has_writes", False)
    db = tmp_path / "hw.duckdb"
    assert loaders.load(redis_stack.url, db, options={"key_prefix": "hw"}).errors == 0
    assert rows(db, "SELECT thread_id, interrupt_value->'$[0][0].value'->>'action' AS a FROM threads WHERE interrupt_pending") == [
        {"thread_id": "hw:1", "a": "issue_refund"}]
