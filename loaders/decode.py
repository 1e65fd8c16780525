"""Safe decoding of LangGraph serde payloads into plain data.

LangGraph's own decoder imports and calls whatever module and name a payload
carries (contract §6.2). Nothing here ever imports, calls or constructs anything
named by the data: msgpack extension types are unpacked into their raw
`[module, name, fields, …]` arrays and read as data.

Two levels, for speed: `decode_typed` unpacks a checkpoint but leaves every
message payload (ext code 5, a pydantic v2 model) as its raw bytes, so a
payload repeated in every later checkpoint of a thread can be recognised by
equality and decoded once, by `loaders.messages.decode_message`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

import orjson
import ormsgpack

from loaders import cipher
from loaders.elements import count, json_over_limit, limit_words, max_elements, over_limit
from loaders.records import oversized_reason

# msgpack extension codes of langgraph.checkpoint.serde.jsonplus
EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_NUMPY_ARRAY = 6
EXT_DELTA_SNAPSHOT = 7

# Deeper nesting than this is not a real checkpoint; refusing it keeps a
# hostile payload from exhausting the stack.
MAX_DEPTH = 200
# Extension values inside extension values (an Interrupt holding a message
# holding a UUID is 3): deeper is refused (see `unpack`).
MAX_EXT_DEPTH = 16

UNPACK_OPT = ormsgpack.OPT_NON_STR_KEYS
_orjson_dumps = orjson.dumps
_SURROGATE = re.compile("[\ud800-\udfff]")


class DecodeError(ValueError):
    """A payload that cannot be read as data; the message says why."""


class Ext(NamedTuple):
    """An msgpack extension value left undecoded (any code but 5)."""

    code: int
    data: bytes


class JsonPayload(str):
    """A message from a legacy `json`-tagged checkpoint, kept as its JSON text.

    It is a `str` so that it hashes and compares like the msgpack bytes payloads.
    Its keys stay in the order stored, as msgpack payloads' do: the JSON columns
    decoded from it are then the same text as from an msgpack copy of the same
    message (sorted keys made every tool call look edited when a store moved from
    `json` to `msgpack`). Equal messages whose text still differs are merged by
    value (`same_message`).
    """

    __slots__ = ()


def outer_hook(code: int, data: bytes) -> Any:
    # Message payloads (code 5) stay raw bytes: equality on bytes is what lets
    # the loader decode each distinct message once per thread.
    if code == EXT_PYDANTIC_V2:
        return data
    return Ext(code, data)


def decode_typed(type_tag: str | None, data: bytes | None, deep: bool = False) -> Any:
    """Decode a `(type, bytes)` pair as written by `JsonPlusSerializer.dumps_typed`.

    Message payloads come back as raw `bytes` (see `decode_message`); other
    extension values as `Ext`. Refused tags raise `DecodeError`, and so does a value
    of more values than `elements.max_elements()`: counted flat, or with `deep` (a
    value the caller makes `plain`) with the values its extension values hold.

    >>> decode_typed("msgpack", ormsgpack.packb({"a": 1}))
    {'a': 1}
    """
    if type_tag is None:
        raise DecodeError("missing serialization type")
    if not isinstance(type_tag, str):
        raise DecodeError(f"serialization type is a {type(type_tag).__name__}, not text")
    if type_tag in ("null", "empty"):
        return None
    oversized = oversized_reason(type_tag)
    if oversized is not None:  # (a value over the size limit, left unread: `records.oversized_tag_sql`)
        raise DecodeError(oversized)
    if data is None:
        raise DecodeError(f"{type_tag!r:.60} value without data")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DecodeError(f"{type_tag!r:.60} value is a {type(data).__name__}, not bytes")
    if type_tag in ("bytes", "bytearray"):
        return bytes(data)
    if type_tag == "msgpack":
        return unpack_counted(data, deep=deep)
    if type_tag == "json":
        too_many = json_over_limit(data)
        if too_many is not None:
            raise DecodeError(f"not decoded: {too_many}")
        try:
            return _from_legacy_json(json.loads(bytes(data).decode("utf-8")))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise DecodeError(f"invalid json: {exc}") from None
    if type_tag == "pickle":
        raise DecodeError("pickle-tagged value not decoded (unpickling would run code from the store)")
    if "+" in type_tag:
        # EncryptedSerializer (`<tag>+aes`): decrypted with the load's key, then decoded as `<tag>`.
        try:
            inner, plaintext = cipher.decrypt(type_tag, data)
        except cipher.CipherError as exc:
            raise DecodeError(str(exc)) from None
        return decode_typed(inner, plaintext, deep)  # (decrypted bytes counted as stored ones are)
    raise DecodeError(f"unknown serialization type {type_tag!r:.60}")


def unpack_counted(data: bytes, what: str = "", deep: bool = True) -> Any:
    """msgpack `data` decoded when it holds at most the limit's values (with `deep`, the values of
    the extension values inside it too); else `DecodeError`, its reason after `what`. A stored
    value, and every extension payload unpacked after its value was counted flat: a 20 MB payload
    of 20M empty maps is 1.7 GB of Python objects.

    >>> unpack_counted(ormsgpack.packb([1, 2]), "snapshot")
    [1, 2]
    """
    too_many = over_limit(data, deep)
    if too_many is not None:
        raise DecodeError(f"{what + ' ' if what else ''}not decoded: {too_many}")
    try:
        return ormsgpack.unpackb(data, ext_hook=outer_hook, option=UNPACK_OPT)
    except (ormsgpack.MsgpackDecodeError, ValueError, TypeError, RecursionError) as exc:
        raise DecodeError(f"{what + ': ' if what else ''}invalid msgpack: {exc}") from None


def _from_legacy_json(value: Any) -> Any:
    """`json` checkpoints (LangGraph's legacy Python serializer, and LangGraph.js's only one):
    messages are LangChain `lc` constructor envelopes, kept as `JsonPayload` text.

    LangGraph.js writes a JavaScript `undefined` as `{"lc": 2, "type": "undefined"}`: an
    absent value, wherever it stands (a key holding it is dropped, a list item is None),
    inside message envelopes too. Its other `lc: 2` records name one built-in class
    (`{"id": ["Set"], "args": [[1, 2]]}`): their value is their argument, as an msgpack
    set's is its items.

    >>> _from_legacy_json({"a": {"lc": 2, "type": "undefined"}, "b": [{"lc": 2, "type": "undefined"}]})
    {'b': [None]}
    >>> _from_legacy_json({"lc": 2, "type": "constructor", "id": ["Set"], "method": None, "args": [["x"]]})
    ['x']
    """
    value = _json_value(value, True)
    return None if value is _ABSENT else value


def without_undefined(text: str) -> str:
    """JSON text (checkpoint metadata) with LangGraph.js's `undefined` markers taken out (and
    its built-in records read) as `_from_legacy_json` does; text without one is returned as it is.

    >>> without_undefined('{"step": 1, "writes": {"agent": {"name": {"lc": 2, "type": "undefined"}}}}')
    '{"step":1,"writes":{"agent":{}}}'
    """
    if '"undefined"' not in text:
        return text
    try:
        parsed = json.loads(text)
        value = _json_value(parsed, False)
    except (ValueError, RecursionError):
        return text  # not JSON: the caller's checks say so
    if value == parsed:  # the word, not the marker
        return text
    return "null" if value is _ABSENT else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_ABSENT = object()


def _json_value(value: Any, payloads: bool) -> Any:
    """One parsed JSON value with LangGraph.js's `undefined` marker taken out (`_ABSENT` when
    the value itself is one), its built-in records read as their argument and its text
    cleaned (`clean_text`); with `payloads`, an `lc` envelope becomes a `JsonPayload` (what
    is inside one stays data, as it was stored)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [None if v is _ABSENT else v for v in (_json_value(v, payloads) for v in value)]
    if not isinstance(value, dict):
        return value
    lc = value.get("lc")
    if lc == 2 and value.get("type") == "undefined":
        return _ABSENT
    envelope = lc in (1, 2) and value.get("type") == "constructor" and isinstance(value.get("id"), list)
    out = {}
    for k, v in value.items():
        v = _json_value(v, payloads and not envelope)
        if v is not _ABSENT:
            out[clean_text(k)] = v
    if not envelope:
        return out
    if lc == 2 and len(out["id"]) == 1 and isinstance(out.get("args"), list):
        # LangGraph.js `_encodeConstructorArgs`: Set, Map, RegExp, Error, Uint8Array.
        args = out["args"]
        return args[0] if len(args) == 1 else args
    return JsonPayload(json.dumps(out, ensure_ascii=False)) if payloads else out


