"""An encrypted value is counted as its plaintext: an `EncryptedSerializer` (`msgpack+aes`)
interrupt write whose value is one extension value holding millions of empty maps was decrypted
and then decoded uncounted (20 MB took a load past 1.8 GB). Decrypted bytes meet the same
element count as stored ones (docs/security.md, "Values in one stored value"): one `load_errors`
row naming the limit, the rest of the thread loaded."""

from __future__ import annotations

import sqlite3

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from loaders.elements import MAX_ELEMENTS, limit_words
from tests.attacks.flood_serde import MARKER, Flooding, array, raw_ext
from tests.attacks.harness import attack
from tests.attacks.test_element_floods import MODES, _rows

KEY = "k3y-0f-16-bytes!"
MAPS = 5_000_000


def _encrypted_store(path, flood: bytes) -> None:
    """One thread written by SqliteSaver through `EncryptedSerializer`: a checkpoint of one
    message, and an `__interrupt__` write `[{"value": <flood>, "id": "i1"}]`."""
    serde = EncryptedSerializer.from_pycryptodome_aes(serde=Flooding(flood), key=KEY.encode())
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=serde)
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": [{"role": "user", "content": "the question", "id": "m1"}]}
        cp["channel_versions"] = {"messages": 1}
        at = saver.put({"configurable": {"thread_id": "flood", "checkpoint_ns": ""}}, cp,
                       {"source": "input", "step": -1}, {"messages": 1})
        saver.put_writes(at, [("__interrupt__", [{"value": MARKER, "id": "i1"}])], "ask")
    finally:
        conn.close()


@pytest.mark.parametrize("mode", MODES)
def test_an_encrypted_write_of_five_million_values_is_one_error(tmp_path, mode):
    store, db, key_file = tmp_path / "aes.sqlite", tmp_path / "out.duckdb", tmp_path / "aes.key"
    key_file.write_text(KEY + "\n")
    # Ext 0 (a constructor call) of ["m", "n", [{} * 5M]]: one value counted flat, 5M+ counted deep.
    _encrypted_store(store, raw_ext(0, b"\x93\xa1m\xa1n" + array(MAPS, b"\x80")))
    con = sqlite3.connect(store)
    assert con.execute("SELECT DISTINCT type FROM writes").fetchall() == [("msgpack+aes",)]
    con.close()
    out = attack(["load", str(store), "--db", str(db), "--aes-key-file", str(key_file)], tmp_path, env=MODES[mode])
    out.succeeded().within_budget().wrote_only([db])
    [(stage, reason)] = _rows(db, "SELECT stage, reason FROM load_errors")
    assert (stage, reason) == ("write", f"__interrupt__: not decoded: more than {MAX_ELEMENTS:,} values, "
                                        f"{limit_words(MAX_ELEMENTS)}")
    assert _rows(db, "SELECT content FROM messages") == [("the question",)]
