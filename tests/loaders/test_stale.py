"""Stale transcripts: a thread whose latest root checkpoint does not decode says so in `threads`.

The store (tests/stale_store.py) is written by real graphs through real savers, part of it
with LangGraph's own `EncryptedSerializer`; what each thread's latest checkpoint and
transcript are is read back through LangGraph's `get_tuple`, and the reason is compared
with the thread's own `load_errors` rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import loaders
from loaders.sqlite import reader as sqlite_reader
from tests.loaders.conformance import force_split
from tests.loaders.util import rows
from tests.stale_store import KEY, MIXED, PLAIN, SECRET, WRONG, StaleStore, write_stale_store

THREADS = "SELECT thread_id, latest_checkpoint_id, transcript_checkpoint_id, stale_reason FROM threads ORDER BY thread_id"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> StaleStore:
    return write_stale_store(tmp_path_factory.mktemp("stale") / "stale.sqlite")


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch):
    monkeypatch.delenv("LANGGRAPH_AES_KEY", raising=False)


def threads(db: Path) -> dict[str, dict]:
    return {r["thread_id"]: r for r in rows(db, THREADS)}


def contents(db: Path, thread_id: str) -> list[str]:
    return [r["content"] for r in rows(db, "SELECT content FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread_id])]


@pytest.mark.parametrize("key, says", [(None, "no key given"), (WRONG, "AES-EAX MAC check failed")])
def test_without_the_right_key_the_encrypted_threads_are_stale(store, tmp_path, key, says):
    db = tmp_path / "db.duckdb"
    loaders.load(str(store.path), db, workers=1, aes_key=None if key is None else key.encode())
    got = threads(db)
    assert {t: r["latest_checkpoint_id"] for t, r in got.items()} == store.latest
    assert {t: r["transcript_checkpoint_id"] for t, r in got.items()} == store.last_plain
    assert got[PLAIN]["stale_reason"] is None
    errors = [r["reason"] for r in rows(db, "SELECT reason FROM load_errors WHERE thread_id = ?", [MIXED])]
    for thread in (MIXED, SECRET):
        reason = got[thread]["stale_reason"]
        assert reason.startswith(f"latest root checkpoint {store.latest[thread]} not decoded: ") and says in reason
    assert got[MIXED]["stale_reason"].removeprefix(f"latest root checkpoint {store.latest[MIXED]} not decoded: ") in errors
    # The transcript shown is the one LangGraph reads at the checkpoint the row names.
    assert contents(db, MIXED) == store.contents(MIXED, store.last_plain[MIXED])
    assert contents(db, SECRET) == []


def test_with_the_key_no_thread_is_stale(store, tmp_path):
    db = tmp_path / "db.duckdb"
    loaders.load(str(store.path), db, workers=1, aes_key=KEY.encode())
    got = threads(db)
    assert {t: r["transcript_checkpoint_id"] for t, r in got.items()} == store.latest
    assert {t: r["latest_checkpoint_id"] for t, r in got.items()} == store.latest
    assert all(r["stale_reason"] is None for r in got.values())
    assert contents(db, MIXED) == store.contents(MIXED, store.latest[MIXED])


def test_a_split_load_says_the_same(store, tmp_path, monkeypatch):
    one, split = tmp_path / "one.duckdb", tmp_path / "split.duckdb"
    loaders.load(str(store.path), one, workers=1)
    with monkeypatch.context() as m:
        force_split(m, sqlite_reader.SqliteReader)
        summary = loaders.load(str(store.path), split, workers=2)
    assert summary.threads == 3
    assert rows(split, THREADS) == rows(one, THREADS)
    assert sum(r["stale_reason"] is not None for r in rows(split, THREADS)) == 2


def damage_latest(path: Path, thread_id: str) -> tuple[str, bytes]:
    """Overwrite the checkpoint blob of `thread_id`'s latest root checkpoint; (its id, the bytes it had)."""
    con = sqlite3.connect(path)
    cid, blob = con.execute(
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1", [thread_id]).fetchone()
    con.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?",
                [b"\xc1 not msgpack", thread_id, cid])
    con.commit()
    con.close()
    return cid, blob


def restore(path: Path, thread_id: str, cid: str, blob: bytes) -> None:
    con = sqlite3.connect(path)
    con.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?", [blob, thread_id, cid])
    con.commit()
    con.close()


def parent_of(path: Path, thread_id: str, cid: str) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
                           [thread_id, cid]).fetchone()[0]
    finally:
        con.close()


