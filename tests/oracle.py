"""Reference implementation of contract §3 (transcript rows) and §5 (rehydrate window).

Independent of the project's ``loaders`` / ``analytics``: it reads a store only
through a saver's PUBLIC API (``list`` / ``get_tuple``) with STRICT msgpack
decoding (``JsonPlusSerializer(allowed_msgpack_modules=None)``: only
LangGraph's ``SAFE_MSGPACK_TYPES`` are rebuilt, nothing named in the data is
imported). It is deliberately simple and slow: it is the yardstick, not the product.

Example:
    >>> saver = open_sqlite(copy_of_store)          # never the original: setup() writes -wal/-shm
    >>> rows = expected_messages(saver)
    >>> [r["content"] for r in rows if r["thread_id"] == "acme:web:sess-001" and r["role"] == "user"][0]
    'Hi! Can you help me reset my password?'
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from collections import defaultdict
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

ROLE_BY_TYPE = {
    "human": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessageChunk": "system",
}

MESSAGE_KEYS = (
    "thread_id", "tenant_id", "sub_tenant_id", "session_id", "ordinal",
    "role", "lc_type", "content", "message_id", "ts", "checkpoint_id",
)
CHECKPOINT_KEYS = (
    "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id",
    "ts", "step", "source", "message_count",
)


def strict_serde() -> JsonPlusSerializer:
    """A serializer that rebuilds only LangGraph's built-in safe types."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


def open_sqlite(path: str | os.PathLike[str]) -> SqliteSaver:
    """A strict ``SqliteSaver`` on ``path``. Opening runs setup(): use a COPY.

    Example:
        >>> saver = open_sqlite(tmp_path / "copy.sqlite")
    """
    return SqliteSaver(sqlite3.connect(os.fspath(path), check_same_thread=False), serde=strict_serde())


def parse_thread_key(thread_id: str) -> tuple[str | None, str | None, str]:
    """``tenant:sub:session`` → (tenant, sub or None, session); fewer parts → (None, None, id).

    Example:
        >>> parse_thread_key("acme:web:a:b"), parse_thread_key("globex::s2"), parse_thread_key("x")
        (('acme', 'web', 'a:b'), ('globex', None, 's2'), (None, None, 'x'))
    """
    parts = thread_id.split(":", 2)
    if len(parts) < 3:
        return None, None, thread_id
    tenant, sub, session = parts
    return tenant, (sub or None), session


def _field(msg: Any, name: str) -> Any:
    # Strict decoding falls back to the raw field dict when a class is not allowed; RedisSaver's
    # list() hands messages back as the LangChain `lc` constructor envelopes it stores.
    if isinstance(msg, dict):
        if msg.get("lc") in (1, 2) and msg.get("type") == "constructor" and isinstance(msg.get("kwargs"), dict):
            msg = msg["kwargs"]
        return msg.get(name)
    return getattr(msg, name, None)


def role_of(lc_type: str | None) -> str:
    """contract §3 role of a stored message ``type`` (chunks map like their base type).

    Example:
        >>> role_of("human"), role_of("AIMessageChunk"), role_of("chat"), role_of(None)
        ('user', 'assistant', 'other', 'other')
    """
    return ROLE_BY_TYPE.get(lc_type or "", "other")


