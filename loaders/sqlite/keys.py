"""Keys in a SQLite store: their sizes measured and their order taken in SQL, as the file has them.

- **Key sizes** are capped (`records.KEY_MAX_BYTES`, UTF-8 bytes in every file
  encoding) in SQL (`KeySql`): a checkpoint row whose thread_id, checkpoint_ns or
  checkpoint_id is longer is never fetched; it is listed from the primary-key
  index alone, its keys cut to `SHOWN_CHARS` characters, and reported (one
  `load_errors` row per checkpoint row). A longer parent id is taken as none and
  reported, a special write with a longer key is reported and skipped.
- **Order** is the file's: SQLite sorts TEXT by the bytes of the file's encoding
  (BINARY collation), and UTF-16 code units do not sort as code points. Every
  query sorts and compares with an explicit `COLLATE BINARY` (a key column
  declared NOCASE is then sorted instead of read off its index, and such a file
  is not split), and the orders Python relies on come from `Order`. A thread's
  rows must come in strictly increasing key order; an index that says otherwise
  (damage) fails the load with one line naming the threads.

>>> KEY_ORDER
'thread_id COLLATE BINARY, checkpoint_ns COLLATE BINARY, checkpoint_id COLLATE BINARY'
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Iterator

from loaders.bundles import BadText, shown
from loaders.records import KEY_MAX_BYTES, max_blob_bytes, oversized_tag_sql

# Keys are always sorted and compared by SQLite's BINARY collation, whatever a column
# declares (see the module docstring): on a BINARY index this costs nothing.
THREAD = "thread_id COLLATE BINARY"
KEY_ORDER = f"{THREAD}, checkpoint_ns COLLATE BINARY, checkpoint_id COLLATE BINARY"
CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id")
WRITE_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id")
SHOWN_CHARS = 64  # how much of an oversized key `load_errors` shows
# The text encodings of a SQLite file, as Python codecs (None: UTF-8, where str order is the file's).
CODECS = {"UTF-8": None, "UTF-16le": "utf-16-le", "UTF-16be": "utf-16-be"}
NOTHING = object()  # no thread yet
thread_of = operator.itemgetter(0)  # rows grouped by thread id (a C call per row, not a lambda's frame)


def decode_text(raw: bytes) -> str:
    """TEXT as the reader's connections decode it: a value that is not UTF-8 becomes a `BadText`."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        bad = BadText(raw.decode("utf-8", "replace"))
        bad.raw = raw
        return bad


def one_step_digests(con: sqlite3.Connection, per_thread: str) -> Iterator[tuple[str, str]]:
    """`per_thread`'s (text thread_id, keys) rows of a UTF-8 file, fetched as one value.

    Each row fetched is a step that takes the GIL again; beside a thread that imports
    (an incremental load imports pyarrow and the derived tables' queries meanwhile) each
    waited out a switch interval, 2,000 rows 0.1-0.2 s. One value is one step: SQLite
    builds it with the GIL released. Each part is length-prefixed in bytes (`5:abcde`), the
    thread id then its keys, decoded as the connection decodes text.
    """
    sql = (f"SELECT CAST(group_concat(length(CAST(thread_id AS BLOB)) || ':' || thread_id "
           f"|| length(CAST(ifnull(keys, '') AS BLOB)) || ':' || ifnull(keys, ''), '') AS BLOB) "
           f"FROM ({per_thread}) WHERE typeof(thread_id) = 'text'")
    blob = con.execute(sql).fetchone()[0] or b""
    at, end = 0, len(blob)
    parts: list[str] = []
    while at < end:
        colon = blob.index(b":", at)
        size = int(blob[at:colon])
        parts.append(decode_text(blob[colon + 1:colon + 1 + size]))
        at = colon + 1 + size
    # (A thread id that is not UTF-8 is never a key: `BadText`, left out as from the rows.)
    return ((t, k) for t, k in zip(parts[0::2], parts[1::2]) if type(t) is str)


