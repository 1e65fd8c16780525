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
#: Characters of content fetched, signed and written at a time: whole threads up to the one
#: that reaches past a multiple of it (so at most twice as many), a thread holding more in parts
#: of its own. At most 4 bytes a character, a batch stays within the loader's `INSERT_BYTES`
#: (64 MiB): a full load commits its index a slice at a time, as it commits its messages, and
#: never holds a whole store's texts at once.
BATCH_CHARS = 8 << 20

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


def _offsets(strings):
    """The byte offsets of `strings`' values (an Arrow string array): len(strings) + 1 of them."""
    import numpy as np
    import pyarrow as pa

    wide = strings.type in (pa.large_string(), pa.large_utf8())
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64 if wide else np.int32)
    return offsets[strings.offset: strings.offset + len(strings) + 1]


def _codepoints(strings):
    """Every character of `strings` (an Arrow string array without nulls), one after another."""
    import numpy as np

    offsets = _offsets(strings)
    first, last = int(offsets[0]), int(offsets[-1])
    if last == first:
        return np.zeros(0, np.uint32)
    data = memoryview(strings.buffers()[2])[first:last]
    return np.frombuffer(str(data, "utf-8").encode("utf-32-le"), dtype=np.uint32)


#: UTF-8 bytes signed in one vectorised pass: consecutive texts up to this many, a longer text
#: alone and a window of it at a time. A pass holds ~40 bytes a character (the characters as
#: UTF-32, folded, hashed, and two 64-bit words each), so a load's index stays under ~100 MB
#: whatever its messages' sizes.
SIGN_BYTES = 2 << 20


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
    low, high = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    offsets = _offsets(filled)
    start = 0
    while start < n:
        # The texts from `start` whose bytes fit in SIGN_BYTES; one text over it alone.
        stop = int(np.searchsorted(offsets, offsets[start] + SIGN_BYTES, side="right")) - 1
        if stop <= start:
            low[start], high[start] = _long_signature(filled, start)
            start += 1
            continue
        group = filled.slice(start, stop - start)
        counted = pc.utf8_length(group)  # (no NULL: its values buffer read as is, no pandas)
        lengths = np.frombuffer(counted.buffers()[1], dtype=np.int64 if counted.type == pa.int64() else np.int32)[
            counted.offset: counted.offset + len(counted)].astype(np.int64)
        low[start:stop], high[start:stop] = _signed(_codepoints(group), lengths)
        start = stop
    return low, high


def _long_signature(strings, i: int):
    """The signature of `strings[i]`, a text of more than SIGN_BYTES bytes: the OR of its windows'
    (each window carries the two characters before it, so every trigram is in one window)."""
    import numpy as np

    offsets = _offsets(strings)
    first, last = int(offsets[i]), int(offsets[i + 1])
    data = memoryview(strings.buffers()[2]).cast("B")
    low, high = np.uint64(0), np.uint64(0)
    carry = np.zeros(0, np.uint32)
    at = first
    while at < last:
        end = min(at + SIGN_BYTES, last)
        while end < last and data[end] & 0xC0 == 0x80:  # (a window ends before a character's first byte)
            end -= 1
        cps = np.concatenate([carry, np.frombuffer(str(data[at:end], "utf-8").encode("utf-32-le"), dtype=np.uint32)])
        lo, hi = _signed(cps, np.array([len(cps)], np.int64))
        low |= lo[0]
        high |= hi[0]
        carry = cps[-2:]
        at = end
    return low, high


def _signed(cps, lengths):
    """(low, high) of consecutive texts given as their characters `cps` (UTF-32, one text after
    another) and each text's length in characters."""
    import numpy as np

    n = len(lengths)
    low, high = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
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


_INSERT_SQL = (
    f"INSERT INTO {TABLE} SELECT thread_id, ordinal, role, ts, "
    "(CAST(high AS UHUGEINT) << CAST(64 AS UHUGEINT)) | CAST(low AS UHUGEINT), content FROM tl_search_rows"
)
# The threads at which a batch ends: each whose content, counted in thread order, reaches past
# a multiple of BATCH_CHARS characters, and whether it alone holds more. (From `content_chars`:
# `content` itself is read only by the batches.)
_CUTS_SQL = """
WITH per_thread AS (
    SELECT thread_id, sum(coalesce(content_chars, 0)) AS size FROM messages GROUP BY thread_id
), sized AS (
    SELECT thread_id, size, sum(size) OVER (ORDER BY thread_id ROWS UNBOUNDED PRECEDING) AS upto FROM per_thread
)
SELECT thread_id, size > {size} FROM sized WHERE upto // {size} > (upto - size) // {size} ORDER BY thread_id
"""
# Within one thread: the messages at which a batch ends, the same way.
_THREAD_CUTS_SQL = """
SELECT ordinal FROM (
    SELECT ordinal, coalesce(content_chars, 0) AS size,
           sum(coalesce(content_chars, 0)) OVER (ORDER BY ordinal ROWS UNBOUNDED PRECEDING) AS upto
    FROM messages WHERE thread_id = ?
)
WHERE upto // {size} > (upto - size) // {size} ORDER BY ordinal
"""


