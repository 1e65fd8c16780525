"""The MongoDB kinds against the real MongoDBSaver's documents (tests/loaders/mongo_util.py says how
they are written and laid out): every form loads as LangGraph reads the saver (tests/oracle.py), the
live reader only finds, in a snapshot session when there is one, and damaged or hostile files give
`load_errors` rows or one-line `SourceError`s within bounded memory. The conformance kit runs on both
kinds too (test_conformance.py)."""

from __future__ import annotations

import gzip
import struct

import bson
import mongomock
import pytest
from bson.code import Code
from bson.regex import Regex
from langgraph.checkpoint.mongodb import MongoDBSaver

import loaders
from loaders import SourceError
from loaders.mongo import files
from tests import oracle
from tests.loaders import mongo_util
from tests.loaders.util import assert_same_tables, load_db, rows

MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)
CHECKPOINT_COLS = ", ".join(oracle.CHECKPOINT_KEYS)
FORMS = ("uri", "dump", "dump_gz", "archive", "archive_gz", "export_relaxed", "export_canonical")


@pytest.fixture(scope="module")
def mongo(graphs_mongo):
    return graphs_mongo


@pytest.fixture(autouse=True)
def served(mongo, monkeypatch):
    mongo_util.serve(monkeypatch, mongo.client, mongo.uri)


@pytest.fixture(scope="module")
def expected(mongo):
    saver = MongoDBSaver(mongo.client, serde=oracle.strict_serde())  # LangGraph's own reading of the collections
    return oracle.expected_messages(saver), oracle.expected_checkpoints(saver)


@pytest.mark.parametrize("form", FORMS)
def test_every_form_loads_as_langgraph_reads_the_saver(form, mongo, expected, tmp_path):
    db = tmp_path / "t.duckdb"
    summary = load_db(str(getattr(mongo, form)), db)
    assert summary.errors == 0
    messages, checkpoints = expected
    assert rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal") == messages
    assert rows(db, f"SELECT {CHECKPOINT_COLS} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id") == checkpoints
    # Pending interrupts come from checkpoint_writes: a thread left waiting on a human says so.
    waiting = "SELECT thread_id FROM threads WHERE interrupt_pending ORDER BY thread_id"
    assert rows(db, waiting) == rows(mongo.reference, waiting)
    assert {r["thread_id"] for r in rows(db, waiting)} >= {t for t, s in mongo.manifest.items() if s == "interrupt_pending"} != set()


def test_metadata_of_releases_before_0_3_is_read(mongo, tmp_path):
    """langgraph-checkpoint-mongodb 0.1-0.2 wrote each metadata leaf as `serde.dumps(value)`
    (JsonPlusSerializer's JSON bytes) and writes without task_path."""
    import json

    legacy = {k: json.dumps(v, ensure_ascii=False).encode() for k, v in
              {"source": "loop", "step": 3, "user_id": "ü@x", "parents": None}.items()}
    doc = _checkpoint(mongo, metadata={**legacy, "parents": {}})
    spec = _dump_with(mongo, tmp_path, [bson.encode(doc)])
    db = tmp_path / "t.duckdb"
    assert load_db(str(spec), db).errors == 0
    assert rows(db, "SELECT step, source, metadata->>'user_id' AS u FROM checkpoints WHERE thread_id = 'zz:damaged'") == [
        {"step": 3, "source": "loop", "u": "ü@x"}]


def test_a_collection_file_given_alone_is_refused_in_one_line(mongo, tmp_path):
    folder = tmp_path / "db"
    folder.mkdir()
    (folder / "checkpoints.bson").write_bytes((mongo.dump / mongo_util.DB / "checkpoints.bson").read_bytes())
    with pytest.raises(SourceError, match="no checkpoint_writes.bson .* beside checkpoints.bson"):
        load_db(str(folder / "checkpoints.bson"), tmp_path / "t.duckdb")
    assert not (tmp_path / "t.duckdb").exists()


# --- live ------------------------------------------------------------------------------


@pytest.fixture
def no_writes(monkeypatch):
    """Every mongomock method that changes data or indexes fails the test if called."""
    def refuse(name):
        def call(self, *a, **kw):
            raise AssertionError(f"the reader called {name}")
        return call
    for name in ("insert_one", "insert_many", "update_one", "update_many", "replace_one", "delete_one", "delete_many",
                 "bulk_write", "create_index", "create_indexes", "drop", "drop_index", "find_one_and_update"):
        monkeypatch.setattr(mongomock.Collection, name, refuse(name))
    monkeypatch.setattr(mongomock.Database, "create_collection", refuse("create_collection"))


class _Session:
    def __init__(self, log):
        self.log = log

    def end_session(self):
        self.log.append("ended")


