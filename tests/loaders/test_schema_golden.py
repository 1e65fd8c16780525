"""The database schema is a documented contract: pinned by a golden file and by docs/schema.md."""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from loaders.writer import create_schema

GOLDEN = Path(__file__).with_name("golden") / "schema.txt"
DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


def describe() -> str:
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
    assert describe() == GOLDEN.read_text(), "schema changed: update docs/schema.md, then UPDATE_GOLDEN=1 pytest"


def test_every_column_is_documented():
    doc = DOC.read_text()
    documented = set(re.findall(r"^\| ([a-z_, ]+) \|", doc, flags=re.M))
    names = {n.strip() for cell in documented for n in cell.split(",")}
    prose = set(re.findall(r"`([a-z_]+)`", doc))
    for line in describe().splitlines():
        column = line.split()[0].split(".")[1]
        assert column in names or column in prose, f"{line.split()[0]} is not in docs/schema.md"
