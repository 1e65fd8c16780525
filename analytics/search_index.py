"""The text search index: `search_index`, written at load time, read by `analytics.search`.

One row per message: its key (thread, ordinal) and the trigram signature of its folded text
(`analytics.search_grams`: four 64-bit words), not the text again. A search for a text of three
characters or more takes the keys whose signature holds the text's bits (a few integer tests a
row), joins them to `messages`, and runs its exact match (`analytics.text_match`, the masking
barrier included) on those rows only; so it finds exactly what a scan of `messages` finds. A
text longer than `SIGNED_CHARS` is not signed: all its bits are set, so it is a candidate of
every search (its exact match decides), and signing never holds more than a vector of short
texts in memory. A shorter searched text, a search of tool calls, or a database whose index
another definition wrote (`FINGERPRINT`) scans `messages`.

A derived table (`analytics.derived`): rebuilt whole by a full load, rewritten for the replaced
threads by an incremental load (`analytics.db.write_derived_table`), emptied of an erased
thread's rows by an erasure (it has a `thread_id`: `analytics.erasure_db`), and shadowed by a
tenant scope's view like every table (`analytics.policy`).

>>> candidate_sql([(1, 0, 0, 2)], "s")
('((s.g0 & ?::UBIGINT) = ?::UBIGINT AND (s.g3 & ?::UBIGINT) = ?::UBIGINT)', [1, 1, 2, 2])
"""

from __future__ import annotations

import hashlib
import inspect

import duckdb

from analytics import search_grams
from analytics.catalog import SEARCH_INDEX
from analytics.db import table_comments, write_derived_table
from loaders import grams

TABLE = SEARCH_INDEX.name
#: Texts longer than this (characters) are not signed: every bit set, a candidate of every search.
SIGNED_CHARS = 16384
#: Rows a DuckDB scan reads at once (one vector), all of a column's values together.
VECTOR_ROWS = 2048
#: At most this many stretches of rows are signed (`_signed_ranges`); the rest are candidates.
MAX_RANGES = 256
_UDF = "tl_trigram_signature"
_WORDS = search_grams.WORDS
_NONE = "[" + ", ".join(["0"] * _WORDS) + f"]::UBIGINT[{_WORDS}]"
_ALL = "[" + ", ".join([str((1 << 64) - 1)] * _WORDS) + f"]::UBIGINT[{_WORDS}]"
# `{messages}`: the table itself (its rowids); `threads` is the table or, in an incremental load, the
# view of the replaced threads (`analytics.db.only_threads`). `{signed}`: the rowid ranges whose
# text is read (`_signed_ranges`): a scan reads a vector of texts whole, so a vector that holds a
# long text is never read (a 300 x 1 MB store: one 512 MiB vector) and its rows are candidates.
_SQL = f"""
SELECT thread_id, ordinal, {", ".join(f"sig[{w + 1}] AS g{w}" for w in range(_WORDS))}
FROM (
    SELECT thread_id, ordinal, coalesce({_UDF}(lower(content)), {_NONE}) AS sig
    FROM {{messages}} WHERE ({{signed}}) AND thread_id IN (SELECT thread_id FROM threads)
    UNION ALL
    SELECT thread_id, ordinal, {_ALL}
    FROM {{messages}} WHERE NOT ({{signed}}) AND thread_id IN (SELECT thread_id FROM threads)
)
"""
#: What the stored bits depend on: this query, the signature's definition (the fold, the hash and
#: the twin's code, which the C equals) and DuckDB's `lower()` (its version). Another fingerprint:
#: the index is not read (searches scan) until a load writes it again.
FINGERPRINT = f"{TABLE} sha256:" + hashlib.sha256("\n".join([
    _SQL, repr(sorted(search_grams.FOLD.items())), repr((grams.WORDS, grams.WIDE)),
    inspect.getsource(grams.trigram_bit), inspect.getsource(grams.signature), duckdb.__version__,
]).encode()).hexdigest()[:16]


def _signature_column(column):
    """The function the query calls: an Arrow column of lower-cased texts -> their signatures."""
    import pyarrow as pa

    return pa.FixedSizeListArray.from_arrays(search_grams.signatures(column), _WORDS)


def materialize_search_index(con: duckdb.DuckDBPyConnection, threads: list[str] | None = None) -> None:
    """(Re)write `search_index` on `con`: whole, or the rows of `threads` (an incremental load)."""
    con.create_function(_UDF, _signature_column, ["VARCHAR"], f"UBIGINT[{_WORDS}]", type="arrow",
                        side_effects=False)
    ((database,),) = con.execute("SELECT current_database()").fetchall()
    messages = '"' + database.replace('"', '""') + '".main.messages'  # (a name DuckDB gave)
    ranges = _signed_ranges(con, messages)
    signed = " OR ".join(["rowid BETWEEN ? AND ?"] * len(ranges)) if ranges is not None else "TRUE"
    params = [b for r in ranges or () for b in r]
    try:
        write_derived_table(con, TABLE, _SQL.format(messages=messages, signed=signed), params * 2, FINGERPRINT, threads)
    finally:
        con.remove_function(_UDF)


def _signed_ranges(con: duckdb.DuckDBPyConnection, messages: str) -> list[tuple[int, int]] | None:
    """The rowid ranges of `messages` whose texts are read and signed: None (all of them) when no
    text is longer than `SIGNED_CHARS`, else the stretches at least a vector away from every such
    text (a vector holding it lies within `VECTOR_ROWS` - 1 rows of it), the `MAX_RANGES` longest.

    >>> _stretches([5000], 9999)
    [(0, 2952), (7048, 9999)]
    """
    long_rows = [r for (r,) in con.execute(
        f"SELECT rowid FROM {messages} WHERE content_chars > {SIGNED_CHARS} ORDER BY rowid").fetchall()]
    if not long_rows:
        return None
    ((top,),) = con.execute(f"SELECT coalesce(max(rowid), -1) FROM {messages}").fetchall()
    return sorted(sorted(_stretches(long_rows, top), key=lambda r: r[0] - r[1])[:MAX_RANGES]) or [(-1, -1)]


def _stretches(long_rows: list[int], top: int) -> list[tuple[int, int]]:
    """The rowid ranges of 0..`top` no vector of which can hold a row of `long_rows` (sorted)."""
    out, start = [], 0
    for row in long_rows:
        if row - VECTOR_ROWS >= start:
            out.append((start, row - VECTOR_ROWS))
        start = max(start, row + VECTOR_ROWS)
    if start <= top:
        out.append((start, top))
    return out


def current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con`'s database has the index as this code writes it."""
    return table_comments(con, [TABLE]).get(TABLE) == FINGERPRINT


def candidate_sql(required: list[tuple[int, ...]], alias: str = "s") -> tuple[str, list]:
    """`(sql, params)`: the row's signature holds every bit of one of the `required` signatures
    (`search_grams.required`, one a spelling); words without a bit are not tested."""
    alternatives, params = [], []
    for bits in required:
        tests = []
        for w, word in enumerate(bits):
            if word:
                tests.append(f"({alias}.g{w} & ?::UBIGINT) = ?::UBIGINT")
                params += [word, word]
        alternatives.append(" AND ".join(tests) or "TRUE")
    if len(alternatives) == 1:
        return f"({alternatives[0]})", params
    return "(" + " OR ".join(f"({a})" for a in alternatives) + ")", params