def _recording_finds(monkeypatch) -> list:
    seen = []
    find = mongomock.Collection.find

    def recording(self, filter=None, *a, session=None, **kw):
        seen.append((self.name, session, filter))
        return find(self, filter, *a, **kw)

    monkeypatch.setattr(mongomock.Collection, "find", recording)
    return seen


def test_live_reads_with_finds_only_and_says_when_there_is_no_snapshot(mongo, no_writes, tmp_path):
    # mongomock has no sessions, like a standalone server: read as it is, and said so.
    with loaders.sources()["mongodb"].open(mongo.uri) as reader:
        assert reader.snapshot is False
        assert "no snapshot session" in reader.describe() and mongo_util.SECRET not in reader.describe()
        assert [b.thread_id for b in reader.threads()] == sorted(mongo.manifest)
    db = tmp_path / "live.duckdb"
    assert load_db(mongo.uri, db).errors == 0
    assert_same_tables(db, mongo.reference, with_errors=True, json_columns=("metadata",))


def test_live_reads_both_collections_in_one_snapshot_session(mongo, no_writes, monkeypatch):
    log: list = []
    monkeypatch.setattr(mongomock.MongoClient, "start_session", lambda self, snapshot=False: _Session(log) if snapshot else None,
                        raising=False)
    seen = _recording_finds(monkeypatch)
    with loaders.sources()["mongodb"].open(mongo.uri) as reader:
        assert reader.snapshot is True and "snapshot" not in reader.describe()
        assert len({b.thread_id for b in reader.threads()}) == len(mongo.manifest)
    assert {name for name, _, _ in seen} == {"checkpoints", "checkpoint_writes"}
    assert all(isinstance(session, _Session) for _, session, _ in seen)
    assert log == ["ended"]


def test_live_asks_the_server_only_for_what_a_load_reads(mongo, monkeypatch):
    seen = _recording_finds(monkeypatch)
    wanted = sorted(mongo.manifest)[1:3]
    with loaders.sources()["mongodb"].open(mongo.uri, {"threads": (*wanted, "no:such")}) as reader:
        assert [b.thread_id for b in reader.threads()] == wanted
    only = {"$in": [*wanted, "no:such"]}
    assert [f for name, _, f in seen if name == "checkpoints" and f.get("_id", 0) is not None] == [{"thread_id": only}]
    assert [f for name, _, f in seen if name == "checkpoint_writes"] == [
        {"thread_id": only, "channel": {"$in": ["__interrupt__", "__resume__", "__error__", "messages"]}}]


def test_a_server_that_refuses_snapshot_reads_is_read_without(mongo, no_writes, monkeypatch):
    from pymongo.errors import OperationFailure

    log: list = []
    monkeypatch.setattr(mongomock.MongoClient, "start_session", lambda self, snapshot=False: _Session(log), raising=False)
    find = mongomock.Collection.find

    def standalone(self, *a, session=None, **kw):
        if session is not None:
            raise OperationFailure("Transaction numbers are only allowed on a replica set member or mongos", code=20)
        return find(self, *a, **kw)

    monkeypatch.setattr(mongomock.Collection, "find", standalone)
    with loaders.sources()["mongodb"].open(mongo.uri) as reader:
        assert reader.snapshot is False
        assert len(list(reader.threads())) == len(mongo.manifest)
    assert log == ["ended"]


def test_a_server_that_does_not_answer_fails_in_one_line_without_the_password(tmp_path):
    # Through pymongo's own client (no factory): nothing listens on port 1.
    uri = f"mongodb://reader:{mongo_util.SECRET}@127.0.0.1:1/agents?serverSelectionTimeoutMS=300"
    with pytest.raises(SourceError, match="^mongodb://reader:\\*\\*\\*@127.0.0.1:1/agents.*: cannot connect ") as err:
        load_db(uri, tmp_path / "t.duckdb")
    assert mongo_util.SECRET not in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "t.duckdb").exists()


def test_database_and_collection_names_are_options(tmp_path, monkeypatch):
    client = mongo_util.mongomock_client()
    saver = MongoDBSaver(client, db_name="agents", checkpoint_collection_name="cp", writes_collection_name="wr")
    from tests.loaders.pg_util import write_awkward_threads

    written = write_awkward_threads(saver)
    mongo_util.serve(monkeypatch, client, "mongodb://h/agents")
    names = {"checkpoint_collection": "cp", "writes_collection": "wr"}
    assert load_db("mongodb://h/agents", tmp_path / "a.duckdb", options=names).threads == len(written)
    mongo_util.serve(monkeypatch, client, "mongodb://h")
    assert load_db("mongodb://h", tmp_path / "b.duckdb", options={**names, "database": "agents"}).threads == len(written)
    mongo_util.serve(monkeypatch, client, "mongodb://h/agents")
    with pytest.raises(SourceError, match="no checkpoints collection in database 'agents'"):
        load_db("mongodb://h/agents", tmp_path / "c.duckdb")


