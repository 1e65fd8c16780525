"""Sources: exports of a `PostgresSaver` database — COPY CSV files and pg_dump files.

Neither export is ordered by thread, and either may be far larger than memory.
Both are therefore streamed once into a private staging file (SQLite, in a
temporary folder removed on `close()`), indexed by thread id, and read back
through the same `pg_rows.assemble()` as the live database. Staging happens in
`open()`, so a damaged export fails before any DuckDB database is touched.

What is an error of the whole source and what is a row error:

- `SourceError` (naming the file, and the row or line): a missing table, a CSV
  of another table, a truncated file, a row with the wrong number of fields,
  malformed bytea or JSON text, a NULL in a NOT NULL key column. COPY and
  pg_dump never write these, so the file itself is damaged and loading the
  rest would silently lose data.
- `LoadError` (reported, row skipped, exactly as the live source does): data
  that a database can hold — an undecodable msgpack blob, a checkpoint JSON
  that is not an object, metadata that is not an object.

A file cut exactly at a row boundary inside a CSV cannot be told from a
shorter export; pg_dump blocks end with `\\.`, so dumps do not have that gap.
"""

from __future__ import annotations

import codecs
import functools
import csv
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import quote
from typing import IO, Any

import duckdb

from loaders.pg_rows import (
    MESSAGES,
    MIGRATIONS,
    SPECIAL_CHANNELS,
    TABLES,
    TS_PATTERN,
    BlobRow,
    CheckpointRow,
    PostgresOptions,
    WriteRow,
    assemble,
    table_shape,
)
from loaders.records import SourceError, ThreadBundle, weighted_ranges
from loaders.scratch import scratch_dir
from loaders.source import SPLIT_MIN_BYTES, Capabilities, Source, SourceReader

_TS_RE = re.compile(TS_PATTERN)
_PG_JSON_TYPE = {list: "array", str: "string", bool: "boolean", type(None): "null", int: "number", float: "number"}
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP_MAGIC = b"\x1f\x8b"
_PGDMP_MAGIC = b"PGDMP"
_FLUSH_ROWS = 1000
_FLUSH_BYTES = 32 << 20


# --- staging ------------------------------------------------------------------------

_STAGE_DDL = """
CREATE TABLE cp (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT,
                 parent_checkpoint_id TEXT, ts TEXT, messages_version TEXT, shape TEXT, metadata TEXT,
                 ts_key TEXT);
CREATE TABLE bl (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, version TEXT NOT NULL, type TEXT, blob BLOB);
CREATE TABLE wr (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,
                 idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, blob BLOB);
CREATE TABLE wanted (thread_id TEXT PRIMARY KEY);
"""
# Built after the bulk insert (faster than maintaining them row by row). The
# reads below walk these indexes, so no sort ever holds blobs in memory.
_STAGE_INDEXES = """
CREATE INDEX cp_order ON cp (thread_id, checkpoint_ns, checkpoint_id);
CREATE INDEX cp_ts ON cp (ts_key, thread_id);
CREATE INDEX bl_order ON bl (thread_id);
CREATE INDEX wr_order ON wr (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);
"""


class Problem(Exception):
    """A row that COPY / pg_dump could not have written; becomes a `SourceError`."""


def _text(value: str | None, column: str) -> str:
    if value is None:
        raise Problem(f"{column} is NULL")
    return value


def _bytea(value: str | None, column: str) -> bytes | None:
    if value is None:
        return None
    if not value.startswith("\\x"):
        raise Problem(f"{column} is not bytea hex output (expected \\x followed by hex digits; was bytea_output = escape?)")
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        raise Problem(f"{column} is malformed bytea (\\x followed by {len(value) - 2} characters that are not pairs of hex digits)") from None


def _json(value: str | None, column: str) -> Any:
    if value is None:
        raise Problem(f"{column} is NULL")
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise Problem(f"{column} is not valid JSON ({exc})") from None


