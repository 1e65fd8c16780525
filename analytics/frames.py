"""SQL to typed DataFrame: the one way the query layer turns a DuckDB answer into pandas.

`fetch_frame(con, sql, params, dtypes)` runs the query, converts its Arrow
result with one type map (`ARROW_TO_PANDAS`) and, given `dtypes`, returns
exactly those columns in that order with those dtypes (`typed`), an empty
answer included, so callers can concatenate and compare frames. The dtypes of
catalogued columns come from the catalogues (`dtypes_of`), so a column is read
as the same dtype wherever it is read.

>>> fetch_frame(con, "SELECT thread_id, message_count FROM threads", [],
...             dtypes_of(THREADS, "thread_id", "message_count")).dtypes.tolist()  # doctest: +SKIP
[<StringDtype(na_value=nan)>, dtype('int64')]
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from analytics import _pandas as pd
from analytics._pandas import pandas_dtype, types_mapper
from analytics.db import applied_policy
from analytics.masking import mask_arrow
from analytics.policy import Policy
from loaders.catalog import Column, Table

#: Arrow → pandas: integer columns stay nullable (a NULL token count is <NA>, not a
#: float NaN, and a column of ints stays ints whatever the rows hold); every other
#: type converts as pyarrow does (text as `str`, DOUBLE as float64, TIMESTAMPTZ as
#: datetime64[us, UTC] in a UTC session, DATE as datetime64). `typed` then casts to
#: the dtypes a caller asks for.
ARROW_TO_PANDAS = types_mapper(lambda: {t: pd.Int64Dtype() for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())})

UTC_MICROS = "datetime64[us, UTC]"

#: DuckDB type → pandas dtype of a NOT NULL column, and of a nullable one.
_PANDAS_DTYPES: dict[str, tuple[str, str]] = {
    "VARCHAR": ("str", "str"),
    "JSON": ("str", "str"),
    "INTEGER": ("int64", "Int64"),
    "BIGINT": ("int64", "Int64"),
    "BOOLEAN": ("bool", "boolean"),
    "DOUBLE": ("float64", "float64"),
    "TIMESTAMP WITH TIME ZONE": (UTC_MICROS, UTC_MICROS),
}


def dtype_of(column: Column) -> str:
    """The pandas dtype a catalogued column is read as: NOT NULL integers as `int64`,
    nullable ones as `Int64`; text and JSON as `str`; TIMESTAMPTZ as UTC microseconds.

    >>> from loaders.catalog import MESSAGES
    >>> dtype_of(MESSAGES.column("ordinal")), dtype_of(MESSAGES.column("input_tokens"))
    ('int64', 'Int64')
    """
    strict, nullable = _PANDAS_DTYPES[column.type.duckdb]
    return nullable if column.nullable else strict


def dtypes_of(table: Table, *names: str) -> dict[str, str]:
    """{column: pandas dtype} for `names` of `table` (all its columns when none are named), in that order.

    >>> from loaders.catalog import THREADS
    >>> dtypes_of(THREADS, "thread_id", "first_ts")
    {'thread_id': 'str', 'first_ts': 'datetime64[us, UTC]'}
    """
    return {name: dtype_of(table.column(name)) for name in names or table.names}


def fetch_frame(
    con, sql: str, params=None, dtypes: Mapping[str, str] | None = None, *, mask: bool = True,
    every_text_column: bool = False,
) -> pd.DataFrame:
    """The answer to `sql` (with `params`) as a DataFrame; with `dtypes`, exactly `typed(frame, dtypes)`.

    Arrow → pandas costs a fraction of `.df()` on wide frames. Without `dtypes` the
    columns are the query's, typed by `ARROW_TO_PANDAS`. On a connection that masks
    personal data (`analytics.policy`), the text is masked here, on its way out —
    unless `mask=False`: for a caller that compares the text with text from elsewhere
    (an observed log) and masks what it answers itself (`mask_frame`). `every_text_column`:
    the columns named as keys in `analytics.masking.NOT_PERSONAL` masked too (a query not of this
    project's, whose names say nothing of what a column holds).
    """
    table = con.sql(sql, params=params).to_arrow_table()
    if mask:
        table = mask_arrow(table, applied_policy(con), every_text_column=every_text_column)
    frame = table.to_pandas(types_mapper=ARROW_TO_PANDAS, date_as_object=False)
    return frame if dtypes is None else typed(frame, dtypes)


def mask_frame(frame: pd.DataFrame, policy: Policy, dtypes: Mapping[str, str]) -> pd.DataFrame:
    """A frame the caller built, masked as `fetch_frame`'s answers are under `policy`
    (`applied_policy(con)` of the connection it read from), typed by `dtypes`.

    >>> mask_frame(pd.DataFrame({"content": ["mail bob@example.com"]}), Policy(redact=True), {"content": "str"}).content.tolist()
    ['mail <EMAIL_1>']
    """
    if not policy.redact or frame.empty:
        return frame
    table = mask_arrow(pa.Table.from_pandas(frame, preserve_index=False), policy)
    return typed(table.to_pandas(types_mapper=ARROW_TO_PANDAS, date_as_object=False), dtypes)


def fetch_rows(con, sql: str, params=None) -> list[tuple]:
    """The answer to `sql` as a list of tuples, all of it at once (a half-read result blocks
    the caller's connection), masked as `fetch_frame`'s answers are.

    >>> fetch_rows(con, "SELECT thread_id FROM threads LIMIT 1")  # doctest: +SKIP
    [('acme:web:s1',)]
    """
    policy = applied_policy(con)
    if not policy.redact:
        return con.sql(sql, params=params).fetchall()
    table = mask_arrow(con.sql(sql, params=params).to_arrow_table(), policy)
    return list(zip(*(c.to_pylist() for c in table.columns)))


def typed(frame: pd.DataFrame, dtypes: Mapping[str, str]) -> pd.DataFrame:
    """`frame` with exactly `dtypes`' columns, in order, with those dtypes (empty frames too),
    on a fresh 0-based index. A column `frame` lacks is all NULL; datetimes become UTC
    (a caller's connection may use another session time zone; answers are UTC)."""
    out = {}
    for name, dtype in dtypes.items():
        col = frame[name] if name in frame.columns else pd.Series([None] * len(frame), index=frame.index, dtype="object")
        if col.dtype != pandas_dtype(dtype):
            if dtype.startswith("datetime64"):
                col = pd.to_datetime(col, utc=True).dt.as_unit("us")
            else:
                col = col.astype(dtype)
        out[name] = col
    return pd.DataFrame(out, index=frame.index).reset_index(drop=True)


def sql(con_or_path, query: str, params=None) -> pd.DataFrame:
    """Any query's answer as a DataFrame, masked under the connection's policy: raw SQL on a
    masking connection (`con.sql`, `con.execute`) returns the stored text as it is; this is the
    way to ask your own question and get it masked (docs/privacy.md). Every text of the answer is
    masked, ids and keys too, whatever the column is called (`content AS thread_id` is content)
    and inside lists, structs and maps; what a query computes from the text that is not text (a
    length, a character code, a hash, a blob) is returned as computed: SQL can compute anything,
    so this masks what is shown, it is not a barrier (docs/privacy.md).

    >>> analytics.sql(analytics.connect("lens.duckdb", redact=True), "SELECT content FROM messages LIMIT 1")  # doctest: +SKIP
    """
    from analytics.db import connection

    with connection(con_or_path) as con:
        return fetch_frame(con, query, params, every_text_column=True)
