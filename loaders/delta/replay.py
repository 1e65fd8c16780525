"""DeltaChannel threads: the messages channel rebuilt as the runtime rebuilds it (contract §2.3, §7.16).

A messages channel declared `Annotated[list, DeltaChannel(reducer, snapshot_frequency=N)]`
is stored only every N-th update, as `_DeltaSnapshot(value)` (msgpack ext 7); the
other checkpoints hold no value, and metadata carries `counters_since_delta_snapshot`.
LangGraph (`pregel/_checkpoint.channels_from_checkpoint`, `BaseCheckpointSaver.
get_delta_channel_history`, `DeltaChannel.replay_writes`) reads such a checkpoint C so:

- a value stored at C (the snapshot's value, or a plain list left by a channel that
  was not a DeltaChannel before) is the value;
- else, when C's `channel_versions` has no entry for the channel, it was never
  written: no value;
- else the parent chain is walked from C's parent: each ancestor's pending writes to
  the channel are collected (sorted by `writes_sort_key`: task_path, task_id, idx), and
  the walk stops at the first ancestor that stores a value, its writes included (a
  missing parent or a root ends it: start from the empty list). The writes are
  replayed oldest first: the last `Overwrite` among them resets the value, and the
  rest go through the reducer in one call.

The reducer is not recorded on disk. This module implements the one LangGraph ships
for messages, `_messages_delta_reducer` (writes flattened, message-likes coerced,
`RemoveMessage` removes by id, `__remove_all__` clears, an existing id replaces in
place, a message without id is appended); nothing named in the data is imported or
called. A write that reducer cannot take (not a message, a list of them or an
`Overwrite`) means another reducer: it is reported, and the checkpoints that depend
on it keep their rows without messages. Other DeltaChannel channels are not read.

A source reader calls `rebuild` for a thread whose metadata says it has delta
channels (`marked`) with its checkpoints (`DeltaCheckpoint`) and its `messages`
writes (`DeltaWrite`), and `apply` puts the lists into the thread's bundle.

>>> h = _msg("human", "hi", "m1"); a = _msg("ai", "yo", "m2")
>>> cps = [DeltaCheckpoint("", "c1", None, [h], True), DeltaCheckpoint("", "c2", "c1", NOTHING, True)]
>>> lists, errors = rebuild("t", cps, [DeltaWrite("", "c1", "~__pregel_pull, chat", "t1", 0, [a])])
>>> [len(lists[("", c)]) for c in ("c1", "c2")], errors
([1, 2], [])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import ormsgpack

from loaders.decode import EXT_CONSTRUCTOR_KW_ARGS, EXT_DELTA_SNAPSHOT, DecodeError, Ext, unpack_counted
from loaders.records import LoadError, Payloads, ThreadBundle, list_entries_reason, max_list_entries

CHANNEL = "messages"
MARK = "counters_since_delta_snapshot"  # in the metadata of a thread's checkpoints that hold no snapshot
REMOVE_ALL = "__remove_all__"
OVERWRITE = "__overwrite__"
# Each checkpoint's list is rebuilt in full (contract: `checkpoints.message_versions`), so a
# chain of n checkpoints each adding a message makes n²/2 entries out of n writes: a small
# store can ask for any number. Past the per-thread limit of entries in all of a thread's
# lists (`records.max_list_entries`, the one every source's lists meet in the transform),
# the rest of its checkpoints load without messages (one row error).
NOTHING = object()  # a checkpoint that stores no value for the channel
FAILED = object()  # a value that could not be rebuilt (reported)

# langchain's role names of a `(role, content)` tuple or a dict's `role`, as message types.
_TYPE_OF_ROLE = {
    "human": "human", "user": "human", "ai": "ai", "assistant": "ai", "system": "system", "developer": "system",
    "function": "function", "tool": "tool", "remove": "remove",
}


class DeltaCheckpoint(NamedTuple):
    """A checkpoint as the rebuild needs it: its key, its parent, what it stores of the
    channel (a list, `NOTHING`, or `FAILED`: damaged, reported by the reader) and whether
    its `channel_versions` name the channel."""

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    stored: Any
    versioned: bool


class DeltaWrite(NamedTuple):
    """One pending write to the channel, its value decoded (`decode_typed`: messages as payload bytes)."""

    checkpoint_ns: str
    checkpoint_id: str
    task_path: str
    task_id: str
    idx: int
    value: Any


def marked(bundle: ThreadBundle) -> bool:
    """Whether a thread has delta channels: a checkpoint's metadata counts updates since a snapshot."""
    return any(cp.metadata is not None and MARK in cp.metadata for cp in bundle.checkpoints)


