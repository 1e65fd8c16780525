"""`_scan.message` (a message payload decoded in C) answers as `decode.decode_message_python`, or not at all.

`decode.decode_message` takes the C answer when there is one; it may decline
any payload (None), and then the Python decoder decides, errors included. Every
answer it gives must equal the Python decoder's: checked on every payload of
the real scenario and demo stores, on LangChain messages of generated content
serialized by LangGraph's own serializer, on hand-built payloads of every odd
shape (wrong types, floats, extension values, keys that are not text, repeated
keys, big integers) and on byte-level mutations of real payloads.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from loaders import decode
from loaders.decode import DecodeError, Message, decode_message_python, decode_typed
from loaders.registry import resolve
from loaders import SourceOptions

_c = decode._c_message
pytestmark = pytest.mark.native
_SERDE = JsonPlusSerializer()
ROOT = Path(__file__).resolve().parents[2]


def test_the_c_decoder_is_built():
    assert _c is not None, "loaders/_scan.c is not built: run `python setup.py build_ext --inplace`"


def python_answer(payload: bytes):
    try:
        return decode_message_python(payload)
    except DecodeError:
        return "error"


def check(payload: bytes) -> bool:
    """C's answer equals Python's, or C declined; True when C answered."""
    got = _c(payload, Message)
    if got is None:
        return False
    assert type(got) is Message
    assert got == python_answer(payload), payload
    return True


def payload_of(message) -> bytes:
    type_, data = _SERDE.dumps_typed({"messages": [message]})
    return decode_typed(type_, data)["messages"][0]


def store_payloads(path) -> list[bytes]:
    reader = resolve(str(path), None).open(str(path), SourceOptions())
    try:
        return [p for bundle in reader.threads() for p in bundle.payloads if isinstance(p, bytes)]
    finally:
        reader.close()


def test_every_real_payload_decodes_the_same(sqlite_store):
    payloads = store_payloads(sqlite_store.path) + store_payloads(ROOT / "demo" / "demo.sqlite")
    answered = sum(check(p) for p in payloads)
    # The test means something only if C carried the real stores.
    assert len(payloads) > 200 and answered / len(payloads) > 0.95


# --- generated LangChain messages -------------------------------------------------------------

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)  # any code point, controls included
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), text, st.floats(allow_nan=False))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)), max_leaves=12)
ids = st.one_of(st.none(), st.uuids().map(str), text)
blocks = st.lists(st.one_of(
    text, st.fixed_dictionaries({"type": st.just("text"), "text": text}),
    st.fixed_dictionaries({"type": st.sampled_from(["image_url", "file", "text"]), "image_url": st.fixed_dictionaries({"url": text})}),
), max_size=4)
content = st.one_of(text, blocks)
tool_calls = st.lists(st.fixed_dictionaries({"name": text, "args": st.dictionaries(text, json_values, max_size=3), "id": ids}), max_size=3)
tokens = st.integers(0, 2**40)
usage = st.one_of(st.none(), st.builds(lambda i, o: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}, tokens, tokens))
metadata = st.dictionaries(st.sampled_from(["model_name", "model", "model_id", "finish_reason", "x"]), json_values, max_size=4)
kwargs = st.dictionaries(text, json_values, max_size=3)


@st.composite
def messages(draw):
    kind = draw(st.sampled_from(["human", "ai", "tool", "system", "chat"]))
    common = {"id": draw(ids), "name": draw(st.one_of(st.none(), text)), "additional_kwargs": draw(kwargs),
              "response_metadata": draw(metadata)}
    c = draw(content)
    if kind == "human":
        return HumanMessage(c, **common)
    if kind == "system":
        return SystemMessage(c, **common)
    if kind == "chat":
        return ChatMessage(content=c, role=draw(text), **common)
    if kind == "tool":
        return ToolMessage(c, tool_call_id=draw(text), status=draw(st.sampled_from(["success", "error"])), **common)
    return AIMessage(c, tool_calls=[{**t, "type": "tool_call"} for t in draw(tool_calls)], usage_metadata=draw(usage), **common)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_generated_messages_decode_the_same(message):
    payload = payload_of(message)
    answered = check(payload)
    if not answered:
        # Only floats make the C decoder decline a real LangChain message.
        assert b"\xcb" in payload or b"\xca" in payload


# --- hand-built payloads of odd shapes ------------------------------------------------------------


def raw_map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    """A msgpack map from already packed keys and values (repeated keys allowed)."""
    n = len(pairs)
    head = bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)
    return head + b"".join(k + v for k, v in pairs)


def envelope(fields: bytes, cls: bytes = ormsgpack.packb("AIMessage")) -> bytes:
    return b"\x94" + ormsgpack.packb("langchain_core.messages.ai") + cls + fields + ormsgpack.packb("model_validate_json")


p = ormsgpack.packb
ODD = [
    envelope(raw_map([(p("type"), p("ai")), (p("content"), p("x")), (p("content"), p("y"))])),  # repeated key
    envelope(raw_map([(p("type"), p("ai")), (p(1), p("x"))])),                                     # an int key
    envelope(raw_map([(p("type"), p(7)), (p("content"), p("x"))])),                                # type not text
    envelope(raw_map([(p("content"), p("x"))]), cls=p(None)),                                       # no type at all
    envelope(raw_map([(p("content"), p("x")), (p("role"), p("critic"))]), cls=p(None)),             # a plain dict with a role
    envelope(raw_map([(p("content"), p("x"))]), cls=p("HumanMessageChunk")),                        # type from the class
    envelope(raw_map([(p("type"), p("ai")), (p("content"), p(3))])),                                # content a number
    envelope(raw_map([(p("type"), p("ai")), (p("content"), p(None))])),                             # content nil
    envelope(raw_map([(p("type"), p("ai")), (p("tool_calls"), p({"a": 1}))])),                      # tool_calls a map
    envelope(raw_map([(p("type"), p("human")), (p("tool_calls"), p({"a": 1}))])),                   # ... ignored off assistants
    envelope(raw_map([(p("type"), p("ai")), (p("usage_metadata"), p({"input_tokens": True}))])),    # a bool token count
    envelope(raw_map([(p("type"), p("ai")), (p("usage_metadata"), p({"input_tokens": 2**64 - 1}))])),  # over BIGINT
    envelope(raw_map([(p("type"), p("ai")), (p("usage_metadata"), p({"input_tokens": 1.5}))])),     # a float token count
    envelope(raw_map([(p("type"), p("ai")), (p("usage_metadata"), p([1]))])),                       # usage a list
    envelope(raw_map([(p("type"), p("ai")), (p("response_metadata"), p([1]))])),                    # response_metadata a list
    envelope(raw_map([(p("type"), p("ai")), (p("response_metadata"), p({"model": 5, "model_id": "m"}))])),
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p(0))])),                      # falsy kwargs
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p("text"))])),                 # a str
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p(b"\x00"))])),                # bytes
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p({"a": 2**64 - 1, "b": -(2**63)}))])),
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p({"a": ormsgpack.Ext(0, p(["uuid", "UUID", "ab"]))}))])),
    envelope(raw_map([(p("type"), p("ai")), (p("id"), p(5))])),                                     # id a number
    envelope(raw_map([(p("type"), p("tool")), (p("status"), p(1))])),                               # status a number
    envelope(raw_map([(p("type"), p("ai")), (p("status"), p(1))])),                                 # ... ignored off tools
    envelope(raw_map([(p("type"), p("ai")), (p("content"), p([{"type": "text", "text": 1}, None, [1], {"type": "text"}]))])),
    envelope(raw_map([(p("type"), p("ai")), (p("content"), p("\x00\x1f\"\\\u2028é😀"))])),
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), p({"s": "\x00\x1f\x7f\"\\/\u2028é😀"}))])),
    b"\x93" + p("m") + p("AIMessage") + p({"type": "ai"}),                                       # three elements
    b"\x92" + p("m") + p("AIMessage"),                                                            # too short
    p({"type": "ai"}),                                                                             # not an array
    envelope(p([1, 2])),                                                                           # fields not a map
    envelope(raw_map([(p("type"), p("ai"))])) + b"\xc1trailing",                                   # bytes after it
    envelope(raw_map([(p("type"), p("ai")), (p("content"), b"\xa2\xff\xfe")])),                   # not UTF-8
    envelope(raw_map([(p("type"), p("ai")), (p("response_metadata"), p({"model": "m1", "model_name": "m2"}))])),  # 33
    envelope(raw_map([(p("type"), p("ai")), (p("additional_kwargs"), raw_map([(p("a"), p(1)), (p("a"), p(2))]))])),  # 34
    envelope(raw_map([(p("type"), p("ai")), (p("content"), b"\x91" + raw_map([(p("type"), p("text")), (p("type"), p("img")), (p("text"), p("t"))]))])),
]


@pytest.mark.parametrize("payload", ODD, ids=range(len(ODD)))
def test_odd_payloads_decode_the_same_or_are_declined(payload):
    check(payload)


def test_the_c_decoder_answers_the_common_odd_shapes():
    # Declining everything would pass the test above: these must be answered in C.
    assert all(_c(ODD[i], Message) is not None for i in (4, 5, 7, 9, 15, 16, 17, 19, 23, 24, 25, 26, 27, 31, 33))
    assert _c(ODD[33], Message).model == "m2"  # model_name first, then model, then model_id
    # ... and these are the Python decoder's to report.
    for i in (2, 3, 6, 8, 10, 11, 21, 22, 28, 29, 30, 32):
        assert _c(ODD[i], Message) is None and python_answer(ODD[i]) == "error", i


def test_byte_mutations_of_real_payloads_decode_the_same_or_are_declined(sqlite_store):
    rng = random.Random(7)
    payloads = store_payloads(sqlite_store.path)
    answered = 0
    for _ in range(3000):
        b = bytearray(rng.choice(payloads))
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            i = rng.randrange(len(b))
            if op < 0.5:
                b[i] = rng.randrange(256)
            elif op < 0.75:
                del b[i:]
            else:
                b[i:i] = bytes([rng.randrange(256)])
            if not b:
                b = bytearray(b"\x90")
        answered += check(bytes(b))
    assert answered > 300  # mutations that keep a valid message are answered, not all declined
