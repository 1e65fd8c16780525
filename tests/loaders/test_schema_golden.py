"""The database schema is a documented contract: the catalogue (`loaders/catalog.py`) declares it,
a golden file pins what DuckDB makes of its DDL, and docs/schema.md shows its tables."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from loaders import catalog
from loaders.writer import create_schema

GOLDEN = Path(__file__).with_name("golden") / "schema.txt"
DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


def describe() -> str:
    """The schema a load creates, as DuckDB reports it."""
    con = duckdb.connect()
    create_schema(con)
    rows = con.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "ORDER BY table_name, ordinal_position"
    ).fetchall()
    return "".join(f"{t}.{c} {d}{'' if n == 'YES' else ' NOT NULL'}\n" for t, c, d, n in rows)


def test_schema_matches_the_golden_file():
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(describe())
    assert describe() == GOLDEN.read_text(), (
        "schema changed: bump loaders.catalog.SCHEMA_VERSION, run `python scripts/schema_doc.py`, then UPDATE_GOLDEN=1 pytest"
    )


def test_the_catalogue_says_what_duckdb_makes_of_its_ddl():
    # Types as DuckDB reports them (`SqlType.duckdb`) and nullability, column by column.
    assert catalog.describe() == describe()


def test_primary_keys_are_the_catalogues():
    con = duckdb.connect()
    create_schema(con)
    got = con.execute(
        "SELECT table_name, constraint_column_names FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
    ).fetchall()
    assert dict((t, tuple(c)) for t, c in got) == {t.name: t.primary_key for t in catalog.TABLES if t.primary_key}


def test_the_ddl_runs_again_on_an_existing_database():
    con = duckdb.connect()
    create_schema(con)
    con.execute("INSERT INTO meta VALUES ('k', 'v')")
    create_schema(con)  # IF NOT EXISTS: an incremental load runs it on a copy of the old database
    assert con.execute("SELECT * FROM meta").fetchall() == [("k", "v")]


def test_docs_show_every_loader_table_as_the_catalogue_declares_it():
    doc = DOC.read_text()
    assert set(t.name for t in catalog.TABLES) <= set(catalog.doc_blocks(doc)), "a table has no block in docs/schema.md"
    assert catalog.render_doc(doc, catalog.TABLES) == doc, "docs/schema.md is stale: run `python scripts/schema_doc.py`"
