"""Hostile Redis stores: a thread's first documents written by the real `RedisSaver`, then
copied in its exact format with redis-py pipelines (millions of saver calls would take hours).

    long_redis_thread(server.url, "long", 5_000)           # one chain of 5,000 checkpoints
    special_write_flood(server.url, "flood", 300)          # 300 `__error__` writes on one checkpoint
"""

from __future__ import annotations

import orjson
import redis
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.redis import RedisSaver

PIPELINE = 1_000  # commands per pipeline round trip


def _saver(url: str, prefix: str) -> RedisSaver:
    return RedisSaver.from_conn_string(url, checkpoint_prefix=prefix, checkpoint_write_prefix=f"{prefix}_write")


def _first_checkpoint(saver: RedisSaver, thread_id: str, pad: int) -> str:
    """One checkpoint holding one message (and `pad` characters in another channel), through the saver."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [{"role": "user", "content": "the first question", "id": "m1"}],
                            **({"notes": "x" * pad} if pad else {})}
    cp["channel_versions"] = {"messages": 1, **({"notes": 1} if pad else {})}
    config = saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, cp,
                       {"source": "input", "step": -1}, dict(cp["channel_versions"]))
    return config["configurable"]["checkpoint_id"]


def long_redis_thread(url: str, prefix: str, checkpoints: int, thread_id: str = "long", pad: int = 0) -> int:
    """A thread of `checkpoints` checkpoints in a chain: the first through the saver, the rest
    its document under later ids `<id>-0000001`, … (each the child of the one before, the
    latest pointer on the last). Returns the size of one document as JSON."""
    with _saver(url, prefix) as saver:
        saver.setup()
        first = _first_checkpoint(saver, thread_id, pad)
        client = redis.Redis.from_url(url)  # (the saver's own client parses JSON replies)
        stem = f"{prefix}:{thread_id}:__empty__:"
        doc = orjson.loads(client.execute_command("JSON.GET", stem + first))
        parent = first
        pipe = client.pipeline(transaction=False)
        for i in range(1, checkpoints):
            cid = f"{first}-{i:07d}"
            doc = {**doc, "checkpoint_id": cid, "parent_checkpoint_id": parent, "checkpoint": {**doc["checkpoint"], "id": cid}}
            pipe.execute_command("JSON.SET", stem + cid, "$", orjson.dumps(doc))
            parent = cid
            if i % PIPELINE == 0:
                pipe.execute()
        pipe.set(f"{prefix}_latest:{thread_id}:__empty__", stem + parent)
        pipe.execute()
        return len(orjson.dumps(doc))


def special_write_flood(url: str, prefix: str, writes: int, thread_id: str = "flood", value: str = "boom") -> int:
    """A one-checkpoint thread with `writes` `__error__` writes of `value` on it: the first through
    the saver, the others its document under other task ids (and in the checkpoint's key
    registry). Returns the size of one write document as JSON."""
    with _saver(url, prefix) as saver:
        saver.setup()
        first = _first_checkpoint(saver, thread_id, 0)
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": first}}
        saver.put_writes(config, [("__error__", value)], "task-0000000")
        client = redis.Redis.from_url(url)  # (the saver's own client parses JSON replies)
        [key] = client.keys(f"{prefix}_write:{thread_id}:*")
        doc = orjson.loads(client.execute_command("JSON.GET", key))
        stem = key.decode().rsplit(":", 2)[0]
        registry = f"write_keys_zset:{thread_id}:__empty__:{first}"
        pipe = client.pipeline(transaction=False)
        for i in range(1, writes):
            task = f"task-{i:07d}"
            write_key = f"{stem}:{task}:{doc['idx']}"
            pipe.execute_command("JSON.SET", write_key, "$", orjson.dumps({**doc, "task_id": task}))
            pipe.zadd(registry, {write_key: 0})
            if i % PIPELINE == 0:
                pipe.execute()
        pipe.execute()
        return len(orjson.dumps(doc))
