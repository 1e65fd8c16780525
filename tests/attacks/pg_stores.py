"""Hostile Postgres stores: a thread's first checkpoint written by the real `PostgresSaver`,
then its rows copied on the server (`generate_series`), in the saver's exact schema.

    long_pg_thread(dsn, 5_000, past=2_000, pad=384 << 10)
"""

from __future__ import annotations

import psycopg
from langgraph.checkpoint.base import empty_checkpoint

from tests.loaders.pg_util import saver_for


def long_pg_thread(dsn: str, checkpoints: int, past: int, pad: int, thread_id: str = "long") -> None:
    """A thread of `checkpoints` checkpoints in a chain (`<id>-0000001`, … after the first, one
    message). The first `past` share the first one's `messages` blob version, as steps that do
    not change the list do; each later one names a version of its own whose blob row holds
    `pad` more zero bytes (they compress: TOAST keeps such a blob in a few kB on disk).

    The saver's large columns are TOASTed with lz4 rather than the server's default pglz: the
    rows a reader gets are the same, and writing gigabytes of zeros (and reading them back
    on the server) takes a tenth of the time (2,000 blobs of 0.9 MB: 0.7 s instead of 8.4 s)."""
    with saver_for(dsn) as saver:
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": [{"role": "user", "content": "the first question", "id": "m1"}]}
        cp["channel_versions"] = {"messages": 1}
        saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, cp,
                  {"source": "input", "step": -1}, {"messages": 1})
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("ALTER TABLE checkpoints ALTER COLUMN checkpoint SET COMPRESSION lz4, "
                    "ALTER COLUMN metadata SET COMPRESSION lz4")
        con.execute("ALTER TABLE checkpoint_blobs ALTER COLUMN blob SET COMPRESSION lz4")
        con.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
            "SELECT thread_id, checkpoint_ns, checkpoint_id || '-' || lpad(i::text, 7, '0'), "
            "CASE WHEN i = 1 THEN checkpoint_id ELSE checkpoint_id || '-' || lpad((i - 1)::text, 7, '0') END, type, "
            "CASE WHEN i < %(past)s THEN checkpoint ELSE jsonb_set(checkpoint, '{channel_versions,messages}', "
            "  to_jsonb((checkpoint -> 'channel_versions' ->> 'messages') || '-' || i)) END, metadata "
            "FROM checkpoints, generate_series(1, %(n)s - 1) AS i WHERE thread_id = %(t)s",
            {"past": past, "n": checkpoints, "t": thread_id})
        con.execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
            "SELECT thread_id, checkpoint_ns, channel, version || '-' || i, type, blob || decode(repeat('00', %(pad)s), 'hex') "
            "FROM checkpoint_blobs, generate_series(%(past)s, %(n)s - 1) AS i WHERE thread_id = %(t)s AND channel = 'messages'",
            {"past": past, "n": checkpoints, "t": thread_id, "pad": pad})


def shared_blob_thread(dsn: str, checkpoints: int, messages: int, reverse: bool, thread_id: str = "shared") -> None:
    """A thread of `checkpoints` checkpoints in a chain that name two `messages` blobs, each
    stored once: a list of `messages` AIMessages and the same list reversed (`reverse`) or
    not. The real saver writes the two; the others are copies of the second on the server
    (`<id>-0000001`, …), naming the first blob and the second in turn. A store of two blobs
    and small rows whose checkpoints hold `checkpoints` × `messages` list entries."""
    from langchain_core.messages import AIMessage

    listed = [AIMessage(content=f"m{i}", id=f"id{i}") for i in range(messages)]
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    with saver_for(dsn) as saver:
        for version, values in ((1, listed), (2, listed[::-1] if reverse else listed)):
            cp = empty_checkpoint()
            cp["channel_values"] = {"messages": values}
            cp["channel_versions"] = {"messages": version}
            config = saver.put(config, cp, {"source": "loop", "step": version}, {"messages": version})
    with psycopg.connect(dsn, autocommit=True) as con:
        first, second = (v for (v,) in con.execute(
            "SELECT version FROM checkpoint_blobs WHERE thread_id = %s AND channel = 'messages' ORDER BY version",
            [thread_id]).fetchall())
        con.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
            "SELECT thread_id, checkpoint_ns, checkpoint_id || '-' || lpad(i::text, 7, '0'), "
            "CASE WHEN i = 1 THEN checkpoint_id ELSE checkpoint_id || '-' || lpad((i - 1)::text, 7, '0') END, type, "
            "jsonb_set(checkpoint, '{channel_versions,messages}', to_jsonb(CASE WHEN i %% 2 = 1 THEN %(a)s ELSE %(b)s END)), "
            "metadata FROM checkpoints, generate_series(1, %(n)s - 2) AS i "
            "WHERE thread_id = %(t)s AND checkpoint_id = %(last)s",
            {"a": first, "b": second, "n": checkpoints, "t": thread_id, "last": config["configurable"]["checkpoint_id"]})
