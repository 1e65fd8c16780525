"""Staging rows as Arrow IPC parts, so decoding can run in several processes.

Each worker turns its share of threads into rows and writes them, table by
table, as Arrow record batches in a private folder; the main process then
ingests the parts into DuckDB batch by batch (`loaders.writer`). Arrow IPC is
the in-memory layout written out as it is: no encoding on either side, where
Parquet cost as much CPU as the ingest itself. Memory per worker is one
thread plus the rows it buffers, at most `BATCH_BYTES` over all tables.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from loaders import _native
from loaders.catalog import ERROR_TABLE, stage_kinds
from loaders.records import ColumnBuffers, LoadError

# Rows → Arrow buffers in C (`loaders/_scan.c`); None: pyarrow's own conversion.
_stage = _native.scan.stage if _native.scan is not None else None

# Rows per staged record batch: the loading process holds about one batch per table
# while it ingests them (six INSERTs side by side), so this bounds its memory.
BATCH_ROWS = 8192
# Bytes per staged record batch, and what a writer buffers over all its tables: every
# staged byte counts, not only rows (a thread of 1 MB messages, a 4 kB thread id copied
# into every row). A single row over it is staged alone. Six streams side by side at
# ingest hold about six batches: 32 MiB keeps that a fifth of a 1 GB load.
BATCH_BYTES = 32 << 20
# Staged bytes per value besides its text or list items (offsets, fixed-width values).
_WIDTH = {"s": 4, "L": 4, "i": 4, "l": 8, "b": 1}


class PartWriter:
    """Buffer rows per table; write an Arrow record batch every `flush_rows` rows or
    `flush_bytes` staged bytes, whichever comes first (the bytes of all tables' buffers
    count together). No batch holds more than `flush_bytes`, but for a single row over it.

    >>> import tempfile
    >>> w = PartWriter(Path(tempfile.mkdtemp()), {"t": pa.schema([("a", pa.int32())])}, "p0")
    >>> w.append("t", [(1,), (2,)]); w.counts, sorted(w.close())
    ({'t': 2}, ['t'])
    """

    def __init__(
        self, folder: Path, schemas: dict[str, pa.Schema], prefix: str, flush_rows: int = BATCH_ROWS,
        flush_bytes: int | None = None,
    ) -> None:
        self.folder = folder
        self.schemas = schemas
        self.prefix = prefix
        self.flush_rows = flush_rows
        self.flush_bytes = BATCH_BYTES if flush_bytes is None else flush_bytes  # (read here: tests set it)
        self._buffers: dict[str, list[tuple]] = {t: [] for t in schemas}
        self._kinds = {t: _kinds(s) for t, s in schemas.items()}
        self._sizers = {t: RowSizer(k) for t, k in self._kinds.items()}
        self._bytes: dict[str, int] = {t: 0 for t in schemas}  # estimated staged bytes buffered
        self._buffered = 0  # the sum of `_bytes`
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
        # Rows from `loaders.transform.thread` carry their text and list bytes (`SizedRows.nbytes`).
        nbytes = getattr(rows, "nbytes", None)
        size = self._sizers[table].total(rows) if nbytes is None else nbytes + len(rows) * self._sizers[table].fixed
        self._bytes[table] += size
        self._buffered += size
        if len(buf) >= self.flush_rows or self._bytes[table] >= self.flush_bytes:
            self._flush(table)
        elif self._buffered >= self.flush_bytes:
            for other in self._buffers:
                self._flush(other)

    def append_errors(self, errors: list[LoadError]) -> None:
        # The staged columns of `load_errors` (the writer adds the load id).
        self.append(ERROR_TABLE, [(e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.stage, e.reason) for e in errors])

    def _flush(self, table: str) -> None:
        rows = self._buffers[table]
        if not rows:
            return
        if self._bytes[table] <= self.flush_bytes:
            self._stage_rows(table, rows)  # (a thread's rows past `flush_rows` go along: one batch)
        else:
            for piece in self._sizers[table].cut(rows, self.flush_rows, self.flush_bytes):
                self._stage_rows(table, piece)
        rows.clear()
        self._buffered -= self._bytes[table]
        self._bytes[table] = 0

    def _stage_rows(self, table: str, rows: list[tuple]) -> None:
        """Stage rows as one record batch, or as halves when it is over the cap after all
        (the estimate counts a character as a byte), down to a single row."""
        batch = self._batch(table, rows)
        if len(rows) > 1 and batch.nbytes > self.flush_bytes:
            del batch
            half = len(rows) // 2
            self._stage_rows(table, rows[:half])
            self._stage_rows(table, rows[half:])
        else:
            self._write(table, batch)

    def _batch(self, table: str, rows: list[tuple]) -> pa.Table | pa.RecordBatch:
        schema = self.schemas[table]
        if _stage is not None:
            try:
                staged = _stage(rows, self._kinds[table])
            except (TypeError, ValueError, OverflowError):
                pass  # a value of an unexpected type: pyarrow converts (or reports) it below
            else:
                return column_batch(schema, ColumnBuffers(len(rows), dict(zip(schema.names, staged))))
        columns = list(zip(*rows))
        return pa.Table.from_arrays([_column(c, f.type) for c, f in zip(columns, schema)], schema=schema)

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


class RowSizer:
    """Staged bytes of rows, estimated at C speed (`map`/`len` down each text and list
    column): a character counts one byte, a list item four, plus each value's offset or
    fixed width. Anything without a length (a value pyarrow will refuse) counts nothing.

    >>> RowSizer("sLi").total([("abc", array("i", [1, 2]), 7), (None, None, None)])
    35
    """

    __slots__ = ("text", "lists", "fixed")

    def __init__(self, kinds: str) -> None:
        self.text = [itemgetter(i) for i, k in enumerate(kinds) if k == "s"]
        self.lists = [itemgetter(i) for i, k in enumerate(kinds) if k == "L"]
        self.fixed = sum(_WIDTH.get(k, 8) for k in kinds)

    def total(self, rows: list[tuple]) -> int:
        try:
            size = len(rows) * self.fixed
            for get in self.text:
                size += sum(map(len, filter(None, map(get, rows))))
            for get in self.lists:
                size += 4 * sum(map(len, filter(None, map(get, rows))))
            return size
        except TypeError:  # a value without a length: row by row, counting what has one
            return sum(map(self.row, rows))

    def row(self, row: tuple) -> int:
        size = self.fixed
        for get in self.text:
            size += _len(get(row))
        for get in self.lists:
            size += 4 * _len(get(row))
        return size

    def cut(self, rows: list[tuple], max_rows: int, max_bytes: int) -> Iterator[list[tuple]]:
        """Consecutive pieces of `rows` of at most `max_rows` rows and `max_bytes` bytes (a row
        over `max_bytes` alone). Row by row in Python: only for buffers over a cap."""
        start, size = 0, 0
        for i, row in enumerate(rows):
            n = self.row(row)
            if i > start and (size + n > max_bytes or i - start >= max_rows):
                yield rows[start:i]
                start, size = i, 0
            size += n
        if start < len(rows):
            yield rows[start:]


def _len(value: Any) -> int:
    try:
        return len(value) if value is not None else 0
    except TypeError:
        return 0


def _column(values, type_: pa.DataType) -> pa.Array:
    # Rows carry timestamps as integer microseconds (loaders.transform.timestamps.ts_micros):
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
    (`loaders.catalog.stage_kinds`; timestamps are int64 microseconds).

    >>> _kinds(pa.schema([("a", pa.string()), ("t", pa.timestamp("us", tz="UTC"))]))
    'sl'
    """
    kinds = stage_kinds()
    return "".join(kinds[f.type] for f in schema)


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
