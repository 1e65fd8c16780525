"""Staging rows as Arrow: `_scan.stage` (rows → buffers in C) equals pyarrow's own conversion.

`PartWriter` stages every table's Python rows through `_scan.stage` and
`parts.column_batch`; anything `stage` declines (a value of another type, an
integer out of range) goes through pyarrow, which converts or reports it as
before.
"""

from __future__ import annotations

from array import array

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loaders import parts
from loaders.parts import PartWriter, _column, _kinds, column_batch
from loaders.records import ColumnBuffers
from loaders.catalog import staging_schemas

SCHEMA = pa.schema([
    ("s", pa.string()), ("i", pa.int32()), ("l", pa.int64()), ("b", pa.bool_()),
    ("t", pa.timestamp("us", tz="UTC")), ("v", pa.list_(pa.int32())),
])


@pytest.mark.native
def test_the_stager_is_built():
    assert parts._stage is not None, "loaders/_scan.c is not built: run `python setup.py build_ext --inplace`"


def by_pyarrow(schema: pa.Schema, rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([_column(c, f.type) for c, f in zip(columns, schema)], schema=schema)


def by_stage(schema: pa.Schema, rows: list[tuple]) -> pa.Table:
    staged = parts._stage(rows, _kinds(schema))
    return pa.Table.from_batches([column_batch(schema, ColumnBuffers(len(rows), dict(zip(schema.names, staged))))])


texts = st.one_of(st.none(), st.text(max_size=20))  # any code point but lone surrogates (not UTF-8)
rows = st.lists(st.tuples(
    texts,
    st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999)),  # datetime's years 1-9999
    st.one_of(st.none(), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=6).map(lambda v: array("i", v))),
), max_size=40)


@pytest.mark.native
@settings(max_examples=300, deadline=None)
@given(rows)
def test_staged_columns_equal_pyarrows(batch):
    got, want = by_stage(SCHEMA, batch), by_pyarrow(SCHEMA, batch)
    assert got.equals(want)
    got.validate(full=True)
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("row", [
    ("x", True, 1, True, 1, None),          # a bool where an int32 goes
    ("x", 2**31, 1, True, 1, None),         # out of int32
    ("x", 1, 1, 1, 1, None),                # an int where a bool goes
    ("x", 1, 1, True, 1, [1, 2]),           # a list, not an array('i')
    ("x", 1, 1, True, 1, array("l", [1])),  # an array of another width
    (b"x", 1, 1, True, 1, None),            # bytes where text goes
])
@pytest.mark.native
def test_stage_declines_what_it_does_not_convert_exactly(row):
    with pytest.raises((TypeError, OverflowError)):
        parts._stage([row], _kinds(SCHEMA))


def test_the_part_writer_stages_declined_rows_through_pyarrow(tmp_path):
    # A list where the schema says list<int32>: declined by `stage`, converted by pyarrow.
    schema = pa.schema([("v", pa.list_(pa.int32())), ("s", pa.string())])
    w = PartWriter(tmp_path, {"t": schema}, "p0")
    w.append("t", [([1, 2], "a"), (None, None)])
    w.append("t", [(array("i", [3]), "b")])
    files = w.close()
    with ipc.open_file(files["t"]) as reader:
        assert reader.read_all().to_pylist() == [{"v": [1, 2], "s": "a"}, {"v": None, "s": None}, {"v": [3], "s": "b"}]


def test_every_staging_schema_has_stage_kinds():
    for table, schema in staging_schemas().items():
        assert len(_kinds(schema)) == len(schema), table