def materialize_text_index(con, threads: list[str] | None = None) -> None:
    """(Re)write `search_text` on `con`: whole, or only `threads`' rows (an incremental load,
    inside `analytics.db.only_threads`, where `messages` shows only those threads). A table
    written by another definition is rebuilt whole either way. Not on a Parquet dataset's
    tables (`_in_dataset`): none is written there, and the dataset's searches read every message."""
    if _in_dataset(con):
        con.execute(f"DROP TABLE IF EXISTS {TABLE}").fetchall()
        return
    if threads is not None and table_comments(con, [TABLE]).get(TABLE) == fingerprint():
        con.execute(f"DELETE FROM {TABLE} WHERE thread_id IN (SELECT unnest(?::VARCHAR[]))", [threads]).fetchall()
        for thread in sorted(set(threads)):
            _write_thread(con, thread)
        return
    with every_thread(con):
        columns = ", ".join(c.ddl() for c in SEARCH_TEXT.columns)
        con.execute(f"CREATE OR REPLACE TABLE {TABLE} ({columns})").fetchall()
        after = None
        for thread, alone_over in con.execute(_CUTS_SQL.format(size=int(BATCH_CHARS))).fetchall():
            if alone_over:
                _write_batch(con, *_between(after, thread, inclusive=False))
                _write_thread(con, thread)
            else:
                _write_batch(con, *_between(after, thread, inclusive=True))
            after = thread
        _write_batch(con, *_between(after, None, inclusive=True))
    con.execute(f"COMMENT ON TABLE {TABLE} IS '{fingerprint()}'").fetchall()


def _between(after: str | None, upto: str | None, inclusive: bool) -> tuple[str, list]:
    """The predicate of the threads after `after` up to `upto` (None: no bound), with its parameters."""
    clauses, params = ["TRUE"], []
    if after is not None:
        clauses.append("thread_id > ?")
        params.append(after)
    if upto is not None:
        clauses.append("thread_id <= ?" if inclusive else "thread_id < ?")
        params.append(upto)
    return " AND ".join(clauses), params


def _write_thread(con, thread: str) -> None:
    """One thread's messages, BATCH_CHARS of content at a time (a longer message alone with those before it)."""
    cuts = [o for (o,) in con.execute(_THREAD_CUTS_SQL.format(size=int(BATCH_CHARS)), [thread]).fetchall()]
    for after, upto in zip([None, *cuts], [*cuts, None]):
        where, params = "thread_id = ?", [thread]
        if after is not None:
            where, params = where + " AND ordinal > ?", [*params, after]
        if upto is not None:
            where, params = where + " AND ordinal <= ?", [*params, upto]
        _write_batch(con, where, params)


def _write_batch(con, where: str, params: list) -> None:
    """The messages of `messages` (the table itself, not a narrowed view) that `where` keeps, into
    `search_text`: one statement at a time on `con`, which may hold the load's open transaction.

    Their content is read by a query of its own that projects no column `where` tests: DuckDB
    then reads the content of the rows the filter kept, and no other, where a scan projecting a
    filtered column reads the content of every row of each 2,048-row vector it touches (300
    messages of 1 MB: a 512 MB allocation, over a load's 256 MB limit). Both queries scan the
    table in its stored order (DuckDB keeps insertion order), so their rows pair up one to one.
    """
    import pyarrow.compute as pc

    ((database,),) = con.execute("SELECT current_database()").fetchall()
    table = '"' + database.replace('"', '""') + '".main.messages'  # (a name DuckDB gave)
    keys = con.sql(f"SELECT thread_id, ordinal, role, ts FROM {table} WHERE {where}", params=params).to_arrow_table()
    if not keys.num_rows:
        return
    content = con.sql(f"SELECT content FROM {table} WHERE {where}", params=params).to_arrow_table().column(0)
    if len(content) != keys.num_rows:
        raise RuntimeError(f"{TABLE}: two reads of the same messages gave {keys.num_rows} and {len(content)} rows")
    rows = keys.append_column("content", content)
    if content.null_count:
        rows = rows.filter(pc.is_valid(content))
    _insert(con, rows)


def _in_dataset(con) -> bool:
    """Whether `con` computes a Parquet dataset's tables (Parquet has no 128-bit integer): its
    working database (`loaders.dataset.WORK_DB`, exported to Parquet after the load), or the
    views over a version's parts on which a distributed load computes them (`messages` a view)."""
    from pathlib import Path

    from loaders.dataset import WORK_DB

    ((path,),) = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    # (a full load writes `<db>.tmp-<pid>-<n>` beside its target and renames it: `loaders.writer`)
    if path is not None and (Path(path).name == WORK_DB or Path(path).name.startswith(f"{WORK_DB}.tmp-")):
        return True
    kind = con.execute(
        "SELECT table_type FROM information_schema.tables WHERE table_catalog = current_database() "
        "AND table_schema = 'main' AND table_name = 'messages'"
    ).fetchall()
    return kind != [("BASE TABLE",)]


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
