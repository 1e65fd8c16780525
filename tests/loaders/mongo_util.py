"""MongoDBSaver stores for the tests, laid out as MongoDB's own tools lay them out.

No MongoDB server runs here: the real `MongoDBSaver` (langgraph-checkpoint-mongodb)
writes through a `mongomock` client (an in-memory server behind pymongo's client
interface), and its documents are then written out exactly as

- `mongodump` does: `DB/<collection>.bson` (the documents' BSON end to end, `bson.encode`)
  beside `<collection>.metadata.json` (canonical Extended JSON), both gzipped under `--gzip`;
- `mongodump --archive` does: mongo-tools' archive format (common/archive/spec.md), written
  by `write_archive` below with interleaved segments and each collection's CRC-64-ECMA;
- `mongoexport` does: one compact Extended JSON document a line, `--jsonFormat` relaxed
  (its default) or canonical.

The live kind reads the same mongomock client through `MongoSource.client_factory` (`serve`).
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import bson
import mongomock
import mongomock.collection
from bson import json_util
from bson.int64 import Int64

import loaders

DB = "checkpointing_db"  # MongoDBSaver's default
SECRET = "S3cret-mongo"  # the live case's password (never to be shown)
COLLECTIONS = ("checkpoints", "checkpoint_writes")
ARCHIVE_MAGIC = struct.pack("<I", 0x8199E26D)
TERMINATOR = struct.pack("<I", 0xFFFFFFFF)


def _accept_sort() -> None:
    """pymongo 4.11+ hands `sort=None` to a bulk builder's `add_update` (`UpdateOne._add_to_bulk`), which
    mongomock 4.3's does not take yet; MongoDBSaver's `put_writes` goes through it. Taken and dropped
    when None (an UpdateOne without sort, all the saver sends)."""
    builder = mongomock.collection.BulkOperationBuilder
    if getattr(builder.add_update, "_takes_sort", False):
        return
    original = builder.add_update

    def add_update(self, *args, sort=None, **kwargs):
        if sort is not None:
            raise NotImplementedError("mongomock: bulk update with sort")
        return original(self, *args, **kwargs)

    add_update._takes_sort = True
    builder.add_update = add_update


def mongomock_client() -> mongomock.MongoClient:
    _accept_sort()
    return mongomock.MongoClient()


def serve(monkeypatch, client, uri: str) -> None:
    """For this test, the live kind opens `client` for `uri` (`MongoSource.client_factory`); any other
    URI goes to pymongo's own client."""
    from loaders.mongo.live import default_client

    monkeypatch.setattr(loaders.sources()["mongodb"], "client_factory", lambda u: client if u == uri else default_client(u))


def index_ordered_writes(monkeypatch) -> None:
    """Answer MongoDBSaver's `find({thread_id, checkpoint_ns, checkpoint_id})` of a checkpoint's pending
    writes as a server does, through the saver's unique index (… task_id, idx): mongomock uses no index
    and answers in insertion order, which for parallel tasks is the order their threads finished. The
    runtime replays a DeltaChannel's writes in the order `get_tuple` hands them over."""
    find = mongomock.Collection.find

    def ordered(self, filter=None, *args, **kwargs):
        cursor = find(self, filter, *args, **kwargs)
        if self.name == "checkpoint_writes" and set(filter or ()) == {"thread_id", "checkpoint_ns", "checkpoint_id"}:
            return cursor.sort([("task_id", 1), ("idx", 1)])
        return cursor

    monkeypatch.setattr(mongomock.Collection, "find", ordered)


def documents(client, collection: str, db: str = DB) -> list[dict]:
    """A collection's documents in natural (insertion) order, as mongodump reads them, `_id` first
    (a server moves it there on insert; mongomock keeps an upsert's query fields before it)."""
    return [{"_id": d["_id"], **{k: v for k, v in d.items() if k != "_id"}} for d in client[db][collection].find({})]