def unpack(data: bytes, ext_depth: int = 0, depth: int = 0) -> Any:
    """Unpack an extension payload into plain data, never importing anything.

    Nested extension values are resolved after ormsgpack returns, never from
    inside its `ext_hook`: a hook that unpacks re-enters ormsgpack, whose C
    recursion (up to ~1000 levels per call) then stacks up once per nesting
    level, and a crafted 400 kB message overflowed the C stack (a segfault
    that killed the load, not an exception). Every level also holds a copy
    of its payload, so nesting is capped at MAX_EXT_DEPTH.
    """
    nested = False

    def hook(code: int, payload: bytes) -> Ext:
        nonlocal nested
        nested = True
        return Ext(code, payload)

    value = ormsgpack.unpackb(data, ext_hook=hook, option=UNPACK_OPT)
    return _resolve(value, ext_depth + 1, depth) if nested else value


def _resolve(value: Any, ext_depth: int, depth: int) -> Any:
    """Replace the `Ext` placeholders left by `unpack` with plain data."""
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deeply")
    if isinstance(value, Ext):
        if ext_depth > MAX_EXT_DEPTH:
            raise DecodeError("extension values nested too deeply")
        try:
            tup = unpack(value.data, ext_depth, depth + 1)
        except DecodeError:
            raise
        except Exception:  # noqa: BLE001 - a bad nested value must not sink its message
            return f"<undecodable ext {value.code}>"
        return _ext_to_plain(value.code, tup)
    if isinstance(value, dict):
        return {k: _resolve(v, ext_depth, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, ext_depth, depth + 1) for v in value]
    return value


