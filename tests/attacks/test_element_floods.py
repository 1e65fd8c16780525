"""One stored value of millions of tiny values: decoding makes a Python object of each, so a
20 MB message whose `content` is 5M one-key maps took a load to 1.1 GB. A value of more than
`elements.MAX_ELEMENTS` values is counted in its bytes and not decoded: one `load_errors` row
naming the limit, everything else loaded (docs/security.md, "Values in one stored value")."""

from __future__ import annotations

import json
import struct

import duckdb
import pytest

from loaders.elements import MAX_ELEMENTS
from tests.attacks.harness import attack
from tests.attacks.stores import store_with_messages
from tests.loaders.hostile_util import RawExt, StoreEditor, ai, human

BLOCKS = 5_000_000
LIMIT_WORDS = "over the limit of 2,000,000 values for one stored value (TRANSCRIPT_LENS_MAX_ELEMENTS)"
MARKER = "FLOOD-GOES-HERE"
MODES = {"compiled": {}, "pure": {"TRANSCRIPT_LENS_PUREPYTHON": "1"}}


def _rows(db, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _array(n: int, element: bytes) -> bytes:
    """An msgpack array of `n` copies of the packed `element`, built as bytes (5M dicts never exist)."""
    return b"\xdd" + struct.pack(">I", n) + element * n


@pytest.mark.parametrize("mode", MODES)
def test_a_message_of_five_million_content_blocks_is_one_error(tmp_path, mode):
    store, db = tmp_path / "blocks.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [])
    packed = bytes([0xA0 | len(MARKER)]) + MARKER.encode()
    flood = RawExt(5, ai(MARKER, "m2").data.replace(packed, _array(BLOCKS, b"\x81\xa1t\xa0")))  # {"t": ""} each
    editor = StoreEditor(store)
    editor.edit_latest("flood", lambda cp: cp["channel_values"].__setitem__(
        "messages", [human("the question", "m1"), flood, ai("the answer", "m3")]))
    editor.close()
    assert store.stat().st_size < 25 << 20
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "message"
    assert reason == f"message not decoded: more than {MAX_ELEMENTS:,} values, {LIMIT_WORDS}"
    assert _rows(db, "SELECT content FROM messages ORDER BY ordinal") == [("the question",), ("the answer",)]


@pytest.mark.parametrize("mode", MODES)
def test_a_json_checkpoint_of_five_million_values_is_one_error(tmp_path, mode):
    """A checkpoint stored with the legacy JSON serializer, one channel a list of 5M empty lists."""
    store, db = tmp_path / "json.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [{"role": "user", "content": "the question", "id": "m1"}])
    editor = StoreEditor(store)
    cid = editor.latest("flood")
    checkpoint = {"v": 1, "id": cid, "ts": "2026-01-01T00:00:00+00:00", "channel_versions": {"messages": 1},
                  "versions_seen": {}, "channel_values": {"messages": [], "docs": MARKER}}
    text = json.dumps(checkpoint).encode().replace(f'"{MARKER}"'.encode(), b"[" + b"[]," * (BLOCKS - 1) + b"[]]")
    editor.set("flood", cid, type="json", checkpoint=text)
    editor.close()
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason) == ("checkpoint", f"not decoded: more than {MAX_ELEMENTS:,} values, {LIMIT_WORDS}")
    assert _rows(db, "SELECT count(*) FROM threads") == [(1,)]


@pytest.mark.parametrize("mode", MODES)
def test_a_checkpoint_channel_of_five_million_values_is_one_error(tmp_path, mode):
    """A channel beside `messages` holding 5M nils: the C scanner would skip it, the Python path
    decode it; both refuse it, by the same count (docs/security.md)."""
    store, db = tmp_path / "channel.sqlite", tmp_path / "out.duckdb"
    store_with_messages(store, [])
    editor = StoreEditor(store)
    editor.edit_latest("flood", lambda cp: cp["channel_values"].update(
        messages=[human("the question", "m1")], docs=MARKER))
    cid = editor.latest("flood")
    _, blob, _ = editor.row("flood", cid)
    packed = bytes([0xA0 | len(MARKER)]) + MARKER.encode()
    editor.set("flood", cid, checkpoint=blob.replace(packed, _array(BLOCKS, b"\x80")))
    editor.close()
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason) == ("checkpoint", f"not decoded: more than {MAX_ELEMENTS:,} values, {LIMIT_WORDS}")
