"""Whether a `-wal` file belongs to the database beside it.

SQLite writes no identity of the database into its WAL: opened beside another database's
file, a `-wal` whose frames are valid is applied to it, and SQLite reports nothing. What
a WAL does carry ties it to its database's history (sqlite.org/fileformat2.html, "The
Write-Ahead Log"; `pager.c` `pagerWalFrames`):

- its header's page size is the database's (a WAL-mode database cannot change it);
- each commit that changes page 1 writes page 1 with the database header's file change
  counter (offset 24) one above the value it read. A WAL restarts (new salts) only once
  every frame was copied into the database, so the database's counter is then the
  counter of the last page 1 written; the first page 1 of the current frames (those
  carrying the header's salts) holds that counter plus one, or, written out early by a
  large transaction, that counter itself; and a checkpoint that copied part of the
  frames leaves the database with the counter of one of them.

Those two are cheap but weak (two stores written alike have the same counters; in WAL mode
SQLite bumps the counter once per connection, not per transaction). The third is the
database's size: each commit frame records the database's size in pages after it, and
SQLite reads the database as that long. The file is never longer than the last commit says
while the WAL is its own (it grows by commits of this WAL, and a checkpoint that copied
every frame truncates it to that size), unless a commit shrank it (VACUUM, auto-vacuum);
so a file longer than the WAL's last commit, whose WAL does not rewrite every page of it
(as VACUUM does), has moved on past this WAL: a stale `-wal` copied from an earlier
checkpoint sequence, which would cut off everything written since (SQLite itself does not
see it: it never compares a WAL with its file). The fourth is SQLite's own: another
database's frames replace pages of this one's b-trees, so the pair reads as malformed. On
a file of up to `CHECK_MAX_BYTES` (the copy a load reads, with its WAL) SQLite's
`quick_check` runs; when it fails and the file without its WAL passes, the WAL is not this
database's.

The WAL's current frames are SQLite's: those after the header carrying its salts, up to
the last commit frame. A frame with other salts (left from an earlier checkpoint sequence:
a restarted WAL is overwritten from its start, not truncated) ends the WAL for SQLite, and
for every count here; a WAL with no current commit is ignored by SQLite, and judged here
only by its header.

So the rule: with the database's counter D and the counters c1, c2, ... of page 1 in
the WAL's current frames, in order, the WAL belongs when its page size is the database's,
either it holds no page 1 or D is c1 - 1 or one of the c, the database file is no longer
than the last commit's size (or the WAL holds every page up to that size), and (up to
`CHECK_MAX_BYTES`) the database is not intact without the WAL and malformed with it. Every
WAL SQLite wrote for the database passes, but one copied beside the file in the middle of a
shrinking commit's checkpoint. A WAL of another database that passes all four (one holding
every page of a database, which replaces this one whole; a fork's, written after a copy of
the same file; one crafted to fit) cannot be told apart: nothing in the format identifies a
database.

>>> foreign_wal(b"", b"")  # nothing to judge: no verdict
"""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path
from typing import NamedTuple

_WAL_MAGIC = (0x377F0682, 0x377F0683)
_FRAME_HEADER = 24
CHECK_MAX_BYTES = 256 << 20  # quick_check reads every page (about 1 GB/s): the integrity check's size


def _db_page_size(raw: int) -> int:
    return 65536 if raw == 1 else raw


def foreign_wal(db_head: bytes, wal_head: bytes, page1_counters: list[int] | None = None) -> str | None:
    """Why the WAL is not this database's (None: it may be). `db_head`: the database file's
    first 100 bytes; `wal_head`: the WAL's first 32; `page1_counters`: see `page1_counters`."""
    if len(db_head) < 100 or len(wal_head) < 32:
        return None  # an empty database file (everything in the WAL) or no WAL header: SQLite ignores the WAL
    magic, _version, wal_page = struct.unpack(">III", wal_head[:12])
    if magic not in _WAL_MAGIC:
        return None  # not a WAL SQLite would read: it ignores it
    db_page = _db_page_size(struct.unpack(">H", db_head[16:18])[0])
    if wal_page != db_page:
        return f"its page size ({wal_page}) is not the database's ({db_page})"
    if page1_counters:
        counter = struct.unpack(">I", db_head[24:28])[0]
        first = page1_counters[0]
        if counter != (first - 1) & 0xFFFFFFFF and counter not in page1_counters:
            return (f"its first page 1 has change counter {first}, which does not continue the database's "
                    f"({counter})")
    return None


