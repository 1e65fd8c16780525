"""A LangChain message payload → `Message`: its role, text, tool calls, names and tokens (contract §3).

A payload comes as `loaders.decode` leaves it in a checkpoint (the raw bytes of a
pydantic model, an `Ext`, a legacy JSON envelope or a plain dict); `decode_message`
reads it as data, never importing or calling what it names, and `same_message` tells
two versions of a message apart.

>>> same_message(decode_message({"type": "human", "content": "hi", "id": "m1"}),
...              decode_message({"type": "human", "content": "hi", "id": "m1"}))
True
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import ormsgpack

from loaders.decode import (
    EXT_CONSTRUCTOR_KW_ARGS, EXT_PYDANTIC_V1, UNPACK_OPT, DecodeError, Ext, JsonPayload, ValueBudget, to_json, unpack,
)
from loaders.elements import max_elements, over_limit

_unpackb = ormsgpack.unpackb


_ROLE_BY_TYPE = {
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "system": "system",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
}

# A payload without a `type` field still names its class.
_TYPE_BY_CLASS = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "RemoveMessage": "remove",
    "HumanMessageChunk": "HumanMessageChunk",
    "AIMessageChunk": "AIMessageChunk",
    "ToolMessageChunk": "ToolMessageChunk",
    "SystemMessageChunk": "SystemMessageChunk",
    "ChatMessageChunk": "ChatMessageChunk",
    "FunctionMessageChunk": "FunctionMessageChunk",
}

# LangGraph.js envelopes (`id` ["langchain_core", "messages", class]) carry no `type`; a JS
# message's type is its class's `type` property, the same for a chunk as for its message.
JS_MESSAGE_NAMESPACE = ["langchain_core", "messages"]
_JS_TYPE_BY_CLASS = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "ChatMessage": "generic",
    "FunctionMessage": "function",
    "RemoveMessage": "remove",
    **{f"{base}Chunk": lc_type for base, lc_type in (
        ("HumanMessage", "human"), ("AIMessage", "ai"), ("ToolMessage", "tool"),
        ("SystemMessage", "system"), ("ChatMessage", "generic"), ("FunctionMessage", "function"))},
}



class Message(NamedTuple):
    """One message as plain fields (contract §2). (A NamedTuple: one is built per
    distinct payload, and a frozen dataclass costs several times more.)"""

    message_id: str | None
    lc_type: str | None
    role: str
    chat_role: str | None
    name: str | None
    content: str
    non_text_blocks: int
    tool_calls: str | None
    tool_call_count: int
    tool_names: tuple[str, ...]
    tool_call_id: str | None
    tool_status: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    model: str | None
    usage_metadata: str | None
    response_metadata: str | None
    additional_kwargs: str | None
    media: str | None = None  # (last, with a default: a Message built by hand may leave it out)

    def signature(self) -> tuple:
        """What counts for an edit: same id, but other role, content or tool calls."""
        return (self.role, self.content, self.tool_calls, self.name)

    def edited_from(self, other: Message) -> bool:
        """contract §3.7: role, text content, tool calls or name differ (tool calls by
        value: the same calls written with their keys in another order are no edit).

        >>> a = Message("m", "ai", "assistant", None, None, "", 0, '[{"name":"f","id":"1"}]', 1, ("f",), *[None] * 9)
        >>> a.edited_from(a._replace(tool_calls='[{"id":"1","name":"f"}]')), a.edited_from(a._replace(content="x"))
        (False, True)
        """
        if self.signature() == other.signature():
            return False
        return (self.role, self.content, self.name) != (other.role, other.content, other.name) or not same_json(
            self.tool_calls, other.tool_calls
        )


# The JSON text fields of `Message`: equal values may be written with keys in another order.
_JSON_FIELDS = frozenset(Message._fields.index(f) for f in ("tool_calls", "usage_metadata", "response_metadata", "additional_kwargs"))


def same_json(a: str | None, b: str | None) -> bool:
    """Two JSON texts (`to_json`) of equal values: object key order does not count.

    >>> same_json('{"a":1,"b":[2]}', '{"b":[2],"a":1}'), same_json('[1,2]', '[2,1]'), same_json(None, "null")
    (True, False, False)
    """
    if a == b:
        return True
    if a is None or b is None:
        return False
    # `json`, not orjson: orjson reads an integer over 64 bits (which `to_json` writes) as a float.
    return json.loads(a) == json.loads(b)


def same_message(a: Message, b: Message) -> bool:
    """The same decoded value: every field equal, JSON text fields as parsed values.

    The one message, written by two serializers (a legacy `json` checkpoint and an
    msgpack one) or two langchain-core releases, has payloads that differ in bytes
    and field order: as decoded records they are equal.

    >>> a = Message(None, "ai", "assistant", None, None, "OK", 0, None, 0, (), None, None, None, None, None, None, None, '{"a":1,"b":2}', None)
    >>> same_message(a, a._replace(response_metadata='{"b":2,"a":1}')), same_message(a, a._replace(content="ok"))
    (True, False)
    """
    if a == b:
        return True
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and not (i in _JSON_FIELDS and same_json(x, y)):
            return False
    return True


def decode_message(payload: Any, limit: int | None = None) -> Message:
    """Decode one element of `state['messages']` into a `Message`.

    Accepts the raw bytes of an ext-5 payload, an `Ext`, a legacy `JsonPayload`
    or a plain dict. Raises `DecodeError` for anything that is not a message, and for a
    payload of more than `limit` values (`elements.max_elements()` when None: callers
    decoding many pass it, reading the environment once).

    >>> raw = ormsgpack.packb(["langchain_core.messages.human", "HumanMessage",
    ...                        {"type": "human", "content": "hi", "id": "m1"}, "model_validate_json"])
    >>> decode_message(raw).role
    'user'
    """
    cls_name: str | None = None
    type_by_class = _TYPE_BY_CLASS
    if isinstance(payload, (bytes, Ext)):
        if isinstance(payload, Ext):
            if payload.code not in (EXT_PYDANTIC_V1, EXT_CONSTRUCTOR_KW_ARGS):
                raise DecodeError(f"message list holds an extension value of code {payload.code}")
            payload = payload.data
        limit = max_elements() if limit is None else limit
        too_many = over_limit(payload, True, limit) if len(payload) > limit else None
        if too_many is not None:
            raise DecodeError(f"message not decoded: {too_many}")
        try:
            # Messages rarely hold extension values: without a hook ormsgpack unpacks
            # in one call, and refuses one ("ext_hook missing") for `unpack` to resolve.
            tup = _unpackb(payload, option=UNPACK_OPT)
        except Exception:  # noqa: BLE001 - an extension value, or damage: `unpack` decides
            try:
                tup = unpack(payload)
            except Exception as exc:  # noqa: BLE001
                raise DecodeError(f"invalid message payload: {exc}") from None
        if not isinstance(tup, list) or len(tup) < 3:
            raise DecodeError("message payload is not a [module, class, fields] array")
        cls_name, fields = tup[1], tup[2]
    elif isinstance(payload, JsonPayload):
        env = json.loads(payload)
        cls_name, fields = (env["id"] or [None])[-1], env.get("kwargs")
        if len(env["id"]) == 3 and env["id"][:2] == JS_MESSAGE_NAMESPACE:
            type_by_class = _JS_TYPE_BY_CLASS
    elif isinstance(payload, dict):
        # Part of a value counted flat (its checkpoint): the extension values in its fields
        # are counted as they are made plain, against one limit for the message.
        fields = payload
    else:
        raise DecodeError(f"message list holds a {type(payload).__name__}, not a message")
    if not isinstance(fields, dict):
        raise DecodeError("message fields are not a mapping")
    return _message_from_fields(fields, cls_name if isinstance(cls_name, str) else None, type_by_class,
                                ValueBudget(limit, "message"))




def _opt_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise DecodeError(f"message {what} is a {type(value).__name__}, not a string")


_NO_TOKENS = (None, None, None)
_TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
_MIN_BIGINT, _MAX_BIGINT = -(2**63), 2**63 - 1
_tuple_new = tuple.__new__


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _message_from_fields(fields: dict, cls_name: str | None, type_by_class: dict[str, str] = _TYPE_BY_CLASS,
                         budget: ValueBudget | None = None) -> Message:
    budget = ValueBudget(None, "message") if budget is None else budget
    lc_type = fields.get("type")
    dict_role = None
    if lc_type is None and cls_name is not None:
        lc_type = type_by_class.get(cls_name)
    if lc_type is None and cls_name is None and isinstance(fields.get("role"), str):
        dict_role = fields["role"]
    if lc_type is None and dict_role is None:
        # A LangGraph.js subclass of a message class is stored under its own class name, with
        # no `type` (LangGraph.js's own reader refuses it too).
        raise DecodeError("message has no type" if cls_name is None else f"message of class {cls_name!r:.80} has no type")
    if lc_type is not None and not isinstance(lc_type, str):
        raise DecodeError(f"message type is a {type(lc_type).__name__}, not a string")
    # contract §3 maps roles by message type only: a plain dict without `type` (an
    # `operator.add` list of API-style dicts) is an unknown type, so `other`; its
    # own `role` is kept in `chat_role`.
    role = _ROLE_BY_TYPE.get(lc_type, "other") if lc_type is not None else "other"
    chat_role = _opt_str(fields.get("role"), "role")

    content, non_text = content_text(fields.get("content"))
    media = content_media(fields.get("content"), budget) if non_text else None

    tool_calls_raw = fields.get("tool_calls") if role == "assistant" else None
    if tool_calls_raw is not None and not isinstance(tool_calls_raw, list):
        raise DecodeError(f"message tool_calls is a {type(tool_calls_raw).__name__}, not a list")
    tool_calls = None
    tool_names: tuple[str, ...] = ()
    if isinstance(tool_calls_raw, list) and tool_calls_raw:
        tool_calls = to_json(tool_calls_raw, budget)
        tool_names = tuple(c["name"] for c in tool_calls_raw if isinstance(c, dict) and isinstance(c.get("name"), str))
    tool_call_count = len(tool_calls_raw) if isinstance(tool_calls_raw, list) else 0

    usage = fields.get("usage_metadata")
    tokens = _NO_TOKENS
    if usage is not None:
        if not isinstance(usage, dict):
            raise DecodeError(f"message usage_metadata is a {type(usage).__name__}, not a mapping")
        tokens = (usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens"))
        for key, value in zip(_TOKEN_KEYS, tokens):
            if value is None or (type(value) is int and _MIN_BIGINT <= value <= _MAX_BIGINT):
                continue
            if _int_or_none(value) is None:
                raise DecodeError(f"message usage_metadata.{key} is a {type(value).__name__}, not an integer")
            if not _MIN_BIGINT <= value <= _MAX_BIGINT:  # a BIGINT column
                raise DecodeError(f"message usage_metadata.{key} is out of the 64-bit range")
    response_metadata = fields.get("response_metadata")
    response_metadata = response_metadata if isinstance(response_metadata, dict) else None
    model = None
    if response_metadata:
        for key in ("model_name", "model", "model_id"):
            if isinstance(response_metadata.get(key), str):
                model = response_metadata[key]
                break
    additional = fields.get("additional_kwargs")
    is_tool = role == "tool"
    # Field order of `Message`; built as a tuple, once per distinct message of a store.
    return _tuple_new(Message, (
        _opt_str(fields.get("id"), "id"),
        lc_type,
        role,
        chat_role,
        _opt_str(fields.get("name"), "name"),
        content,
        non_text,
        tool_calls,
        tool_call_count,
        tool_names,
        _opt_str(fields.get("tool_call_id"), "tool_call_id") if is_tool else None,
        _opt_str(fields.get("status"), "status") if is_tool else None,
        *tokens,
        model,
        to_json(usage, budget),
        to_json(response_metadata, budget) if response_metadata else None,
        to_json(additional, budget) if additional else None,
        media,
    ))


#: A media marker's URL is kept to this many characters (an inline `data:` URL is never kept:
#: it is the bytes themselves).
MEDIA_URL_CHARS = 2048


def _media_url(value: Any) -> str | None:
    url = value.get("url") if isinstance(value, dict) else value
    return url if isinstance(url, str) and url else None


def media_marker(block: Any) -> dict[str, Any]:
    """What a non-text content block was, as a marker: its `type` (`image`, `file`, `audio`, …), the
    URL it names (`url`, never fetched), its `mime_type`, and `inline` when it carries its bytes
    (base64 data or a `data:` URL, which are not kept).

    >>> media_marker({"type": "image_url", "image_url": {"url": "https://host/cat.png"}})
    {'type': 'image', 'url': 'https://host/cat.png'}
    >>> media_marker({"type": "image", "source_type": "base64", "data": "iVBOR", "mime_type": "image/png"})
    {'type': 'image', 'mime_type': 'image/png', 'inline': True}
    >>> media_marker({"type": "image_url", "image_url": "data:image/png;base64,iVBOR"})
    {'type': 'image', 'inline': True}
    >>> media_marker({"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}})
    {'type': 'input_audio', 'inline': True}
    >>> media_marker(["not", "a", "block"])
    {'type': 'unknown'}
    """
    if not isinstance(block, dict):
        return {"type": "unknown"}
    kind = block.get("type") if isinstance(block.get("type"), str) else "unknown"
    kind = kind.removesuffix("_url") if kind in ("image_url", "file_url", "audio_url", "video_url") else kind
    url = _media_url(block.get("url")) or _media_url(block.get("image_url")) or _media_url(block.get("file_url"))
    source = block.get("source") if isinstance(block.get("source"), dict) else {}  # (Anthropic's image blocks)
    url = url or _media_url(source.get("url"))
    marker: dict[str, Any] = {"type": kind}
    inline = url is not None and url.startswith("data:")
    if url is not None and not inline:
        marker["url"] = url[:MEDIA_URL_CHARS]
    mime = block.get("mime_type") or block.get("media_type") or source.get("media_type")
    if isinstance(mime, str) and mime:
        marker["mime_type"] = mime[:200]
    if inline or any(block.get(k) for k in ("data", "base64")) or source.get("data") or isinstance(
            block.get("input_audio"), dict):
        marker["inline"] = True
    return marker


def content_media(content: Any, budget: ValueBudget | None = None) -> str | None:
    """The non-text blocks of a block list as markers (`media_marker`), JSON; None when there is none.

    >>> content_media(["hi", {"type": "image_url", "image_url": {"url": "https://host/cat.png"}}])
    '[{"type":"image","url":"https://host/cat.png"}]'
    """
    if not isinstance(content, list):
        return None
    markers = [media_marker(b) for b in content
               if not isinstance(b, str) and not (isinstance(b, dict) and b.get("type") == "text"
                                                  and isinstance(b.get("text"), str))]
    return to_json(markers, budget) if markers else None


def content_text(content: Any) -> tuple[str, int]:
    """contract §3 content: a string as-is; a block list → its text parts joined with a newline.

    Returns the text and the number of non-text blocks.

    >>> content_text(["a", {"type": "text", "text": "b"}, {"type": "image_url", "image_url": {}}])
    ('a\\nb', 1)
    """
    if isinstance(content, str):
        return content, 0
    if content is None:
        return "", 0
    if isinstance(content, list):
        parts: list[str] = []
        non_text = 0
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                non_text += 1
        return "\n".join(parts), non_text
    raise DecodeError(f"message content is a {type(content).__name__}, not text or a block list")
