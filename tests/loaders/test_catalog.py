"""The column catalogue (`loaders/catalog.py`) against everything that depends on it:
the rows a real load stages, the staged Arrow parts, the C stager's kinds, the tables written."""

from __future__ import annotations

import dataclasses
import re
from array import array
from pathlib import Path

import pyarrow as pa
import pytest

from loaders import catalog, parts
from loaders.catalog import ERROR_TABLE, TABLES
from loaders.parts import PartWriter, _column, _kinds, column_batch
from loaders.records import ColumnBuffers, LoadError
from loaders.catalog import staging_schemas
from tests.loaders.util import load_db, rows

LOADERS = Path(catalog.__file__).parent
STAGED = [t for t in TABLES if t.staged]


# --- the catalogue itself -----------------------------------------------------------------


def test_tables_and_columns_are_declared_once_with_a_doc():
    assert len({t.name for t in TABLES}) == len(TABLES)
    for t in TABLES:
        assert t.doc and all(c.doc for c in t.columns), t.name
        assert len(set(t.names)) == len(t.names), t.name


def test_staged_tables_are_the_data_tables_and_the_errors():
    assert staging_schemas().keys() == {*catalog.DATA_TABLES, ERROR_TABLE}
    assert catalog.DATA_TABLES == (
        "threads", "checkpoints", "messages", "message_versions", "message_events", "subgraph_messages"
    )


def test_only_the_load_id_of_an_error_is_not_staged():
    # The writer binds the load id to every column a staged table does not stage.
    assert [(t.name, c.name) for t in STAGED for c in t.columns if not c.staged] == [("load_errors", "load_id")]


def test_derived_and_passthrough_flags_fit_their_columns():
    for t in TABLES:
        for c in t.columns:
            if c.derived is not None:
                # Staged as a NULL placeholder, so only a staged, nullable column can be derived.
                assert t.staged and c.staged and c.nullable, (t.name, c.name)
            if c.passthrough_json:
                assert c.type is catalog.JSON and c.nullable and t.staged, (t.name, c.name)


def test_staged_error_rows_are_load_errors_fields():
    names = [f.name for f in dataclasses.fields(LoadError)]
    assert list(catalog.LOAD_ERRORS.staging_schema.names) == names


def test_the_loader_never_imports_analytics():
    for path in LOADERS.glob("*.py"):
        assert not re.search(r"^\s*(from|import) analytics\b", path.read_text(), flags=re.M), path.name


# --- the C stager's kinds -------------------------------------------------------------------


def _c_kinds() -> tuple[set[str], set[str]]:
    """The kinds `_scan.stage` accepts (its check) and those `col_put` converts (its cases)."""
    scan = (LOADERS / "_scan.c").read_text()
    check = re.search(r"if \((k != '.'(?: && k != '.')*)\)", scan)
    assert check, "stage()'s kind check not found in loaders/_scan.c"
    accepted = set(re.findall(r"k != '(.)'", check.group(1)))
    header = (LOADERS / "_columns.h").read_text()
    body = header[header.index("static inline int col_put("):]
    body = body[: body.index("\n}\n")]
    converted = set(re.findall(r"case '(.)':", body))
    return accepted, converted


def test_every_staged_column_has_a_kind_the_c_stager_supports():
    accepted, converted = _c_kinds()
    for t in STAGED:
        assert len(t.stage_kinds) == len(t.staged_columns), t.name
        for c in t.staged_columns:
            assert c.type.arrow is not None and c.type.kind in accepted & converted, (t.name, c.name, c.type)
        assert _kinds(t.staging_schema) == t.stage_kinds, t.name
    assert set(catalog.stage_kinds().values()) <= accepted & converted


@pytest.mark.native
def test_the_c_stager_takes_every_staged_tables_kinds():
    for t in STAGED:
        nulls = tuple(None for _ in t.staged_columns)
        staged = parts._stage([nulls], t.stage_kinds)
        batch = column_batch(t.staging_schema, ColumnBuffers(1, dict(zip(t.staging_schema.names, staged))))
        assert batch.to_pylist() == [dict.fromkeys(t.staging_schema.names)], t.name


