"""The staging file an export is copied into (private SQLite, indexed by thread id),
and `StageLoader`, which feeds it one table's rows in batches."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from urllib.parse import quote

from loaders.pg_export.rows import STAGED, Problem, row_key
from loaders.pg_rows import KEY_COLUMNS, KEY_SHOWN, MESSAGES
from loaders.records import SourceError, capped_value, key_too_long, max_blob_bytes
from loaders.scratch import scratch_dir

_FLUSH_ROWS = 1000
_FLUSH_BYTES = 32 << 20

_STAGE_DDL = """
CREATE TABLE cp (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT,
                 parent_checkpoint_id TEXT, ts TEXT, messages_version TEXT, shape TEXT, metadata TEXT,
                 ts_key TEXT);
CREATE TABLE bl (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, version TEXT NOT NULL, type TEXT, blob BLOB);
CREATE TABLE wr (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,
                 idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, blob BLOB, task_path TEXT);
-- The `messages` writes, apart: read only for DeltaChannel threads (loaders.delta.read).
CREATE TABLE dw (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,
                 idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, blob BLOB, task_path TEXT);
CREATE TABLE wanted (thread_id TEXT PRIMARY KEY);
-- Rows left out for a key over KEY_MAX_BYTES (pg_rows.OversizedKeys): `k` indexes
-- pg_rows.KEY_COLUMNS of `tbl`. An oversized thread id is kept as its first characters
-- (`whole` 0; what the thread filters compare) and grouped by its digest (`gkey`).
CREATE TABLE ov (thread_id TEXT NOT NULL, whole INTEGER NOT NULL, gkey TEXT NOT NULL, tbl TEXT NOT NULL,
                 k INTEGER NOT NULL, bytes INTEGER NOT NULL, begins TEXT NOT NULL);
"""
# Built after the bulk insert (faster than maintaining them row by row). The
# reads walk these indexes, so no sort ever holds blobs in memory.
_STAGE_INDEXES = """
CREATE INDEX cp_order ON cp (thread_id, checkpoint_ns, checkpoint_id);
CREATE INDEX cp_ts ON cp (ts_key, thread_id);
CREATE INDEX bl_order ON bl (thread_id, checkpoint_ns, version);
CREATE INDEX wr_order ON wr (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);
CREATE INDEX dw_thread ON dw (thread_id);
"""


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

    def oversized(self, table: str, k: int, row: tuple) -> None:
        """Note a row left out because its key column `k` (of `KEY_COLUMNS[table]`) is too long."""
        value = row[k]
        size = len(value.encode("utf-8", "surrogatepass"))
        thread_id = row[0]
        whole = k > 0  # (the keys before k are within the limit, the thread id first)
        gkey = thread_id if whole else hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
        self.con.execute(
            "INSERT INTO ov VALUES (?, ?, ?, ?, ?, ?, ?)",
            (thread_id if whole else thread_id[:KEY_SHOWN], int(whole), gkey, table, k, size, value[:KEY_SHOWN]),
        )

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


# Where a staged blob or write row holds its type, the value following it: a value over
# `records.max_blob_bytes()` is staged as the oversized marker (`records.capped_value`).
_VALUE_AT = {"bl": 3, "wr": 6}


class StageLoader:
    """Feeds rows of one export table into the stage, in batches bounded by rows and bytes."""

    def __init__(self, stage: Stage, table: str, shallow: bool, where: str) -> None:
        self.stage = stage
        self.table = table
        self.staged_table, self.stager, self.width = STAGED[table]
        self.shallow = shallow
        self.where = where
        self.rows: list[tuple] = []
        self.messages_writes: list[tuple] = []  # (staged in `dw`)
        self.cap = max_blob_bytes()
        self.bytes = 0

    def add(self, raw: tuple, size: int, line: int | None = None) -> None:
        try:
            row = self.stager(raw, self.shallow)
        except Problem as exc:
            at = f"line {line}" if line is not None else f"row ({row_key(self.table, raw)})"
            raise SourceError(f"{self.where}: {self.table} {at}: {exc}") from None
        at = _VALUE_AT.get(self.staged_table)
        if at is not None and len(row[at + 1] or b"") > self.cap:  # (a value over the limit: its marker is staged)
            row = (*row[:at], *capped_value(row[at], row[at + 1], self.cap), *row[at + 2:])
        # A staged row's key columns lead it, in KEY_COLUMNS order; an oversized one is never staged.
        for k in range(len(KEY_COLUMNS[self.table])):
            if key_too_long(row[k]):
                self.stage.oversized(self.table, k, row)
                return
        if self.table == "checkpoint_writes" and row[5] == MESSAGES:
            self.messages_writes.append(row)
        else:
            self.rows.append(row)
        self.bytes += size
        if len(self.rows) >= _FLUSH_ROWS or self.bytes >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        self.stage.insert(self.staged_table, self.width, self.rows)
        self.stage.insert("dw", self.width, self.messages_writes)
        self.rows, self.messages_writes, self.bytes = [], [], 0
