"""LangGraph.js's `json` serializer, decoded by rule: its `undefined` marker is an absent value at
any depth (a key holding it is dropped, a list item holding it is None), inside message
envelopes too; its `lc: 2` built-in records are their argument; JS message classes give JS's types.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loaders.decode import DecodeError, decode_typed
from loaders.messages import decode_message

UNDEFINED = {"lc": 2, "type": "undefined"}


class Undefined:
    """Where JS holds `undefined`: written as the marker, expected as absent."""


keys = st.text(st.characters(categories=("L", "N")), max_size=6).filter(lambda k: k != "lc")
leaves = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8) | st.just(Undefined())
js_values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=25)


def written(value):
    """The value as LangGraph.js's serializer writes it."""
    if isinstance(value, Undefined):
        return UNDEFINED
    if isinstance(value, list):
        return [written(v) for v in value]
    if isinstance(value, dict):
        return {k: written(v) for k, v in value.items()}
    return value


def expected(value):
    """The value as JS reads it back: undefined keys gone, undefined items None."""
    if isinstance(value, list):
        return [None if isinstance(v, Undefined) else expected(v) for v in value]
    if isinstance(value, dict):
        return {k: expected(v) for k, v in value.items() if not isinstance(v, Undefined)}
    return None if isinstance(value, Undefined) else value


def json_bytes(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def envelope(cls: str, kwargs: dict) -> dict:
    return {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", cls], "kwargs": kwargs}


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(js_values)
def test_the_undefined_marker_is_absent_at_any_depth(value):
    assert decode_typed("json", json_bytes(written(value))) == expected(value)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, js_values, max_size=3), js_values, st.sampled_from(["AIMessage", "ToolMessage", "AIMessageChunk"]))
def test_a_message_with_undefined_fields_decodes_as_without_them(extra, artifact, cls):
    """`name`, `artifact` and any nested field left undefined by JS: the message decodes as if
    the field were not there (the marker never reaches a column as a value)."""
    kwargs = {
        "content": "done",
        "id": "m1",
        "tool_calls": [{"id": "c1", "name": "f", "args": {"q": Undefined(), "n": 1}, "type": "tool_call"}],
        "tool_call_id": "c1",
        "additional_kwargs": extra,
        "response_metadata": {"model_name": "m", "nested": [extra, Undefined()]},
        "artifact": artifact,
    }
    marked = decode_typed("json", json_bytes({"messages": [envelope(cls, {**written(kwargs), "name": UNDEFINED})]}))
    plain = decode_typed("json", json_bytes({"messages": [envelope(cls, expected(kwargs))]}))
    got = decode_message(marked["messages"][0])
    assert got == decode_message(plain["messages"][0])
    assert got.name is None and got.content == "done"


def test_js_message_classes_give_js_types_and_the_same_roles():
    classes = {
        "HumanMessage": ("human", "user"), "AIMessage": ("ai", "assistant"), "AIMessageChunk": ("ai", "assistant"),
        "ToolMessage": ("tool", "tool"), "SystemMessage": ("system", "system"), "ChatMessage": ("generic", "other"),
        "ChatMessageChunk": ("generic", "other"), "FunctionMessage": ("function", "other"),
    }
    for cls, want in classes.items():
        payload = decode_typed("json", json_bytes([envelope(cls, {"content": "x", "role": "crm"})]))[0]
        m = decode_message(payload)
        assert (m.lc_type, m.role) == want, cls
    # A Python envelope of the same class keeps Python's type.
    py = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessageChunk"], "kwargs": {"content": "x"}}
    assert decode_message(decode_typed("json", json_bytes([py]))[0]).lc_type == "AIMessageChunk"


def test_js_builtin_records_are_their_argument():
    record = {"lc": 2, "type": "constructor", "id": ["Set"], "method": None, "args": [["a", UNDEFINED]], "kwargs": {}}
    error = {"lc": 2, "type": "constructor", "id": ["Error"], "method": None, "args": ["boom"], "kwargs": {}}
    assert decode_typed("json", json_bytes({"seen": record, "error": error})) == {"seen": ["a", None], "error": "boom"}


def test_metadata_loses_the_marker_on_every_path():
    """Checkpoint metadata (SQLite/MySQL text, Postgres JSONB text) is passed on as JSON text:
    an undefined marker in it (LangGraph.js 0.x kept node `writes` there) is taken out too,
    and metadata that only holds the word is passed on untouched."""
    from loaders.pg_rows import _metadata
    from loaders.bundles import decode_metadata

    marked = '{"source": "loop", "step": 2, "writes": {"agent": {"messages": [{"lc": 1, "kwargs": {"name": %s}}]}}}' % json.dumps(UNDEFINED)
    word = '{"source": "input", "note": "undefined"}'
    for decode in (decode_metadata, _metadata):
        errors: list = []
        assert json.loads(decode(marked, errors, ("t", "", "c"))) == {"source": "loop", "step": 2, "writes": {"agent": {"messages": [{"lc": 1, "kwargs": {}}]}}}
        assert decode(word, errors, ("t", "", "c")) == word and errors == []


def test_what_an_envelope_holds_stays_data():
    """An envelope nested in a message's fields is kept as the stored object (only the marker goes)."""
    inner = {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "q", "name": UNDEFINED}}
    outer = envelope("ToolMessage", {"content": "ok", "tool_call_id": "c", "artifact": {"asked": inner, "seen": {"lc": 2, "type": "constructor", "id": ["Set"], "args": [[1]]}}})
    (payload,) = decode_typed("json", json_bytes([outer]))
    artifact = json.loads(payload)["kwargs"]["artifact"]
    assert artifact == {"asked": {**inner, "kwargs": {"content": "q"}}, "seen": [1]}


def test_a_js_subclass_of_a_message_class_is_refused_by_its_name():
    """A JS subclass (`class Tagged extends HumanMessage`) is stored as `[..., "Tagged"]` with no
    `type`: LangGraph.js's own reader refuses it ("Invalid identifer"), and so does the loader,
    saying which class."""
    payload = decode_typed("json", json_bytes([envelope("TaggedHumanMessage", {"content": "x", "id": "h-1"})]))[0]
    with pytest.raises(DecodeError, match="'TaggedHumanMessage' has no type"):
        decode_message(payload)