_SAMPLES = {"s": ["a", None, "é"], "i": [1, None, -(2**31)], "l": [2**40, None, -1], "b": [True, None, False],
            "L": [array("i", [1, 2]), None, array("i")]}


@pytest.mark.native
def test_each_staged_type_is_staged_in_c_as_pyarrow_converts_it():
    types = {c.type for t in STAGED for c in t.staged_columns}
    for type_ in types:
        values = _SAMPLES[type_.kind]
        schema = pa.schema([("v", type_.arrow)])
        (staged,) = parts._stage([(v,) for v in values], type_.kind)
        got = column_batch(schema, ColumnBuffers(len(values), {"v": staged})).column(0)
        assert got.equals(_column(values, type_.arrow)), type_


# --- a real load ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def staged_load(sqlite_store, tmp_path_factory):
    """A one-process load of every scenario, with what it staged: {table: rows}, {table: batch schemas}."""
    staged: dict[str, list] = {}
    schemas: dict[str, list[pa.Schema]] = {}
    append, write = PartWriter.append, PartWriter._write

    def spy_append(self, table, batch):
        staged.setdefault(table, []).extend(batch)
        return append(self, table, batch)

    def spy_write(self, table, batch):
        schemas.setdefault(table, []).append(batch.schema)
        return write(self, table, batch)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PartWriter, "append", spy_append)
        mp.setattr(PartWriter, "_write", spy_write)
        db = tmp_path_factory.mktemp("catalog") / "all.duckdb"
        load_db(sqlite_store.path, db, workers=1)
    return db, staged, schemas


_PYTHON_TYPES = {"s": str, "i": int, "l": int, "b": bool, "L": array}


def test_every_staged_tuple_has_the_catalogues_columns(staged_load):
    _, staged, _ = staged_load
    assert set(catalog.DATA_TABLES) <= staged.keys()
    for name in catalog.DATA_TABLES:
        t = catalog.table(name)
        columns = t.staged_columns
        assert staged[name], name
        for row in staged[name]:
            assert isinstance(row, tuple) and len(row) == len(columns), (name, row)
        # Position by position: the value fits the column (a shifted tuple would not).
        for i, c in enumerate(columns):
            values = [row[i] for row in staged[name]]
            if c.derived is not None:
                assert all(v is None for v in values), (name, c.name)
                continue
            if not c.nullable:
                assert None not in values, (name, c.name)
            want = _PYTHON_TYPES[c.type.kind]
            wrong = {type(v).__name__ for v in values if v is not None and type(v) is not want}
            assert not wrong, (name, c.name, wrong)


def test_staged_parts_have_the_catalogues_schemas(staged_load):
    _, _, schemas = staged_load
    assert set(catalog.DATA_TABLES) <= schemas.keys()
    for name, seen in schemas.items():
        want = catalog.table(name).staging_schema
        assert all(s.equals(want) for s in seen), name
    assert staging_schemas() == {n: catalog.table(n).staging_schema for n in staging_schemas()}


def test_the_loaded_database_has_the_catalogues_tables(staged_load):
    db, _, _ = staged_load
    got = rows(
        db,
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name IN (SELECT unnest(?)) ORDER BY table_name, ordinal_position",
        [[t.name for t in TABLES]],
    )
    described = "".join(
        f"{r['table_name']}.{r['column_name']} {r['data_type']}{'' if r['is_nullable'] == 'YES' else ' NOT NULL'}\n"
        for r in got
    )
    assert described == catalog.describe()
    # The derived columns were computed at ingest (step is in every real checkpoint's metadata).
    (n,) = rows(db, "SELECT count(step) AS n FROM checkpoints")[0].values()
    assert n > 0


def test_the_source_kind_column_names_every_built_in_kind():
    from loaders import registry

    kinds = [registry._load(target).kind for target in registry.BUILTINS]
    doc = catalog.table("loads").column("source_kind").doc
    assert [k for k in kinds if f"`{k}`" not in doc] == []
