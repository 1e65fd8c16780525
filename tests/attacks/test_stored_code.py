"""A database file that carries queries of its own (docs/security.md, "A database is data").

A DuckDB file can hold views and macros, which DuckDB runs whenever they are read, with the file
and network access of the reader. Each case takes a database a real load wrote, plants code in it
as a visitor could before uploading it or dropping it in a source folder, and opens it through the
command line, the API and the app's load panel: refused in one line naming what it holds, the
planted secret never shown. And a connection the API opens reads no file but its database, even
where no refusal stands in the way (a Parquet dataset's reads only its folder).
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

import analytics
from analytics.stored_code import StoredCode
from tests.attacks.harness import attack
from tests.attacks.test_app_paths import _try, deployed  # noqa: F401 (the app on a database, a source folder)
from tests.pages.conftest import _v2_router  # noqa: F401 (the AppTests' router fixture)

SECRET = "s3cret-of-the-server-9f1c"
THREAD = "acme:web:s1"


@pytest.fixture(scope="module")
def clean(sqlite_store, tmp_path_factory):
    import transcript_lens

    db = tmp_path_factory.mktemp("clean") / "lens.duckdb"
    transcript_lens.load(sqlite_store.path, db)
    return db


def _planted(clean, folder, *statements: str):
    """A copy of `clean` with `statements` run in it, and a secret file beside it (`{secret}` in them)."""
    secret = folder / "secret.txt"
    secret.write_text(SECRET + "\n")
    db = folder / "planted.duckdb"
    shutil.copy(clean, db)
    con = duckdb.connect(str(db))
    for sql in statements:
        con.execute(sql.replace("{secret}", str(secret)))
    con.close()
    return db


#: The `messages` table swapped for a view that puts the secret file in every message's text.
SWAPPED = ("ALTER TABLE messages RENAME TO kept",
           "CREATE VIEW messages AS SELECT * REPLACE ((SELECT content FROM read_text('{secret}')) AS content) FROM kept")
MACRO = ("CREATE MACRO coalesce_text(x) AS (SELECT content FROM read_text('{secret}'))",)
#: A column computed whenever it is read: a setting of the server's, or the text repeated (memory).
GENERATED = ("CREATE TABLE notes (thread_id VARCHAR, probe VARCHAR GENERATED ALWAYS AS "
             "(current_setting('secret_directory') || repeat(thread_id, 2000000)) VIRTUAL)",
             "INSERT INTO notes (thread_id) SELECT thread_id FROM threads")


def _a_thread(db) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT thread_id FROM kept ORDER BY thread_id LIMIT 1").fetchall()[0][0]
    finally:
        con.close()


def test_a_database_whose_messages_are_a_view_over_a_file_is_refused_by_the_command(clean, tmp_path):
    db = _planted(clean, tmp_path, *SWAPPED)
    for argv in (["transcript", "--thread", _a_thread(db), "--db", str(db)], ["search", "s3cret", "--db", str(db)],
                 ["report", "conversations", "--db", str(db)]):
        out = attack(argv, tmp_path)
        out.refused("is not opened", "view messages").never_prints(SECRET)


@pytest.mark.parametrize("planted, named", [(SWAPPED, "view messages"), (MACRO, "macro coalesce_text"),
                                            (GENERATED, "generated column notes.probe")],
                         ids=["view", "macro", "generated"])
def test_the_api_refuses_a_database_holding_code_and_names_it(clean, tmp_path, planted, named):
    db = _planted(clean, tmp_path, *planted)
    with pytest.raises(StoredCode) as raised:
        analytics.connect(db)
    assert str(db) in str(raised.value) and SECRET not in str(raised.value) and named in str(raised.value)


def test_a_connection_of_the_api_reads_no_file_but_its_database(clean, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    con = analytics.connect(clean)
    try:
        assert con.execute("SELECT count(*) FROM messages").fetchall()[0][0] > 0
        for sql in (f"SELECT content FROM read_text('{secret}')", f"ATTACH '{tmp_path / 'other.duckdb'}' AS o",
                    f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'", "INSTALL httpfs"):
            with pytest.raises(duckdb.Error, match="disabled"):
                con.execute(sql)
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


@pytest.fixture(scope="module")
def dataset(sqlite_store, tmp_path_factory):
    import transcript_lens

    data = tmp_path_factory.mktemp("data") / "lens"
    transcript_lens.load(sqlite_store.path, data, format="parquet")
    return data


def test_a_dataset_reads_its_own_folder_and_nothing_else(dataset, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    con = analytics.connect(dataset)
    try:
        assert con.execute("SELECT count(*) FROM messages").fetchall()[0][0] > 0
        with pytest.raises(duckdb.Error, match="disabled"):
            con.execute(f"SELECT content FROM read_text('{secret}')")
    finally:
        con.close()


def test_a_dataset_pointer_or_table_list_that_leads_out_of_its_folder_is_refused(dataset, tmp_path):
    copy = tmp_path / "lens"
    shutil.copytree(dataset, copy)
    outside = tmp_path / "outside"
    (outside / "messages").mkdir(parents=True)
    (copy / "CURRENT").write_text("../outside\n")
    with pytest.raises(Exception, match="not a version folder"):
        analytics.connect(copy)
    version = (dataset / "CURRENT").read_text().strip()
    (copy / "CURRENT").write_text(version + "\n")
    tables = json.loads((copy / version / "_tables.json").read_text())
    tables["tables"][f"messages\" AS SELECT * FROM read_text('{tmp_path}/secret.txt') --"] = {"comment": None}
    (copy / version / "_tables.json").write_text(json.dumps(tables))
    with pytest.raises(Exception, match="names a table"):
        analytics.connect(copy)


def test_the_load_panel_refuses_a_database_holding_code_in_its_folder(deployed, clean):
    db = _planted(clean, deployed, *SWAPPED)
    [error] = _try(str(db))
    assert "is not opened" in error and "view messages" in error and SECRET not in error


def test_a_file_of_another_kind_named_duckdb_is_refused_before_duckdb_reads_it(sqlite_store, tmp_path):
    """DuckDB reads a SQLite file by downloading and loading its scanner extension: a store renamed
    `.duckdb`, uploaded or typed, had the server fetch and load native code."""
    fake = tmp_path / "store.duckdb"
    shutil.copy(sqlite_store.path, fake)
    out = attack(["search", "refund", "--db", str(fake)], tmp_path)
    out.refused("not a Transcript Lens database", "not a DuckDB file")
    assert not any(tmp_path.joinpath(".attack-home").rglob("extensions")), "an extension folder was made"


def test_a_dataset_part_linked_out_of_its_folder_is_refused_in_one_line(dataset, tmp_path):
    copy = tmp_path / "lens"
    shutil.copytree(dataset, copy)
    part = next((copy / (copy / "CURRENT").read_text().strip() / "threads").rglob("*.parquet"))
    outside = tmp_path / "outside.parquet"
    part.rename(outside)
    part.symlink_to(outside)
    attack(["search", "refund", "--db", str(copy)], tmp_path).refused("is not a Transcript Lens dataset")