def _ext_to_plain(code: int, tup: Any) -> Any:
    if code == EXT_DELTA_SNAPSHOT:
        return tup
    if code == EXT_NUMPY_ARRAY:
        if isinstance(tup, list) and len(tup) == 4:
            return {"dtype": tup[0], "shape": tup[1]}
        return None
    if not isinstance(tup, list) or len(tup) < 3:
        return tup
    module, name, arg = tup[0], tup[1], tup[2]
    if code == EXT_CONSTRUCTOR_SINGLE_ARG and (module, name) == ("uuid", "UUID") and isinstance(arg, str) and len(arg) == 32:
        return f"{arg[:8]}-{arg[8:12]}-{arg[12:16]}-{arg[16:20]}-{arg[20:]}"
    if code == EXT_CONSTRUCTOR_POS_ARGS and (module, name) == ("langgraph.types", "Send") and isinstance(arg, list) and arg:
        return {"node": arg[0], "arg": arg[1] if len(arg) > 1 else None}
    return arg


class ValueBudget:
    """The values that extension payloads made plain may still add to one stored value.

    A value counted flat (a checkpoint: only its message payloads are decoded further) holds
    its extension values as one value each, whatever their payloads hold; a plain-dict message
    in it carries them into `plain` and `to_json`. Each payload is counted (deep) before it is
    unpacked and charged here, so one value's payloads together hold at most the limit
    (`elements.max_elements()`, read at the first payload); past it, `DecodeError` naming the
    limit, after `what`.

    >>> b = ValueBudget(4, "message"); b.take(ormsgpack.packb([1, 2])); b.left
    1
    >>> try: b.take(ormsgpack.packb([1, 2]))
    ... except DecodeError as exc: print(exc)
    message not decoded: more than 4 values, over the limit of 4 values for one stored value (TRANSCRIPT_LENS_MAX_ELEMENTS)
    """

    __slots__ = ("limit", "left", "what")

    def __init__(self, limit: int | None = None, what: str = "") -> None:
        self.limit, self.left, self.what = limit, limit, what

    def take(self, data: bytes) -> None:
        if self.limit is None:
            self.limit = self.left = max_elements()
        n = count(data, self.left, True)
        if n > self.left:
            lead = f"{self.what} " if self.what else ""
            raise DecodeError(f"{lead}not decoded: more than {self.limit:,} values, {limit_words(self.limit)}")
        self.left -= n


