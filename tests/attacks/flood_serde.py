"""A real saver's serializer that plants a flood: `Flooding` packs a value with LangGraph's own
`JsonPlusSerializer`, then puts crafted msgpack bytes where a marker string stood, so a store of
millions of tiny values is written (and, wrapped in `EncryptedSerializer`, encrypted) by the
saver itself while those values never exist as Python objects in the test.

>>> serde = Flooding(raw_ext(0, b"\\xc0"))
>>> serde.dumps_typed({"v": MARKER})[1]
b'\\x81\\xa1v\\xd4\\x00\\xc0'
"""

from __future__ import annotations

import struct
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

MARKER = "FLOOD-GOES-HERE"
_PACKED_MARKER = bytes([0xA0 | len(MARKER)]) + MARKER.encode()


def array(n: int, element: bytes) -> bytes:
    """An msgpack array of `n` copies of the packed `element`, built as bytes."""
    return b"\xdd" + struct.pack(">I", n) + element * n


def raw_ext(code: int, payload: bytes) -> bytes:
    """The packed msgpack extension value of `code` holding `payload` (fixext 1 for a one-byte payload)."""
    if len(payload) == 1:
        return bytes([0xD4, code]) + payload
    return b"\xc9" + struct.pack(">I", len(payload)) + bytes([code]) + payload


class Flooding(JsonPlusSerializer):
    """`JsonPlusSerializer` whose msgpack output has `MARKER` replaced by `flood` (packed msgpack)."""

    def __init__(self, flood: bytes) -> None:
        super().__init__()
        self.flood = flood

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, data = super().dumps_typed(obj)
        return type_, data.replace(_PACKED_MARKER, self.flood) if type_ == "msgpack" else data
