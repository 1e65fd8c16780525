"""DeltaChannel values are counted before they are unpacked: a snapshot (msgpack ext 7) of
20M empty maps, 20 MB, counted as one value inside its checkpoint and then unpacked uncounted,
took a load to 1.77 GB; an `Overwrite` write's payload was unpacked the same way during the
rebuild. Each is now one `load_errors` row naming the limit (docs/security.md, "Values in one
stored value"); the rest of the store loads."""

from __future__ import annotations

import sqlite3

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from loaders.delta import MARK
from loaders.elements import MAX_ELEMENTS, limit_words
from tests.attacks.flood_serde import MARKER, Flooding, array, raw_ext
from tests.attacks.harness import attack
from tests.attacks.test_element_floods import MODES, _rows
from tests.loaders.hostile_util import pack

MAPS = 5_000_000
NOT_DECODED = f"not decoded: more than {MAX_ELEMENTS:,} values, {limit_words(MAX_ELEMENTS)}"
HUMAN = {"role": "user", "content": "the question", "id": "m1"}


def _put(saver: SqliteSaver, parent: dict, cid: str, messages, metadata: dict) -> dict:
    """A checkpoint `cid` (child of `parent`'s checkpoint) whose messages channel is versioned and
    holds `messages` (absent when None), written by `saver`; returns its config."""
    cp = empty_checkpoint()
    cp["id"] = cid
    cp["channel_values"] = {} if messages is None else {"messages": messages}
    cp["channel_versions"] = {"messages": cid}
    return saver.put(parent, cp, metadata, {"messages": cid})


def _store(path, flood: bytes, delta_write: bool) -> None:
    """Thread `flood` written by SqliteSaver through `Flooding(flood)`: with `delta_write`, a
    DeltaChannel thread (its metadata marked) whose first checkpoint stores one message and has
    a `messages` write `MARKER`, its child storing nothing (rebuilt from that write); else one
    checkpoint whose messages channel is `MARKER`."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=Flooding(flood))
        saver.setup()
        root = {"configurable": {"thread_id": "flood", "checkpoint_ns": ""}}
        if not delta_write:
            _put(saver, root, "1f0-a", MARKER, {"source": "input", "step": -1})
            return
        first = _put(saver, root, "1f0-a", [HUMAN], {"source": "input", "step": -1, MARK: {"messages": 0}})
        saver.put_writes(first, [("messages", MARKER)], "task-1")
        _put(saver, first, "1f0-b", None, {"source": "loop", "step": 0, MARK: {"messages": 1}})
    finally:
        conn.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_deltachannel_snapshot_of_five_million_values_is_one_error(tmp_path, mode):
    store, db = tmp_path / "snapshot.sqlite", tmp_path / "out.duckdb"
    _store(store, raw_ext(7, array(MAPS, b"\x80")), delta_write=False)
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason) == ("messages", f"DeltaChannel snapshot of messages {NOT_DECODED}")
    assert _rows(db, "SELECT count(*) FROM threads") == [(1,)]


@pytest.mark.parametrize("mode", MODES)
def test_a_deltachannel_overwrite_write_of_five_million_values_is_one_error(tmp_path, mode):
    store, db = tmp_path / "overwrite.sqlite", tmp_path / "out.duckdb"
    # Overwrite(value=[{} * 5M]) as LangGraph stores it: ext 2 of [module, class, {"value": ...}].
    head = pack(["langgraph.types", "Overwrite", {"value": MARKER}])
    payload = head.replace(bytes([0xA0 | len(MARKER)]) + MARKER.encode(), array(MAPS, b"\x80"))
    _store(store, raw_ext(2, payload), delta_write=True)
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    errors = _rows(db, "SELECT stage, reason FROM load_errors ORDER BY stage")
    assert ("write", f"messages: {NOT_DECODED}") in errors
    # The first checkpoint's own message loads; the child that needs the write has none.
    assert _rows(db, "SELECT content FROM messages") == [("the question",)]
