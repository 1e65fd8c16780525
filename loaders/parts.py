"""Staging rows as Arrow IPC parts, so decoding can run in several processes.

Each worker turns its share of threads into rows and writes them, table by
table, as Arrow record batches in a private folder; the main process then
ingests the parts into DuckDB batch by batch (`loaders.writer`). Arrow IPC is
the in-memory layout written out as it is: no encoding on either side, where
Parquet cost as much CPU as the ingest itself. Memory per worker is one
thread plus one batch per table.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from loaders import _native
from loaders.catalog import ERROR_TABLE, STAGE_KINDS
from loaders.records import ColumnBuffers, LoadError

# Rows → Arrow buffers in C (`loaders/_scan.c`); None: pyarrow's own conversion.
_stage = _native.scan.stage if _native.scan is not None else None

# Rows per staged record batch: the loading process holds about one batch per table
# while it ingests them (six INSERTs side by side), so this bounds its memory.
BATCH_ROWS = 8192


class PartWriter:
    """Buffer rows per table; write an Arrow record batch every `flush_rows` rows.

    >>> import tempfile
    >>> w = PartWriter(Path(tempfile.mkdtemp()), {"t": pa.schema([("a", pa.int32())])}, "p0")
    >>> w.append("t", [(1,), (2,)]); w.counts, sorted(w.close())
    ({'t': 2}, ['t'])
    """

    def __init__(self, folder: Path, schemas: dict[str, pa.Schema], prefix: str, flush_rows: int = BATCH_ROWS) -> None:
        self.folder = folder
        self.schemas = schemas
        self.prefix = prefix
        self.flush_rows = flush_rows
        self._buffers: dict[str, list[tuple]] = {t: [] for t in schemas}
        self._kinds = {t: _kinds(s) for t, s in schemas.items()}
        self._writers: dict[str, ipc.RecordBatchFileWriter] = {}
        self.counts: dict[str, int] = {t: 0 for t in schemas}

    def append(self, table: str, rows: list[tuple] | ColumnBuffers) -> None:
        if isinstance(rows, ColumnBuffers):
            # Already columns: whatever rows are buffered go first, so rows keep their order.
            self._flush(table)
            self._write(table, column_batch(self.schemas[table], rows))
            self.counts[table] += rows.length
            return
        if not rows:
            return
        buf = self._buffers[table]
        buf.extend(rows)
        self.counts[table] += len(rows)
        if len(buf) >= self.flush_rows:
            self._flush(table)

    def append_errors(self, errors: list[LoadError]) -> None:
        # The staged columns of `load_errors` (the writer adds the load id).
        self.append(ERROR_TABLE, [(e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.stage, e.reason) for e in errors])

    def _flush(self, table: str) -> None:
        rows = self._buffers[table]
        if not rows:
            return
        schema = self.schemas[table]
        batch = None
        if _stage is not None:
            try:
                staged = _stage(rows, self._kinds[table])
            except (TypeError, ValueError, OverflowError):
                pass  # a value of an unexpected type: pyarrow converts (or reports) it below
            else:
                batch = column_batch(schema, ColumnBuffers(len(rows), dict(zip(schema.names, staged))))
        if batch is None:
            columns = list(zip(*rows))
            batch = pa.Table.from_arrays([_column(c, f.type) for c, f in zip(columns, schema)], schema=schema)
        self._write(table, batch)
        rows.clear()

    def _write(self, table: str, batch: pa.Table | pa.RecordBatch) -> None:
        writer = self._writers.get(table)
        if writer is None:
            writer = ipc.new_file(str(self.folder / f"{table}.{self.prefix}.arrow"), self.schemas[table])
            self._writers[table] = writer
        if isinstance(batch, pa.RecordBatch):
            writer.write_batch(batch)
        else:
            writer.write_table(batch)

    def close(self) -> dict[str, str]:
        """Flush everything; returns {table: Arrow IPC file path} for tables that got rows."""
        for table in self._buffers:
            self._flush(table)
        files = {}
        for table, writer in self._writers.items():
            writer.close()
            files[table] = str(self.folder / f"{table}.{self.prefix}.arrow")
        return files


def _column(values, type_: pa.DataType) -> pa.Array:
    # Rows carry timestamps as integer microseconds (loaders.transform.ts_micros):
    # an int64 array viewed as a timestamp is a relabel of the same buffers. (`cast`
    # does the same but first imports pyarrow.compute: 0.05-0.2 s in every worker.)
    if pa.types.is_timestamp(type_):
        return pa.array(values, type=pa.int64()).view(type_)
    if type_ == _INT_LIST:
        return _int_lists(values)
    return pa.array(values, type=type_)


_INT_LIST = pa.list_(pa.int32())


def _kinds(schema: pa.Schema) -> str:
    """`_scan.stage`'s column kinds for a staging schema, from the catalogue's types
    (`loaders.catalog.STAGE_KINDS`; timestamps are int64 microseconds).

    >>> _kinds(pa.schema([("a", pa.string()), ("t", pa.timestamp("us", tz="UTC"))]))
    'sl'
    """
    return "".join(STAGE_KINDS[f.type] for f in schema)


def _int_lists(values) -> pa.ListArray:
    """`list<int32>` from Python lists (None = NULL): one flat C array and offsets.

    `pa.array` converts nested lists value by value (most of a load's staging
    time went to `checkpoints.message_versions`); `array.extend` copies a
    list of ints at C speed.

    >>> _int_lists([[1, 2], None, []]).to_pylist()
    [[1, 2], None, []]
    """
    flat = array("i")
    offsets = array("i", [0])
    nulls = []
    for i, v in enumerate(values):
        if v is None:
            nulls.append(i)
        else:
            flat.extend(v)
        offsets.append(len(flat))
    n = len(offsets) - 1
    mask = None
    if nulls:
        mask = [False] * n
        for i in nulls:
            mask[i] = True
        mask = pa.array(mask, type=pa.bool_())
    return pa.ListArray.from_arrays(
        pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(offsets)]),
        pa.Array.from_buffers(pa.int32(), len(flat), [None, pa.py_buffer(flat)]),
        mask=mask,
    )


def column_batch(schema: pa.Schema, staged: ColumnBuffers) -> pa.RecordBatch:
    """A record batch of `schema` over buffers built elsewhere (no copy); absent columns are NULL.

    >>> column_batch(pa.schema([("a", pa.int32())]), ColumnBuffers(2, {})).to_pylist()
    [{'a': None}, {'a': None}]
    """
    n = staged.length
    arrays = []
    for field in schema:
        spec = staged.columns.get(field.name)
        if spec is None:
            arrays.append(pa.nulls(n, field.type))
            continue
        length, nulls, validity, offsets, data, values = spec
        if length != n:
            raise ValueError(f"staged column {field.name} has {length} rows, not {n}")
        valid = pa.py_buffer(validity) if validity is not None else None
        if pa.types.is_list(field.type):
            child = pa.Array.from_buffers(field.type.value_type, len(values) // 4, [None, pa.py_buffer(values)])
            arrays.append(pa.Array.from_buffers(field.type, n, [valid, pa.py_buffer(offsets)], nulls, children=[child]))
        elif offsets is not None:
            arrays.append(pa.Array.from_buffers(field.type, n, [valid, pa.py_buffer(offsets), pa.py_buffer(data)], nulls))
        else:
            arrays.append(pa.Array.from_buffers(field.type, n, [valid, pa.py_buffer(data)], nulls))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
