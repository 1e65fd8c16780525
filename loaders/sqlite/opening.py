"""How a SQLite store is opened without changing it: read in place, or a snapshot of it copied.

Read-only and side-effect free: LangGraph's own saver runs `setup()` (DDL,
`PRAGMA journal_mode=WAL`) even on a read and leaves `-wal`/`-shm` files
behind (contract §7.1), so the reader never uses it. How the file is opened
depends on its WAL state, so that the file and its folder stay byte-identical:

- no `-wal` with data: `immutable=1` (`connect_immutable`); SQLite creates no side file;
- a `-wal` with data (recent rows not yet checkpointed, maybe a live writer):
  the file, then its `-wal`, are copied to a private temporary folder and the
  copy is read (`snapshot_copy`). Opening in place would write the `-shm` (even read-only
  connections take read marks there) or create it. The copy is one committed
  state of the store when the `-wal` did not restart (its header's checkpoint
  sequence and salts unchanged) between the start of the main file's copy and
  the copy of the `-wal`: every page a concurrent checkpoint wrote into the
  main file meanwhile is then also in the copied `-wal`, which overrides it,
  and a half-written last frame of a live writer fails SQLite's checksums. A
  restarted `-wal` holds only newer frames, so the copy is taken again.
  A `-wal` that is not the file's (SQLite would apply another database's WAL
  silently) is refused in one line: the rule is in `loaders.sqlite.wal`.

>>> uri(Path("/tmp/a b.sqlite"), mode="ro", immutable="1")
'file:/tmp/a%20b.sqlite?mode=ro&immutable=1'
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote

from loaders import _native
from loaders.records import SourceError
from loaders.sqlite.wal import check_wal

# The compiled read-ahead VFS (None: SQLite's own; tests switch it off).
native_readahead = _native.readahead


def _wal_id(wal: Path) -> bytes | None:
    """Checkpoint sequence and salts from a `-wal` header: they change whenever the WAL restarts."""
    try:
        with wal.open("rb") as fh:
            head = fh.read(32)
    except FileNotFoundError:
        return None
    return head[12:24] if len(head) == 32 else None


def snapshot_copy(path: Path, wal: Path, folder: Path, attempts: int = 50) -> Path:
    """Copy a WAL-mode store (main file, then `-wal`) into `folder`; see the module docstring."""
    copy = folder / path.name
    copy_wal = copy.with_name(copy.name + "-wal")
    for _ in range(attempts):
        wal_id = _wal_id(wal)
        before = path.stat()
        shutil.copyfile(path, copy)
        after = path.stat()
        try:
            shutil.copyfile(wal, copy_wal)
        except FileNotFoundError:
            copy_wal.unlink(missing_ok=True)
        copied_id = _wal_id(copy_wal)
        if wal_id is not None and copied_id == wal_id:
            if (why := check_wal(copy, copy_wal)) is not None:
                raise SourceError(
                    f"{wal}: not the write-ahead log of {path.name}: {why} (a -wal from another database?); "
                    f"move it away to load {path.name} as last checkpointed")
            return copy
        if wal_id is None and copied_id is None and (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            return copy  # checkpointed and removed: the main file, which held still, is a committed state
    raise SourceError(f"{path}: its -wal kept restarting while it was copied (a busy writer); try again")



def uri(path: Path, **params: str) -> str:
    """A URI naming `path` for `sqlite3.connect(..., uri=True)`, with `params`."""
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def connect_immutable(path: Path) -> sqlite3.Connection:
    """A read-only connection to a store that does not change while it is read,
    through the read-ahead VFS when there is one (`loaders/_readahead.c`: a
    checkpoint blob's overflow pages in one read instead of one read each)."""
    if native_readahead is not None:
        try:
            return sqlite3.connect(uri(path, mode="ro", immutable="1", vfs=native_readahead.VFS_NAME), uri=True, isolation_level=None)
        except sqlite3.OperationalError:
            pass  # "no such vfs": this Python's sqlite3 carries a SQLite of its own
    return sqlite3.connect(uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None)



def file_token(path: Path, wal: Path) -> str:
    """The file's and its `-wal`'s inode, size and modification time: SQLite changes one of
    them at every committed write (`SourceReader.change_token`)."""
    parts = []
    for p in (path, wal):
        try:
            st = p.stat()
        except FileNotFoundError:
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return "sqlite " + " ".join(parts)

