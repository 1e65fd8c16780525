"""AppTests of stale transcripts: the transcript page warns, naming the checkpoint shown and why;
Conversations marks them and filters them (`?stale=1`).

The database is built here, in tmp_path: tests/stale_store.py's store (real graphs, real savers,
part of it encrypted) loaded without its key, the way `transcript-lens load` does.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.loaders.util import rows
from tests.pages.conftest import APP, TIMEOUT, open_page
from tests.stale_store import load_without_key, MIXED, PLAIN, SECRET, write_stale_store


@pytest.fixture(scope="module")
def stale_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stale-app")
    store = write_stale_store(folder / "stale.sqlite")
    db = folder / "stale.duckdb"
    return load_without_key(store, db)


@pytest.fixture()
def at(stale_db, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(stale_db))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    st.cache_data.clear()
    yield AppTest.from_file(APP, default_timeout=TIMEOUT)
    st.cache_data.clear()


def warnings_of(at) -> list[str]:
    return [w.value for w in at.warning]


def test_the_transcript_page_says_which_checkpoint_it_shows_and_why(at, stale_db):
    (row,) = rows(stale_db, "SELECT transcript_checkpoint_id, stale_reason FROM threads WHERE thread_id = ?", [MIXED])
    shown = warnings_of(open_page(at, "transcript", thread=MIXED))
    stale = [w for w in shown if "Stale transcript" in w]
    assert len(stale) == 1
    assert f"root checkpoint `{row['transcript_checkpoint_id']}`" in stale[0] and row["stale_reason"] in stale[0]
    assert "no key given" in stale[0]
    assert any("stale transcript" in c.value for c in at.caption)  # the thread line too
    # The filtered read (contract §4) says it as well.
    assert any("Stale transcript" in w for w in warnings_of(open_page(at, "transcript", thread=MIXED, view="filtered")))


def test_a_thread_none_of_whose_checkpoints_decoded_says_its_transcript_is_empty(at):
    shown = [w for w in warnings_of(open_page(at, "transcript", thread=SECRET)) if "Stale transcript" in w]
    assert len(shown) == 1 and "none of its root checkpoints decoded" in shown[0]


def test_a_current_thread_has_no_warning(at):
    assert not [w for w in warnings_of(open_page(at, "transcript", thread=PLAIN)) if "Stale" in w]


def test_conversations_marks_stale_threads_and_filters_them_from_the_url(at, stale_db):
    stale = {r["thread_id"] for r in rows(stale_db, "SELECT thread_id FROM threads WHERE stale_reason IS NOT NULL")}
    assert stale == {MIXED, SECRET}
    every = open_page(at, "conversations").dataframe[0].value.set_index("thread_id")
    assert every["stale_reason"].to_dict() == {MIXED: "⚠ stale", SECRET: "⚠ stale", PLAIN: ""}
    box = next(c for c in at.checkbox if c.label == "Stale threads only")
    box.check().run()
    assert not at.exception
    assert at.query_params["stale"] == "1"
    assert set(at.dataframe[0].value["thread_id"]) == stale
    fresh = open_page(AppTest.from_file(APP, default_timeout=TIMEOUT), "conversations", stale="1")
    assert set(fresh.dataframe[0].value["thread_id"]) == stale
    assert next(c for c in fresh.checkbox if c.label == "Stale threads only").value is True


def test_the_overview_counts_them_and_links_to_the_list(at):
    open_page(at, "overview")
    (link,) = [p for p in at.get("page_link") if "stale transcript" in p.proto.label]
    assert link.proto.label.startswith("2 of these threads show a stale transcript")
    assert (link.proto.page, link.proto.query_string) == ("conversations", "stale=1")


def test_a_database_of_an_older_schema_is_an_error_with_the_load_panel_still_there(stale_db, tmp_path, monkeypatch):
    import duckdb

    old = tmp_path / "older.duckdb"
    old.write_bytes(stale_db.read_bytes())
    con = duckdb.connect(str(old))
    con.execute("ALTER TABLE threads DROP COLUMN stale_reason")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    monkeypatch.setenv("TRANSCRIPT_LENS_DB", str(old))
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert any("written under schema 3" in e.value and "load its source again" in e.value for e in at.error)
    assert at.sidebar.text_input(key="load.spec") is not None
