"""The text search index: `search_index`, written at load time, read by `analytics.search`.

One row per message with what a search reads of it — thread, tenant, ordinal, role, name, ts,
message id, content —
and the trigram signature of its folded text (`analytics.search_grams`: four 64-bit words). A
search for a text of three characters or more keeps the rows whose signature holds the text's
bits (a few integer tests per row), and runs its exact match (`analytics.text_match`, the
masking barrier included) on those rows only; so it finds exactly what a scan of `messages`
finds, in a fraction of the time. A shorter text, a search of tool calls, or a database whose
index was written by another definition (`FINGERPRINT`) is a scan of `messages`, as before.

The table is a derived table (`analytics.derived`): rebuilt whole by a full load, rewritten for
the replaced threads by an incremental load (`analytics.db.write_derived_table`), emptied of an
erased thread's rows by an erasure (it has a `thread_id` column: `analytics.erasure_db`), and
shadowed by a tenant scope's view like every table (`analytics.policy`). Its rows are in thread
order, as `messages`', so a thread or tenant filter skips row groups.

>>> candidate_sql([(1, 0, 0, 2)], "m")
('((m.g0 & ?::UBIGINT) = ?::UBIGINT AND (m.g3 & ?::UBIGINT) = ?::UBIGINT)', [1, 1, 2, 2])
"""

from __future__ import annotations

import hashlib

import duckdb

from analytics import search_grams
from analytics.catalog import SEARCH_INDEX
from analytics.db import table_comments, write_derived_table

TABLE = SEARCH_INDEX.name
_UDF = "tl_trigram_signature"
_COLUMNS = ", ".join(SEARCH_INDEX.names)
_SQL = f"""
SELECT thread_id, tenant_id, ordinal, role, name, ts, message_id, content,
       sig[1] AS g0, sig[2] AS g1, sig[3] AS g2, sig[4] AS g3
FROM (SELECT *, {_UDF}(lower(content)) AS sig FROM messages)
ORDER BY thread_id, ordinal
"""
#: What the stored bits depend on: this query, the signature's definition (the fold, the hash, the
#: twin's code, which the C equals) and DuckDB's `lower()` (its version). Another fingerprint:
#: the index is not read (searches scan) until a load writes it again.
FINGERPRINT = f"{TABLE} sha256:" + hashlib.sha256("\n".join([
    _SQL, repr(sorted(search_grams.FOLD.items())), repr((search_grams.WORDS, search_grams.WIDE)),
    search_grams.trigram_bit.__code__.co_code.hex(), search_grams.signature.__code__.co_code.hex(), duckdb.__version__,
]).encode()).hexdigest()[:16]


def _signature_column(column):
    """The UDF: an Arrow column of lower-cased texts -> their signatures (NULL text: no bit)."""
    import pyarrow as pa

    flat = pa.array(search_grams.signatures(column).reshape(-1), type=pa.uint64())
    return pa.FixedSizeListArray.from_arrays(flat, search_grams.WORDS)


def materialize_search_index(con: duckdb.DuckDBPyConnection, threads: list[str] | None = None) -> None:
    """(Re)write `search_index` on `con`: whole, or the rows of `threads` (an incremental load)."""
    con.create_function(_UDF, _signature_column, ["VARCHAR"], f"UBIGINT[{search_grams.WORDS}]",
                        type="arrow", null_handling="special", side_effects=False)
    try:
        write_derived_table(con, TABLE, _SQL, [], FINGERPRINT, threads)
    finally:
        con.remove_function(_UDF)


def current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con`'s database has the index as this code writes it."""
    return table_comments(con, [TABLE]).get(TABLE) == FINGERPRINT


def fetch_by_rowid(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `search_index` on `con` is the table itself, whose rows a query can fetch back by
    `rowid` (a page of hits: DuckDB reads just those rows), rather than a view of it (a tenant
    scope's, a Parquet dataset's), which has no `rowid`."""
    ((views, tables),) = con.execute(
        "SELECT (SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND NOT internal), "
        "(SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND database_name = current_database() "
        "AND schema_name = 'main')", [TABLE, TABLE]).fetchall()
    return views == 0 and tables == 1


def candidate_sql(required: list[tuple[int, ...]], alias: str = "m") -> tuple[str, list]:
    """`(sql, params)`: the row's signature holds every bit of one of the `required` signatures
    (`search_grams.required`; each spelling's); words without a bit are not tested."""
    alternatives, params = [], []
    for bits in required:
        tests = []
        for w, word in enumerate(bits):
            if word:
                tests.append(f"({alias}.g{w} & ?::UBIGINT) = ?::UBIGINT")
                params += [word, word]
        alternatives.append(" AND ".join(tests) or "TRUE")
    return "(" + " OR ".join(f"({a})" for a in alternatives) + ")" if len(alternatives) > 1 else \
        "(" + alternatives[0] + ")", params
