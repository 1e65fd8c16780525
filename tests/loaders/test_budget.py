"""Every staged byte counts against the bounded budget.

Staged record batches were cut every `BATCH_ROWS` rows whatever their size: a store of
1 MB messages staged one batch of hundreds of MB per table (the C stager gives up at
2 GiB a column), and the loading process holds about a batch per table while it
ingests. Now a batch holds at most `flush_bytes` (a single larger row alone), and the
rows a writer buffers over all its tables count together.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Annotated, TypedDict

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.message import add_messages

from loaders import parts, writer
from loaders.catalog import staging_schemas
from loaders.parts import PartWriter, RowSizer, _kinds
from loaders.registry import resolve
from loaders.source import SourceOptions
from loaders.thread_keys import compile_thread_key
from loaders.transform.thread import transform_thread
from tests.loaders.util import assert_same_tables, load_db, one_node_app, rows

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema([("t", pa.string()), ("i", pa.int64()), ("v", pa.list_(pa.int32()))])


def _batches(path: str) -> list[pa.RecordBatch]:
    with pa.OSFile(path) as fh:
        reader = ipc.open_file(fh)
        return [reader.get_batch(i) for i in range(reader.num_record_batches)]


@pytest.mark.parametrize("text", ["x", "\u65e5"])  # one byte a character, three
def test_no_batch_passes_the_byte_cap_and_a_row_over_it_stages_alone(tmp_path, text):
    cap = 1 << 20
    w = PartWriter(tmp_path, {"t": SCHEMA}, "p0", flush_bytes=cap)
    sent = []
    for thread in range(6):  # a thread's rows at a time, as the pipeline appends them
        batch = [(text * 300_000, thread, array("i", [1, 2])), (f"t{thread}", None, None)]
        if thread == 3:
            batch.append((text * 3_000_000, -1, None))  # over the cap by itself
        w.append("t", batch)
        sent.extend(batch)
    files = w.close()
    staged = _batches(files["t"])
    assert [r for b in staged for r in pa.Table.from_batches([b]).to_pylist()] == [
        {"t": t, "i": i, "v": list(v) if v is not None else None} for t, i, v in sent]
    for b in staged:
        assert b.nbytes <= cap or b.num_rows == 1, (b.num_rows, b.nbytes)
    assert any(b.num_rows == 1 and b.nbytes > cap for b in staged)
    assert len(staged) > 3  # cut by bytes: 6 x 2 rows are far below the row cap


def test_the_rows_of_all_tables_count_together(tmp_path):
    cap = 1 << 20
    schemas = {name: SCHEMA for name in ("a", "b", "c", "d")}
    w = PartWriter(tmp_path, schemas, "p0", flush_bytes=cap)
    for name in schemas:  # 400 kB each: no table over the cap, all four together over it
        w.append(name, [("x" * 400_000, 1, None)])
    assert sum(len(buf) for buf in w._buffers.values()) < 4  # some were staged already
    w.close()


def test_a_value_without_a_length_counts_nothing():
    # An int where text goes (pyarrow reports it at staging, as before): the estimate goes on.
    assert RowSizer("s").total([(1,), ("ab",)]) == 4 + 4 + 2


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


class PlainList(TypedDict):
    messages: Annotated[list, operator.add]


def big_message_store(path: Path, messages: int, size: int) -> Path:
    """`messages` threads of one `size`-character reply each: one written by a real graph,
    the others raw copies of its checkpoints under new thread ids (writes left out, so
    the store stays about `messages` x `size`)."""
    conn = sqlite3.connect(path, check_same_thread=False)
    app = one_node_app(conn, Chat, lambda s: {"messages": [AIMessage(content="y" * size)]})
    app.invoke({"messages": [HumanMessage(content="q")]}, {"configurable": {"thread_id": "big:0"}})
    conn.execute("DELETE FROM writes")
    for i in range(1, messages):
        conn.execute(
            "INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id = 'big:0'", [f"big:{i}"])
    conn.commit()
    conn.close()
    return path


def long_thread_id_store(path: Path, id_bytes: int, messages: int) -> Path:
    """One thread whose id is `id_bytes` long, with `messages` messages, by a real graph."""
    thread = "t" * id_bytes
    conn = sqlite3.connect(path, check_same_thread=False)
    app = one_node_app(conn, PlainList, lambda s: {"messages": [AIMessage(content="OK")]})
    app.invoke({"messages": [HumanMessage(content=f"m{i}") for i in range(messages)]}, {"configurable": {"thread_id": thread}})
    conn.close()
    return path


def peak_rss_of_load(store: Path, db: Path, workers: int, env: dict | None = None) -> int:
    """Peak RSS in bytes of the largest process of a whole `python -m loaders` run (its own
    decode workers included), measured from a fresh parent so nothing else counts."""
    code = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    cmd = [sys.executable, "-c", code, sys.executable, "-m", "loaders", str(store), "--db", str(db), "--quiet",
           "--workers", str(workers)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return int(out.stdout.split()[-1]) * 1024  # ru_maxrss is in KiB on Linux


def test_300_messages_of_1_mb_load_in_bounded_memory(tmp_path):
    """One process does the whole load (`--workers 1`): its peak is the load's. Before,
    the messages staged as one 300 MB batch and DuckDB failed to commit it (traceback)."""
    store = big_message_store(tmp_path / "big.sqlite", messages=300, size=1 << 20)
    db = tmp_path / "big.duckdb"
    peak = peak_rss_of_load(store, db, workers=1)
    got = rows(db, "SELECT count(*) AS n, min(content_chars) AS lo FROM messages WHERE role = 'assistant'")
    assert got == [{"n": 300, "lo": 1 << 20}]
    assert peak < 1 << 30, f"peak RSS {peak / 2**20:.0f} MiB"


def test_small_batches_and_many_transactions_load_the_same_rows(sqlite_store, copy_store, tmp_path, monkeypatch):
    """The byte caps cut staged batches and INSERT transactions anywhere: the tables are the
    same as with the defaults (row order included)."""
    src = copy_store(sqlite_store.path, tmp_path / "src")
    load_db(src, tmp_path / "default.duckdb", workers=1)
    monkeypatch.setattr(parts, "BATCH_BYTES", 4096)
    monkeypatch.setattr(writer, "INSERT_BYTES", 8192)
    load_db(src, tmp_path / "small.duckdb", workers=1)
    assert_same_tables(tmp_path / "default.duckdb", tmp_path / "small.duckdb", with_errors=True)
    for table in ("messages", "checkpoints"):
        sql = f"SELECT * FROM {table}"  # stored order, not sorted: the INSERTs keep the staged order
        assert rows(tmp_path / "small.duckdb", sql) == rows(tmp_path / "default.duckdb", sql), table


def test_a_4_kb_thread_id_copied_into_every_row_loads(tmp_path):
    store = long_thread_id_store(tmp_path / "long.sqlite", id_bytes=4096, messages=2000)
    db = tmp_path / "long.duckdb"
    peak = peak_rss_of_load(store, db, workers=1)
    assert rows(db, "SELECT message_count FROM threads") == [{"message_count": 2001}]
    assert peak < 1 << 30, f"peak RSS {peak / 2**20:.0f} MiB"


def test_the_transforms_estimate_follows_the_staged_bytes(tmp_path):
    """`transform` hands its rows over with an estimate of their bytes (`SizedRows`), so the
    writer need not measure every value; it must stay near the measured size (as the
    catalogue's columns change too), and never far under it."""
    store = tmp_path / "s.sqlite"
    conn = sqlite3.connect(store, check_same_thread=False)
    app = one_node_app(conn, Chat, lambda s: {"messages": [AIMessage(
        content="answer " * 50, tool_calls=[{"name": "f", "args": {"q": "x" * 200}, "id": f"c{len(s['messages'])}"}],
        response_metadata={"model_name": "m"})]})
    for q in range(5):
        app.invoke({"messages": [HumanMessage(content=f"question {q} " * 30)]}, {"configurable": {"thread_id": "a" * 300}})
    conn.close()
    reader = resolve(str(store)).open_reader(str(store), SourceOptions())
    try:
        (bundle,) = list(reader.threads())
    finally:
        reader.close()
    out = transform_thread(bundle, compile_thread_key(None))
    schemas = staging_schemas()
    for table in ("checkpoints", "messages", "message_versions", "message_events"):
        got = getattr(out, table)
        sizer = RowSizer(_kinds(schemas[table]))
        measured = sizer.total(list(got)) - len(got) * sizer.fixed
        assert measured > 0 and 0.8 <= got.nbytes / measured <= 3, (table, got.nbytes, measured)


def test_a_50_mb_metadata_is_reported_and_its_checkpoint_still_loads(sqlite_store, copy_store, tmp_path):
    """DuckDB parses metadata at ingest under the writer's memory limit: 50 MB of it
    failed the whole load (out of memory). Now that one metadata is a reported row error."""
    src = copy_store(sqlite_store.path, tmp_path / "src")
    load_db(src, tmp_path / "clean.duckdb", workers=1)
    con = sqlite3.connect(src)
    t, ns, cid = con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY thread_id, checkpoint_id LIMIT 1").fetchone()
    con.execute("UPDATE checkpoints SET metadata = ? WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                [('{"source": "loop", "step": 1, "junk": "' + "x" * 50_000_000 + '"}').encode(), t, ns, cid])
    con.commit()
    con.close()
    db = tmp_path / "big.duckdb"
    load_db(src, db, workers=1)
    errors = rows(db, "SELECT thread_id, checkpoint_ns, checkpoint_id, stage FROM load_errors")
    assert errors == [{"thread_id": t, "checkpoint_ns": ns, "checkpoint_id": cid, "stage": "metadata"}]
    assert rows(db, "SELECT step, source FROM checkpoints WHERE checkpoint_id = ?", [cid]) == [{"step": None, "source": None}]
    # Everything else as from the undamaged store (that checkpoint's metadata aside).
    sql = "SELECT * EXCLUDE (step, source, run_id, metadata) FROM checkpoints ORDER BY ALL"
    assert rows(db, sql) == rows(tmp_path / "clean.duckdb", sql)
    others = "SELECT checkpoint_id, step, source, run_id, metadata FROM checkpoints WHERE checkpoint_id != ? ORDER BY ALL"
    assert rows(db, others, [cid]) == rows(tmp_path / "clean.duckdb", others, [cid])
    assert rows(db, "SELECT * FROM messages ORDER BY ALL") == rows(tmp_path / "clean.duckdb", "SELECT * FROM messages ORDER BY ALL")
