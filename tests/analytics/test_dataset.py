"""`--format parquet`: a folder of Parquet files that `analytics.connect(DIR)` opens with the
same API as the DuckDB file, written as versions behind an atomically swapped pointer."""

from __future__ import annotations

import shutil

import duckdb
import pandas as pd
import pytest

import analytics
import transcript_lens
from analytics import Filters, SearchQuery, TranscriptQuery
from loaders import dataset


@pytest.fixture(scope="module")
def both(sqlite_store, tmp_path_factory):
    """The fixture store (every scenario) loaded both ways."""
    out = tmp_path_factory.mktemp("dataset")
    db, folder = out / "lens.duckdb", out / "lens"
    transcript_lens.load(sqlite_store.path, db)
    transcript_lens.load(sqlite_store.path, folder, format="parquet")
    return db, folder


def _same(a, b) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    else:
        assert a == b


def test_every_api_call_answers_the_same_on_the_dataset(both, sqlite_store):
    db, folder = both
    file, ds = analytics.connect(db), analytics.connect(folder)
    threads = [r[0] for r in file.execute("SELECT thread_id FROM threads ORDER BY thread_id").fetchall()]
    tenant = file.execute("SELECT min(tenant_id) FROM threads").fetchone()[0]
    word = file.execute("SELECT split_part(content, ' ', 1) FROM messages WHERE role = 'user' LIMIT 1").fetchone()[0]
    calls = [
        lambda c: analytics.conversations(c),
        lambda c: analytics.conversations(c, Filters(tenants=(tenant,))),
        lambda c: analytics.overview(c),
        lambda c: analytics.daily(c),
        lambda c: analytics.by_model(c),
        lambda c: analytics.top_tools(c),
        lambda c: analytics.top_tenants(c),
        lambda c: analytics.latency_distribution(c),
        lambda c: analytics.risks(c),
        lambda c: analytics.backlog(c),
        lambda c: analytics.resume_points(c),
        lambda c: analytics.search(c, SearchQuery(word)).hits,
        lambda c: analytics.search(c, SearchQuery(word)).total,
    ]
    for t in threads:
        calls += [
            lambda c, t=t: analytics.read(c, TranscriptQuery(t)),
            lambda c, t=t: analytics.conversation(c, t),
            lambda c, t=t: analytics.branches(c, t),
            lambda c, t=t: analytics.edit_log(c, t),
            lambda c, t=t: analytics.subgraph_runs(c, t),
            lambda c, t=t: analytics.thread_risks(c, t),
        ]
    for call in calls:
        _same(call(file), call(ds))
    file.close()
    ds.close()


def test_the_dataset_reads_its_derived_tables_not_the_live_queries(both):
    """The views carry the derived tables' fingerprints, so the API reads them as it reads the file's."""
    from analytics.metrics import materialized
    from analytics.resume.risk_figures import _risks_materialized

    con = analytics.connect(both[1])
    assert materialized(con) and _risks_materialized(con)
    con.close()


def test_duckdb_reads_the_files_as_they_are(both):
    """No view of ours: messages straight from the hive-partitioned files equal the database's."""
    db, folder = both
    glob = str(dataset.current_version(folder) / "messages" / "**" / "*.parquet")
    raw = duckdb.connect()
    raw.execute("SET TimeZone = 'UTC'")
    got = raw.execute(
        f"SELECT * EXCLUDE (tenant, month) FROM read_parquet('{glob}', hive_partitioning = true) ORDER BY thread_id, ordinal"
    ).fetchall()
    file = duckdb.connect(str(db), read_only=True)
    file.execute("SET TimeZone = 'UTC'")
    assert got == file.execute("SELECT * FROM messages ORDER BY thread_id, ordinal").fetchall()
    # A tenant's folder holds that tenant's messages only.
    tenants = raw.execute(f"SELECT DISTINCT tenant, coalesce(tenant_id, '_none') FROM read_parquet('{glob}', hive_partitioning = true)").fetchall()
    assert all(a == b for a, b in tenants)


def test_a_failed_export_leaves_the_current_version(both, sqlite_store, tmp_path, monkeypatch):
    folder = tmp_path / "lens"
    shutil.copytree(both[1], folder)
    before = dataset.current_version(folder)
    real = dataset.copy_table

    def fail_on_threads(con, table, version, *a, **k):
        if table == "threads":
            raise RuntimeError("disk full")
        real(con, table, version, *a, **k)

    monkeypatch.setattr(dataset, "copy_table", fail_on_threads)
    with pytest.raises(transcript_lens.LoadFailed, match="disk full"):
        transcript_lens.load(sqlite_store.path, folder, format="parquet")
    assert dataset.current_version(folder) == before
    assert sorted(p.name for p in folder.glob("v-*")) == [before.name]  # the half-written version is gone
    monkeypatch.undo()
    # The next load exports the working database's load even though nothing changed in the source.
    transcript_lens.load(sqlite_store.path, folder, format="parquet", incremental=True)
    assert dataset.current_version(folder) != before
    con = analytics.connect(folder)
    assert con.execute("SELECT count(*) FROM threads").fetchone()[0] == len(sqlite_store.manifest)
    con.close()


def test_a_folder_that_is_not_a_dataset_is_refused(sqlite_store, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(transcript_lens.LoadFailed, match="not a Transcript Lens dataset"):
        transcript_lens.load(sqlite_store.path, folder, format="parquet")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
