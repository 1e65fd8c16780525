"""The load-time text index: which messages a text search needs to read at all.

`search_text` holds, for every message with content, the columns a search reads (thread,
ordinal, role, ts, the content) and `grams`: a 128-bit signature of the content's trigrams,
each trigram of its case-folded characters setting one bit. A message that contains a text (as
`analytics.text_match` finds it) has every bit of that text's trigrams, so a search keeps the
rows whose `grams` hold the bits of the text's NFC or NFD spelling, then runs the same RE2
test over their content: the index only chooses what the scan reads, the answer is the scan's.

Case folding, per character, constant on each class of characters RE2's `(?i)` matches alike
(Unicode simple case folding; `tests/analytics/test_text_index.py` checks every cased
character against DuckDB's RE2): Python's lower case of the character (one character), then
`_MERGE` for the few a class holds more lower cases of (ſ and s, ς and σ, ϑ and θ, …), and
İ as i (the `[iIİ]` of `text_match`). A text of fewer than three characters has no trigram:
its search reads every message (`masks` is None).

Why a signature column read beside a copy of the content, not a posting list joined with
`messages`: DuckDB reads a column's values only for the rows a scan filter on an earlier
column kept, so the signature test (one expression on one column) keeps the content of
non-candidates unread, while any join back to `messages` (by thread and ordinal, or rowid)
reads every row of it (docs/scale.md, "10M messages: the query side", has the figures).

>>> masks("refund") is not None, masks("e")
(True, None)
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata

from analytics.catalog import SEARCH_TEXT
from analytics.db import every_thread, table_comments

TABLE = SEARCH_TEXT.name
#: Messages fetched, signed and written at a time by a full rebuild.
BATCH_ROWS = 200_000

# Lower cases RE2 matches alike: each left character folds to the one below it.
_SRC = "\u017f\xb5\u0345\u1fbe\u03d0\u03f5\u03d1\u03f0\u03d6\u03f1\u03c2\u03d5\u1c80\u1c81\u1c82\u1c83\u1c84\u1c85\u1c86\u1c87\u1c88\u1e9b"
_DST = "s\u03bc\u03b9\u03b9\u03b2\u03b5\u03b8\u03ba\u03c0\u03c1\u03c3\u03c6\u0432\u0434\u043e\u0441\u0442\u0442\u044a\u0463\ua64b\u1e61"
_MERGE = dict(zip(_SRC, _DST))
# Multipliers of the trigram hash (32-bit, wrapping); the top 7 bits of the product choose the bit.
_K = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F)
#: Characters (code points) below which the fold table is computed; none above has a case.
_CASED_BELOW = 0x20000


def fold(char: str) -> str:
    """The one character `char` is indexed as.

    >>> [fold(c) for c in "AßẞſΣςİK"]
    ['a', 'ß', 'ß', 's', 'σ', 'σ', 'i', 'k']
    """
    if char == "\u0130":
        return "i"
    low = char.lower()
    if len(low) != 1:
        return char
    return _MERGE.get(low, low)


@functools.cache
def _fold_table():
    import numpy as np

    table = np.arange(0x110000, dtype=np.uint32)
    for code in range(_CASED_BELOW):
        if not 0xD800 <= code < 0xE000:
            table[code] = ord(fold(chr(code)))
    return table


def _codepoints(strings):
    """Every character of `strings` (an Arrow string array without nulls), one after another."""
    import numpy as np
    import pyarrow as pa

    wide = strings.type in (pa.large_string(), pa.large_utf8())
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64 if wide else np.int32)
    first, last = int(offsets[strings.offset]), int(offsets[strings.offset + len(strings)])
    if last == first:
        return np.zeros(0, np.uint32)
    data = memoryview(strings.buffers()[2])[first:last]
    return np.frombuffer(str(data, "utf-8").encode("utf-32-le"), dtype=np.uint32)


def signatures(texts):
    """(low, high) 64-bit halves of each text's signature (an Arrow string array; NULL and texts
    of fewer than three characters: 0). Vectorised: ~1 s a million 75-character messages."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = pa.array(texts, pa.string())
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    n = len(texts)
    # (a load's texts hold no NULL: filling them would make a scalar, and pyarrow imports pandas for that)
    filled = texts if texts.null_count == 0 else pc.fill_null(texts, "")
    counted = pc.utf8_length(filled)  # (no NULL left: its values buffer read as is, no pandas)
    lengths = np.frombuffer(counted.buffers()[1], dtype=np.int64 if counted.type == pa.int64() else np.int32)[
        counted.offset: counted.offset + len(counted)].astype(np.int64)
    low, high = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    cps = _codepoints(filled)
    total = len(cps)
    if total < 3:
        return low, high
    cps = _fold_table()[cps]
    k1, k2, k3, k4 = (np.uint32(k) for k in _K)
    h = cps[:-2] * k1
    h ^= cps[1:-1] * k2
    h ^= cps[2:] * k3
    h *= k4
    bit = h >> np.uint32(25)
    ones = np.uint64(1) << np.arange(64, dtype=np.uint64)
    zeros = np.zeros(64, np.uint64)
    lo_bits, hi_bits = np.concatenate([ones, zeros])[bit], np.concatenate([zeros, ones])[bit]
    # A trigram starting in a text's last two characters runs into the next text: not one of its own.
    ends = np.cumsum(lengths)
    cut = np.concatenate([ends[lengths >= 2] - 2, ends[lengths >= 1] - 1])
    cut = cut[cut < total - 2]
    lo_bits[cut] = 0
    hi_bits[cut] = 0
    has = lengths >= 3
    starts = (ends - lengths)[has]
    low[has] = np.bitwise_or.reduceat(lo_bits, starts)
    high[has] = np.bitwise_or.reduceat(hi_bits, starts)
    return low, high


