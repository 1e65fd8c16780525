"""What an erasure keeps of the text it looked for: keyed digests, never the text, so that a later erasure finds it again.

An erasure takes what it looks for (`analytics.erasure.scan.Needles`: windows of the erased
threads' messages and metadata values, the stretches the workspace quoted) from the database
before the rows go. Run again once they are gone, it would have nothing to look for, and would
say "0 files hold erased text" while an export it named the first time, a workspace backup, or
a note written since from a copy still held it. So each erasure keeps, under its tombstone,
the digests of each text in each form the scan looks for (UTF-8, JSON-escaped, CSV-quoted:
`keep`): BLAKE2b keyed by the workspace's own random `erasure_key`, of the bytes with ASCII
letters in lower case, with the text's length and a 32-bit keyed fingerprint of its first 8
bytes. Every erasure reads those of the standing tombstones (`standing`) and searches the
files it does not rewrite — the workspaces and their backups, the export files — for them
(`recovered`): the fingerprint of every 8-byte window of a file at once (NumPy), each window
whose fingerprint is one of theirs confirmed by the digest of the bytes at a kept length. The
bytes confirmed are text to look for and to mask, as if read from the rows; the caller drops
those a kept thread says now (`unsaid`: the same customer's mail in a new thread is not
erased text).

Found again is what the scan looked for, whole (a 48-character window, a metadata value, a
quote the workspace held), never a shorter part of it. A reader of the workspace can confirm
a guess of an erased text against the digests (their key is beside them), never read one
from them.

>>> fold(b"Zed@X.org")
b'zed@x.org'
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import secrets
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from analytics.erasure.said import said_sql
from analytics.erasure.scan import NotRegular, Place, _open_regular, forms

#: The bytes a fingerprint reads: the scan's shortest text (8 characters) has at least as many.
PREFIX = 8
#: The `workspace` key holding the digests' key (64 hex digits).
KEY = "erasure_key"
#: What is searched for the digests: the files an erasure does not rewrite.
SEARCHED = ("workspace", "workspace backup", "export")
_CHUNK = 1 << 22  # bytes of a file fingerprinted at once
_MASK = (1 << 64) - 1
_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))


def fold(data: bytes) -> bytes:
    """`data` with its ASCII letters in lower case (any other byte as it is)."""
    return data.translate(_LOWER)


def _key(conn: sqlite3.Connection, make: bool) -> bytes | None:
    row = conn.execute("SELECT value FROM workspace WHERE key = ?", (KEY,)).fetchone()
    if row is not None:
        return bytes.fromhex(row[0])
    if not make:
        return None
    key = secrets.token_bytes(32)
    conn.execute("INSERT INTO workspace (key, value) VALUES (?, ?)", (KEY, key.hex()))
    return key


def _mixers(key: bytes) -> tuple[int, int]:
    """The fingerprint's two 64-bit constants, from the key (the second odd: a bijection of 64 bits)."""
    h = hashlib.blake2b(b"prefix", key=key, digest_size=16).digest()
    return int.from_bytes(h[:8], "little"), int.from_bytes(h[8:], "little") | 1


def _fingerprint(mixers: tuple[int, int], head: bytes) -> int:
    """The top 32 bits of (the 8 bytes as a little-endian number XOR a) * m, modulo 2**64."""
    a, m = mixers
    return (((int.from_bytes(head, "little") ^ a) * m) & _MASK) >> 32


def _digest(key: bytes, data: bytes) -> str:
    return hashlib.blake2b(data, key=key, digest_size=16).hexdigest()


def keep(conn: sqlite3.Connection, tombstone_id: int, texts: Iterable[str]) -> int:
    """Record the digests of `texts` (each form) under the tombstone, in the caller's transaction on
    the workspace `conn`; how many rows were new."""
    key = _key(conn, make=True)
    mixers = _mixers(key)
    rows: dict[str, tuple] = {}
    for text in texts:
        for form, raw in forms(text):
            folded = fold(raw)
            if len(folded) >= PREFIX:
                digest = _digest(key, folded)
                rows.setdefault(digest, (tombstone_id, _fingerprint(mixers, folded[:PREFIX]), len(folded), form, digest))
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO erased_digests (tombstone_id, prefix, length, form, digest) "
                     "VALUES (?, ?, ?, ?, ?)", list(rows.values()))
    return conn.total_changes - before


@dataclass(frozen=True)
class Digests:
    """The digests to look for: {fingerprint: ((length, form, digest), …)} and their key."""

    key: bytes
    by_prefix: dict[int, tuple[tuple[int, int, str], ...]]

    def __bool__(self) -> bool:
        return bool(self.by_prefix)