def stored_value(value: Any) -> Any:
    """What a checkpoint stores of the channel as the runtime reads it: a snapshot's value,
    or a plain value; None and absence are `NOTHING`. `DecodeError` for a damaged snapshot."""
    if value is None or value is NOTHING:
        return NOTHING
    if isinstance(value, Ext) and value.code == EXT_DELTA_SNAPSHOT:
        value = unpack_counted(value.data, f"DeltaChannel snapshot of {CHANNEL}")
        if value is None:
            return []
    if not isinstance(value, list):
        raise DecodeError(f"DeltaChannel snapshot of {CHANNEL} is a {type(value).__name__}, not a list")
    return value


class _Unknown(Exception):
    """A write the messages reducer cannot take."""


class _Messages:
    """The message-likes of one thread, read once each: `(payload, id, is_remove)`."""

    def __init__(self) -> None:
        self._seen: dict[Any, tuple] = {}

    def read(self, item: Any) -> tuple[Any, str | None, bool]:
        if isinstance(item, bytes):
            got = self._seen.get(item)
            if got is None:
                got = self._seen[item] = self._payload(item)
            return got
        if isinstance(item, str):  # langchain: a string is a human message
            return {"type": "human", "content": item}, None, False
        if _role_pair(item):  # a (role, content) tuple
            return self._from_dict({"role": item[0], "content": item[1]})
        if isinstance(item, dict):
            return self._from_dict(item)
        raise _Unknown(f"a {type(item).__name__}")

    @staticmethod
    def _payload(raw: bytes) -> tuple[Any, str | None, bool]:
        try:
            tup = unpack_counted(raw, "message")
        except Exception:  # noqa: BLE001 - a damaged message: decoded (and reported) by the transform
            return raw, None, False
        fields = tup[2] if isinstance(tup, list) and len(tup) >= 3 and isinstance(tup[2], dict) else {}
        mid = fields.get("id")
        remove = fields.get("type") == "remove" or (isinstance(tup, list) and len(tup) > 1 and tup[1] == "RemoveMessage")
        return raw, mid if isinstance(mid, str) and mid else None, remove

    @staticmethod
    def _from_dict(item: dict) -> tuple[Any, str | None, bool]:
        role, kind = item.get("role"), item.get("type")
        if not isinstance(role, str) and not isinstance(kind, str):
            raise _Unknown("a dict without a role or type")
        fields = {k: v for k, v in item.items() if k not in ("role", "type")}
        if isinstance(kind, str):
            fields["type"] = kind
        else:
            mapped = _TYPE_OF_ROLE.get(role)
            fields["type"] = mapped if mapped is not None else "chat"
            if mapped is None:
                fields["role"] = role
        fields.setdefault("content", "")
        mid = fields.get("id")
        return fields, mid if isinstance(mid, str) and mid else None, fields["type"] == "remove"


def _role_pair(value: Any) -> bool:
    """A `(role, content)` tuple as msgpack stored it (a list of a role name and text or blocks)."""
    return (isinstance(value, list) and len(value) == 2 and value[0] in _TYPE_OF_ROLE
            and isinstance(value[1], (str, list)))