def stage_checkpoint(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, checkpoint_id, parent, checkpoint, metadata)` text → a staged `cp` row.

    >>> stage_checkpoint(("t", "", "c1", None, '{"ts": "2025-01-01T00:00:00+00:00", "channel_versions": {"messages": "2.1"}}', "{}"), False)[:7]
    ('t', '', 'c1', None, '2025-01-01T00:00:00+00:00', '2.1', None)
    """
    thread_id, ns, cid, parent, checkpoint_text, metadata = raw
    thread_id, ns = _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns")
    checkpoint = _json(checkpoint_text, "checkpoint")
    _json(metadata, "metadata")
    ts = version = shape = None
    if isinstance(checkpoint, dict):
        ts = checkpoint.get("ts")
        if ts is not None and not isinstance(ts, str):
            ts = json.dumps(ts)  # as its JSON text: the transform reports it as unreadable, like the live source
        versions = checkpoint.get("channel_versions")
        if shallow:
            cid = checkpoint.get("id") if isinstance(checkpoint.get("id"), str) else None
            version = "" if isinstance(versions, dict) and MESSAGES in versions else None
        elif isinstance(versions, dict):
            version = _json_text(versions.get(MESSAGES))
    else:
        shape = _PG_JSON_TYPE.get(type(checkpoint), "value")
    if not shallow:
        cid = _text(cid, "checkpoint_id")
    ts_key = ts if ts is not None and _TS_RE.match(ts) else None
    return (thread_id, ns, cid, parent, ts, version, shape, metadata, ts_key)


def _json_text(value: Any) -> str | None:
    # What Postgres' `->>` gives for the value: strings as-is, scalars as JSON text.
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def stage_blob(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, version, type, blob)` text → a staged `bl` row (messages channel only)."""
    thread_id, ns, version, type_, blob = raw
    return (
        _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns"),
        "" if shallow else _text(version, "version"), _text(type_, "type"), _bytea(blob, "blob"),
    )


def stage_write(raw: tuple, shallow: bool) -> tuple:
    """`(thread_id, ns, checkpoint_id, task_id, idx, channel, type, blob)` text → a staged `wr` row."""
    thread_id, ns, cid, task_id, idx, channel, type_, blob = raw
    try:
        idx_value = int(_text(idx, "idx"))
    except ValueError:
        raise Problem(f"idx {idx!r} is not an integer") from None
    blob_value = _bytea(blob, "blob")
    if blob_value is None:
        raise Problem("blob is NULL")
    return (
        _text(thread_id, "thread_id"), _text(ns, "checkpoint_ns"), _text(cid, "checkpoint_id"),
        _text(task_id, "task_id"), idx_value, _text(channel, "channel"), type_, blob_value,
    )


# Per export table: its staging table, the function that stages one row, and
# the staged row's width.
_STAGED = {
    "checkpoints": ("cp", stage_checkpoint, 9),
    "checkpoint_blobs": ("bl", stage_blob, 5),
    "checkpoint_writes": ("wr", stage_write, 8),
}


def source_columns(table: str, shallow: bool) -> tuple[str | None, ...]:
    """The export columns a table's stager reads, in its order (None: the schema lacks it)."""
    if table == "checkpoints":
        if shallow:
            return ("thread_id", "checkpoint_ns", None, None, "checkpoint", "metadata")
        return ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata")
    if table == "checkpoint_blobs":
        return ("thread_id", "checkpoint_ns", None if shallow else "version", "type", "blob")
    return ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob")


def channel_filter(table: str) -> tuple[str, ...] | None:
    """Only these channels are staged: the transcript needs no other blob or write."""
    if table == "checkpoint_blobs":
        return (MESSAGES,)
    if table == "checkpoint_writes":
        return SPECIAL_CHANNELS
    return None


def _row_key(table: str, raw: tuple) -> str:
    # The key columns lead every stager's input; enough to find the row.
    names = source_columns(table, False)[:3]
    return ", ".join(f"{n}={v!r}" for n, v in zip(names, raw[:3]) if v is not None)


