"""Per-thread digests of checkpoint keys: how an incremental load tells which threads changed.

A thread's key text is every `(checkpoint_ns, checkpoint_id)` of it, ordered by
namespace then id, each part length-prefixed (`3:abc`) so that no two key sets
share a text; its digest is the md5 of that text. Every load stores the digest
of each thread it read in `thread_digests`; the next incremental load compares
them with the source's (one value per thread) instead of re-deriving them from
the `checkpoints` table.

>>> digest_text([("", "1ef"), ("", "1f0")])
'0:3:1ef0:3:1f0'
>>> key_digest("0:3:1ef0:3:1f0") == key_digest(digest_text([("", "1f0"), ("", "1ef")]))
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from loaders.catalog import THREAD_DIGESTS
from loaders.source import SourceReader

# The same text as `SqliteReader.key_digests` (DuckDB's VARCHAR order is byte order, as SQLite's BINARY is).
_KEY_TEXT_SQL = (
    "string_agg(length(checkpoint_ns) || ':' || checkpoint_ns || length(checkpoint_id) || ':' || checkpoint_id, '' "
    "ORDER BY checkpoint_ns, checkpoint_id)"
)


def digest_text(keys: Iterable[tuple[str, str]]) -> str:
    """The key text of one thread's `(checkpoint_ns, checkpoint_id)` pairs (any order)."""
    return "".join(f"{len(ns)}:{ns}{len(cid)}:{cid}" for ns, cid in sorted(keys))


def key_digest(text: str) -> str:
    """md5 hex of a key text: what `thread_digests.key_digest` holds."""
    return hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_digests(reader: SourceReader) -> dict[str, str]:
    """{thread_id: key digest} of every thread the source holds now.

    A reader that declares `key_digests` gives one key text per thread (built by its
    database); any other gives its checkpoint keys, grouped here.
    """
    if reader.capabilities.key_digests:
        return {t: key_digest(text) for t, text in reader.key_digests()}
    keys: dict[str, list[tuple[str, str]]] = {}
    for t, ns, cid in reader.checkpoint_keys():
        keys.setdefault(t, []).append((ns, cid))
    return {t: key_digest(digest_text(k)) for t, k in keys.items()}


def stored_digests(con) -> dict[str, str]:
    """{thread_id: key digest} as the database's loads left them."""
    return dict(con.execute(f"SELECT thread_id, key_digest FROM {THREAD_DIGESTS.name}").fetchall())


def write_digests(con, load_id: int, threads: list[str] | None) -> None:
    """Record the digests of what was just loaded, from the `checkpoints` table:
    every thread (`threads` None, a full load) or only these (an incremental load,
    after their rows were replaced; a thread gone from the source loses its row)."""
    table = THREAD_DIGESTS.name
    if threads is None:
        con.execute(f"DELETE FROM {table}").fetchall()
        where, params = "", [load_id]
    else:
        con.execute(f"DELETE FROM {table} WHERE thread_id IN (SELECT unnest(?))", [threads]).fetchall()
        where, params = "WHERE thread_id IN (SELECT unnest(?))", [load_id, threads]
    con.execute(
        f"INSERT INTO {table} SELECT thread_id, md5({_KEY_TEXT_SQL}), ? FROM checkpoints {where} GROUP BY thread_id",
        params,
    ).fetchall()