def _overwrite(value: Any) -> tuple[bool, Any]:
    """`langgraph.channels.binop._get_overwrite` on the stored forms of an `Overwrite`."""
    if isinstance(value, Ext) and value.code == EXT_CONSTRUCTOR_KW_ARGS:
        try:
            tup = unpack_counted(value.data, "Overwrite")
        except Exception:  # noqa: BLE001
            return False, None
        if isinstance(tup, list) and len(tup) >= 3 and tup[1] == "Overwrite" and isinstance(tup[2], dict):
            return True, tup[2].get("value")
        return False, None
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE in value:
            return True, value[OVERWRITE]
        if value.get("type") == OVERWRITE and "value" in value:
            return True, value["value"]
    return False, None


class _Memo:
    """The id → position index of the last list `_reduce` returned: a child that reduces
    onto its parent's list (a chain of checkpoints, the common case) copies it at C speed
    instead of reading every message of the list again (that made a chain quadratic)."""

    __slots__ = ("of", "index")

    def __init__(self) -> None:
        self.of: list | None = None
        self.index: dict[str, int] = {}


def _reduce(state: list, writes: list, messages: _Messages, memo: _Memo | None = None) -> list:
    """`_messages_delta_reducer(state, writes)` on payloads."""
    flat: list = []
    for w in writes:
        # (msgpack stores a `(role, content)` tuple as a list: a pair led by a role is one message)
        if isinstance(w, list) and not _role_pair(w):
            flat.extend(w)
        else:
            flat.append(w)
    msgs = [messages.read(x) for x in flat]
    start = 0
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i][2] and msgs[i][1] == REMOVE_ALL:
            state, start = [], i + 1
            break
    if memo is not None and memo.of is state:
        index, result = dict(memo.index), list(state)
    else:
        current = [messages.read(x) for x in state]
        index = {m[1]: i for i, m in enumerate(current) if m[1] is not None}
        result = [m[0] for m in current]
    removed = False
    for payload, mid, remove in msgs[start:]:
        if mid is None:
            result.append(payload)
        elif remove:
            if mid in index:
                result[index.pop(mid)] = None
                removed = True
        elif mid in index:
            result[index[mid]] = payload
        else:
            index[mid] = len(result)
            result.append(payload)
    if removed:
        return [p for p in result if p is not None]
    if memo is not None:
        memo.of, memo.index = result, index
    return result


def _replay(base: list, writes: list[DeltaWrite], messages: _Messages, memo: _Memo | None = None) -> list:
    """`DeltaChannel.replay_writes`: the last Overwrite resets, the rest is reduced in one call."""
    values = [w.value for w in writes]
    start = 0
    for i, v in enumerate(values):
        is_ow, value = _overwrite(v)
        if is_ow:
            base = [] if value is None else list(value) if isinstance(value, list) else [value]
            start = i + 1
    rest = values[start:]
    return _reduce(base, rest, messages, memo) if rest else base


