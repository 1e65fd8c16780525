"""Source: a SQLite checkpoint file written by `SqliteSaver` / `AsyncSqliteSaver`.

Read-only and side-effect free: LangGraph's own saver runs `setup()` (DDL,
`PRAGMA journal_mode=WAL`) even on a read and leaves `-wal`/`-shm` files
behind (FORMATS §1.1), so this reader never uses it. How the file is opened
depends on its WAL state, so that the file and its folder stay byte-identical:

- no `-wal` with data: `immutable=1`, SQLite creates no side file;
- a `-wal` with data and a `-shm` (a writer may be live): `mode=ro` through
  the writer's shared memory, everything read in one read transaction, so the
  load is one consistent snapshot;
- a `-wal` with data but no `-shm` (a crashed or copied store): the file and
  its `-wal` are copied to a private temporary folder and the copy is read,
  because opening in place would have to create the `-shm`.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from loaders.decode import DecodeError, decode_typed, plain
from loaders.records import LoadError, RawCheckpoint, RawWrite, SourceError, SourceOptions, ThreadBundle

SPECIAL_CHANNELS = ("__interrupt__", "__resume__", "__error__")
_CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
_WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
_SQLITE_MAGIC = b"SQLite format 3\x00"

_CHECKPOINTS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
    "FROM checkpoints {where} ORDER BY thread_id, checkpoint_ns, checkpoint_id"
)
_WRITES_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
    "FROM writes WHERE channel IN (?, ?, ?) {where} ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
)


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


class SqliteSource:
    """A `SqliteSaver` file. Detected by its SQLite header."""

    kind = "sqlite"

    def detect(self, spec: str) -> bool:
        p = Path(spec)
        if not p.is_file():
            return False
        with p.open("rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC

    def open(self, spec: str, options: SourceOptions) -> SqliteReader:
        return SqliteReader(Path(spec), options)


class SqliteReader:
    """An opened SQLite store; see the module docstring for how it is opened."""

    def __init__(self, path: Path, options: SourceOptions) -> None:
        self.path = path
        self.options = options
        self._tmpdir: str | None = None
        if not path.is_file():
            raise SourceError(f"{path}: no such file (expected a SqliteSaver checkpoint file)")
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                raise SourceError(f"{path}: not a SQLite database (expected a SqliteSaver checkpoint file)")
        wal = path.with_name(path.name + "-wal")
        shm = path.with_name(path.name + "-shm")
        has_wal = wal.is_file() and wal.stat().st_size > 0
        try:
            if not has_wal:
                self.con = sqlite3.connect(_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None)
            elif shm.is_file():
                self.con = sqlite3.connect(_uri(path, mode="ro"), uri=True, isolation_level=None)
            else:
                self._tmpdir = tempfile.mkdtemp(prefix="transcript-lens-")
                copy = Path(self._tmpdir) / path.name
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
                self.con = sqlite3.connect(str(copy), isolation_level=None)
            self.con.text_factory = lambda b: b.decode("utf-8", "replace")
            # One read transaction: every query below sees the same snapshot.
            self.con.execute("BEGIN")
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise SourceError(f"{path}: unreadable SQLite file ({exc})") from None
        except SourceError:
            self.close()
            raise

    def _check_schema(self) -> None:
        tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in ("checkpoints", "writes") if t not in tables]
        if missing:
            raise SourceError(
                f"{self.path}: not a SqliteSaver checkpoint file (missing table {', '.join(missing)}; found {', '.join(sorted(tables)) or 'no tables'})"
            )
        for table, needed in (("checkpoints", _CHECKPOINT_COLUMNS), ("writes", _WRITE_COLUMNS)):
            cols = {r[1] for r in self.con.execute("SELECT * FROM pragma_table_info(?)", (table,))}
            lacking = needed - cols
            if lacking:
                raise SourceError(f"{self.path}: table {table} lacks column(s) {', '.join(sorted(lacking))}")

    def describe(self) -> str:
        return str(self.path.resolve())

    def _thread_filter(self, only: frozenset[str] | None) -> tuple[str, list]:
        wanted = set(self.options.threads)
        if only is not None:
            wanted = (wanted & only) if wanted else set(only)
        elif not wanted:
            return "", []
        ids = sorted(wanted)
        return f"thread_id IN ({','.join('?' * len(ids))})", ids

    def thread_count(self) -> int | None:
        if self.options.threads:
            return len(self.options.threads)
        return self.con.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        yield from self.con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints")

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        where, params = self._thread_filter(only)
        if where and len(params) > 900:
            # SQLite caps bound parameters; large subsets are filtered while streaming.
            wanted, where, params = set(params), "", []
        else:
            wanted = None
        cps = self.con.execute(_CHECKPOINTS_SQL.format(where=f"WHERE {where}" if where else ""), params)
        writes = self.con.execute(_WRITES_SQL.format(where=f"AND {where}" if where else ""), [*SPECIAL_CHANNELS, *params])
        write_groups = itertools.groupby(writes, key=lambda r: r[0])
        pending = next(write_groups, None)
        for thread_id, rows in itertools.groupby(cps, key=lambda r: r[0]):
            thread_writes: list = []
            while pending is not None and pending[0] < thread_id:
                pending = next(write_groups, None)
            if pending is not None and pending[0] == thread_id:
                thread_writes = list(pending[1])
                pending = next(write_groups, None)
            if wanted is not None and thread_id not in wanted:
                continue
            yield self._bundle(thread_id, rows, thread_writes)

    def _bundle(self, thread_id: str, rows, write_rows) -> ThreadBundle:
        errors: list[LoadError] = []
        checkpoints = [decode_checkpoint_row(row, errors) for row in rows]
        writes = []
        for t, ns, cid, task_id, idx, channel, type_, value in write_rows:
            try:
                decoded = plain(decode_typed(type_, value))
            except DecodeError as exc:
                errors.append(LoadError(t, ns, cid, "write", f"{channel}: {exc}"))
                continue
            writes.append(RawWrite(t, ns, cid, task_id, idx, channel, decoded))
        return ThreadBundle(thread_id, checkpoints, writes, errors)

    def close(self) -> None:
        con = getattr(self, "con", None)
        if con is not None:
            try:
                con.close()
            except sqlite3.Error:
                pass
            self.con = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def decode_metadata(raw, errors: list[LoadError], where: tuple[str, str, str]) -> dict:
    """SqliteSaver metadata is UTF-8 JSON text stored as a BLOB (FORMATS §1.2)."""
    if raw is None:
        return {}
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        md = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        errors.append(LoadError(*where, "metadata", f"metadata is not JSON: {exc}"))
        return {}
    if not isinstance(md, dict):
        errors.append(LoadError(*where, "metadata", f"metadata is a {type(md).__name__}, not an object"))
        return {}
    return md


def decode_checkpoint_row(row, errors: list[LoadError]) -> RawCheckpoint:
    """One `checkpoints` row → `RawCheckpoint`; damage is reported, never raised."""
    thread_id, ns, cid, parent, type_, blob, metadata = row
    where = (thread_id, ns, cid)
    md = decode_metadata(metadata, errors, where)
    try:
        checkpoint = decode_typed(type_, blob)
        if not isinstance(checkpoint, dict):
            raise DecodeError(f"checkpoint is a {type(checkpoint).__name__}, not a mapping")
        values = checkpoint.get("channel_values") or {}
        if not isinstance(values, dict):
            raise DecodeError("channel_values is not a mapping")
    except DecodeError as exc:
        errors.append(LoadError(*where, "checkpoint", str(exc)))
        return RawCheckpoint(thread_id, ns, cid, parent, None, md, None, damaged=True)
    ts = checkpoint.get("ts")
    messages = values.get("messages")
    if messages is not None and not isinstance(messages, list):
        errors.append(LoadError(*where, "messages", f"messages channel is a {type(messages).__name__}, not a list"))
        return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, md, None, damaged=True)
    return RawCheckpoint(thread_id, ns, cid, parent, ts if isinstance(ts, str) else None, md, messages)