def sqlite_copy(saver, path: Path) -> Path:
    """The MongoDBSaver's checkpoints and writes put into a SqliteSaver file through LangGraph's
    own API (`list`, then `put` / `put_writes`): the same checkpoint ids, for the SQLite reference
    (a SqliteSaver writing the graphs itself would draw other ids: its channel versions take
    random numbers, MongoDBSaver's do not)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    con = sqlite3.connect(str(path), check_same_thread=False)
    con.execute("PRAGMA synchronous = OFF")  # no fsync per commit (storegen.open_sqlite_saver): the same bytes
    target = SqliteSaver(con)
    try:
        for tup in sorted(saver.list(None), key=lambda t: t.checkpoint["id"]):
            conf = tup.config["configurable"]
            parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            where = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf["checkpoint_ns"],
                                      **({"checkpoint_id": parent} if parent else {})}}
            target.put(where, tup.checkpoint, tup.metadata, {})
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                target.put_writes(tup.config, writes, task_id, _task_path(saver, conf, task_id))
    finally:
        con.close()
    return path


def _task_path(saver, conf: dict, task_id: str) -> str:
    doc = saver.writes_collection.find_one({**{k: conf[k] for k in ("thread_id", "checkpoint_ns", "checkpoint_id")}, "task_id": task_id})
    return doc.get("task_path", "") if doc else ""


def _metadata_json(client, collection: str, db: str) -> str:
    indexes = [{"v": 2, "key": dict(ix["key"]), "name": ix["name"], **({"unique": True} if ix.get("unique") else {})}
               for ix in client[db][collection].list_indexes()]
    meta = {"indexes": indexes, "uuid": "0123456789abcdef0123456789abcdef", "collectionName": collection, "type": "collection"}
    return json_util.dumps(meta, json_options=json_util.CANONICAL_JSON_OPTIONS, separators=(",", ":"))


def _write(path: Path, data: bytes, gzipped: bool) -> Path:
    path = path.with_name(path.name + ".gz") if gzipped else path
    path.write_bytes(gzip.compress(data, mtime=0) if gzipped else data)
    return path


def write_dump(client, root: Path, gzipped: bool = False, db: str = DB) -> Path:
    """`mongodump --db DB --out ROOT [--gzip]`: ROOT/DB/<collection>.bson and .metadata.json."""
    folder = root / db
    folder.mkdir(parents=True)
    for coll in COLLECTIONS:
        _write(folder / f"{coll}.bson", b"".join(bson.encode(d) for d in documents(client, coll, db)), gzipped)
        _write(folder / f"{coll}.metadata.json", _metadata_json(client, coll, db).encode(), gzipped)
    return root


def write_export(client, folder: Path, mode: str = "relaxed", db: str = DB) -> Path:
    """`mongoexport --collection C --jsonFormat MODE --out FOLDER/C.json` for both collections."""
    options = json_util.RELAXED_JSON_OPTIONS if mode == "relaxed" else json_util.CANONICAL_JSON_OPTIONS
    folder.mkdir(parents=True)
    for coll in COLLECTIONS:
        lines = [json_util.dumps(d, json_options=options, separators=(",", ":")) for d in documents(client, coll, db)]
        (folder / f"{coll}.json").write_text("".join(line + "\n" for line in lines))
    return folder


# --- mongodump --archive ----------------------------------------------------------------

def _crc64_table() -> list[int]:
    poly = 0xC96C5795D7870F42  # ECMA-182, reflected (Go's crc64.ECMA, which mongo-tools uses)
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc64_table()


def crc64(data: bytes, crc: int = 0) -> int:
    """Go's `crc64.Update(crc, crc64.MakeTable(crc64.ECMA), data)`."""
    crc ^= 0xFFFFFFFFFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFFFFFFFFFF


def _signed(crc: int) -> Int64:
    return Int64(crc - (1 << 64) if crc >= 1 << 63 else crc)


def write_archive(client, path: Path, gzipped: bool = False, db: str = DB, segment: int = 40,
                  extra: dict[str, list[dict]] | None = None) -> Path:
    """`mongodump --archive=PATH [--gzip]` of `db` (plus `extra` collections `{"otherdb.coll": docs}`):
    collections interleaved `segment` documents at a time, as mongodump's parallel dumpers do."""
    namespaces = {(db, c): [bson.encode(d) for d in documents(client, c, db)] for c in COLLECTIONS}
    for ns, docs in (extra or {}).items():
        other_db, coll = ns.split(".", 1)
        namespaces[(other_db, coll)] = [bson.encode(d) for d in docs]
    out = [ARCHIVE_MAGIC, bson.encode({"concurrent_collections": 4, "version": "0.1", "server_version": "7.0.14",
                                       "tool_version": "100.10.0"})]
    for (d, c), docs in namespaces.items():
        meta = _metadata_json(client, c, d) if d == db else '{"indexes":[],"collectionName":"%s","type":"collection"}' % c
        out.append(bson.encode({"db": d, "collection": c, "metadata": meta, "size": sum(map(len, docs)), "type": ""}))
    out.append(TERMINATOR)
    cursors = {ns: 0 for ns in namespaces}
    crcs = {ns: 0 for ns in namespaces}
    while any(cursors[ns] < len(namespaces[ns]) for ns in namespaces):
        for ns, docs in namespaces.items():
            part = docs[cursors[ns]:cursors[ns] + segment]
            if not part:
                continue
            cursors[ns] += len(part)
            out.append(bson.encode({"db": ns[0], "collection": ns[1], "EOF": False, "CRC": Int64(0)}))
            for doc in part:
                crcs[ns] = crc64(doc, crcs[ns])
                out.append(doc)
            out.append(TERMINATOR)
    for ns in namespaces:
        out.append(bson.encode({"db": ns[0], "collection": ns[1], "EOF": True, "CRC": _signed(crcs[ns])}))
        out.append(TERMINATOR)
    data = b"".join(out)
    path.write_bytes(gzip.compress(data, mtime=0) if gzipped else data)
    return path