class Stage:
    """A private SQLite file the export is copied into, then read back in thread order."""

    def __init__(self) -> None:
        self.dir = scratch_dir("stage")
        self.owned = True
        self.con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE", "cache_size=-65536"):
            self.con.execute(f"PRAGMA {pragma}")
        self.con.executescript(_STAGE_DDL)
        self.con.execute("BEGIN")

    @property
    def path(self) -> str:
        return os.path.join(self.dir, "stage.sqlite")

    @classmethod
    def borrow(cls, folder: str) -> Stage:
        """A finished stage opened again, read-only, by a worker of the same load.

        The load that made it removes it; the thread list of `--threads` goes in a
        TEMP table of this connection (it shadows the stage's own `wanted`)."""
        stage = cls.__new__(cls)
        stage.dir, stage.owned = folder, False
        stage.con = sqlite3.connect(f"file:{quote(stage.path)}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        stage.con.execute("CREATE TEMP TABLE wanted (thread_id TEXT PRIMARY KEY)")
        return stage

    def insert(self, staged_table: str, width: int, rows: list[tuple]) -> None:
        if rows:
            self.con.executemany(f"INSERT INTO {staged_table} VALUES ({','.join('?' * width)})", rows)

    def finish(self) -> None:
        self.con.execute("COMMIT")
        self.con.executescript(_STAGE_INDEXES)
        self.con.execute("ANALYZE")

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        if self.owned:
            shutil.rmtree(self.dir, ignore_errors=True)


class StagedReader(SourceReader):
    """Reads a finished `Stage` the way `PostgresReader` reads a live database."""

    capabilities = Capabilities(split=True, handoff=True)

    def __init__(self, stage: Stage, where: str, options: PostgresOptions, shallow: bool) -> None:
        self.stage = stage
        self.where = where
        self.options = options
        self.shallow = shallow
        self._since = options.since_ts

    def describe(self) -> str:
        return self.where

    def _filter(self, only: frozenset[str] | None) -> tuple[str, list]:
        con = self.stage.con
        clauses, params = [], []
        ids = self.options.wanted(only)
        if ids is not None:
            con.execute("DELETE FROM wanted")
            con.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((t,) for t in ids))
            clauses.append("thread_id IN (SELECT thread_id FROM wanted)")
        more, more_params = self.thread_range.sql()
        clauses += more
        params += more_params
        if self._since is not None:
            clauses.append("thread_id IN (SELECT thread_id FROM cp WHERE ts_key >= ?)")
            params.append(self._since)
        return (" AND ".join(clauses), params)

    def thread_count(self) -> int | None:
        where, params = self._filter(None)
        sql = f"SELECT count(DISTINCT thread_id) FROM cp {'WHERE ' + where if where else ''}"
        return self.stage.con.execute(sql, params).fetchone()[0]

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Thread-id ranges of about equal work for `n` workers, which read this stage
        (`handoff`) instead of staging the export again.

        Threads are weighed by their staged bytes (checkpoint rows and blobs); a stage
        under `min_bytes` is not split.
        """
        if n <= 1 or os.path.getsize(self.stage.path) < min_bytes:
            return [(None, None)]
        where, params = self._filter(None)
        rows = self.stage.con.execute(
            "SELECT thread_id, sum(w) FROM ("
            f"SELECT thread_id, 1 AS w FROM cp {'WHERE ' + where if where else ''} "
            f"UNION ALL SELECT thread_id, length(blob) / 1024 FROM bl {'WHERE ' + where if where else ''}"
            ") GROUP BY thread_id ORDER BY thread_id",
            [*params, *params],
        ).fetchall()
        return weighted_ranges(rows, n)

    def handoff(self) -> Callable[[PostgresOptions], StagedReader]:
        """How a worker process opens this stage (picklable: a spawned worker gets it too)."""
        return functools.partial(_open_borrowed, self.stage.dir, self.where, self.shallow)

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        yield from self.stage.con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM cp WHERE checkpoint_id IS NOT NULL")

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        where, params = self._filter(only)
        w = "WHERE " + where if where else ""
        con = self.stage.con
        cps = con.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, messages_version, shape, metadata "
            f"FROM cp {w} ORDER BY thread_id, checkpoint_ns, checkpoint_id", params)
        bls = con.execute(f"SELECT thread_id, checkpoint_ns, version, type, blob FROM bl {w} ORDER BY thread_id", params)
        wrs = con.execute(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM wr {w} "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx", params)
        try:
            yield from assemble(map(CheckpointRow._make, cps), map(BlobRow._make, bls), map(WriteRow._make, wrs), self.where)
        finally:
            for cur in (cps, bls, wrs):
                cur.close()

    def close(self) -> None:
        self.stage.close()


def _open_borrowed(folder: str, where: str, shallow: bool, options: PostgresOptions) -> StagedReader:
    return StagedReader(Stage.borrow(folder), where, options, shallow)


class _Loader:
    """Feeds rows of one export table into the stage, in batches bounded by rows and bytes."""

    def __init__(self, stage: Stage, table: str, shallow: bool, where: str) -> None:
        self.stage = stage
        self.table = table
        self.staged_table, self.stager, self.width = _STAGED[table]
        self.shallow = shallow
        self.where = where
        self.rows: list[tuple] = []
        self.bytes = 0

    def add(self, raw: tuple, size: int, line: int | None = None) -> None:
        try:
            self.rows.append(self.stager(raw, self.shallow))
        except Problem as exc:
            at = f"line {line}" if line is not None else f"row ({_row_key(self.table, raw)})"
            raise SourceError(f"{self.where}: {self.table} {at}: {exc}") from None
        self.bytes += size
        if len(self.rows) >= _FLUSH_ROWS or self.bytes >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        self.stage.insert(self.staged_table, self.width, self.rows)
        self.rows, self.bytes = [], 0


# --- COPY CSV export ------------------------------------------------------------------


def _table_of(columns: list[str]) -> str | None:
    """Which checkpoint table a CSV header belongs to, by its distinguishing columns."""
    cols = set(columns)
    if {"task_id", "idx", "channel", "blob"} <= cols:
        return "checkpoint_writes"
    if {"checkpoint", "metadata", "thread_id"} <= cols:
        return "checkpoints"
    if {"channel", "blob", "thread_id"} <= cols:
        return "checkpoint_blobs"
    if cols == {"v"}:
        return MIGRATIONS
    return None


def _csv_table_name(name: str) -> str | None:
    base = name.rsplit("/", 1)[-1]
    for suffix in (".csv", ".csv.gz"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return None


def _read_header(fh: IO[bytes], name: str) -> list[str]:
    first = fh.readline(1 << 16)
    if not first:
        raise SourceError(f"{name}: empty file (expected a CSV header line from COPY ... WITH (FORMAT csv, HEADER true))")
    try:
        text = first.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        raise SourceError(f"{name}: not UTF-8 text (expected a CSV header line)") from None
    row = next(csv.reader([text]), [])
    return [c.strip() for c in row]


def _open_maybe_gzip(path: Path) -> IO[bytes]:
    fh = path.open("rb")
    if fh.read(2) == _GZIP_MAGIC:
        fh.close()
        return gzip.open(path, "rb")
    fh.seek(0)
    return fh


def _is_zip(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(4) in _ZIP_MAGIC


def _zip_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [
        m for m in zf.infolist()
        if not m.is_dir() and not m.filename.startswith("__MACOSX/") and _csv_table_name(m.filename) is not None
    ]


def _csv_candidates(path: Path) -> list[str]:
    """Names of the CSV files a folder or zip holds (for detection)."""
    if path.is_dir():
        return [p.name for p in sorted(path.iterdir()) if p.is_file() and _csv_table_name(p.name) is not None]
    if _is_zip(path):
        with zipfile.ZipFile(path) as zf:
            return [m.filename for m in _zip_members(zf)]
    return []


# DuckDB's CSV reader holds a buffer of at least one row, and sizes it from
# max_line_size: left unbounded, it asked for the whole file at once (1.3 GB for
# a 1.4 GB export) and failed under the memory limit. 64 MB of CSV is a 32 MB
# `messages` blob in hex.
CSV_MEMORY_LIMIT = "256MB"
CSV_MAX_ROW = 64 << 20
CSV_PIECE = 16 << 20  # see `_csv_pieces`


def _duckdb_error(exc: Exception) -> str:
    # DuckDB quotes the offending line (possibly megabytes of hex); keep where
    # and why.
    lines = [ln.strip() for ln in str(exc).splitlines()]
    head = lines[0].split("Error: ", 1)[-1] if lines else type(exc).__name__
    reason = ""
    for i, ln in enumerate(lines):
        if ln.startswith(("Possible fixes", "Possible Solution")) and i > 0:
            j = i - 1
            while j > 0 and not lines[j]:
                j -= 1
            reason = lines[j]
            break
    if reason.startswith("Original Line") or reason == lines[0]:
        reason = ""
    text = f"{head}: {reason}" if reason else head
    return text if len(text) <= 300 else text[:300] + "…"


class PgCsvSource(Source):
    """A folder or .zip of `COPY <table> TO ... WITH (FORMAT csv, HEADER true)` files.

    Detected when the folder or zip holds a `<table>.csv` (or `.csv.gz`) named after a
    checkpoint table, or a CSV whose header is that of one.
    """

    kind = "postgres-csv"
    label = "COPY CSV export of a PostgresSaver database (a folder or .zip)"
    options_class = PostgresOptions

    def detect(self, spec: str) -> bool:
        path = Path(spec)
        if path.is_dir() and (path / "toc.dat").is_file():
            return False  # a pg_dump directory archive
        if path.is_file() and _csv_table_name(path.name) is not None and not _is_zip(path):
            # One table's CSV alone: claimed, so that open() can say what to pass instead.
            try:
                with _open_maybe_gzip(path) as fh:
                    return _table_of(_read_header(fh, path.name)) is not None
            except (OSError, EOFError, SourceError):
                return False
        try:
            names = _csv_candidates(path)
        except (OSError, zipfile.BadZipFile):
            return False
        if any(_csv_table_name(n) in (*TABLES, MIGRATIONS) for n in names):
            return True
        for name in names:
            try:
                if path.is_dir():
                    with _open_maybe_gzip(path / name) as fh:
                        header = _read_header(fh, name)
                else:
                    with zipfile.ZipFile(path) as zf, zf.open(name) as fh:
                        header = _read_header(fh, name)
            except (OSError, EOFError, SourceError, zipfile.BadZipFile):
                continue
            if _table_of(header) is not None:
                return True
        return False

    def open_reader(self, spec: str, options: PostgresOptions) -> StagedReader:
        path = Path(spec)
        where = str(path.resolve())
        stage = Stage()
        try:
            files = self._collect(path, stage.dir)
            columns = {table: set(cols) for table, (_, cols) in files.items() if table in TABLES}
            shallow = table_shape(columns, where)
            # DuckDB's CSV reader tells NULL (an empty field) from "" (a quoted empty string).
            con = duckdb.connect(config={"memory_limit": CSV_MEMORY_LIMIT, "threads": 2, "preserve_insertion_order": False})
            try:
                for table in TABLES:
                    file, header = files[table]
                    label = f"{where}: {file.name}" if path.is_dir() else f"{where}!{file.name}"
                    _stage_csv(con, stage, table, _uncompressed(file, stage.dir, label), header, shallow, label)
            finally:
                con.close()
            stage.finish()
        except BaseException:
            stage.close()
            raise
        return StagedReader(stage, where, options, shallow)

    def _collect(self, path: Path, tmp: str) -> dict[str, tuple[Path, list[str]]]:
        """{table: (CSV file on disk, its header)}; zip members needed are extracted into `tmp`."""
        where = str(path.resolve())
        if path.is_file() and not _is_zip(path) and _csv_table_name(path.name) is not None:
            raise SourceError(
                f"{where}: one table's CSV; pass the folder (or .zip) holding "
                f"{', '.join(t + '.csv' for t in TABLES)} instead"
            )
        if not path.is_dir() and not _is_zip(path):
            what = "not a folder or .zip" if path.exists() else "no such file or folder"
            raise SourceError(f"{where}: {what} (expected a folder or .zip of COPY CSV files)")
        try:
            zf = zipfile.ZipFile(path) if not path.is_dir() else None
        except (zipfile.BadZipFile, OSError) as exc:
            raise SourceError(f"{where}: unreadable zip file ({exc})") from None
        try:
            if zf is None:
                names = _csv_candidates(path)
            else:
                names = [m.filename for m in _zip_members(zf)]
            found: dict[str, tuple[str, list[str]]] = {}
            for name in names:
                try:
                    with (_open_maybe_gzip(path / name) if zf is None else _gunzipped(zf.open(name))) as fh:
                        header = _read_header(fh, name)
                except (OSError, EOFError, zipfile.BadZipFile) as exc:
                    raise SourceError(f"{where}: {name}: unreadable ({exc})") from None
                table = _table_of(header)
                named = _csv_table_name(name)
                if named in (*TABLES, MIGRATIONS) and table != named:
                    what = f"that of {table}" if table else "not that of any checkpoint table"
                    raise SourceError(
                        f"{where}: {name}: its header ({', '.join(header)}) is {what} "
                        f"(expected the columns of {named}: {', '.join(_expected_columns(named))})"
                    )
                if table is None:
                    continue  # some other CSV beside the export
                if table in found:
                    raise SourceError(f"{where}: both {found[table][0]} and {name} hold {table} rows")
                found[table] = (name, header)
            missing = [t for t in TABLES if t not in found]
            if missing:
                raise SourceError(
                    f"{where}: no CSV of {', '.join(missing)} (expected {', '.join(t + '.csv' for t in TABLES)} "
                    "written by COPY <table> TO ... WITH (FORMAT csv, HEADER true))"
                )
            if zf is None:
                return {t: (path / name, header) for t, (name, header) in found.items() if t in TABLES}
            out = {}
            for table in TABLES:
                name, header = found[table]
                # DuckDB reads files, not zip members: only the three needed are extracted.
                target = Path(tempfile.mkdtemp(dir=tmp)) / name.rsplit("/", 1)[-1]
                with zf.open(name) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                out[table] = (target, header)
            return out
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
            raise SourceError(f"{where}: unreadable zip file ({exc})") from None
        finally:
            if zf is not None:
                zf.close()


def _gunzipped(fh: IO[bytes]) -> IO[bytes]:
    """A zip member, read through gzip when it starts with the gzip magic."""
    head = fh.read(2)
    fh.seek(0)
    return gzip.GzipFile(fileobj=fh) if head == _GZIP_MAGIC else fh


def _uncompressed(file: Path, tmp: str, where: str) -> Path:
    """A gzip file decompressed into the stage folder (DuckDB sizes its gzip buffers by
    the longest line allowed, which a blob row needs to be huge); others as they are."""
    with file.open("rb") as fh:
        if fh.read(2) != _GZIP_MAGIC:
            return file
    target = Path(tempfile.mkdtemp(dir=tmp)) / file.name.removesuffix(".gz")
    try:
        with gzip.open(file, "rb") as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise SourceError(f"{where}: unreadable gzip data ({exc})") from None
    return target


def _expected_columns(table: str) -> tuple[str, ...]:
    return ("v",) if table == MIGRATIONS else tuple(c for c in source_columns(table, False) if c)


def _stage_csv(
    con: duckdb.DuckDBPyConnection, stage: Stage, table: str, file: Path, header: list[str], shallow: bool, where: str
) -> None:
    position = {name: i for i, name in enumerate(header)}
    # Columns are named c0..cN, never after the header, so nothing from the
    # file is ever spliced into SQL.
    wanted = [f"c{position[c]}" if c is not None else "NULL" for c in source_columns(table, shallow)]
    channels = channel_filter(table)
    filter_sql = f" WHERE c{position['channel']} IN ({','.join('?' * len(channels))})" if channels else ""
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header))) + "}"
    query = (
        f"SELECT {', '.join(wanted)} FROM read_csv(?, header = true, auto_detect = false, delim = ',', quote = '\"', "
        f"escape = '\"', allow_quoted_nulls = false, strict_mode = true, null_padding = false, "
        f"max_line_size = {int(CSV_MAX_ROW)}, buffer_size = {int(CSV_MAX_ROW)}, parallel = false, "
        f"encoding = 'utf-8', columns = {columns}){filter_sql}"
    )
    with file.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                # COPY ends every row with a newline; a file cut inside a row does not.
                raise SourceError(f"{where}: the last line is incomplete (no final newline): a truncated file?")
    loader = _Loader(stage, table, shallow, where)
    piece_path = Path(stage.dir) / f"{table}.piece.csv"
    try:
        for offset, parts in _csv_pieces(file, CSV_PIECE, CSV_MAX_ROW):
            with piece_path.open("wb") as out:
                out.writelines(parts)
            try:
                cur = con.execute(query, [str(piece_path), *(channels or ())])
                while batch := cur.fetchmany(64 if table == "checkpoint_blobs" else 1000):
                    for raw in batch:
                        loader.add(raw, sum(len(v) for v in raw if v is not None))
            except duckdb.Error as exc:
                raise _PieceError(_duckdb_error(exc), _line_at(file, offset)) from None
        loader.flush()
    except (_PieceError, _RowTooLong) as exc:
        # DuckDB reports a row over its line limit as a wrong column count: say what it is.
        long_line = _first_long_line(file, CSV_MAX_ROW)
        if long_line is not None:
            raise SourceError(
                f"{where}: line {long_line} is longer than {_mb(CSV_MAX_ROW)}, the longest row this reader takes "
                "from a CSV export; load that database live (postgresql://...) or from a pg_dump instead"
            ) from None
        raise SourceError(
            f"{where}: {exc.text()} (expected COPY ... WITH (FORMAT csv, HEADER true) output; a truncated file?)"
        ) from None
    finally:
        piece_path.unlink(missing_ok=True)


class _PieceError(Exception):
    """DuckDB's error on one piece of a CSV file; its line numbers count from the piece."""

    def __init__(self, message: str, first_line: int) -> None:
        super().__init__(message)
        self.message, self.first_line = message, first_line

    def text(self) -> str:
        # In a piece, line 1 is the header copy and line 2 is the file's `first_line`.
        return re.sub(r"(?<=Line: )(\d+)", lambda m: str(int(m.group(1)) + self.first_line - 2), self.message)


