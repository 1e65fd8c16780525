"""Erased thread ids taken out of the values of the tables that name threads without a `thread_id` column.

`loads` records each load's source and options (`--threads ID` lists ids) and `meta`
holds `source_token`, which repeats the options. An erasure drops rows by thread id,
so these would keep the id; their text values are copied through `scrub`, which makes
`analytics.erasure.exports.ERASED` of every string that holds an erased id, by the export log's rule
(`analytics.erasure.exports.replaced_strings`; in a JSON value, string by string).
A `source_token` that names an erased id is not copied at all: it is only ever compared
with a new load's token, and without it the next incremental load compares the source
thread by thread (`loaders.pipeline._plan`), as it does for a source with no cheap token.

>>> scrub('{"threads": ["acme:web:s1", "acme:web:s2"]}', ["acme:web:s1"])
'{"threads": ["<erased>", "acme:web:s2"]}'
"""

from __future__ import annotations

import json

import duckdb

from analytics.erasure.exports import replaced_strings

#: The tables whose text values are scrubbed when copied (`rewrite_without`), and the
#: `meta` key that is dropped instead when it names an erased id.
TABLES = ("loads", "meta")
TOKEN_KEY = "source_token"
_UDF = "tl_scrub_erased"


def names_any(text: str | None, ids: list[str]) -> bool:
    """Whether `text` holds one of `ids` as it is or as JSON escapes it.

    >>> names_any('["caf\\u00e9"]', ["café"]), names_any("x", ["café"])
    (True, False)
    """
    if not text:
        return False
    return any(i in text or json.dumps(i)[1:-1] in text for i in ids)


def scrub(text: str | None, ids: list[str]) -> str | None:
    """`text` with `exports.ERASED` for each string in it that holds one of `ids`: a JSON value stays JSON,
    any other text is one string.

    >>> scrub("/stores/sess-1.sqlite", ["sess-1"]), scrub("/stores/all.sqlite", ["sess-1"]), scrub(None, ["s"])
    ('<erased>', '/stores/all.sqlite', None)
    """
    if not names_any(text, ids):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return replaced_strings(text, set(), tuple(ids))[0]
    return json.dumps(replaced_strings(value, set(), tuple(ids))[0])


def register(con: duckdb.DuckDBPyConnection, ids: list[str]) -> None:
    """Make `scrub` of `ids` a function of `con` (before any statement: DuckDB takes no new
    function while a result is pending)."""
    con.create_function(_UDF, lambda text: scrub(text, ids), ["VARCHAR"], "VARCHAR", null_handling="special")


def copy_scrubbed(con: duckdb.DuckDBPyConnection, table: str, ids: list[str]) -> int:
    """Copy `src.main.<table>` into `dst.main.<table>` on `con` (`register`ed for `ids`) with every
    text value scrubbed, `meta`'s `source_token` row left out when it names an erased id; the rows copied."""
    text = [(name, kind) for name, kind in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'src' "
        "AND schema_name = 'main' AND table_name = ?", [table]).fetchall() if kind in ("VARCHAR", "JSON")]
    replaced = ", ".join(f'{_UDF}("{c}"::VARCHAR)::{kind} AS "{c}"' for c, kind in text)
    select = f'SELECT * REPLACE ({replaced}) FROM src.main."{table}"' if text else f'SELECT * FROM src.main."{table}"'
    params: list = []
    if table == "meta":
        select += f" WHERE NOT (key = ? AND {_UDF}(value) IS DISTINCT FROM value)"
        params = [TOKEN_KEY]
    (copied,) = con.execute(f'INSERT INTO dst.main."{table}" {select}', params).fetchone()
    return copied
