"""`analytics.contents`: what a loaded database holds, against the store's own counts."""

from __future__ import annotations

from datetime import date, timezone

import duckdb
import pytest

from analytics import contents


def test_database_info_counts_the_database_and_names_its_last_load(con, loaded, sqlite_store):
    info = contents.database_info(loaded)
    assert info["threads"] == len(sqlite_store.manifest) > 0
    assert info["messages"] == con.execute("SELECT count(*) FROM messages").fetchall()[0][0] > 0
    named = {t for (t,) in con.execute("SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL").fetchall()}
    assert info["tenants"] == len(named) > 0
    assert info["source"] == str(sqlite_store.path) and info["source_kind"] == "sqlite"
    assert info["loaded_at"] is not None and info["load_errors"] == 0


def test_facets_span_the_threads(con, loaded):
    got = contents.facets(loaded)
    tenants = [t for (t,) in con.execute("SELECT DISTINCT tenant_id FROM threads").fetchall() if t is not None]
    assert got.tenants == tuple(sorted(tenants))
    assert got.threads == con.execute("SELECT count(*) FROM threads").fetchall()[0][0]
    (lo, hi), = con.execute("SELECT min(first_ts), max(last_ts) FROM threads").fetchall()
    assert (got.first_day, got.last_day) == (lo.astimezone(timezone.utc).date(), hi.astimezone(timezone.utc).date())
    assert isinstance(got.first_day, date) and got.first_day <= got.last_day


def test_a_file_that_is_not_a_transcript_lens_database_raises(tmp_path):
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    with pytest.raises(duckdb.Error):
        contents.database_info(other)