class _RowTooLong(Exception):
    pass


def _csv_pieces(file: Path, size: int, max_row: int) -> Iterator[tuple[int, list]]:
    """(byte offset, parts) of pieces of about `size` bytes cut at row ends; the
    parts (the header line first) are to be written one after another.

    DuckDB's CSV reader works on 2,048 rows at a time: 2,048 `messages` blobs of a
    long conversation are hundreds of megabytes whatever its memory limit, so it is
    given pieces. A newline ends a row when the quotes before it (from the start of
    the piece, which starts a row) are balanced: COPY doubles quotes inside fields.
    Blocks are sliced, not joined, so no byte is copied on the way.
    """
    with file.open("rb") as fh:
        header = fh.readline()
        offset = len(header)
        carry: list[bytes] = []  # the start of a row begun in earlier blocks
        carry_len = carry_quotes = 0
        while True:
            block = fh.read(size)
            if not block:
                if carry:
                    yield offset, [header, *carry]
                return
            end = block.rfind(b"\n")
            while end != -1 and (carry_quotes + block.count(b'"', 0, end)) % 2:
                end = block.rfind(b"\n", 0, end)
            if end == -1:
                carry.append(block)
                carry_len += len(block)
                carry_quotes += block.count(b'"')
                if carry_len > max_row:
                    raise _RowTooLong()
                continue
            yield offset, [header, *carry, memoryview(block)[: end + 1]]
            offset += carry_len + end + 1
            tail = block[end + 1 :]
            carry = [tail] if tail else []
            carry_len, carry_quotes = len(tail), tail.count(b'"')