def standing(conn: sqlite3.Connection) -> Digests | None:
    """The digests kept under the standing tombstones of the workspace on `conn`; None when there are none."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'erased_digests'").fetchone() is None:
        return None
    key = _key(conn, make=False)
    if key is None:
        return None
    by_prefix: dict[int, list[tuple[int, int, str]]] = {}
    for prefix, length, form, digest in conn.execute(
            "SELECT DISTINCT d.prefix, d.length, d.form, d.digest FROM erased_digests d "
            "JOIN tombstones t USING (tombstone_id) WHERE t.lifted_at IS NULL ORDER BY 1, 2, 3, 4"):
        by_prefix.setdefault(prefix, []).append((length, form, digest))
    return Digests(key, {p: tuple(v) for p, v in by_prefix.items()}) if by_prefix else None


def _decoded(raw: bytes, form: int) -> str | None:
    """The text `raw` writes in `form`; None when it is not one (a JSON escape cut short)."""
    try:
        if form == 1:
            return json.loads(b'"' + raw + b'"')
        text = raw.decode()
        return text.replace('""', '"') if form == 2 else text
    except ValueError:
        return None


def found_in(data: bytes | mmap.mmap, digests: Digests) -> set[str]:
    """The texts of `digests` that `data` holds (as found there: their case kept)."""
    import numpy as np  # (only an erasure with digests to look for needs it; a load imports this package)

    prefixes = np.array(sorted(digests.by_prefix), dtype=np.uint64)
    # A first filter: which top 24 bits of a fingerprint are some kept one's (one lookup a window).
    table = np.zeros(1 << 24, dtype=bool)
    table[prefixes >> np.uint64(8)] = True
    a, m = (np.uint64(x) for x in _mixers(digests.key))
    longest = max(length for entries in digests.by_prefix.values() for length, _, _ in entries)
    found: set[str] = set()
    for start in range(0, max(len(data) - PREFIX + 1, 0), _CHUNK):
        chunk = fold(bytes(data[start:start + _CHUNK + longest - 1]))
        count = min(_CHUNK, len(chunk) - PREFIX + 1)
        # Every 8 bytes from each position, as one little-endian number (a view, stride 1: no copy).
        words = np.ndarray((count,), dtype="<u8", buffer=chunk, strides=(1,))
        prints = np.bitwise_xor(words, a)
        np.multiply(prints, m, out=prints)
        np.right_shift(prints, np.uint64(32), out=prints)
        near = np.flatnonzero(table[prints >> np.uint64(8)])
        at = np.minimum(np.searchsorted(prefixes, prints[near]), len(prefixes) - 1)
        for i in near[prefixes[at] == prints[near]].tolist():
            for length, form, digest in digests.by_prefix[int(prints[i])]:
                if i + length <= len(chunk) and _digest(digests.key, chunk[i:i + length]) == digest:
                    text = _decoded(bytes(data[start + i:start + i + length]), form)
                    if text:
                        found.add(text)
    return found


def recovered(found: list[Place], digests: Digests | None) -> set[str]:
    """The texts of `digests` held by the places among `found` that are `SEARCHED` (a file that
    cannot be read here holds none: the scan names it)."""
    texts: set[str] = set()
    if not digests:
        return texts
    for place in found:
        if place.what not in SEARCHED:
            continue
        try:
            fd = _open_regular(place.path, place.follow)
        except (NotRegular, OSError):
            continue
        try:
            if os.fstat(fd).st_size == 0:
                continue
            with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
                texts |= found_in(data, digests)
        finally:
            os.close(fd)
    return texts


def unsaid(db: str | os.PathLike | None, texts: set[str], erased: list[str]) -> set[str]:
    """The `texts` no thread of the DuckDB database at `db` but the `erased` says (in any case, in
    its messages or metadata: `analytics.erasure.said`)."""
    if db is None or not texts or not Path(db).exists():
        return texts
    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        said = said_sql(con, "src")
        if said is None:
            return texts
        con.execute("CREATE TEMP TABLE erased (thread_id VARCHAR)")
        con.execute("INSERT INTO erased SELECT DISTINCT unnest(?::VARCHAR[])", [list(erased)])
        kept = {w for (w,) in con.execute(
            f"WITH said AS ({said}) SELECT w FROM unnest(?::VARCHAR[]) AS t(w) WHERE EXISTS (SELECT 1 FROM said s "
            "WHERE contains(lower(s.said), lower(w)) "
            "AND (s.thread_id IS NULL OR s.thread_id NOT IN (SELECT thread_id FROM erased)))",
            [sorted(texts)]).fetchall()}
        return texts - kept
    finally:
        con.close()