def test_a_damaged_latest_row_is_stale_and_a_repair_is_seen_by_an_incremental_load(store, tmp_path):
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(store.path.read_bytes())
    cid, blob = damage_latest(copy, PLAIN)
    db = tmp_path / "db.duckdb"
    loaders.load(str(copy), db, workers=1, aes_key=KEY.encode(), incremental=True)
    got = threads(db)[PLAIN]
    error = rows(db, "SELECT reason FROM load_errors WHERE thread_id = ? AND checkpoint_id = ?", [PLAIN, cid])
    assert (got["latest_checkpoint_id"], got["transcript_checkpoint_id"]) == (cid, parent_of(copy, PLAIN, cid))
    assert got["stale_reason"] == f"latest root checkpoint {cid} not decoded: {error[0]['reason']}"
    # The row repaired in place: the same checkpoint keys, so only the stale mark makes the load read it again.
    restore(copy, PLAIN, cid, blob)
    summary = loaders.load(str(copy), db, workers=1, aes_key=KEY.encode(), incremental=True)
    assert summary.mode == "incremental"
    assert threads(db)[PLAIN] == {"thread_id": PLAIN, "latest_checkpoint_id": cid, "transcript_checkpoint_id": cid,
                                  "stale_reason": None}
    assert contents(db, PLAIN) == store.contents(PLAIN, cid)


def test_an_incremental_load_with_the_key_makes_the_threads_current(store, tmp_path):
    """The source did not change, only the key did: the stale threads are read again anyway."""
    db, full = tmp_path / "db.duckdb", tmp_path / "full.duckdb"
    loaders.load(str(store.path), db, workers=1, incremental=True)
    assert sum(r["stale_reason"] is not None for r in threads(db).values()) == 2
    summary = loaders.load(str(store.path), db, workers=1, aes_key=KEY.encode(), incremental=True)
    assert summary.mode == "incremental"
    loaders.load(str(store.path), full, workers=1, aes_key=KEY.encode())
    assert rows(db, THREADS) == rows(full, THREADS)
    assert rows(db, "SELECT * FROM messages ORDER BY ALL") == rows(full, "SELECT * FROM messages ORDER BY ALL")


def test_a_database_of_the_previous_schema_is_loaded_again_in_full(store, tmp_path):
    import duckdb

    db = tmp_path / "db.duckdb"
    loaders.load(str(store.path), db, workers=1, aes_key=KEY.encode())
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE threads DROP COLUMN stale_reason")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    summary = loaders.load(str(store.path), db, workers=1, incremental=True)
    assert summary.mode == "full"
    assert sum(r["stale_reason"] is not None for r in threads(db).values()) == 2


@pytest.mark.parametrize("key, says", [(None, "no key given"), (WRONG, "AES-EAX MAC check failed")])
def test_a_live_postgres_store_says_the_same(tmp_path, key, says):
    """PostgresSaver keeps the messages in `checkpoint_blobs`: an undecodable blob makes its checkpoints damaged."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.loaders.pg_util import fresh_database
    from tests.stale_store import encrypting, write_stale_threads
    from tests import oracle

    with fresh_database() as dsn:
        with PostgresSaver.from_conn_string(dsn) as plain, PostgresSaver.from_conn_string(dsn) as secret:
            plain.setup()
            plain.serde, secret.serde = oracle.strict_serde(), encrypting()
            latest, last_plain = write_stale_threads(plain, secret)
        db = tmp_path / "db.duckdb"
        loaders.load(dsn, db, workers=1, aes_key=None if key is None else key.encode())
        got = threads(db)
        assert {t: r["latest_checkpoint_id"] for t, r in got.items()} == latest
        assert {t: r["transcript_checkpoint_id"] for t, r in got.items()} == plain_messages_latest(dsn)
        assert plain_messages_latest(dsn)[MIXED] >= last_plain[MIXED]
        assert got[PLAIN]["stale_reason"] is None
        for thread in (MIXED, SECRET):
            assert got[thread]["stale_reason"].startswith(f"latest root checkpoint {latest[thread]} not decoded: ")
            assert says in got[thread]["stale_reason"], got[thread]["stale_reason"]
        loaders.load(dsn, db, workers=1, aes_key=KEY.encode())
        assert all(r["stale_reason"] is None for r in threads(db).values())


def plain_messages_latest(dsn: str) -> dict[str, str | None]:
    """Per thread, the greatest root checkpoint whose messages LangGraph can read without the key:
    PostgresSaver keeps a channel's value in `checkpoint_blobs` once per version, so a checkpoint the
    encrypting saver wrote before its first step still names the plain blob of the messages (or none)."""
    import psycopg

    with psycopg.connect(dsn) as con:
        found = con.execute(
            "SELECT c.thread_id, max(c.checkpoint_id) FILTER (WHERE b.type IS NULL OR b.type NOT LIKE '%%+aes') "
            "FROM checkpoints c LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' "
            "AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            "WHERE c.checkpoint_ns = '' GROUP BY c.thread_id").fetchall()
    return dict(found)