def _line_at(file: Path, offset: int) -> int:
    """The line number of the byte at `offset` (1-based; only for error messages)."""
    lines = 1
    with file.open("rb") as fh:
        while offset > 0 and (chunk := fh.read(min(offset, 1 << 20))):
            lines += chunk.count(b"\n")
            offset -= len(chunk)
    return lines


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.3g} MB"


def _first_long_line(file: Path, limit: int) -> int | None:
    """The number of the first line of `file` longer than `limit` bytes, if any."""
    number, length = 1, 0
    with file.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                if length + end - start > limit:
                    return number
                number, length, start = number + 1, 0, end + 1
            length += len(chunk) - start
            if length > limit:
                return number
    return None


# --- pg_dump --------------------------------------------------------------------------

_COPY_RE = re.compile(
    rb'^COPY\s+(?P<name>(?:"(?:[^"]|"")+"|[^\s."(]+)(?:\.(?:"(?:[^"]|"")+"|[^\s."(]+))?)'
    rb"\s*(?:\((?P<cols>.*)\))?\s+FROM\s+stdin\s*;\s*$",
    re.IGNORECASE,
)
_INSERT_RE = re.compile(rb"^INSERT INTO\s+(?:\S+\.)?\"?(checkpoints|checkpoint_blobs|checkpoint_writes)\"?\s", re.IGNORECASE)
_ENCODING_RE = re.compile(rb"^SET client_encoding = '([^']+)';")
_IDENT_RE = re.compile(r'"((?:[^"]|"")*)"|([^\s,."]+)')
_ESCAPE_RE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}
_PLAIN_MARKERS = (b"PostgreSQL database dump",)
_COPY_LINE_RE = re.compile(rb"^COPY\s+\S.*\sFROM\s+stdin;\s*$", re.MULTILINE)