class Frames(NamedTuple):
    """What the WAL's current frames (those with the header's salts, up to the last commit
    frame) say: page 1's change counters in order, the database's size in pages after the
    last commit (0: no commit), and the distinct pages they write."""

    page1_counters: list[int]
    pages_after: int
    pages: set[int]


def current_frames(wal: Path, page_size: int) -> Frames:
    """Read the frame headers of `wal` (and page 1's counter), up to the first frame with
    other salts or a short read; frames after the last commit frame are left out."""
    out = Frames([], 0, set())
    pending: list[int] = []
    written: set[int] = set()
    with wal.open("rb") as fh:
        head = fh.read(32)
        if len(head) < 32:
            return out
        salts = head[16:24]
        offset = 32
        while True:
            fh.seek(offset)
            frame = fh.read(_FRAME_HEADER)
            if len(frame) < _FRAME_HEADER or frame[8:16] != salts:
                break
            pgno, commit = struct.unpack(">II", frame[:8])
            written.add(pgno)
            if pgno == 1:
                fh.seek(offset + _FRAME_HEADER + 24)
                raw = fh.read(4)
                if len(raw) < 4:
                    break
                pending.append(struct.unpack(">I", raw)[0])
            if commit:
                out.page1_counters.extend(pending)
                out.pages.update(written)
                pending, written = [], set()
                out = out._replace(pages_after=commit)
            offset += _FRAME_HEADER + page_size
    return out


def page1_counters(wal: Path, page_size: int) -> list[int]:
    """The change counters of page 1 in the WAL's current frames, in order."""
    return current_frames(wal, page_size).page1_counters


def outgrown(db_size: int, page_size: int, frames: Frames) -> str | None:
    """Why a database file of `db_size` bytes has moved on past a WAL whose current
    `frames` are these (None: it has not; see the module docstring).

    >>> outgrown(10 * 4096, 4096, Frames([], 4, {1, 2}))[:57]
    'the database file has 10 pages, its last commit leaves 4:'
    >>> outgrown(10 * 4096, 4096, Frames([], 4, {1, 2, 3, 4}))  # a VACUUM: every page rewritten
    >>> outgrown(4 * 4096, 4096, Frames([], 4, {1}))
    """
    pages = db_size // page_size
    if not frames.pages_after or pages <= frames.pages_after:
        return None
    if all(p in frames.pages for p in range(1, frames.pages_after + 1)):
        return None
    return (f"the database file has {pages} pages, its last commit leaves {frames.pages_after}: the database "
            "moved on past it (a stale -wal of an earlier checkpoint)")


def check_wal(db: Path, wal: Path) -> str | None:
    """Why the WAL is not the database's (None: it may be), for private copies `db` and `wal`
    (`wal` named `db`'s `-wal`: SQLite opens them as a pair)."""
    with db.open("rb") as fh:
        db_head = fh.read(100)
    try:
        with wal.open("rb") as fh:
            wal_head = fh.read(32)
    except FileNotFoundError:
        return None
    verdict = foreign_wal(db_head, wal_head)
    if verdict is not None or len(db_head) < 100 or len(wal_head) < 32:
        return verdict
    page_size = struct.unpack(">I", wal_head[8:12])[0]
    frames = current_frames(wal, page_size)
    verdict = foreign_wal(db_head, wal_head, frames.page1_counters) or outgrown(db.stat().st_size, page_size, frames)
    return verdict if verdict is not None else misfit(db)


def _quick_check(uri: str) -> bool:
    con = sqlite3.connect(uri, uri=True)
    try:
        return con.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok"
    except sqlite3.DatabaseError:
        return False
    finally:
        con.close()


def misfit(copy: Path) -> str | None:
    """Why the private `copy` (a database and its `-wal`, nobody else's) reads malformed with
    its WAL and intact without it; None when not (or when over `CHECK_MAX_BYTES`)."""
    wal = copy.with_name(copy.name + "-wal")
    if copy.stat().st_size + wal.stat().st_size > CHECK_MAX_BYTES or _quick_check(f"file:{copy}?mode=ro"):
        return None
    aside = wal.with_name(wal.name + ".aside")
    wal.rename(aside)
    copy.with_name(copy.name + "-shm").unlink(missing_ok=True)
    try:
        alone = _quick_check(f"file:{copy}?mode=ro&immutable=1")
    finally:
        aside.rename(wal)
    return "the database is intact without it and malformed with it" if alone else None