def test_an_encrypted_store_loads_with_its_key(tmp_path, monkeypatch):
    """EncryptedSerializer (AES) encrypts each metadata leaf too: those are decoded as the store
    is opened (staged), so the key must be in force there, not only while threads are read."""
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    from storegen import run_scenarios

    key = b"0123456789abcdef"
    client = mongo_util.mongomock_client()
    saver = MongoDBSaver(client, serde=EncryptedSerializer.from_pycryptodome_aes(key=key))
    run_scenarios(saver, threads={"enc:1": "simple_chat", "enc:2": "interrupt_pending"})
    reading = MongoDBSaver(client, serde=EncryptedSerializer.from_pycryptodome_aes(serde=oracle.strict_serde(), key=key))
    messages, checkpoints = oracle.expected_messages(reading), oracle.expected_checkpoints(reading)
    mongo_util.serve(monkeypatch, client, "mongodb://h/checkpointing_db")
    for spec in ("mongodb://h/checkpointing_db", mongo_util.write_archive(client, tmp_path / "enc.archive")):
        db = tmp_path / "enc.duckdb"
        summary = load_db(str(spec), db, aes_key=key)
        assert summary.errors == 0, rows(db, "SELECT reason FROM load_errors")
        assert rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal") == messages
        assert rows(db, f"SELECT {CHECKPOINT_COLS} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id") == checkpoints
        db.unlink()


# --- damaged and hostile files ---------------------------------------------------------


def _dump_with(mongo, tmp_path, extra_checkpoints: list[bytes], tail: bytes = b""):
    """The dump folder with raw BSON `extra_checkpoints` (and `tail` bytes) after the real ones."""
    folder = tmp_path / "dump" / mongo_util.DB
    folder.mkdir(parents=True)
    src = mongo.dump / mongo_util.DB
    for name in ("checkpoint_writes.bson", "checkpoints.metadata.json", "checkpoint_writes.metadata.json"):
        (folder / name).write_bytes((src / name).read_bytes())
    (folder / "checkpoints.bson").write_bytes((src / "checkpoints.bson").read_bytes() + b"".join(extra_checkpoints) + tail)
    return tmp_path / "dump"


def _checkpoint(mongo, **changes) -> dict:
    doc = dict(mongo_util.documents(mongo.client, "checkpoints")[0])
    doc.update({"_id": bson.ObjectId(), "thread_id": "zz:damaged", "checkpoint_id": "1f000000-0000-6000-8000-000000000000", **changes})
    return doc


def test_damaged_documents_are_load_errors_naming_them(mongo, tmp_path):
    bad_utf8 = bytearray(bson.encode(_checkpoint(mongo, checkpoint_ns="x")))
    at = bad_utf8.index(b"checkpoint_ns\x00") + len(b"checkpoint_ns\x00") + 4
    bad_utf8[at] = 0xFF  # the namespace's first byte: not UTF-8
    extra = [
        bson.encode(_checkpoint(mongo, thread_id=7)),  # a key that is no string
        bson.encode(_checkpoint(mongo, checkpoint=Code("function () { return db.dropDatabase() }", {"db": 1}))),
        bson.encode(_checkpoint(mongo, metadata={"step": Regex("(a+)+$")})),
        bytes(bad_utf8),
        bson.encode(_checkpoint(mongo, checkpoint_id=mongo_util.documents(mongo.client, "checkpoints")[0]["checkpoint_id"],
                                thread_id=mongo_util.documents(mongo.client, "checkpoints")[0]["thread_id"])),  # a second copy
        bson.encode(_checkpoint(mongo, thread_id=Code("this.a", {"a": "zz:code"}))),  # JavaScript with scope, a str subclass
    ]
    truncated = bson.encode(_checkpoint(mongo))[:-10]
    spec = _dump_with(mongo, tmp_path, extra, truncated)
    db = tmp_path / "t.duckdb"
    summary = load_db(str(spec), db)
    errors = rows(db, "SELECT thread_id, stage, reason FROM load_errors ORDER BY reason")
    reasons = [e["reason"] for e in errors]
    assert summary.errors == len(errors) == 7, reasons
    n = len(mongo_util.documents(mongo.client, "checkpoints"))
    assert any(f"document {n + 1} " in r and "thread_id is a BSON int, not a string" in r for r in reasons)
    assert any(f"document {n + 2} " in r and "checkpoint is a BSON Code, not binary data" in r for r in reasons)
    assert any("metadata holds a BSON Regex" in r for r in reasons)
    assert any(f"document {n + 4} " in r and "invalid BSON" in r for r in reasons)
    assert any("a second checkpoints row with the same key" in r for r in reasons)
    assert any(f"document {n + 6} " in r and "thread_id is a BSON Code, not a string" in r for r in reasons)
    assert any(f"document {n + 7} " in r and "ends inside this document" in r for r in reasons)
    # The damaged-metadata checkpoint keeps its row, without metadata; every real thread is whole.
    assert rows(db, "SELECT metadata FROM checkpoints WHERE thread_id = 'zz:damaged'") == [{"metadata": None}]
    real = f"SELECT {MESSAGE_COLS} FROM messages WHERE thread_id <> 'zz:damaged' ORDER BY thread_id, ordinal"
    reference = mongo.reference
    assert rows(db, real) == rows(reference, real)


