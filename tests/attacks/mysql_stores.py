"""Hostile MySQL stores: a thread's first checkpoint written by the real `PyMySQLSaver`, then its
rows copied on the server (MariaDB's `seq_1_to_N` tables), in the saver's exact schema.

    mysql_long_thread(db, 5_000, past=2_000, pad=384 << 10)
"""

from __future__ import annotations

import pymysql
from langgraph.checkpoint.base import empty_checkpoint

from tests.loaders.mysql_util import mysql_saver


def first_checkpoint(saver, thread_id: str) -> dict:
    """One checkpoint holding one message, through `saver` (any saver); its config."""
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [{"role": "user", "content": "the first question", "id": "m1"}]}
    cp["channel_versions"] = {"messages": 1}
    return saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, cp,
                     {"source": "input", "step": -1}, {"messages": 1})


def _mysql(name: str, *statements: str) -> None:
    con = pymysql.connect(host="127.0.0.1", port=3306, user="root", database=name, autocommit=True)
    try:
        with con.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
    finally:
        con.close()


def mysql_long_thread(db, checkpoints: int, past: int, pad: int, blobs: int | None = None) -> None:
    """`pg_stores.long_pg_thread`'s thread in the MySQL saver's tables: `checkpoints` in a chain,
    the first `past` sharing one `messages` version, each later one naming its own, whose blob
    (for the first `blobs` of them, default all) holds `pad` more zero bytes. The blobs are in
    InnoDB's compressed row format, so zeros take little disk (as TOAST keeps them)."""
    with mysql_saver(db.admin_dsn) as saver:
        first_checkpoint(saver, "long")
    seq = f"seq_1_to_{checkpoints - 1}"
    last = checkpoints if blobs is None else past + blobs
    _mysql(db.name, "ALTER TABLE checkpoint_blobs ROW_FORMAT=COMPRESSED", (
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, "
        "checkpoint_ns_hash) SELECT thread_id, checkpoint_ns, concat(checkpoint_id, '-', lpad(seq, 7, '0')), "
        "IF(seq = 1, checkpoint_id, concat(checkpoint_id, '-', lpad(seq - 1, 7, '0'))), type, "
        f"IF(seq < {past}, checkpoint, json_set(checkpoint, '$.channel_versions.messages', concat('1-', seq))), metadata, "
        f"checkpoint_ns_hash FROM checkpoints, {seq} WHERE thread_id = 'long'"), (
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, `blob`, checkpoint_ns_hash) "
        f"SELECT thread_id, checkpoint_ns, channel, concat(version, '-', seq), type, concat(`blob`, repeat(x'00', {pad})), "
        f"checkpoint_ns_hash FROM checkpoint_blobs, {seq} WHERE thread_id = 'long' AND seq >= {past} AND seq < {last}"))


def mysql_write_flood(db, writes: int) -> None:
    """A one-checkpoint thread with `writes` `__error__` writes on it (the first through the saver)."""
    with mysql_saver(db.admin_dsn) as saver:
        saver.put_writes(first_checkpoint(saver, "flood"), [("__error__", "boom")], "task-0")
    _mysql(db.name, (
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, `blob`, "
        "checkpoint_ns_hash, task_path) SELECT thread_id, checkpoint_ns, checkpoint_id, concat('task-', seq), idx, channel, "
        f"type, `blob`, checkpoint_ns_hash, task_path FROM checkpoint_writes, seq_1_to_{writes - 1}"))


def store_size(name: str) -> int:
    """The database's bytes on disk (InnoDB's data and index lengths, statistics refreshed first)."""
    con = pymysql.connect(host="127.0.0.1", port=3306, user="root", database=name)
    try:
        with con.cursor() as cur:
            cur.execute("ANALYZE TABLE checkpoints, checkpoint_blobs, checkpoint_writes")
            cur.fetchall()
            cur.execute("SELECT sum(data_length + index_length) FROM information_schema.tables WHERE table_schema = %s", [name])
            return int(cur.fetchone()[0])
    finally:
        con.close()
