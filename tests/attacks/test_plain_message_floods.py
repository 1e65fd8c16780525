"""A message stored as a plain dict (an `operator.add` list of dicts, not a pydantic model) is
part of its checkpoint, which is counted flat: an extension value in its `additional_kwargs`,
`response_metadata`, `usage_metadata` or `tool_calls` counts one value there. Making the message
plain unpacked that extension value uncounted: a 5 MB store whose one message's
`additional_kwargs` holds 5M empty maps took a load past the budget. Every extension value made
plain is counted against the limit for one stored value, as the message's own fields are
(docs/security.md, "Values in one stored value"): one `load_errors` row naming the limit, the
other messages loaded."""

from __future__ import annotations

import sqlite3

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from loaders.elements import MAX_ELEMENTS, limit_words
from tests.attacks.flood_serde import MARKER, Flooding, array, raw_ext
from tests.attacks.harness import attack
from tests.attacks.test_element_floods import MODES, _rows

MAPS = 5_000_000


def _store(path, message: dict, flood: bytes) -> None:
    """One thread written by SqliteSaver: three plain-dict messages, the second `message`, in
    which `MARKER` becomes `flood` as the saver's serializer writes it."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=Flooding(flood))
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": [
            {"type": "human", "content": "the question", "id": "m1"},
            message,
            {"type": "ai", "content": "the answer", "id": "m3"},
        ]}
        cp["channel_versions"] = {"messages": 1}
        saver.put({"configurable": {"thread_id": "flood", "checkpoint_ns": ""}}, cp,
                  {"source": "input", "step": -1}, {"messages": 1})
    finally:
        conn.close()


def _ext_of_maps(n: int) -> bytes:
    """Ext 0 (a constructor call) of ["m", "n", [{} * n]]: one value counted flat, n+ counted deep."""
    return raw_ext(0, b"\x93\xa1m\xa1n" + array(n, b"\x80"))


FIELDS = {
    "additional_kwargs": {"type": "ai", "content": "x", "id": "m2", "additional_kwargs": {"extra": MARKER}},
    "response_metadata": {"type": "ai", "content": "x", "id": "m2", "response_metadata": {"model": "m", "raw": MARKER}},
    "tool_calls": {"type": "ai", "content": "x", "id": "m2",
                   "tool_calls": [{"name": "t", "args": {"a": MARKER}, "id": "c1"}]},
}


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("mode", MODES)
def test_an_extension_flood_inside_a_plain_message_is_one_error(tmp_path, mode, field):
    store, db = tmp_path / "plain.sqlite", tmp_path / "out.duckdb"
    _store(store, FIELDS[field], _ext_of_maps(MAPS))
    assert store.stat().st_size < 8 << 20
    out = attack(["load", str(store), "--db", str(db)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget(400).wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason) == ("message", f"message not decoded: more than {MAX_ELEMENTS:,} values, "
                                          f"{limit_words(MAX_ELEMENTS)}")
    assert _rows(db, "SELECT content FROM messages ORDER BY ordinal") == [("the question",), ("the answer",)]


def test_many_extension_values_in_one_message_share_its_limit(tmp_path):
    """Twelve extension values of 200,000 maps each, every one under the limit, in one message's
    `additional_kwargs`: 2.4M values made plain for one message, over a limit of 2M."""
    store, db = tmp_path / "plain.sqlite", tmp_path / "out.duckdb"
    one = _ext_of_maps(200_000)
    flood = b"\x9c" + one * 12  # a fixarray of 12
    _store(store, FIELDS["additional_kwargs"], flood)
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded().within_budget(400).wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert stage == "message" and reason.endswith(limit_words(MAX_ELEMENTS)), reason
    assert _rows(db, "SELECT content FROM messages ORDER BY ordinal") == [("the question",), ("the answer",)]


def test_a_plain_message_with_small_extension_values_loads_them(tmp_path):
    store, db = tmp_path / "plain.sqlite", tmp_path / "out.duckdb"
    _store(store, FIELDS["additional_kwargs"], _ext_of_maps(3))
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded()
    assert _rows(db, "SELECT count(*) FROM load_errors") == [(0,)]
    assert _rows(db, "SELECT additional_kwargs FROM messages WHERE message_id = 'm2'") == [('{"extra":[{},{},{}]}',)]
