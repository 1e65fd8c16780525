"""The documents of `langgraph-checkpoint-redis`, and each as the row the shared decoding takes.

`RedisSaver`, `AsyncRedisSaver` and `ShallowRedisSaver` keep RedisJSON documents
(RediSearch indexes them; this reader does not need the indexes):

- `checkpoint:<thread>:<ns>:<id>` (the full savers): `thread_id`, `checkpoint_ns`,
  `checkpoint_id`, `parent_checkpoint_id` (`""`: none), `checkpoint` (the checkpoint as
  JSON, channel values inline, messages as LangChain `lc` constructor envelopes),
  `metadata` (JSON text), and `run_id`, `checkpoint_ts`, `source`, `step`, `has_writes`
  for the index. Empty ids are stored as sentinels (thread or checkpoint id
  `00000000-0000-0000-0000-000000000000`, namespace `__empty__`), read back as `""`.
- `checkpoint:<thread>:<ns>` (the shallow saver): one document per thread and namespace,
  overwritten by each step, without `parent_checkpoint_id`, its `metadata` a JSON object.
- `checkpoint_write:<thread>:<ns>:<id>:<task>:<idx>`: a pending write, `channel`, `type`
  and `blob` (the serialized value in base64) beside the keys.
- `checkpoint_latest:<thread>:<ns>` (text: the newest checkpoint's key),
  `write_keys_zset:<thread>:<ns>:<id>` and `write_registry:<thread>:<ns>:shallow`
  (sorted sets of write keys).

A checkpoint document becomes a `checkpoints` row and a write document a special `writes`
row as `loaders.bundles.bundle_thread` takes them (`json` checkpoints); what does not fit
is a row error, and the document is skipped.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from loaders import delta
from loaders.records import LoadError, ThreadBundle

EMPTY_STRING_SENTINEL = "__empty__"  # langgraph.checkpoint.redis.util
EMPTY_ID_SENTINEL = "00000000-0000-0000-0000-000000000000"


def from_storage_safe(value: Any, sentinel: str) -> Any:
    """A stored id as the saver wrote it: its empty value's `sentinel` read back as `""`.

    >>> from_storage_safe(EMPTY_STRING_SENTINEL, EMPTY_STRING_SENTINEL), from_storage_safe("ns", EMPTY_STRING_SENTINEL)
    ('', 'ns')
    """
    return "" if value == sentinel else value


class Unreadable(str):
    """A document `JSON.MGET` returned that could not be parsed: why."""


def one_text(found: list | None) -> bool:
    """`JSON.MGET … $.field` found one text value (not an unreadable document).

    >>> one_text(["t1"]), one_text([]), one_text([5]), one_text([Unreadable("why")]), one_text(None)
    (True, False, False, False, False)
    """
    return bool(found) and len(found) == 1 and type(found[0]) is str


def shown_key(key: bytes) -> str:
    text = key.decode("utf-8", "replace")
    return repr(text if len(text) <= 80 else text[:80] + "…")


def checkpoint_row(thread_id: str, doc: Any, errors: list[LoadError]) -> tuple | None:
    """A checkpoint document → a `checkpoints` row as `bundle_thread` takes it
    (`thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata`)."""
    if not isinstance(doc, dict):
        errors.append(LoadError(thread_id, None, None, "checkpoint", f"checkpoint document is {_not_object(doc)}: skipped"))
        return None
    ns, cid = doc.get("checkpoint_ns"), doc.get("checkpoint_id")
    if not isinstance(ns, str) or not isinstance(cid, str):
        errors.append(LoadError(thread_id, ns if isinstance(ns, str) else None, cid if isinstance(cid, str) else None,
                                "checkpoint", "checkpoint document without text checkpoint_ns and checkpoint_id: skipped"))
        return None
    ns, cid = from_storage_safe(ns, EMPTY_STRING_SENTINEL), from_storage_safe(cid, EMPTY_ID_SENTINEL)
    parent = doc.get("parent_checkpoint_id")
    parent = from_storage_safe(parent, EMPTY_ID_SENTINEL) or None if isinstance(parent, str) else parent
    checkpoint = doc.get("checkpoint")
    if isinstance(checkpoint, dict):
        checkpoint = _snapshot_as_value(checkpoint)
    # The checkpoint is JSON inside the document (older releases: JSON text); as JSON
    # bytes, the shared decoder reads it as a `json`-tagged checkpoint.
    try:
        blob = checkpoint.encode("utf-8", "surrogatepass") if isinstance(checkpoint, str) else orjson.dumps(checkpoint)
    except orjson.JSONEncodeError as exc:
        blob = str(exc).encode()  # (not JSON: the decoder reports the row damaged)
    metadata = doc.get("metadata")
    if isinstance(metadata, dict):  # the shallow saver keeps it as an object
        metadata = orjson.dumps(metadata).decode()
    return (thread_id, ns, cid, parent, "json", blob, metadata)


def _snapshot_as_value(checkpoint: dict) -> dict:
    """A DeltaChannel snapshot of `messages` (`{"__delta_snapshot__": true, "value": …}`) as its value."""
    values = checkpoint.get("channel_values")
    snapshot = values.get("messages") if isinstance(values, dict) else None
    if isinstance(snapshot, dict) and snapshot.get("__delta_snapshot__") is True:
        return {**checkpoint, "channel_values": {**values, "messages": snapshot.get("value") or []}}
    return checkpoint


def without_delta_messages(bundle: ThreadBundle) -> ThreadBundle:
    """A DeltaChannel thread, whose lists this kind does not rebuild (`loaders.delta` reads the
    other kinds' writes): its checkpoints keep their rows without messages, and one error says
    so, rather than a transcript taken from the last snapshot."""
    return ThreadBundle(
        bundle.thread_id, [cp._replace(messages=None, damaged=True) for cp in bundle.checkpoints], bundle.writes,
        [*bundle.errors, LoadError(bundle.thread_id, None, None, "messages", (
            f"DeltaChannel {delta.CHANNEL} not rebuilt: the redis kind does not read a DeltaChannel's writes; "
            "its checkpoints load without messages"))],
        bundle.payloads)


def _not_object(doc: Any) -> str:
    return doc if isinstance(doc, Unreadable) else f"a {type(doc).__name__}, not an object"


def write_row(thread_id: str, doc: Any, errors: list[LoadError]) -> tuple | None:
    """A write document → a special `writes` row as `bundle_thread` takes it
    (`thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value`)."""
    if not isinstance(doc, dict):
        errors.append(LoadError(thread_id, None, None, "write", f"write document is {_not_object(doc)}: skipped"))
        return None
    ns, cid, task_id, idx = (doc.get(k) for k in ("checkpoint_ns", "checkpoint_id", "task_id", "idx"))
    channel, type_, blob = doc.get("channel"), doc.get("type"), doc.get("blob")
    if not (isinstance(ns, str) and isinstance(cid, str) and isinstance(task_id, str) and type(idx) is int):
        errors.append(LoadError(thread_id, ns if isinstance(ns, str) else None, cid if isinstance(cid, str) else None,
                                "write", f"{channel} write document without its keys (checkpoint_ns, checkpoint_id, "
                                "task_id, idx): skipped"))
        return None
    ns, cid = from_storage_safe(ns, EMPTY_STRING_SENTINEL), from_storage_safe(cid, EMPTY_ID_SENTINEL)
    value = _blob(blob)
    if type_ == "json" and value is not None:
        value = _plain_markers_json(value)
    return (thread_id, ns, cid, task_id, idx, channel, type_, value)


def _blob(blob: Any) -> bytes | None:
    """A write's `blob`: base64 text, as the saver's `_decode_blob` reads it (text that
    is not base64 is taken as it is)."""
    if not isinstance(blob, str):
        return None
    try:
        return base64.b64decode(blob)
    except (binascii.Error, ValueError):
        return blob.encode("utf-8", "surrogatepass")


def _plain_markers_json(value: bytes) -> bytes:
    """The saver's JSON markers as the values they stand for, as `loaders.decode.plain`
    gives the msgpack form: an Interrupt `{"__interrupt__": true, "value": …, "id": …}`
    as its fields, a Send `{"__send__": true, "node": …, "arg": …}` as `node`, `arg`.
    Text that is not JSON is returned as it is (the decoder reports it).

    >>> _plain_markers_json(b'[{"__interrupt__":true,"value":"ok?","id":"i1"}]')
    b'[{"value":"ok?","id":"i1"}]'
    """
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return value

    def walk(v: Any, depth: int = 0) -> Any:
        if depth > 200:  # (the decoder refuses it: loaders.decode.MAX_DEPTH)
            return v
        if isinstance(v, dict):
            if v.get("__interrupt__") is True or (v.get("__send__") is True and len(v) == 3):
                v = {k: x for k, x in v.items() if k not in ("__interrupt__", "__send__")}
            return {k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        return v

    return orjson.dumps(walk(parsed))