def _unescape(match: re.Match) -> bytes:
    octal, hexa, other = match.groups()
    if octal is not None:
        return bytes([int(octal, 8) & 0xFF])
    if hexa is not None:
        return bytes([int(hexa, 16)])
    return _SIMPLE_ESCAPES.get(other, other)


def copy_text_field(field: bytes, encoding: str = "utf-8") -> str | None:
    """One field of COPY text format (`\\N`, backslash escapes) → text or None.

    >>> copy_text_field(rb"a\\tb\\\\x00\\101"), copy_text_field(rb"\\N")
    ('a\\tb\\\\x00A', None)
    """
    if field == b"\\N":
        return None
    if b"\\" in field:
        field = _ESCAPE_RE.sub(_unescape, field)
    return field.decode(encoding)


def _idents(text: str) -> list[str]:
    return [q.replace('""', '"') if q or not u else u.lower() for q, u in _IDENT_RE.findall(text)]


def _python_encoding(name: str, where: str) -> str:
    aliases = {"UTF8": "utf-8", "UNICODE": "utf-8", "SQL_ASCII": "utf-8", "LATIN1": "latin-1", "WIN1252": "cp1252"}
    codec = aliases.get(name.upper(), name)
    try:
        return codecs.lookup(codec).name
    except LookupError:
        raise SourceError(f"{where}: the dump's client_encoding {name!r} is not one this reader knows") from None


