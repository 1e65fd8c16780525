"""`loaders._digest` (whole threads digested in C) stages exactly what the Python path stages.

The compiled path reads a SqliteSaver store's rows itself, numbers payloads and
does the per-checkpoint half of the transform; a thread it is not sure of goes
to the Python path. Every test here runs the real staging (`pipeline._run_job`,
Arrow IPC parts) once through each path and compares every table row by row,
in order: on the real scenario stores, on generated thread shapes written with
LangGraph's own serializer into a store with SqliteSaver's own DDL, and on
damaged copies where the digester must hand threads (or the rest of the
store) back.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pyarrow.ipc as ipc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Interrupt

import loaders.sqlite_digest as sqlite_digest
from loaders import pipeline
from loaders.records import SourceOptions
from loaders.registry import resolve
from loaders.writer import staging_schemas
from tests.loaders.util import assert_same_tables, edited_store, load_db

_SERDE = JsonPlusSerializer()
_SCHEMAS = staging_schemas()


def test_the_digesters_columns_are_the_staging_schemas():
    # ColumnBuffers leave absent columns NULL: a name missing here would stage a NULL column.
    for table, names in sqlite_digest.STAGED.items():
        derived = {"step", "source", "run_id"} if table == "checkpoints" else set()
        assert [n for n in _SCHEMAS[table].names if n not in derived] == list(names), table


def test_the_digester_is_built():
    # `make test` builds it; a broken build must fail here, not silently test only the Python path.
    assert sqlite_digest._digest is not None, "loaders/_digest.c is not built: run `python setup.py build_ext --inplace`"


def staged(path, digest: bool, monkeypatch, only=None, options=SourceOptions()) -> dict[str, list[dict]]:
    """Every staged table of a store, in staging order, through one path."""
    with monkeypatch.context() as m:
        m.setattr(sqlite_digest, "ENABLED", digest)
        folder = tempfile.mkdtemp(dir=Path(path).parent)
        src = resolve(str(path), None)
        job = pipeline._Job(str(path), src.kind, options, None, only, folder, "p0", _SCHEMAS)
        result = pipeline._run_job(job, lambda n: None)
    tables = {}
    for table, file in result["files"].items():
        with ipc.open_file(file) as reader:
            tables[table] = reader.read_all().to_pylist()
    return tables


def assert_same_staging(path, monkeypatch, **kw) -> dict[str, list[dict]]:
    fast, plain = staged(path, True, monkeypatch, **kw), staged(path, False, monkeypatch, **kw)
    assert fast.keys() == plain.keys()
    for table in plain:
        assert fast[table] == plain[table], table
    return fast


def digest_kinds(path) -> dict[str, int]:
    """What the digester made of each thread of a store: thread / fallback / stop."""
    reader = resolve(str(path), None).open(str(path), SourceOptions())
    try:
        d = sqlite_digest._digest.Digester(reader.uri, "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                                           "type, checkpoint, metadata FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
                                           [], None, sqlite3.DatabaseError)
        kinds: dict[str, int] = {}
        while (item := d.next()) is not None:
            kinds[item[0]] = kinds.get(item[0], 0) + 1
            if item[0] == "thread":
                d.finish([None] * len(item[2]), (None, None, item[1]), None)
        d.close()
        return kinds
    finally:
        reader.close()


# --- real stores --------------------------------------------------------------------------


def test_real_scenarios_stage_the_same_through_both_paths(sqlite_store, monkeypatch):
    # Tools, subgraphs, an edit, a replay branch, a removal, interrupts, operator.add lists,
    # block content, a second OS process: the digester carries all but the threads whose
    # messages are not LangChain messages (operator.add of plain dicts: the Python path's).
    tables = assert_same_staging(sqlite_store.path, monkeypatch)
    kinds = digest_kinds(sqlite_store.path)
    assert kinds.get("stop", 0) == 0
    assert kinds["thread"] >= len(sqlite_store.manifest) - len(sqlite_store.threads_of("operator_add"))
    events = {r["event"] for r in tables["message_events"]}
    assert {"added", "edited", "removed"} <= events  # the diff, not only appends, went through C
    assert any(r["has_interrupt"] for r in tables["checkpoints"])
    assert any(r["branch_root_id"] is not None for r in tables["checkpoints"])
    assert any(r["checkpoint_ns"] != "" for r in tables["checkpoints"])


def test_real_scenarios_load_the_same_through_both_paths(sqlite_store, tmp_path, monkeypatch):
    # Whole loads (DuckDB ingest, derived tables), two workers against one.
    fast = tmp_path / "fast.duckdb"
    load_db(sqlite_store.path, fast, workers=2)
    monkeypatch.setattr(sqlite_digest, "ENABLED", False)
    plain = tmp_path / "plain.duckdb"
    load_db(sqlite_store.path, plain, workers=1)
    assert_same_tables(fast, plain, with_errors=True)


def test_a_store_read_from_its_wal_snapshot_stages_the_same(wal_store, copy_store, tmp_path, monkeypatch):
    path = copy_store(wal_store.path, tmp_path)
    tables = assert_same_staging(path, monkeypatch)
    assert {r["thread_id"] for r in tables["threads"]} >= set(wal_store.extra["wal_threads"])


def test_a_selection_of_threads_stages_the_same(sqlite_store, monkeypatch):
    ids = sorted(sqlite_store.manifest)
    # Few ids are bound in the SQL; over 500 the digester filters by a set.
    chosen = frozenset(ids[::3])
    many = frozenset([*ids[1::2], *(f"zz:none:{i}" for i in range(600))])
    for only in (chosen, many):
        tables = assert_same_staging(sqlite_store.path, monkeypatch, only=only)
        assert {r["thread_id"] for r in tables["threads"]} == only & set(ids)


# --- generated thread shapes ----------------------------------------------------------------

_POOL = [
    HumanMessage("hi", id="h1"), AIMessage("hello", id="a1"), HumanMessage("more", id="h2"),
    AIMessage("answer", id="a2", tool_calls=[{"name": "lookup", "args": {"q": 1}, "id": "c1"}]),
    AIMessage("answer, edited", id="a2"), ToolMessage("42", tool_call_id="c1", id="t1"),
    HumanMessage("no id"), AIMessage("also no id"), HumanMessage([{"type": "text", "text": "block"}, {"type": "image_url", "image_url": {"url": "x"}}], id="h3"),
    AIMessage("", id="a3", response_metadata={"model_name": "gpt"}, usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}),
    # Same id, role and content as "hello" but other bytes: a new version that is not an edit.
    AIMessage("hello", id="a1", response_metadata={"model_name": "gpt"}),
    # Payloads of one length: an edit that keeps the length, and another id of the same length.
    HumanMessage("abc", id="x1"), HumanMessage("abd", id="x1"), HumanMessage("abc", id="x2"),
]


def _iso(minute: int, micro: int) -> str:
    return f"2025-03-04T10:{minute:02d}:{micro // 1_000_000:02d}" + (f".{micro % 1_000_000:06d}" if micro % 1_000_000 else "") + "+00:00"


@st.composite
def thread_shapes(draw):
    """Checkpoints of one thread: namespaces, forks, missing parents, ts out of id order,
    lists that append, edit, drop, reorder or repeat messages, no messages channel."""
    n = draw(st.integers(1, 9))
    cps = []
    for i in range(n):
        ns = draw(st.sampled_from(["", "", "", "sub:1", "sub:2|deep:3"]))
        same_ns = [j for j, c in enumerate(cps) if c["ns"] == ns]
        parent = draw(st.one_of(
            st.none(), st.sampled_from(same_ns) if same_ns else st.none(), st.just("missing"), st.just("later"),
        ))
        if parent == "later":
            parent = f"{min(i + 1, n - 1):04d}"
        elif parent == "missing":
            parent = draw(st.sampled_from(["gone-1", "gone-2"]))
        elif parent is not None:
            parent = cps[parent]["cid"]
        messages = draw(st.one_of(st.none(), st.lists(st.integers(0, len(_POOL) - 1), max_size=6)))
        if messages is not None and same_ns and draw(st.booleans()):
            base = cps[draw(st.sampled_from(same_ns))]["messages"] or []
            messages = base + messages  # mostly, a list grows from an earlier one
        cps.append({
            "ns": ns, "cid": f"{i:04d}", "parent": parent, "messages": messages,
            "ts": _iso(draw(st.integers(0, 3)), draw(st.sampled_from([0, 500_000, 1]))),
            "step": draw(st.integers(-1, 5)), "source": draw(st.sampled_from(["input", "loop", "update", "fork"])),
        })
    interrupts = draw(st.lists(st.integers(0, n - 1), max_size=2))
    return cps, interrupts


def _blob(cp: dict) -> tuple[str, bytes]:
    values = {"branch:to:chat": None}
    if cp["messages"] is not None:
        values["messages"] = [_POOL[i] for i in cp["messages"]]
    return _SERDE.dumps_typed({
        "v": 4, "id": cp["cid"], "ts": cp["ts"], "channel_values": values,
        "channel_versions": {"messages": "00000000000000000000000000000002.0.5"}, "versions_seen": {}, "updated_channels": None,
    })


def write_store(path: Path, threads: dict[str, tuple[list[dict], list[int]]]) -> Path:
    """A store with SqliteSaver's own DDL holding these threads' rows."""
    con = sqlite3.connect(path, check_same_thread=False)
    SqliteSaver(con).setup()
    for thread_id, (cps, interrupts) in threads.items():
        for cp in cps:
            type_, blob = _blob(cp)
            metadata = json.dumps({"source": cp["source"], "step": cp["step"], "parents": {}}).encode()
            con.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (thread_id, cp["ns"], cp["cid"], cp["parent"], type_, blob, metadata))
        for i, at in enumerate(interrupts):
            type_, value = _SERDE.dumps_typed([Interrupt(value={"question": f"ok {i}?"}, id=f"int-{i}")])
            con.execute("INSERT INTO writes VALUES (?, ?, ?, ?, '', ?, '__interrupt__', ?, ?)",
                        (thread_id, cps[at]["ns"], cps[at]["cid"], f"task-{i}", -3, type_, value))
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return path


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(thread_shapes(), min_size=1, max_size=3))
def test_generated_thread_shapes_stage_the_same(tmp_path_factory, monkeypatch, shapes):
    folder = tmp_path_factory.mktemp("shapes")
    path = write_store(folder / "s.sqlite", {f"t:{i}:s": shape for i, shape in enumerate(shapes)})
    assert digest_kinds(path) == {"thread": len(shapes)}  # every generated thread is the digester's
    assert_same_staging(path, monkeypatch)


# --- damaged rows: the digester hands them back --------------------------------------------


def _damaged_copy(sqlite_store, copy_store, tmp_path, *statements) -> Path:
    return edited_store(sqlite_store.path, tmp_path, *statements)


_LATEST = "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '')"


@pytest.mark.parametrize("name, sql, reported", [
    ("type tag", "UPDATE checkpoints SET type = 'pickle' WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "pickle"),
    ("metadata NULL", "UPDATE checkpoints SET metadata = NULL WHERE thread_id = ? AND checkpoint_id = " + _LATEST, None),
    ("metadata NaN", "UPDATE checkpoints SET metadata = CAST('{\"step\": NaN}' AS BLOB) WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "NaN"),
    ("metadata not UTF-8", "UPDATE checkpoints SET metadata = X'7bff7d' WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "UTF-8"),
    ("truncated blob", "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "msgpack"),
    ("empty blob", "UPDATE checkpoints SET checkpoint = X'' WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "msgpack"),
    ("blob as text", "UPDATE checkpoints SET checkpoint = 'abc' WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "not bytes"),
    ("namespace not UTF-8", "UPDATE checkpoints SET checkpoint_ns = CAST(X'ff' AS TEXT) WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "UTF-8"),
    ("parent a blob", "UPDATE checkpoints SET parent_checkpoint_id = X'07' WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "parent_checkpoint_id"),
    ("id a blob", "UPDATE checkpoints SET checkpoint_id = CAST(checkpoint_id AS BLOB) WHERE thread_id = ? AND checkpoint_id = " + _LATEST, "checkpoint_id"),
])
def test_a_damaged_row_sends_its_thread_to_the_python_path(name, sql, reported, sqlite_store, copy_store, tmp_path, monkeypatch):
    ids = sorted(sqlite_store.manifest)
    victim = ids[len(ids) // 2]
    path = _damaged_copy(sqlite_store, copy_store, tmp_path, (sql, [victim, victim]))
    kinds = digest_kinds(path)
    assert kinds.get("fallback") == 1, name
    # The threads after it are the digester's again (the fallback is per thread).
    assert kinds["thread"] >= len(ids) - 1 - len(sqlite_store.threads_of("operator_add"))
    tables = assert_same_staging(path, monkeypatch)
    errors = [r["reason"] for r in tables.get("load_errors", []) if r["thread_id"] == victim]
    if reported is None:
        assert errors == []
    else:
        assert any(reported in e for e in errors), errors


def test_a_ts_in_another_form_goes_to_the_python_path(sqlite_store, copy_store, tmp_path, monkeypatch):
    # A ts the C reader does not parse (an offset): the Python parser reads it; same rows.
    path = copy_store(sqlite_store.path, tmp_path)
    from tests.loaders.hostile_util import StoreEditor

    ed = StoreEditor(path)
    thread = sqlite_store.thread("tool_calls")
    ed.edit(thread, ed.latest(thread), lambda cp: cp.__setitem__("ts", "2025-03-04T16:00:00+01:00"))
    ed.close()
    assert digest_kinds(path).get("fallback") == 1
    tables = assert_same_staging(path, monkeypatch)
    assert not any(r["thread_id"] == thread for r in tables.get("load_errors", []))  # readable, only not by C
    edited = [r for r in tables["checkpoints"] if r["thread_id"] == thread and r["is_latest"] and r["is_root"]]
    assert [r["ts"].isoformat() for r in edited] == ["2025-03-04T15:00:00+00:00"]


# Not UTF-8 text sorting among the text ids (b"beta\xff"), a BLOB (after them all). (A number
# cannot be stored: the column's TEXT affinity makes it text.)
@pytest.mark.parametrize("bad_id", ["CAST(X'62657461ff' AS TEXT)", "X'6162'"])
def test_a_thread_id_that_is_not_text_stops_the_digester_and_python_reads_on(bad_id, sqlite_store, copy_store, tmp_path, monkeypatch):
    ids = sorted(sqlite_store.manifest)
    victim = ids[len(ids) // 2]
    path = _damaged_copy(sqlite_store, copy_store, tmp_path,
                         (f"UPDATE checkpoints SET thread_id = {bad_id} WHERE thread_id = ? AND checkpoint_id = " + _LATEST, [victim, victim]))
    kinds = digest_kinds(path)
    assert kinds.get("stop") == 1
    tables = assert_same_staging(path, monkeypatch)
    assert {r["thread_id"] for r in tables["threads"]} == set(ids)  # every thread still loaded, the victim without that row
    assert any("thread_id" in r["reason"] for r in tables["load_errors"])
