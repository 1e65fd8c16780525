"""Encrypted stores: values LangGraph's `EncryptedSerializer` wrote
(`from_pycryptodome_aes`, `msgpack+aes`), decrypted with the key the user gives.

The conformance graphs are written through real savers whose serde encrypts, so
with the right key every table equals the reference (the same graphs, plain);
a wrong key or a changed byte is a row error naming the cipher failure; without
a key each thread says once what to pass; the key is never shown or stored.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

import loaders
from loaders.cipher import AesKey
from tests import oracle
from tests.loaders import conformance
from tests.loaders.pg_util import fresh_database, pg_dump, export_csv
from tests.loaders.util import assert_same_tables, rows

KEY = "k3y-0f-16-bytes!"  # 16 characters: LANGGRAPH_AES_KEY's UTF-8 bytes are the key
WRONG = "another-key-16by"


def encrypting(key: str = KEY) -> EncryptedSerializer:
    return EncryptedSerializer.from_pycryptodome_aes(serde=oracle.strict_serde(), key=key.encode())


def sqlite_saver(path: Path, serde) -> SqliteSaver:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn, serde=serde)
    saver.setup()
    conn.execute("PRAGMA synchronous = OFF")  # no fsync per commit (storegen.open_sqlite_saver): the same bytes
    return saver


@pytest.fixture(scope="module")
def encrypted_sqlite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("encrypted") / "graphs.sqlite"
    saver = sqlite_saver(path, encrypting())
    try:
        conformance.write_graphs(saver)
    finally:
        saver.conn.close()
    return path


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("key") / "aes.key"
    path.write_text(KEY + "\n")  # as `echo "$KEY" > aes.key` writes it
    return path


def all_text(db: Path) -> str:
    """Every value of `loads` and `load_errors`, as text."""
    return repr(rows(db, "SELECT * FROM loads")) + repr(rows(db, "SELECT * FROM load_errors"))


def test_the_rows_are_encrypted(encrypted_sqlite):
    con = sqlite3.connect(encrypted_sqlite)
    types = {t for (t,) in con.execute("SELECT DISTINCT type FROM checkpoints UNION SELECT DISTINCT type FROM writes")}
    con.close()
    assert "msgpack+aes" in types and "msgpack" not in types


def test_with_the_key_file_the_tables_are_the_reference(encrypted_sqlite, key_file, graphs_reference, tmp_path):
    db = tmp_path / "db.duckdb"
    summary = loaders.load(str(encrypted_sqlite), db, aes_key=loaders.cipher.key_from_file(key_file), workers=1)
    assert summary.errors == 0
    assert_same_tables(db, graphs_reference, with_errors=True)
    assert KEY not in all_text(db)


def test_the_key_from_the_environment_and_a_split_load(encrypted_sqlite, graphs_reference, tmp_path, monkeypatch):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", KEY)
    db = tmp_path / "db.duckdb"
    loaders.load(str(encrypted_sqlite), db, workers=2)  # (workers get the key with their job)
    assert_same_tables(db, graphs_reference, with_errors=True)


def test_without_a_key_each_thread_says_once_what_to_pass(encrypted_sqlite, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGGRAPH_AES_KEY", raising=False)
    db = tmp_path / "db.duckdb"
    loaders.load(str(encrypted_sqlite), db, workers=1)
    errors = rows(db, "SELECT thread_id, reason FROM load_errors")
    threads = {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    assert sorted(e["thread_id"] for e in errors) == sorted(threads)  # one per thread
    assert all("not decrypted: no key given (pass the key with --aes-key-file or LANGGRAPH_AES_KEY)" in e["reason"]
               and "msgpack+aes" in e["reason"] for e in errors)
    assert rows(db, "SELECT count(*) AS n FROM messages")[0]["n"] == 0


def test_a_wrong_key_gives_row_errors_naming_the_cipher_failure(encrypted_sqlite, tmp_path):
    db = tmp_path / "db.duckdb"
    summary = loaders.load(str(encrypted_sqlite), db, aes_key=WRONG.encode(), workers=1)
    reasons = [r["reason"] for r in rows(db, "SELECT reason FROM load_errors")]
    assert summary.errors == len(reasons) > 0
    assert all("AES-EAX MAC check failed (a wrong key, or the value was changed)" in r for r in reasons)
    assert rows(db, "SELECT count(*) AS n FROM messages")[0]["n"] == 0  # never garbage
    assert WRONG not in all_text(db)


def test_a_tampered_row_is_one_row_error_and_the_rest_loads(encrypted_sqlite, graphs_reference, tmp_path):
    store = tmp_path / "tampered.sqlite"
    store.write_bytes(encrypted_sqlite.read_bytes())
    con = sqlite3.connect(store)
    tid, cid, blob = con.execute(
        "SELECT thread_id, checkpoint_id, checkpoint FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id LIMIT 1"
    ).fetchone()
    flipped = blob[:40] + bytes([blob[40] ^ 1]) + blob[41:]
    con.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?", (flipped, tid, cid))
    con.commit()
    con.close()
    db = tmp_path / "db.duckdb"
    loaders.load(str(store), db, aes_key=KEY.encode(), workers=1)
    errors = rows(db, "SELECT thread_id, checkpoint_id, stage, reason FROM load_errors")
    assert [(e["thread_id"], e["checkpoint_id"], e["stage"]) for e in errors] == [(tid, cid, "checkpoint")]
    assert "MAC check failed" in errors[0]["reason"]
    others = "WHERE thread_id <> ?"
    assert rows(db, f"SELECT * FROM messages {others} ORDER BY thread_id, ordinal", [tid]) == rows(
        graphs_reference, f"SELECT * FROM messages {others} ORDER BY thread_id, ordinal", [tid])


def test_a_store_with_some_rows_encrypted_loads_both(graphs_reference, tmp_path):
    """Threads written before encryption was switched on stay plain: both load."""
    path = tmp_path / "mixed.sqlite"
    plain, secret = sqlite_saver(path, oracle.strict_serde()), sqlite_saver(path, encrypting())
    try:
        # The same deterministic writers, half the threads through each saver.
        manifest = conformance.write_scenarios(plain)
        conformance.write_awkward_threads(secret)
    finally:
        plain.conn.close()
        secret.conn.close()
    con = sqlite3.connect(path)
    types = {t for (t,) in con.execute("SELECT DISTINCT type FROM checkpoints")}
    con.close()
    assert types == {"msgpack", "msgpack+aes"}
    db = tmp_path / "db.duckdb"
    loaders.load(str(path), db, aes_key=KEY.encode(), workers=1)
    assert_same_tables(db, graphs_reference, with_errors=True)
    assert manifest


def test_the_cli_takes_a_key_file_and_never_prints_the_key(encrypted_sqlite, key_file, tmp_path):
    db = tmp_path / "db.duckdb"
    out = subprocess.run(
        [sys.executable, "-m", "transcript_lens", "load", str(encrypted_sqlite), "--db", str(db), "--aes-key-file",
         str(key_file), "--quiet", "--workers", "1"], capture_output=True, text=True, check=True)
    assert "(0 row errors)" in out.stdout and KEY not in out.stdout + out.stderr
    bad = tmp_path / "short.key"
    bad.write_text("too-short")
    out = subprocess.run(
        [sys.executable, "-m", "transcript_lens", "load", str(encrypted_sqlite), "--db", str(db), "--aes-key-file",
         str(bad), "--quiet"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {bad}: an AES key must be 16, 24 or 32 bytes long, not 9"


def test_the_key_never_shows():
    key = AesKey(KEY.encode())
    assert KEY not in repr(key) + str(key) + repr([key])


@pytest.mark.parametrize("export", ["csv", "plain"])
def test_postgres_exports_of_an_encrypted_database(export, graphs_reference, tmp_path):
    from langgraph.checkpoint.postgres import PostgresSaver

    with fresh_database() as dsn:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            saver.serde = encrypting()
            conformance.write_graphs(saver)
        spec = export_csv(dsn, tmp_path / "csv") if export == "csv" else pg_dump(dsn, tmp_path / "data.sql")
        for name, source in (("live", dsn), ("export", str(spec))):
            db = tmp_path / f"{name}.duckdb"
            loaders.load(source, db, aes_key=KEY.encode(), workers=1)
            assert_same_tables(db, graphs_reference, with_errors=True, json_columns=("metadata",))


def test_mysql_live_and_dump_of_an_encrypted_database(graphs_reference, tmp_path):
    from tests.loaders.mysql_util import fresh_mysql_database, mysql_saver, mysqldump

    with fresh_mysql_database() as db:
        with mysql_saver(db.admin_dsn, serde=encrypting()) as saver:
            conformance.write_graphs(saver)
        for name, spec in (("live", db.reader_dsn), ("dump", str(mysqldump(db.name, tmp_path / "d.sql")))):
            out = tmp_path / f"{name}.duckdb"
            loaders.load(spec, out, aes_key=KEY.encode(), workers=1)
            assert_same_tables(out, graphs_reference, with_errors=True, json_columns=("metadata",))


def test_a_key_of_a_wrong_length_in_the_environment_fails_only_encrypted_rows(encrypted_sqlite, graphs_sqlite, graphs_reference, tmp_path, monkeypatch):
    monkeypatch.setenv("LANGGRAPH_AES_KEY", "short")
    db = tmp_path / "plain.duckdb"
    loaders.load(str(graphs_sqlite), db, workers=1)  # a store without encrypted values: as ever
    assert_same_tables(db, graphs_reference, with_errors=True)
    loaders.load(str(encrypted_sqlite), db, workers=1)
    reasons = {r["reason"] for r in rows(db, "SELECT reason FROM load_errors")}
    assert reasons and all(r.endswith("not decrypted: LANGGRAPH_AES_KEY: an AES key must be 16, 24 or 32 bytes long, not 5")
                           for r in reasons)