def content_text(content: Any) -> str:
    """A string as-is; a list of blocks → its text parts joined with a newline.

    Example:
        >>> content_text([{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}, "b"])
        'a\\nb'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return str(content)


def _ts(tup: CheckpointTuple) -> dt.datetime:
    ts = dt.datetime.fromisoformat(tup.checkpoint["ts"])
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc)


def _messages(tup: CheckpointTuple) -> list[Any] | None:
    value = tup.checkpoint.get("channel_values", {}).get("messages")
    return value if isinstance(value, list) else None


def tuples_by_thread(saver: BaseCheckpointSaver) -> dict[str, list[CheckpointTuple]]:
    """Every checkpoint (all namespaces) of every thread, via ``saver.list(None)``."""
    out: dict[str, list[CheckpointTuple]] = defaultdict(list)
    for tup in saver.list(None):
        out[tup.config["configurable"]["thread_id"]].append(tup)
    return dict(out)


def _roots(tuples: list[CheckpointTuple]) -> list[CheckpointTuple]:
    return [t for t in tuples if t.config["configurable"].get("checkpoint_ns", "") == ""]


def _latest(roots: list[CheckpointTuple]) -> CheckpointTuple | None:
    # "Latest" is the greatest checkpoint id string, as the savers' get_tuple() has it.
    return max(roots, key=lambda t: t.config["configurable"]["checkpoint_id"], default=None)


def _first_seen(roots: list[CheckpointTuple]) -> dict[str, tuple[dt.datetime, str]]:
    """message id → (ts, checkpoint id) of the oldest root checkpoint holding it (any branch)."""
    seen: dict[str, tuple[dt.datetime, str]] = {}
    for tup in roots:
        key = (_ts(tup), tup.config["configurable"]["checkpoint_id"])
        for m in _messages(tup) or []:
            mid = _field(m, "id")
            if mid is not None and (mid not in seen or key < seen[mid]):
                seen[mid] = key
    return seen


def _rows_for_thread(thread_id: str, tuples: list[CheckpointTuple]) -> list[dict[str, Any]]:
    roots = _roots(tuples)
    latest = _latest(roots)
    if latest is None:
        return []
    seen = _first_seen(roots)
    tenant, sub, session = parse_thread_key(thread_id)
    rows = []
    for ordinal, m in enumerate(_messages(latest) or []):
        mid = _field(m, "id")
        ts, cid = seen[mid] if mid is not None else (None, None)
        lc_type = _field(m, "type")
        rows.append(
            {
                "thread_id": thread_id,
                "tenant_id": tenant,
                "sub_tenant_id": sub,
                "session_id": session,
                "ordinal": ordinal,
                "role": role_of(lc_type),
                "lc_type": lc_type,
                "content": content_text(_field(m, "content")),
                "message_id": mid,
                "ts": ts,
                "checkpoint_id": cid,
            }
        )
    return rows


def expected_messages(saver: BaseCheckpointSaver) -> list[dict[str, Any]]:
    """contract §3 rows for every thread, ordered by (thread_id, ordinal). Keys: ``MESSAGE_KEYS``."""
    rows: list[dict[str, Any]] = []
    for thread_id, tuples in sorted(tuples_by_thread(saver).items()):
        rows.extend(_rows_for_thread(thread_id, tuples))
    return rows


def expected_checkpoints(saver: BaseCheckpointSaver) -> list[dict[str, Any]]:
    """One row per checkpoint of every namespace, ordered by (thread, ns, id). Keys: ``CHECKPOINT_KEYS``.

    ``message_count`` is None when the checkpoint has no ``messages`` channel value.
    """
    rows = []
    for tup in saver.list(None):
        conf = tup.config["configurable"]
        msgs = _messages(tup)
        parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        rows.append(
            {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": conf.get("checkpoint_ns", ""),
                "checkpoint_id": conf["checkpoint_id"],
                "parent_checkpoint_id": parent,
                "ts": _ts(tup),
                "step": (tup.metadata or {}).get("step"),
                "source": (tup.metadata or {}).get("source"),
                "message_count": None if msgs is None else len(msgs),
            }
        )
    rows.sort(key=lambda r: (r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]))
    return rows


def expected_window(
    saver: BaseCheckpointSaver,
    thread_id: str,
    checkpoint_id: str | None = None,
    cap: int = 50,
) -> list[tuple[str, str, str | None]]:
    """contract §5: last ``cap`` user/assistant messages of the transcript at a root checkpoint.

    ``checkpoint_id=None`` means the latest root checkpoint. Tool, system and
    other rows are skipped. Returns ``[(role, content, message_id), ...]`` oldest first.

    Example:
        >>> expected_window(saver, "acme:web:sess-001", cap=2)[-1][0]
        'assistant'
    """
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    tup = saver.get_tuple({"configurable": conf})
    if tup is None:
        return []
    window = []
    for m in _messages(tup) or []:
        role = role_of(_field(m, "type"))
        if role in ("user", "assistant"):
            window.append((role, content_text(_field(m, "content")), _field(m, "id")))
    return window[-cap:] if cap > 0 else []


# --- contract §3.9: what each subgraph run said -------------------------------------------------


def expected_subgraph_messages(saver: BaseCheckpointSaver) -> list[dict[str, Any]]:
    """Per subgraph namespace: the messages of its latest checkpoint (greatest id) that the list
    the run started from does not hold, ordered by (thread, namespace, ordinal).

    The run started from the enclosing namespace's checkpoint named in ``metadata.parents``:
    the longest key there that starts the namespace (``""`` for a top-level run). Keys:
    thread_id, checkpoint_ns, checkpoint_id, ordinal, role, content, message_id.
    """
    rows: list[dict[str, Any]] = []
    for thread_id, tuples in sorted(tuples_by_thread(saver).items()):
        by_ns: dict[str, list[CheckpointTuple]] = defaultdict(list)
        for tup in tuples:
            ns = tup.config["configurable"].get("checkpoint_ns", "")
            if ns:
                by_ns[ns].append(tup)
        for ns, group in sorted(by_ns.items()):
            latest = _latest(group)
            parents = (latest.metadata or {}).get("parents") or {}
            outer = max((k for k in parents if k == "" or ns.startswith(k + "|")), key=len)
            start = saver.get_tuple(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": outer, "checkpoint_id": parents[outer]}}
            )
            held = {_field(m, "id") or message_value(m) for m in (_messages(start) or [])}
            for ordinal, m in enumerate(_messages(latest) or []):
                if (_field(m, "id") or message_value(m)) in held:
                    continue
                rows.append(
                    {
                        "thread_id": thread_id,
                        "checkpoint_ns": ns,
                        "checkpoint_id": latest.config["configurable"]["checkpoint_id"],
                        "ordinal": ordinal,
                        "role": role_of(_field(m, "type")),
                        "content": content_text(_field(m, "content")),
                        "message_id": _field(m, "id"),
                    }
                )
    return rows


# --- contract §3.7: events, edits and removals, by decoded value -----------------------------
#
# Also run by scripts/legacy_stores.py inside venvs of older LangGraph releases, with that
# release's own saver and decoder: keep this part to what every release since 0.2 has.


def message_value(m: Any) -> str:
    """A decoded message's whole value as text, comparable across serializers (dict key order aside).

    Example:
        >>> message_value({"b": 1, "a": 2})
        '{"a": 2, "b": 1}'
    """
    if not isinstance(m, dict):
        m = m.model_dump() if hasattr(m, "model_dump") else m.dict()
    return json.dumps(m, sort_keys=True, default=repr)


def _edit_signature(m: Any) -> tuple:
    # An edit is the same id with another role, text content, tool calls or name.
    lc_type = _field(m, "type")
    calls = [dict(c) for c in _field(m, "tool_calls") or []] if role_of(lc_type) == "assistant" else []
    return (role_of(lc_type), content_text(_field(m, "content")), calls, _field(m, "name"))


def list_events(prev: list[Any], cur: list[Any]) -> list[tuple[str, int]]:
    """``(event, position)`` turning the message list ``prev`` into ``cur``.

    Messages are matched by id, a message without id by its value (``message_value``),
    the k-th copy in one list with the k-th in the other.

    Example:
        >>> list_events([{"id": None, "content": "OK"}], [{"id": None, "content": "OK"}] * 2)
        [('added', 1)]
    """

    def index(msgs: list[Any]) -> dict[tuple, tuple[int, Any]]:
        out: dict[tuple, tuple[int, Any]] = {}
        seen: dict[tuple, int] = {}
        for i, m in enumerate(msgs):
            mid = _field(m, "id")
            ident = ("id", mid) if mid is not None else ("value", message_value(m))
            k = seen.get(ident, 0)
            seen[ident] = k + 1
            out[(ident, k)] = (i, m)
        return out

    before, after = index(prev), index(cur)
    found = [("removed", i) for key, (i, _) in before.items() if key not in after]
    common_before = [k for k in before if k in after]
    common_after = [k for k in after if k in before]
    moved = {a for a, b in zip(common_after, common_before) if a != b}
    for key, (i, m) in after.items():
        if key not in before:
            found.append(("added", i))
            continue
        if _edit_signature(before[key][1]) != _edit_signature(m):
            found.append(("edited", i))
        if key in moved:
            found.append(("reordered", i))
    return found


def expected_events(saver: BaseCheckpointSaver, thread_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per thread: every root checkpoint's list against its parent's (``list_events``) and the
    current-branch ``edited_message_count`` / ``removed_message_count`` (contract §3.7, §3.8).

    ``events`` are ``[checkpoint_id, event, position]``, sorted.
    """
    out = {}
    for thread_id in thread_ids:
        roots: dict[str, tuple[str | None, list[Any]]] = {}
        for tup in saver.list({"configurable": {"thread_id": thread_id}}):
            conf = tup.config["configurable"]
            if conf.get("checkpoint_ns", "") != "":
                continue
            parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            roots[conf["checkpoint_id"]] = (parent, _messages(tup) or [])
        current: set[str] = set()
        node = max(roots, default=None)
        while node in roots and node not in current:
            current.add(node)
            node = roots[node][0]
        events, edited, removed = [], 0, 0
        for cid in sorted(roots):
            parent, msgs = roots[cid]
            for event, pos in list_events(roots[parent][1] if parent in roots else [], msgs):
                events.append([cid, event, pos])
                if cid in current:
                    edited += event == "edited"
                    removed += event == "removed"
        out[thread_id] = {"edited_message_count": edited, "removed_message_count": removed, "events": sorted(events)}
    return out
