"""Postgres sources against a real server: live, COPY CSV (folder, zip), pg_dump (plain, custom).

The conformance graphs (tests/loaders/conformance.py: storegen's scenarios plus
threads whose ids and text need every escape) written through `PostgresSaver`
and exported the way an operator would (`psql \\copy`, `pg_dump`): the kit
already holds every way to the same tables as the SqliteSaver store
(test_conformance.py); here, what is particular to Postgres. The oracle reads
the same database through the saver's public API.
"""

from __future__ import annotations

import os
from datetime import datetime

import pytest
from langchain_core.messages import HumanMessage

from loaders import PostgresOptions, SourceOptions
from loaders.pg_export import csv_stage
from loaders.pg_export.stage import Stage
from loaders.pg_export.staged_reader import StagedReader
from loaders.dsn import mask_dsn
from loaders.postgres_source import PostgresSource
from loaders.registry import resolve
from tests import oracle
from tests.loaders.conformance import force_split
from tests.loaders.pg_util import AWKWARD_TEXT, DATA_TABLES, echo_graph, oracle_saver, saver_for, table_rows
from tests.loaders.util import load_db, rows

MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)


@pytest.fixture(scope="module")
def pg(graphs_pg):
    """The conformance graphs in a PostgresSaver database (`dsn`, `manifest`, `awkward`)."""
    return graphs_pg


@pytest.fixture(scope="module")
def exports(graphs_pg, graphs_exports):
    return {"live": graphs_pg.dsn, **graphs_exports}


@pytest.fixture(scope="module")
def loaded(exports, tmp_path_factory):
    out = tmp_path_factory.mktemp("pg_loaded")
    return {way: (out / f"{way}.duckdb", load_db(exports[way], out / f"{way}.duckdb")) for way in ("live", "csv")}


def test_a_csv_export_read_in_small_pieces_loads_the_same(exports, loaded, tmp_path, monkeypatch):
    """CSV files are handed to DuckDB in pieces cut at row ends; pieces of 2 kB cut
    next to quoted newlines, doubled quotes and backslashes of the awkward threads."""
    monkeypatch.setattr(csv_stage, "CSV_PIECE", 2048)
    cuts = []
    real = csv_stage.csv_pieces
    monkeypatch.setattr(csv_stage, "csv_pieces", lambda *a: (cuts.append(1) or p for p in real(*a)))
    db = tmp_path / "pieces.duckdb"
    load_db(exports["csv"], db)
    assert len(cuts) > 50  # many pieces, not one
    for table in DATA_TABLES:
        assert table_rows(db, table) == table_rows(loaded["live"][0], table), table


@pytest.mark.parametrize("way", ["csv", "plain"])
def test_an_export_split_across_workers_is_staged_once_and_loads_the_same(way, exports, loaded, tmp_path, monkeypatch):
    import pickle

    force_split(monkeypatch, StagedReader)
    staged = tmp_path / "stages.txt"
    init = Stage.__init__

    def recording_init(self):  # a file, not a list: workers are other processes
        with staged.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        init(self)

    monkeypatch.setattr(Stage, "__init__", recording_init)
    reader = resolve(str(exports[way])).open(str(exports[way]), SourceOptions())
    try:
        ranges = reader.split(2)
        assert len(ranges) == 2  # the forced split really splits
        pickle.dumps(reader.handoff())  # a spawned worker (from the app's server) gets it too
    finally:
        reader.close()
    staged.unlink()
    db = tmp_path / "split.duckdb"
    load_db(exports[way], db, workers=2)
    assert staged.read_text().split() == [str(os.getpid())]  # staged once, by the load itself
    for table in DATA_TABLES:
        assert table_rows(db, table) == table_rows(loaded["live"][0], table), table


def test_messages_and_checkpoints_equal_the_savers_view(loaded, pg):
    db, _ = loaded["live"]
    with oracle_saver(pg.dsn) as saver:
        expected_messages = oracle.expected_messages(saver)
        expected_checkpoints = oracle.expected_checkpoints(saver)
    assert rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal") == expected_messages
    cols = ", ".join(oracle.CHECKPOINT_KEYS)
    assert rows(db, f"SELECT {cols} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id") == expected_checkpoints