def utf8_size(codec: str, raw: bytes) -> int:
    """The UTF-8 size of UTF-16 text given as its bytes (`tl_utf8_size` in SQL)."""
    try:
        return len(raw.decode(codec, "surrogatepass").encode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:  # an odd byte out: as the text reads back
        return len(raw.decode(codec, "replace").encode("utf-8"))


def value_size(col: str) -> str:
    """SQL of a stored value's size in bytes: of a BLOB, read from its record header without
    loading it (SQLite's length() of a column), so a value over `records.max_blob_bytes()`
    is never read; text (not what a saver writes) is measured as its bytes."""
    return f"(CASE WHEN typeof({col}) = 'blob' THEN length({col}) ELSE ifnull(length(CAST({col} AS BLOB)), 0) END)"


def capped_value(col: str) -> str:
    """SQL of the type column and `col`, the value, with a value over `records.max_blob_bytes()`
    replaced by the oversized marker (`records.oversized_tag_sql`) and NULL."""
    size, cap = value_size(col), max_blob_bytes()
    return f"{oversized_tag_sql(size, 'type', cap)}, CASE WHEN {size} > {cap} THEN NULL ELSE {col} END"


class KeySql:
    """SQL measuring key values in UTF-8 bytes (the unit of `KEY_MAX_BYTES`) without
    fetching them. In a UTF-8 file that is their stored size; UTF-16 text takes 1/2 to
    3/2 of its stored size in UTF-8, so only a stored size in between is measured, by
    `tl_utf8_size` (Python, on a value of at most 8 kB)."""

    def __init__(self, codec: str | None) -> None:
        self.codec = codec

    def size(self, col: str) -> str:
        stored = f"ifnull(length(CAST({col} AS BLOB)), 0)"
        if self.codec is None:
            return stored
        return f"(CASE WHEN typeof({col}) = 'text' THEN tl_utf8_size(CAST({col} AS BLOB)) ELSE {stored} END)"

    def fits(self, col: str) -> str:
        stored = f"ifnull(length(CAST({col} AS BLOB)), 0)"
        if self.codec is None:
            return f"{stored} <= {KEY_MAX_BYTES}"
        return (
            f"(CASE WHEN typeof({col}) <> 'text' THEN {stored} <= {KEY_MAX_BYTES} "
            f"WHEN {stored} <= {KEY_MAX_BYTES * 2 // 3} THEN 1 WHEN {stored} > {KEY_MAX_BYTES * 2} THEN 0 "
            f"ELSE tl_utf8_size(CAST({col} AS BLOB)) <= {KEY_MAX_BYTES} END)"
        )

    def all_fit(self, cols: tuple[str, ...]) -> str:
        return " AND ".join(self.fits(c) for c in cols)


class Order:
    """Where key values sort in one file, as SQLite sorts them: NULL, numbers, text, BLOBs;
    text by the bytes of the file's encoding (BINARY collation).

    >>> Order("utf-16-le").before("\u4e2d", "a"), Order(None).before("\u4e2d", "a")
    (True, False)
    """

    __slots__ = ("codec",)

    def __init__(self, codec: str | None) -> None:
        self.codec = codec

    def stored(self, text: str) -> bytes | None:
        """The bytes of `text` in the file (None: a `BadText` not representable)."""
        if isinstance(text, BadText):
            if self.codec is None:
                return text.raw
            try:
                return text.raw.decode("utf-8", "surrogatepass").encode(self.codec, "surrogatepass")
            except UnicodeError:
                return None
        return text.encode(self.codec or "utf-8", "surrogatepass")

    def key(self, value) -> tuple | None:
        if value is None:
            return (0, 0)
        if isinstance(value, (int, float)):
            return (1, value)
        if isinstance(value, bytes):
            return (3, value)
        stored = self.stored(value)
        return None if stored is None else (2, stored)

    def before(self, a, b) -> bool | None:
        """Whether `a` sorts strictly before `b` (None: cannot tell). Runs once per thread."""
        if self.codec is None and type(a) is str and type(b) is str:
            return a < b
        ka, kb = self.key(a), self.key(b)
        return None if ka is None or kb is None else ka < kb


def cut(prefix, was_cut) -> str | None:
    """A key cut to its first `SHOWN_CHARS` characters, as `load_errors` shows it."""
    key = shown(prefix)
    return f"{key}…" if was_cut and key is not None else key
