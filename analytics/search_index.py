"""The text search index: `search_index`, written at load time, read by `analytics.search`.

One row per message: its key (thread, ordinal) and the trigram signature of its folded text
(`analytics.search_grams`: four 64-bit words), not the text again. A search for a text of three
characters or more takes the keys whose signature holds the text's bits (a few integer tests a
row), joins them to `messages`, and runs its exact match (`analytics.text_match`, the masking
barrier included) on those rows only; so it finds exactly what a scan of `messages` finds. A
text longer than `SIGNED_BYTES` is not signed: all its bits are set, so it is a candidate of
every search (its exact match decides), and signing never holds more than a vector of such
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
#: Texts longer than this (bytes) are not signed: every bit set, a candidate of every search.
SIGNED_BYTES = 16 << 10
_UDF = "tl_trigram_signature"
_WORDS = search_grams.WORDS
_NONE = "[" + ", ".join(["0"] * _WORDS) + f"]::UBIGINT[{_WORDS}]"
_ALL = "[" + ", ".join([str((1 << 64) - 1)] * _WORDS) + f"]::UBIGINT[{_WORDS}]"
# (CASE runs the function on the rows of its branch only: a long text is never lower-cased or copied)
_SQL = f"""
SELECT thread_id, ordinal, {", ".join(f"sig[{w + 1}] AS g{w}" for w in range(_WORDS))}
FROM (
    SELECT thread_id, ordinal,
           CASE WHEN content IS NULL THEN {_NONE}
                WHEN strlen(content) > {SIGNED_BYTES} THEN {_ALL}
                ELSE {_UDF}(lower(content)) END AS sig
    FROM messages
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
    try:
        write_derived_table(con, TABLE, _SQL, [], FINGERPRINT, threads)
    finally:
        con.remove_function(_UDF)


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