def test_awkward_ids_and_text_survive_every_escape(loaded, pg):
    db, _ = loaded["csv"]
    got = rows(db, "SELECT thread_id, content FROM messages WHERE role = 'user' ORDER BY thread_id, ordinal")
    by_thread: dict[str, list[str]] = {}
    for r in got:
        by_thread.setdefault(r["thread_id"], []).append(r["content"])
    for i, tid in enumerate(pg.awkward):
        assert by_thread[tid] == [f"{AWKWARD_TEXT} #{i}", f"block\n{AWKWARD_TEXT}"]
    md = rows(db, "SELECT metadata->>'user_id' AS u FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''", [pg.awkward[-1]])
    assert md and {r["u"] for r in md} == {AWKWARD_TEXT}
    # Thread ids come out in Python's order, not the database's ICU collation.
    order = [r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")]
    assert sorted(pg.awkward) == [t for t in sorted(order) if t in pg.awkward]


def test_live_reader_reads_one_read_only_snapshot(pg):
    reader = PostgresSource().open(pg.dsn, SourceOptions())
    try:
        assert reader.conn.execute("SHOW transaction_read_only").fetchone()[0] == "on"
        assert reader.conn.execute("SHOW transaction_isolation").fetchone()[0] == "repeatable read"
        before = reader.thread_count()
        with saver_for(pg.dsn) as saver:
            echo_graph(saver).invoke({"messages": [HumanMessage("late")]}, {"configurable": {"thread_id": "late:x:1"}})
            try:
                assert [b.thread_id for b in reader.threads()] == sorted([*pg.manifest, *pg.awkward])
                assert reader.thread_count() == before
                fresh = PostgresSource().open(pg.dsn, SourceOptions(threads=("late:x:1",)))
                assert [b.thread_id for b in fresh.threads()] == ["late:x:1"]
                fresh.close()
            finally:
                saver.delete_thread("late:x:1")
    finally:
        reader.close()


def test_each_blob_version_is_decoded_once_and_shared(pg, monkeypatch):
    import loaders.pg_rows as pg_rows

    calls = []
    real = pg_rows.decode_typed
    monkeypatch.setattr(pg_rows, "decode_typed", lambda t, b, deep=False: calls.append(b) or real(t, b, deep))
    reader = PostgresSource().open(pg.dsn, SourceOptions())
    try:
        n_versions = reader.conn.execute(
            "SELECT count(*) FROM (SELECT DISTINCT c.thread_id, c.checkpoint_ns, b.version FROM checkpoints c "
            "JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns "
            "AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages') v"
        ).fetchone()[0]
        n_writes = reader.conn.execute(
            "SELECT count(*) FROM checkpoint_writes WHERE channel IN ('__interrupt__', '__resume__', '__error__')"
        ).fetchone()[0]
        versions = {
            (t, ns, cid): v
            for t, ns, cid, v in reader.conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' ->> 'messages' FROM checkpoints"
            )
        }
        shared = 0
        for bundle in reader.threads():
            by_version: dict = {}
            for cp in bundle.checkpoints:
                v = versions[(cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id)]
                if cp.messages is not None:
                    if (cp.checkpoint_ns, v) in by_version:
                        assert by_version[(cp.checkpoint_ns, v)] is cp.messages
                        shared += 1
                    by_version[(cp.checkpoint_ns, v)] = cp.messages
    finally:
        reader.close()
    assert len(calls) == n_versions + n_writes
    assert shared > 0  # the stores do have checkpoints that carry an unchanged list


def _thread_ids(src, options) -> list[str]:
    reader = resolve(str(src)).open(str(src), options)
    try:
        ids = [b.thread_id for b in reader.threads()]
        assert reader.thread_count() == len(ids)
        return ids
    finally:
        reader.close()


@pytest.mark.parametrize("way", ["live", "csv", "plain"])
def test_threads_and_since_select_a_subset(way, exports, pg, tmp_path):
    some = sorted(pg.manifest)[:2]
    assert _thread_ids(exports[way], SourceOptions(threads=(*some, "no:such:thread"))) == some

    since = "2025-03-03T15:00:00+02:00"  # 13:00Z, a checkpoint ts "at or after" it counts
    cutoff = datetime.fromisoformat(since)
    with oracle_saver(pg.dsn) as saver:
        expected = sorted({c["thread_id"] for c in oracle.expected_checkpoints(saver) if c["ts"] >= cutoff})
    assert 0 < len(expected) < len(pg.manifest) + len(pg.awkward)
    assert _thread_ids(exports[way], PostgresOptions(since=since)) == expected
    assert _thread_ids(exports[way], {"since": since, "threads": tuple(some)}) == sorted(set(some) & set(expected))
    with pytest.raises(ValueError, match="not an ISO 8601"):
        load_db(exports[way], tmp_path / "bad.duckdb", options={"since": "yesterday"})
    assert not (tmp_path / "bad.duckdb").exists()


def test_the_password_never_reaches_the_database(pg, tmp_path):
    secret_dsn = pg.dsn.replace("postgresql://postgres@", "postgresql://postgres:S3cret-pw@")
    db = tmp_path / "masked.duckdb"
    summary = load_db(secret_dsn, db, options=SourceOptions(threads=(sorted(pg.manifest)[0],)))
    assert "S3cret" not in summary.source and ":***@" in summary.source
    assert all("S3cret" not in str(v) for r in rows(db, "SELECT * FROM loads") for v in r.values())
    assert mask_dsn("postgres://u:p%40ss@h/db?password=x&sslmode=require") == (
        "postgres://u:***@h/db?password=%2A%2A%2A&sslmode=require"
    )
    assert mask_dsn("host=h dbname=db password='s e c' user=u") == "host=h dbname=db password=*** user=u"


def test_incremental_load_reads_new_and_dropped_threads(pg, tmp_path):
    db = tmp_path / "inc.duckdb"
    first = load_db(pg.dsn, db)
    with saver_for(pg.dsn) as saver:
        try:
            echo_graph(saver).invoke({"messages": [HumanMessage("new")]}, {"configurable": {"thread_id": "inc:x:1"}})
            second = load_db(pg.dsn, db, incremental=True)
            assert second.mode == "incremental" and second.threads == first.threads + 1
            assert rows(db, "SELECT content FROM messages WHERE thread_id = 'inc:x:1' ORDER BY ordinal")[1]["content"] == "echo: new"
        finally:
            saver.delete_thread("inc:x:1")
    third = load_db(pg.dsn, db, incremental=True)
    assert third.threads == first.threads
    assert not rows(db, "SELECT 1 FROM threads WHERE thread_id = 'inc:x:1'")