def _archive_kind(path: Path) -> str | None:
    """'custom', 'directory' or 'tar' for a pg_dump archive pg_restore must read; else None."""
    if path.is_dir():
        toc = path / "toc.dat"
        if toc.is_file():
            with toc.open("rb") as fh:
                if fh.read(5) == _PGDMP_MAGIC:
                    return "directory"
        return None
    if not path.is_file():
        return None
    with path.open("rb") as fh:
        head = fh.read(5)
    if head == _PGDMP_MAGIC:
        return "custom"
    try:
        if tarfile.is_tarfile(path):
            with tarfile.open(path) as tf:
                first = tf.next()
                if first is not None and first.name == "toc.dat":
                    return "tar"
    except (tarfile.TarError, OSError, EOFError):
        return None
    return None


def _plain_head(path: Path) -> bytes:
    with path.open("rb") as fh:
        magic = fh.read(2)
    try:
        opener = gzip.open if magic == _GZIP_MAGIC else open
        with opener(path, "rb") as fh:
            return fh.read(1 << 16)
    except (OSError, EOFError):
        return b""


def _is_plain_dump(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _plain_head(path)
    return any(m in head for m in _PLAIN_MARKERS) or _COPY_LINE_RE.search(head) is not None


class PgDumpSource(Source):
    """A `pg_dump` of a PostgresSaver database.

    Plain SQL (optionally gzip-compressed) is parsed directly: its
    `COPY <schema>.<table> (...) FROM stdin;` blocks in COPY text format.
    Custom (`-Fc`, the `PGDMP` magic), directory and tar archives are turned
    into the same SQL by `pg_restore --data-only -f - FILE`, streamed.
    """

    kind = "pg-dump"
    label = "pg_dump of a PostgresSaver database (plain SQL, maybe gzipped, or -Fc / -Fd / -Ft)"
    options_class = PostgresOptions

    def detect(self, spec: str) -> bool:
        path = Path(spec)
        return _archive_kind(path) is not None or _is_plain_dump(path)

    def open_reader(self, spec: str, options: PostgresOptions) -> StagedReader:
        path = Path(spec)
        where = str(path.resolve())
        if not path.exists():
            raise SourceError(f"{where}: no such file (expected a pg_dump file)")
        archive = _archive_kind(path)
        if archive is None and not _is_plain_dump(path):
            raise SourceError(f"{where}: not a pg_dump file (expected plain SQL with COPY ... FROM stdin blocks, or a pg_dump -Fc archive)")
        stage = Stage()
        try:
            if archive is None:
                with path.open("rb") as probe:
                    gz = probe.read(2) == _GZIP_MAGIC
                with (gzip.open(path, "rb") if gz else path.open("rb")) as fh:
                    shallow = _stage_dump(stage, fh, where, options.schema)
            else:
                shallow = _stage_archive(stage, path, archive, where, options.schema)
            stage.finish()
        except BaseException:
            stage.close()
            raise
        return StagedReader(stage, where, options, shallow)


def _stage_archive(stage: Stage, path: Path, archive: str, where: str, schema: str | None) -> bool:
    exe = shutil.which("pg_restore")
    if exe is None:
        raise SourceError(
            f"{where}: a pg_dump {archive}-format archive; reading it needs pg_restore (PostgreSQL client tools) "
            "on PATH, which was not found. Install the PostgreSQL client, or export with "
            "pg_dump --data-only (plain SQL) instead"
        )
    err_path = Path(stage.dir) / "pg_restore.err"
    with err_path.open("wb") as err:
        # stderr goes to a file: a pipe nobody reads could fill and stall pg_restore.
        proc = subprocess.Popen([exe, "--data-only", "-f", "-", str(path.resolve())], stdout=subprocess.PIPE, stderr=err)
        try:
            shallow = _stage_dump(stage, proc.stdout, where, schema, restore_failed=lambda: _restore_error(proc, err_path))
        except BaseException:
            proc.kill()
            raise
        finally:
            proc.stdout.close()
            proc.wait()
    failure = _restore_error(proc, err_path)
    if failure:
        raise SourceError(f"{where}: pg_restore failed: {failure}")
    return shallow


def _restore_error(proc: subprocess.Popen, err_path: Path) -> str | None:
    if proc.poll() is None:
        proc.wait()
    if proc.returncode == 0:
        return None
    text = err_path.read_text("utf-8", "replace").strip()
    return (text.splitlines() or [f"exit status {proc.returncode}"])[-1][:300]


def _stage_dump(
    stage: Stage, lines: Iterable[bytes], where: str, schema: str | None,
    restore_failed: Callable[[], str | None] | None = None,
) -> bool:
    """Stream a plain dump's COPY blocks of the checkpoint tables into the stage; returns `shallow`."""
    encoding = "utf-8"
    columns: dict[str, set[str]] = {}
    schema_of: dict[str, str] = {}
    inserts = False
    block: _DumpBlock | None = None
    line_no = 0
    for line_no, line in enumerate(lines, 1):
        if block is not None:
            if line in (b"\\.\n", b"\\.\r\n", b"\\."):
                block.finish()
                block = None
            else:
                block.row(line, line_no)
            continue
        if not line[:1] in (b"C", b"c", b"S", b"I", b"i"):
            continue
        if m := _ENCODING_RE.match(line):
            encoding = _python_encoding(m.group(1).decode("ascii", "replace"), where)
            continue
        if _INSERT_RE.match(line):
            inserts = True
            continue
        m = _COPY_RE.match(line)
        if m is None:
            continue
        parts = _idents(m.group("name").decode(encoding))
        table, table_schema = parts[-1], (parts[0] if len(parts) > 1 else "")
        if table not in TABLES or (schema is not None and table_schema not in (schema, "")):
            block = _DumpBlock(None, table, [], encoding, where)  # not ours: consumed, not staged
            continue
        if schema is None and table_schema:
            other = next((s for s in schema_of.values() if s and s != table_schema), None)
            if other is not None:
                raise SourceError(
                    f"{where}: the dump holds checkpoint tables in schemas {other} and {table_schema}; pick one with --schema"
                )
        if table in columns:
            raise SourceError(f"{where}: line {line_no}: a second COPY block for {table}")
        if m.group("cols") is None:
            raise SourceError(f"{where}: line {line_no}: COPY {table} without a column list (not pg_dump output)")
        cols = _idents(m.group("cols").decode(encoding))
        columns[table], schema_of[table] = set(cols), table_schema
        block = _DumpBlock(stage, table, cols, encoding, where)
    if block is not None:
        failure = restore_failed() if restore_failed else None
        cause = f"pg_restore failed: {failure}" if failure else "a truncated dump?"
        raise SourceError(f"{where}: ends inside the COPY block of {block.name} at line {line_no} ({cause})")
    if restore_failed is not None and (failure := restore_failed()):
        raise SourceError(f"{where}: pg_restore failed: {failure}")
    if not columns:
        hint = " (it was made with --inserts; dump with the default COPY format)" if inserts else ""
        raise SourceError(
            f"{where}: no COPY data for the checkpoint tables{hint} (expected a pg_dump of a PostgresSaver database)"
        )
    return table_shape(columns, where)


class _DumpBlock:
    """One COPY block: parses its rows and stages those of a checkpoint table (`stage` None: skip)."""

    def __init__(self, stage: Stage | None, name: str, cols: list[str], encoding: str, where: str) -> None:
        self.name = name
        self.where = where
        self.encoding = encoding
        self.loader: _Loader | None = None
        if stage is None:
            return
        # Each table's own columns say which schema wrote it; `table_shape`
        # checks at the end that all three agree.
        shallow = "checkpoint_id" not in cols if name == "checkpoints" else "version" not in cols
        needed = source_columns(name, shallow and name != "checkpoint_writes")
        lacking = [c for c in needed if c is not None and c not in cols]
        if lacking:
            raise SourceError(f"{where}: COPY {name} lacks column{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}")
        self.positions = [cols.index(c) if c is not None else None for c in needed]
        self.width = len(cols)
        channels = channel_filter(name)
        self.channel_at = cols.index("channel") if channels else -1
        self.channels = {c.encode() for c in channels} if channels else None
        self.loader = _Loader(stage, name, shallow, where)

    def row(self, line: bytes, line_no: int) -> None:
        if self.loader is None:
            return
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        fields = line.split(b"\t")
        if len(fields) != self.width:
            raise SourceError(
                f"{self.where}: line {line_no}: {len(fields)} fields in a {self.name} row, expected {self.width} "
                "(a truncated or edited dump?)"
            )
        # Channel names need no escaping, so the raw bytes can be compared
        # before anything is unescaped.
        if self.channels is not None and fields[self.channel_at] not in self.channels:
            return
        try:
            raw = tuple(copy_text_field(fields[p], self.encoding) if p is not None else None for p in self.positions)
        except UnicodeDecodeError as exc:
            raise SourceError(f"{self.where}: line {line_no}: not {self.encoding} text ({exc.reason})") from None
        self.loader.add(raw, len(line), line_no)

    def finish(self) -> None:
        if self.loader is not None:
            self.loader.flush()
