"""The values-per-value counter (`loaders/elements.py`): the C counter (`_scan.elements`) and its
twin give the same count on any bytes, the count is the number of values ormsgpack builds, and a
value over the limit is refused before it is decoded, with the limit named."""

from __future__ import annotations

import random

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loaders import _native, elements
from loaders.decode import DecodeError, decode_typed
from loaders.messages import decode_message

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False),
                    st.text(max_size=40), st.binary(max_size=300))
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=20),
    st.dictionaries(st.text(max_size=8), kids, max_size=8),
    st.builds(lambda v, code: Wrapped(code, v), kids, st.integers(0, 7)),
), max_leaves=60)


class Wrapped:
    """An extension value whose payload is `inner` packed."""

    def __init__(self, code: int, inner) -> None:
        self.code, self.inner = code, inner


def _ext(obj):
    if isinstance(obj, Wrapped):
        return ormsgpack.Ext(obj.code, _pack(obj.inner))
    raise TypeError(type(obj).__name__)


def _pack(value) -> bytes:
    return ormsgpack.packb(value, default=_ext)


def _true_count(value, deep: bool) -> int:
    """The values of a Python value as packed (an Ext one value, plus its payload's when deep)."""
    if isinstance(value, list):
        return 1 + sum(_true_count(v, deep) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + _true_count(v, deep) for v in value.values())
    if isinstance(value, Wrapped):
        return 1 + (_true_count(value.inner, deep) if deep else 0)
    return 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, st.integers(1, 400), st.booleans())
def test_the_count_is_the_values_packed_up_to_the_limit(value, limit, deep):
    blob = _pack(value)
    assert elements.count_py(blob, limit, deep) == min(_true_count(value, deep), limit + 1)


@pytest.mark.skipif(_native.scan is None, reason="the C extension is not built")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, st.integers(1, 400), st.booleans(), st.integers(0, 2**32 - 1))
def test_c_and_its_twin_count_the_same_on_damaged_bytes(value, limit, deep, seed):
    rng = random.Random(seed)
    blob = bytearray(_pack(value))
    for _ in range(rng.randint(0, 4)):
        if blob and rng.random() < 0.7:
            blob[rng.randrange(len(blob))] = rng.randrange(256)
        else:
            del blob[rng.randrange(len(blob) + 1):]
    blob = bytes(blob)
    assert _native.scan.elements(blob, limit, deep) == elements.count_py(blob, limit, deep)


def test_a_value_over_the_limit_is_refused_before_it_is_decoded(monkeypatch):
    monkeypatch.setenv(elements.ENV, "1000")
    flood = b"\xdd" + (5000).to_bytes(4, "big") + b"\x80" * 5000  # 5,000 empty maps in 5 kB
    with pytest.raises(DecodeError, match=r"more than 1,000 values, over the limit of 1,000 values for one "
                                          r"stored value \(TRANSCRIPT_LENS_MAX_ELEMENTS\)"):
        decode_typed("msgpack", flood)
    with pytest.raises(DecodeError, match="over the limit of 1,000 values"):
        decode_typed("json", b"[" + b"{}," * 5000 + b"{}]")
    # The same number of values inside a message's extension value is counted deep.
    message = _pack(["m", "AIMessage", {"content": ormsgpack.Ext(2, flood)}, "model_validate_json"])
    with pytest.raises(DecodeError, match="message not decoded: more than 1,000 values"):
        decode_message(message)


def test_commas_inside_json_strings_are_not_values(monkeypatch):
    monkeypatch.setenv(elements.ENV, "1000")
    assert decode_typed("json", b'{"text": "' + b"," * 5000 + b'"}') == {"text": "," * 5000}


def test_a_bad_limit_in_the_environment_is_one_line():
    from loaders.records import SourceError

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(elements.ENV, "lots")
        with pytest.raises(SourceError, match="TRANSCRIPT_LENS_MAX_ELEMENTS='lots' is not a whole number"):
            elements.max_elements()


@pytest.mark.skipif(_native.scan is None, reason="the C extension is not built")
def test_the_scanner_declines_a_checkpoint_exactly_past_the_limit():
    from loaders.records import Payloads, RawCheckpoint

    message = ormsgpack.Ext(5, _pack(["m", "HumanMessage", {"content": "hi", "id": "m1"}, "model_validate_json"]))
    blob = _pack({"v": 1, "ts": "2026-01-01T00:00:00+00:00",
                  "channel_values": {"messages": [message, message], "notes": [[1, 2], {"a": None}]}})
    values = elements.count_py(blob, 10**6)
    # The map; v, 1; ts, its text; channel_values, its map; messages, its list, 2 messages;
    # notes, its list; [1, 2] and its 2; {"a": None} and its 2.
    assert values == 19
    for limit in (values - 1, values, values + 1):
        row = ("t", "", "c", None, "msgpack", blob, b"{}")
        accepted = _native.scan.row(row, Payloads(), RawCheckpoint, limit) is not None
        assert accepted == (values <= limit), limit


def test_a_decrypted_value_is_counted_as_a_stored_one(monkeypatch):
    """Payloads unpacked after their value was counted flat are counted too: a decrypted value
    like a stored one; a DeltaChannel snapshot, an `Overwrite` inside a delta write (below)."""
    from Crypto.Cipher import AES

    from loaders import cipher

    monkeypatch.setenv(elements.ENV, "1000")
    flood = b"\xdd" + (5000).to_bytes(4, "big") + b"\x80" * 5000  # 5,000 empty maps in 5 kB
    held = _pack([{"value": ormsgpack.Ext(0, _pack(["m", "n", ormsgpack.Ext(0, flood)])), "id": "i1"}])
    key = b"k" * 16
    sealed = AES.new(key, AES.MODE_EAX, nonce=b"n" * 16)
    body, tag = sealed.encrypt_and_digest(held)
    with cipher.using(cipher.AesKey(key)):
        with pytest.raises(DecodeError, match="more than 1,000 values"):
            decode_typed("msgpack+aes", b"n" * 16 + tag + body, deep=True)


def test_a_delta_snapshot_or_overwrite_payload_is_counted(monkeypatch):
    from loaders.delta import replay as delta

    monkeypatch.setenv(elements.ENV, "1000")
    flood = b"\xdd" + (5000).to_bytes(4, "big") + b"\x80" * 5000
    snapshot = ormsgpack.Ext(delta.EXT_DELTA_SNAPSHOT, flood)
    with pytest.raises(DecodeError, match="DeltaChannel snapshot of messages not decoded: more than 1,000 values"):
        delta.stored_value(decode_typed("msgpack", _pack(snapshot)))
    assert delta._overwrite(ormsgpack.Ext(delta.EXT_CONSTRUCTOR_KW_ARGS, flood)) == (False, None)