def rebuild(
    thread_id: str, checkpoints: Iterable[DeltaCheckpoint], writes: Iterable[DeltaWrite],
) -> tuple[dict[tuple[str, str], Any], list[LoadError]]:
    """The channel's list at every checkpoint, `{(ns, id): list | None | FAILED}`, and the
    problems met (one error per write the reducer cannot take). See the module docstring."""
    by_key = {(cp.checkpoint_ns, cp.checkpoint_id): cp for cp in checkpoints}
    pending: dict[tuple[str, str], list[DeltaWrite]] = {}
    for w in writes:
        pending.setdefault((w.checkpoint_ns, w.checkpoint_id), []).append(w)
    for ws in pending.values():
        ws.sort(key=lambda w: (w.task_path, w.task_id, w.idx))
    messages = _Messages()
    memo = _Memo()
    errors: list[LoadError] = []
    after: dict[tuple[str, str], Any] = {}  # the value once an ancestor's own writes are applied
    entries = 0  # in all lists rebuilt: the thread's budget, `cap`
    cap = max_list_entries()

    def fail(link: tuple[str, str], why: str) -> None:
        errors.append(LoadError(thread_id, link[0], link[1], "messages", f"DeltaChannel {CHANNEL}: {why} load without messages"))

    def value_after(key: tuple[str, str]) -> Any:
        nonlocal entries
        # Iteratively: the chain from `key` up to a known value, a stored one or the root.
        chain: list[tuple[str, str]] = []
        on_chain: set[tuple[str, str]] = set()
        cur: tuple[str, str] | None = key
        base: Any = []
        while cur is not None:
            if cur in after:
                base = after[cur]
                break
            cp = by_key[cur]
            chain.append(cur)
            on_chain.add(cur)
            if cp.stored is not NOTHING:
                base = None  # (the stored value is the base of this link)
                break
            parent = (cp.checkpoint_ns, cp.parent_checkpoint_id) if cp.parent_checkpoint_id is not None else None
            if parent is None or parent not in by_key or parent in on_chain:
                break  # a root, a parent not in the store, or a loop: the walk ends, start empty
            cur = parent
        for link in reversed(chain):
            cp = by_key[link]
            if cp.stored is not NOTHING:
                base = FAILED if cp.stored is FAILED else list(cp.stored)
            link_writes = pending.get(link, [])
            if base is FAILED or any(w.value is FAILED for w in link_writes):  # (an unreadable write: reported)
                after[link] = base = FAILED
                continue
            try:
                base = _replay(base, link_writes, messages, memo)
                entries += len(base)
                if entries > cap:
                    if entries - len(base) <= cap:  # (one error: every list rebuilt later fails too)
                        fail(link, f"{list_entries_reason(cap)}; the checkpoints rebuilt from here on")
                    base = FAILED
            except _Unknown as exc:
                fail(link, f"a write holds {exc}, not a message: the channel's reducer is not the messages reducer "
                           "(_messages_delta_reducer), the one this tool implements; its checkpoints after this one")
                base = FAILED
            after[link] = base
        return after.get(key, FAILED) if chain else base

    out: dict[tuple[str, str], Any] = {}
    for key, cp in by_key.items():
        if cp.stored is not NOTHING:
            out[key] = FAILED if cp.stored is FAILED else list(cp.stored)
        elif not cp.versioned:
            out[key] = None
        else:
            parent = (cp.checkpoint_ns, cp.parent_checkpoint_id) if cp.parent_checkpoint_id is not None else None
            out[key] = value_after(parent) if parent is not None and parent in by_key and parent != key else []
    return out, errors


def apply(bundle: ThreadBundle, lists: dict[tuple[str, str], Any], errors: list[LoadError]) -> ThreadBundle:
    """`bundle` with each checkpoint's messages from `lists` (renumbered into new payloads);
    a checkpoint whose list `FAILED` keeps its row without messages."""
    old = bundle.payloads
    payloads = Payloads()
    checkpoints = []
    for cp in bundle.checkpoints:
        key = (cp.checkpoint_ns, cp.checkpoint_id)
        if key in lists and not cp.damaged:
            value = lists[key]
            if value is FAILED:
                cp = cp._replace(messages=None, damaged=True)
            else:
                cp = cp._replace(messages=None if value is None else payloads.versions(value))
        elif cp.messages is not None:
            cp = cp._replace(messages=payloads.versions([old[i] for i in cp.messages]))
        checkpoints.append(cp)
    return ThreadBundle(bundle.thread_id, checkpoints, bundle.writes, [*bundle.errors, *errors], payloads.items)


def _msg(kind: str, content: str, mid: str | None) -> bytes:
    """A message payload as LangGraph stores it (for examples and tests)."""
    return ormsgpack.packb([f"langchain_core.messages.{kind}", kind.title() + "Message",
                            {"type": kind, "content": content, "id": mid}, "model_validate_json"])


__all__ = ["CHANNEL", "FAILED", "NOTHING", "DeltaCheckpoint", "DeltaWrite", "apply", "marked", "rebuild", "stored_value"]
