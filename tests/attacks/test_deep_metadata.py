"""Checkpoint metadata nested a million levels deep (docs/security.md, "Bounded memory and disk").

One checkpoint's metadata of 2 MB — `{"a": [[[…]]]}`, a million arrays deep, far under the
8 Mi-character metadata limit — ran DuckDB's JSON parse at ingest out of the writer's memory
limit: the whole load failed and nothing loaded. Metadata nested deeper than
`METADATA_MAX_DEPTH` is now one row of `load_errors` (stage `metadata`) and is not loaded; its
checkpoint and every other row load.
"""

from __future__ import annotations

import sqlite3

import duckdb
import pytest

from loaders.transform.limits import METADATA_MAX_DEPTH
from storegen import build_sqlite_store
from tests.attacks.harness import attack

THREADS = {"acme:web:deep-1": "simple_chat", "acme:web:deep-2": "simple_chat"}


@pytest.mark.parametrize("levels, opener", [(1_000_000, "["), (METADATA_MAX_DEPTH, '{"b":')],
                         ids=["million-arrays", "at-the-limit"])
def test_deeply_nested_metadata_is_one_row_error(tmp_path, levels, opener):
    store = tmp_path / "store.sqlite"
    build_sqlite_store(store, threads=THREADS)
    closer = "]" if opener == "[" else "}"
    deep = '{"a":' + opener * (levels - 1) + ("1" if opener != "[" else "") + closer * (levels - 1) + "}"
    con = sqlite3.connect(store)
    try:
        (checkpoints,) = con.execute("SELECT count(*) FROM checkpoints").fetchone()
        (thread, cid) = con.execute("SELECT thread_id, checkpoint_id FROM checkpoints "
                                    "WHERE rowid = (SELECT max(rowid) FROM checkpoints)").fetchone()
        con.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (deep.encode(), cid))
        con.commit()
    finally:
        con.close()

    db = tmp_path / "out.duckdb"
    out = attack(["load", str(store), "--db", str(db)], tmp_path)
    out.succeeded().within_budget().wrote_only([db])
    con = duckdb.connect(str(db), read_only=True)
    try:
        errors = con.execute("SELECT thread_id, checkpoint_id, stage, reason FROM load_errors").fetchall()
        loaded = con.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        metadata = con.execute("SELECT metadata IS NULL FROM checkpoints WHERE checkpoint_id = ?", [cid]).fetchone()[0]
        threads = con.execute("SELECT count(DISTINCT thread_id) FROM messages").fetchone()[0]
    finally:
        con.close()
    assert loaded == checkpoints and threads == len(THREADS)
    if levels > METADATA_MAX_DEPTH:
        assert errors == [(thread, cid, "metadata", f"metadata nests {levels} levels deep, over the "
                           f"{METADATA_MAX_DEPTH}-level limit; not loaded (step, source and run_id are NULL)")]
        assert metadata
    else:  # (a value at the limit loads whole)
        assert errors == [] and not metadata
