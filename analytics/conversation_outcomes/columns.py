"""Arrow columns from Python lists, built from their buffers.

`pa.array(list)` imports pandas into the loading process (tests/analytics/test_lazy_pandas.py),
and handing the lists to DuckDB as bound parameters copies and binds each value one by one:
for one row of facts per thread, that was most of `conversation_signals`' time on a large
store. Here each column's buffers are filled by NumPy and wrapped by `pa.Array.from_buffers`,
which neither imports pandas nor looks at a value twice. Only the types the facts use.

>>> arrow_table({"n": [1, None]}, {"n": pa.int32()}).column("n").to_pylist()
[1, None]
"""

from __future__ import annotations

import datetime as dt
from itertools import chain

import numpy as np
import pyarrow as pa

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MICROSECOND = dt.timedelta(microseconds=1)


def _validity(values: list) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap of `values` (None when no value is None) and its null count."""
    nulls = values.count(None)  # (a C loop: most fact columns have no null, and then no bitmap)
    if not nulls:
        return None, 0
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return pa.py_buffer(np.packbits(present, bitorder="little")), nulls


def _offsets(lengths) -> pa.Buffer:
    out = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=out[1:])
    return pa.py_buffer(out)


def _micros(t: dt.datetime) -> int:
    """Microseconds since the epoch; a time without a zone is UTC (as DuckDB reads one under the loads' `TimeZone`)."""
    return ((t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)) - _EPOCH) // _MICROSECOND


def column(values: list, type_: pa.DataType) -> pa.Array:
    """`values` (Python objects, None for a null) as an Arrow array of `type_`."""
    n = len(values)
    valid, nulls = _validity(values)
    present = values if not nulls else None  # without nulls NumPy converts the list in C
    if pa.types.is_string(type_):
        data = [b"" if v is None else v.encode() for v in values]
        return pa.Array.from_buffers(type_, n, [valid, _offsets(list(map(len, data))), pa.py_buffer(b"".join(data))],
                                     null_count=nulls)
    if pa.types.is_boolean(type_):
        bits = np.array(present, dtype=bool) if present is not None else \
            np.fromiter((bool(v) for v in values), dtype=bool, count=n)
        return pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(np.packbits(bits, bitorder="little"))],
                                     null_count=nulls)
    if pa.types.is_int32(type_):
        ints = np.array(present, dtype=np.int32) if present is not None else \
            np.fromiter((0 if v is None else v for v in values), dtype=np.int32, count=n)
        return pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(ints)], null_count=nulls)
    if pa.types.is_timestamp(type_) and type_.unit == "us":
        micros = np.fromiter((0 if v is None else _micros(v) for v in values), dtype=np.int64, count=n)
        return pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(micros)], null_count=nulls)
    if pa.types.is_list(type_):
        if present is not None:
            items, lengths = list(chain.from_iterable(present)), np.fromiter(map(len, present), dtype=np.int32, count=n)
        else:
            items = [x for v in values if v is not None for x in v]
            lengths = np.fromiter((0 if v is None else len(v) for v in values), dtype=np.int32, count=n)
        return pa.Array.from_buffers(type_, n, [valid, _offsets(lengths)], null_count=nulls,
                                     children=[column(items, type_.value_type)])
    raise TypeError(f"no Arrow column of {type_} from Python values here")


_NUMPY = {pa.int32(): np.int32, pa.int64(): np.int64, pa.uint32(): np.uint32, pa.int8(): np.int8, pa.int16(): np.int16}


def numpy_of(array: pa.Array) -> np.ndarray:
    """An Arrow array of booleans or integers without nulls as NumPy, read from its buffers
    (pyarrow's `to_numpy` imports pandas).

    >>> numpy_of(numpy_to_arrow(np.array([True, False, True]))).tolist()
    [True, False, True]
    """
    if array.null_count:
        raise ValueError("an array with nulls")
    n, at, data = len(array), array.offset, array.buffers()[1]
    if pa.types.is_boolean(array.type):
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little") if n else np.zeros(0, np.uint8)
        return bits[at:at + n].astype(bool)
    return np.frombuffer(data, dtype=_NUMPY[array.type], count=at + n)[at:] if n else np.zeros(0, _NUMPY[array.type])


def numpy_to_arrow(values: np.ndarray) -> pa.Array:
    """A NumPy array of booleans or int64 as an Arrow array, wrapped from its buffer (`pa.array` imports pandas)."""
    if values.dtype == bool:
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(np.ascontiguousarray(values, np.int64))])


def arrow_table(cols: dict[str, list], types: dict[str, pa.DataType]) -> pa.Table:
    """A table of `cols` (name -> values, in `types`' order), each column of its type in `types`."""
    return pa.table({name: column(cols[name], t) for name, t in types.items()})