def test_a_gzip_bomb_is_refused_by_document_length_without_reading_it(mongo, tmp_path):
    folder = tmp_path / "dump" / mongo_util.DB
    folder.mkdir(parents=True)
    # 128 MiB of a claimed 2 GiB document in 128 KiB of gzip: its length is refused before any of it is read.
    (folder / "checkpoints.bson.gz").write_bytes(gzip.compress(struct.pack("<i", 0x7FFFFFF0) + bytes(128 << 20), 6))
    (folder / "checkpoint_writes.bson.gz").write_bytes(gzip.compress(b""))
    reader = loaders.sources()["mongo-dump"].open(str(tmp_path / "dump"))
    with reader:
        errors = [e for b in reader.threads() for e in b.errors]
    assert [e.reason for e in errors] == [
        f"{folder.resolve() / 'checkpoints.bson.gz'}: document 1 (byte 0): length {0x7FFFFFF0} is not a BSON document's (5 to {files.MAX_DOCUMENT} bytes); the rest of the file is not read"]


def test_an_overlong_export_line_is_skipped_in_bounded_pieces(mongo, tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE", 1 << 20)
    folder = tmp_path / "export"
    folder.mkdir()
    lines = (mongo.export_relaxed / "checkpoints.json").read_bytes()
    (folder / "checkpoints.json").write_bytes(b'{"_id":"' + b"x" * (5 << 20) + b'"}\n' + lines)
    (folder / "checkpoint_writes.json").write_bytes((mongo.export_relaxed / "checkpoint_writes.json").read_bytes())
    db = tmp_path / "t.duckdb"
    load_db(str(folder), db)
    assert [e["reason"] for e in rows(db, "SELECT reason FROM load_errors")] == [
        f"{folder.resolve() / 'checkpoints.json'}: line 1: a line over 1 MiB (no document mongoexport writes); skipped"]
    assert_same_tables(db, mongo.reference, json_columns=("metadata",))


@pytest.mark.parametrize("damage, message", [
    ("truncated", "the archive ends inside a document"),
    ("last_terminator", "the archive ends inside its framing"),
    ("framing", "neither a BSON length nor an archive terminator"),
])
def test_a_damaged_archive_fails_in_one_line(mongo, tmp_path, damage, message):
    data = mongo.archive.read_bytes()
    if damage == "truncated":
        data = data[:-7]
    elif damage == "last_terminator":  # cut at a document's end: the final end-of-collection terminator is gone
        data = data[:-4]
    else:  # the prelude's first collection document gets a length no document has
        at = 4 + struct.unpack("<i", data[4:8])[0]
        data = data[:at] + struct.pack("<i", 0x7FFFFFF0) + data[at + 4:]
    damaged = tmp_path / "damaged.archive"
    damaged.write_bytes(data)
    with pytest.raises(SourceError, match=message) as err:
        load_db(str(damaged), tmp_path / "t.duckdb")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "t.duckdb").exists()


def test_an_archive_of_several_databases_takes_the_database_option(mongo, tmp_path):
    other = mongo_util.mongomock_client()
    write = MongoDBSaver(other, db_name="staging")
    from tests.loaders.pg_util import write_awkward_threads

    staged = write_awkward_threads(write)
    extra = {f"staging.{c}": mongo_util.documents(other, c, "staging") for c in mongo_util.COLLECTIONS}
    archive = mongo_util.write_archive(mongo.client, tmp_path / "two.archive", extra=extra)
    with pytest.raises(SourceError, match="several databases with a checkpoints collection \\(checkpointing_db, staging\\)"):
        load_db(str(archive), tmp_path / "t.duckdb")
    assert load_db(str(archive), tmp_path / "s.duckdb", options={"database": "staging"}).threads == len(staged)
    db = tmp_path / "c.duckdb"
    load_db(str(archive), db, options={"database": mongo_util.DB})
    assert_same_tables(db, mongo.reference, with_errors=True, json_columns=("metadata",))