def masks(text: str) -> list[int] | None:
    """The signature bits a message must hold to contain `text`: one mask per spelling (NFC, and
    NFD when it differs; a message holds either); None when a spelling has no trigram (under three
    characters): the index cannot narrow such a search.

    >>> len(masks("café")), len(masks("cafe"))
    (2, 1)
    """
    nfc = unicodedata.normalize("NFC", text)
    nfd = unicodedata.normalize("NFD", nfc)
    spellings = [nfc] if nfd == nfc else [nfc, nfd]
    if any(len(s) < 3 for s in spellings):
        return None
    low, high = signatures(spellings)
    return [(int(h) << 64) | int(lo) for lo, h in zip(low, high)]


def grams_where(text: str, alias: str | None = None) -> str | None:
    """SQL: a `search_text` row may contain `text` (its signature holds a spelling's bits); None
    when the index cannot narrow the search. The masks are integers computed here (no data).

    >>> grams_where("ab") is None
    True
    """
    found = masks(text)
    if found is None:
        return None
    column = f"{alias}.grams" if alias else "grams"
    return "(" + " OR ".join(f"({column} & {m}::UHUGEINT) = {m}::UHUGEINT" for m in sorted(set(found))) + ")"


@functools.cache
def fingerprint() -> str:
    """The comment `search_text` carries: a digest of everything that decides its bits."""
    what = repr((SEARCH_TEXT.names, _SRC, _DST, _K, _CASED_BELOW, unicodedata.unidata_version, "trigrams-128"))
    return f"{TABLE} sha256:" + hashlib.sha256(what.encode()).hexdigest()[:32]


def current(con) -> bool:
    """Whether `con`'s database holds a `search_text` table written by this definition (a base
    table: a Parquet dataset's views carry no index, its searches read every message)."""
    rows = con.execute(
        "SELECT comment FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = ?", [TABLE]
    ).fetchall()
    return bool(rows) and rows[0][0] == fingerprint()


_ROWS_SQL = "SELECT thread_id, ordinal, role, ts, content FROM messages WHERE content IS NOT NULL"
_INSERT_SQL = (
    f"INSERT INTO {TABLE} SELECT thread_id, ordinal, role, ts, "
    "(CAST(high AS UHUGEINT) << CAST(64 AS UHUGEINT)) | CAST(low AS UHUGEINT), content FROM tl_search_rows"
)


def materialize_text_index(con, threads: list[str] | None = None) -> None:
    """(Re)write `search_text` on `con`: whole, or only `threads`' rows (an incremental load,
    inside `analytics.db.only_threads`, where `messages` shows only those threads). A table
    written by another definition is rebuilt whole either way."""
    if _dataset_work(con):
        # A Parquet dataset's working database: its views carry no index (Parquet has no
        # 128-bit integer), so it is not written there and the dataset's searches read every message.
        con.execute(f"DROP TABLE IF EXISTS {TABLE}").fetchall()
        return
    if threads is not None and table_comments(con, [TABLE]).get(TABLE) == fingerprint():
        con.execute(f"DELETE FROM {TABLE} WHERE thread_id IN (SELECT unnest(?::VARCHAR[]))", [threads]).fetchall()
        _insert(con, con.sql(_ROWS_SQL).to_arrow_table())
        return
    with every_thread(con):
        columns = ", ".join(c.ddl() for c in SEARCH_TEXT.columns)
        con.execute(f"CREATE OR REPLACE TABLE {TABLE} ({columns})").fetchall()
        ((last,),) = con.execute("SELECT coalesce(max(rowid), -1) FROM messages").fetchall()
        # In rowid ranges, in the messages' order (a load writes them in thread order): one
        # statement at a time on `con`, which may hold the load's open transaction.
        for start in range(0, last + 1, BATCH_ROWS):
            rows = con.sql(_ROWS_SQL + f" AND rowid >= {start} AND rowid < {start + BATCH_ROWS}").to_arrow_table()
            _insert(con, rows)
    con.execute(f"COMMENT ON TABLE {TABLE} IS '{fingerprint()}'").fetchall()


def _dataset_work(con) -> bool:
    from pathlib import Path

    from loaders.dataset import WORK_DB

    ((path,),) = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return path is not None and Path(path).name == WORK_DB


def _insert(con, rows) -> None:
    if not rows.num_rows:
        return
    low, high = signatures(rows.column("content"))
    import pyarrow as pa

    # Wrapped as buffers: `pa.array` of a NumPy array imports pandas, which a load never needs.
    rows = rows.append_column("low", pa.Array.from_buffers(pa.uint64(), len(low), [None, pa.py_buffer(low)]))
    rows = rows.append_column("high", pa.Array.from_buffers(pa.uint64(), len(high), [None, pa.py_buffer(high)]))
    con.register("tl_search_rows", rows)
    try:
        con.execute(_INSERT_SQL).fetchall()
    finally:
        con.unregister("tl_search_rows")


def text_grams(con, text: str | None) -> str | None:
    """`grams_where(text)` when `con`'s index is current, else None (the text read in every message)."""
    if not text or not current(con):
        return None
    return grams_where(text)
