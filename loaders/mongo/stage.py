"""MongoDBSaver documents → a private SQLite file in SqliteSaver's layout.

`MongoDBSaver` (langgraph-checkpoint-mongodb) keeps SqliteSaver's rows as documents:

    checkpoints:       {_id, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id (string or null),
                        type, checkpoint (binary), metadata, created_at (a date, with a TTL)}
    checkpoint_writes: {_id, thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx (int),
                        channel, type, value (binary), created_at}

Only `metadata` differs: a document whose every leaf is one value as the saver's
serializer wrote it, `[type, binary]` (`dumps_metadata`: keys kept as text so
the server can filter on them; releases before 0.3 wrote each leaf as
JsonPlusSerializer's JSON bytes, and no `task_path`). It becomes the JSON text SqliteSaver stores,
each leaf decoded by `loaders.decode` (nothing in the data is run).

Every form (live, mongodump, archive, mongoexport) hands its documents to
`Stage.add`; the stage is then read by `loaders.sqlite.reader.SqliteReader`
(the shared row decoding, damage rules, split, key digests and DeltaChannel
rebuild), so a Mongo store loads by the same rules as every other kind. A
document that is not one the saver writes (a key that is not text, a checkpoint
that is not binary, a BSON value of a type the saver never writes) is one
`load_errors` row naming it and is skipped.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loaders.decode import DecodeError, decode_typed, plain, to_json
from loaders.records import SPECIAL_CHANNELS, LoadError, second_copy
from loaders.scratch import scratch_dir

# The `writes` a load reads: the special channels and `messages` (a DeltaChannel's rebuild needs it).
KEPT_CHANNELS = (*SPECIAL_CHANNELS, "messages")
# The order the runtime replays a checkpoint's DeltaChannel writes in is the order MongoDBSaver's
# `get_tuple` hands them over: `find({thread_id, checkpoint_ns, checkpoint_id})`, which a server
# answers through the saver's unique index (… task_id, idx), not by task_path as SqliteSaver's
# `writes_sort_key`. So writes are staged without task_path, and `loaders.delta` orders them by
# (task_id, idx) as it does a MySQL saver's.
ERRORS_MAX = 1000  # load_errors rows of damaged documents kept; more are counted in one row
_BATCH = 500  # rows per transaction
_MAX_DEPTH = 64  # metadata nesting taken

# SqliteSaver's own DDL (langgraph-checkpoint-sqlite), so that its reader takes the stage as it is.
_DDL = """
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB, task_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
"""
_INSERT_CHECKPOINT = "INSERT OR IGNORE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_WRITE = "INSERT OR IGNORE INTO writes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


def bson_type(value: Any) -> str:
    """The BSON type a decoded value had, as errors name it.

    >>> bson_type(b"x"), bson_type(3), bson_type(None)
    ('binary', 'int', 'null')
    """
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "bool"
    if isinstance(value, bytes) and kind.__name__ in ("bytes", "Binary"):
        return "binary"
    if kind is str:
        return "string"
    if kind is dict or kind.__name__ == "SON":
        return "document"
    if kind in (list, tuple):
        return "array"
    return kind.__name__  # int, float, datetime, ObjectId, Code (a str subclass), Regex, Decimal128, …


def _text(value: Any) -> bool:
    """A BSON string: exactly `str` (bson's `Code`, JavaScript with or without scope, is a str subclass)."""
    return type(value) is str


def _shown(value: Any) -> str | None:
    return value[:64] if _text(value) else None


class Stage:
    """A private SQLite file in SqliteSaver's layout, filled one document at a time.

    >>> stage = Stage("test")
    >>> stage.add_checkpoint({"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1", "type": "msgpack",
    ...                       "checkpoint": b"\\x80", "metadata": {"step": ["msgpack", b"\\x01"]}}, "doc 1")
    >>> stage.finish()
    []
    >>> sqlite3.connect(stage.path).execute("SELECT thread_id, metadata FROM checkpoints").fetchall()
    [('t', '{"step":1}')]
    >>> stage.close()
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.folder = scratch_dir("mongo")
        self.path = Path(self.folder) / "stage.sqlite"
        self.con = sqlite3.connect(str(self.path), isolation_level=None)
        self.con.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _DDL)
        self.errors: list[LoadError] = []
        self.dropped_errors = 0
        self._pending = 0
        self.con.execute("BEGIN")

    def error(self, thread_id: Any, ns: Any, cid: Any, stage: str, reason: str) -> None:
        """One damaged document (kept up to `ERRORS_MAX`; the rest are counted)."""
        if len(self.errors) < ERRORS_MAX:
            self.errors.append(LoadError(_shown(thread_id), _shown(ns), _shown(cid), stage, reason))
        else:
            self.dropped_errors += 1

    def _keys(self, doc: Mapping, names: tuple[str, ...], stage: str, what: str) -> bool:
        for name in names:
            value = doc.get(name)
            if not _text(value):
                self.error(doc.get("thread_id"), doc.get("checkpoint_ns"), doc.get("checkpoint_id"), stage,
                           f"{what}: {name} is {'missing' if name not in doc else 'a BSON ' + bson_type(value)}, not a string; document skipped")
                return False
        return True

    def _binary(self, doc: Mapping, field: str, stage: str, what: str) -> tuple[bool, Any]:
        value = doc.get(field)
        if value is None or bson_type(value) == "binary":  # (bson.Binary of any subtype is bytes too)
            return True, None if value is None else bytes(value)
        self.error(doc.get("thread_id"), doc.get("checkpoint_ns"), doc.get("checkpoint_id"), stage,
                   f"{what}: {field} is a BSON {bson_type(value)}, not binary data; document skipped")
        return False, None

    def add_checkpoint(self, doc: Any, what: str) -> None:
        """One `checkpoints` document; `what` names it in errors (`dump/db/checkpoints.bson: document 12`)."""
        if bson_type(doc) != "document":
            self.error(None, None, None, "checkpoint", f"{what}: not a document; skipped")
            return
        if not self._keys(doc, ("thread_id", "checkpoint_ns", "checkpoint_id"), "checkpoint", what):
            return
        t, ns, cid = doc["thread_id"], doc["checkpoint_ns"], doc["checkpoint_id"]
        type_, parent = doc.get("type"), doc.get("parent_checkpoint_id")
        ok, blob = self._binary(doc, "checkpoint", "checkpoint", what)
        if not ok:
            return
        if type_ is not None and not _text(type_):
            self.error(t, ns, cid, "checkpoint", f"{what}: type is a BSON {bson_type(type_)}, not a string; document skipped")
            return
        if parent is not None and not _text(parent):
            self.error(t, ns, cid, "checkpoint", f"{what}: parent_checkpoint_id is a BSON {bson_type(parent)}; taken as none")
            parent = None
        metadata = self._metadata(doc.get("metadata"), (t, ns, cid), what)
        cur = self.con.execute(_INSERT_CHECKPOINT, (t, ns, cid, parent, type_, blob, metadata))
        if cur.rowcount == 0:
            self.error(t, ns, cid, "checkpoint", f"{what}: {second_copy('checkpoints')}")
        self._step()

    def add_write(self, doc: Any, what: str) -> None:
        """One `checkpoint_writes` document (kept when its channel is one a load reads)."""
        if bson_type(doc) != "document":
            self.error(None, None, None, "write", f"{what}: not a document; skipped")
            return
        channel = doc.get("channel")
        if not _text(channel) or channel not in KEPT_CHANNELS:
            if not _text(channel):
                self.error(doc.get("thread_id"), doc.get("checkpoint_ns"), doc.get("checkpoint_id"), "write",
                           f"{what}: channel is {'missing' if 'channel' not in doc else 'a BSON ' + bson_type(channel)}; document skipped")
            return
        if not self._keys(doc, ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id"), "write", what):
            return
        t, ns, cid = doc["thread_id"], doc["checkpoint_ns"], doc["checkpoint_id"]
        idx, type_ = doc.get("idx"), doc.get("type")
        if bson_type(idx) not in ("int", "Int64") or not -(1 << 63) <= idx < (1 << 63):
            self.error(t, ns, cid, "write", f"{what}: idx is a BSON {bson_type(idx)}, not an integer; document skipped")
            return
        ok, value = self._binary(doc, "value", "write", what)
        if not ok:
            return
        if type_ is not None and not _text(type_):
            self.error(t, ns, cid, "write", f"{what}: type is a BSON {bson_type(type_)}, not a string; document skipped")
            return
        # task_path is not staged (see KEPT_CHANNELS): the rebuild replays writes by (task_id, idx).
        cur = self.con.execute(_INSERT_WRITE, (t, ns, cid, doc["task_id"], int(idx), channel, type_, value, ""))
        if cur.rowcount == 0:
            self.error(t, ns, cid, "write", f"{what}: {second_copy('checkpoint_writes', ', task_id and idx')}")
        self._step()

    def _metadata(self, metadata: Any, where: tuple[str, str, str], what: str) -> str | None:
        """`dumps_metadata`'s document → SqliteSaver's JSON text (None, reported, when it is not one)."""
        if metadata is None:
            return None
        try:
            return to_json(_metadata_value(metadata, 0))
        except DecodeError as exc:
            self.error(*where, "metadata", f"{what}: metadata {exc}")
            return None

    def _step(self) -> None:
        self._pending += 1
        if self._pending >= _BATCH:
            self.con.execute("COMMIT")
            self.con.execute("BEGIN")
            self._pending = 0

    def finish(self) -> list[LoadError]:
        """Commit what was staged; the errors of damaged documents (one more row counting any left out)."""
        if self.con.in_transaction:
            self.con.execute("COMMIT")
        self.con.close()
        self.con = None
        errors = list(self.errors)
        if self.dropped_errors:
            errors.append(LoadError(None, None, None, "file",
                                    f"{self.where}: {self.dropped_errors} more damaged documents skipped (the first {ERRORS_MAX} are listed)"))
        return errors

    def close(self) -> None:
        con, self.con = self.con, None
        if con is not None:
            con.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _metadata_value(value: Any, depth: int) -> Any:
    """One level of `dumps_metadata`: a document of such values, or a leaf (`[type, binary]`, or legacy JSON bytes)."""
    if depth > _MAX_DEPTH:
        raise DecodeError("is nested too deeply")
    if bson_type(value) == "document":
        return {str(k): _metadata_value(v, depth + 1) for k, v in value.items()}
    if bson_type(value) == "array" and len(value) == 2 and _text(value[0]) and bson_type(value[1]) == "binary":
        return plain(decode_typed(value[0], bytes(value[1]), deep=True))
    if bson_type(value) == "binary":  # releases before 0.3: `serde.dumps(value)`, JsonPlusSerializer's JSON
        return plain(decode_typed("json", bytes(value)))
    raise DecodeError(f"holds a BSON {bson_type(value)} where the saver writes a [type, binary] pair")