def plain(value: Any, budget: ValueBudget | None = None) -> Any:
    """Recursively replace `Ext` / payload bytes left by `decode_typed` with plain data, every
    payload counted against `budget` (a new one when None: `value` is one stored value).

    >>> plain([Ext(3, ormsgpack.packb(["datetime", "datetime", "2025-01-01T00:00:00", "fromisoformat"]))])
    ['2025-01-01T00:00:00']
    """
    return _plain(value, 0, ValueBudget() if budget is None else budget)


def _plain(value: Any, depth: int, budget: ValueBudget) -> Any:
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deeply")
    if isinstance(value, Ext):
        budget.take(value.data)
        try:
            return _plain(_ext_to_plain(value.code, unpack(value.data)), depth + 1, budget)
        except DecodeError:
            raise
        except Exception:  # noqa: BLE001
            return f"<undecodable ext {value.code}>"
    if isinstance(value, bytes):
        budget.take(value)
        try:
            return _plain(_ext_to_plain(EXT_PYDANTIC_V2, unpack(value)), depth + 1, budget)
        except DecodeError:
            raise  # nested too deeply: the value is reported, not silently dropped
        except Exception:  # noqa: BLE001
            return None
    if isinstance(value, JsonPayload):
        return json.loads(value).get("kwargs")
    if isinstance(value, dict):
        return {_key(k): _plain(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1, budget) for v in value]
    return value


def _key(k: Any) -> str:
    return k if isinstance(k, str) else str(k)


def to_json(value: Any, budget: ValueBudget | None = None) -> str | None:
    """Strict JSON text of a plain value (None stays SQL NULL); fails only as `plain` does, on
    extension values left in it (counted against `budget`, a new one when None).

    >>> to_json({"a": float("nan")})
    '{"a":null}'
    """
    if value is None:
        return None
    try:
        # orjson writes NaN/Infinity as null, like the fallback below, and refuses
        # everything else the fallback exists for (non-string keys, lone surrogates,
        # integers over 64 bits, leftover extension values, deep nesting).
        return _orjson_dumps(value).decode("utf-8")
    except (TypeError, ValueError, RecursionError):
        # Rare: non-string keys, NaN, leftover extension values, lone surrogates.
        budget = ValueBudget() if budget is None else budget
        return json.dumps(_jsonable(value, 0, budget), ensure_ascii=False, separators=(",", ":"))


def _jsonable(value: Any, depth: int, budget: ValueBudget) -> Any:
    if depth > MAX_DEPTH:
        return "<nested too deeply>"
    if isinstance(value, str):
        return clean_text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Ext | bytes):  # (before tuples: an `Ext` is one, read as its value)
        return _jsonable(plain(value, budget), depth + 1, budget)
    if isinstance(value, dict):
        return {clean_text(_key(k)): _jsonable(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1, budget) for v in value]
    return clean_text(str(value))


def clean_text(text: str) -> str:
    """Text as UTF-8 can hold it: lone surrogates (possible only from legacy JSON
    escapes; msgpack strings are validated UTF-8) become U+FFFD.

    >>> clean_text("ab\\ud800")
    'ab\\ufffd'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)  # one U+FFFD per lone surrogate
    return text
