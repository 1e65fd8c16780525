"""`load(derived=...)`: tables computed from the loaded rows, written by whoever composes the
load (the query layer, through `transcript_lens.load`) into the staged database before the swap."""

from __future__ import annotations

import duckdb
import pytest

from tests.loaders.util import load_db, rows


class Recorder:
    """A `loaders.DerivedTables` that counts the staged database's messages into a table."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def prepare(self) -> None:
        self.calls.append("prepare")

    def write(self, con, threads) -> None:
        self.calls.append("write")
        if self.fail:
            raise RuntimeError("derived table failed")
        con.execute("CREATE TABLE message_total AS SELECT count(*) AS n FROM messages").fetchall()


@pytest.mark.parametrize("workers", [1, 2])
def test_derived_tables_are_prepared_then_written_into_the_new_database(sqlite_store, tmp_path, workers):
    db = tmp_path / "lens.duckdb"
    derived = Recorder()
    summary = load_db(sqlite_store.path, db, workers=workers, derived=derived)
    assert derived.calls == ["prepare", "write"]
    assert rows(db, "SELECT n FROM message_total") == [{"n": summary.messages}]


def test_a_plain_load_writes_only_the_loaders_tables(sqlite_store, tmp_path):
    db = tmp_path / "plain.duckdb"
    load_db(sqlite_store.path, db, workers=1)
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    assert "conversation_metrics" not in tables and "messages" in tables


def test_a_failing_derived_table_leaves_the_previous_database_as_it_was(sqlite_store, tmp_path):
    db = tmp_path / "lens.duckdb"
    load_db(sqlite_store.path, db, workers=1)
    before = db.read_bytes()
    with pytest.raises(RuntimeError, match="derived table failed"):
        load_db(sqlite_store.path, db, workers=1, derived=Recorder(fail=True))
    assert db.read_bytes() == before
