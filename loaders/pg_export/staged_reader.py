"""Reading a finished `Stage` back, thread by thread, as `PostgresReader` reads a live database."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator

from loaders.pg_export.stage import Stage
from loaders.pg_rows import KEY_COLUMNS, BlobRow, CheckpointRow, OversizedKeys, SinceOptions, WriteRow, assemble
from loaders.records import ThreadBundle, weighted_ranges
from loaders.source import SPLIT_MIN_BYTES, Capabilities, SourceReader


class StagedReader(SourceReader):
    """Reads a finished `Stage` the way `PostgresReader` reads a live database."""

    capabilities = Capabilities(split=True, handoff=True)

    def __init__(self, stage: Stage, where: str, options: SinceOptions, shallow: bool) -> None:
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

    def handoff(self) -> Callable[[SinceOptions], StagedReader]:
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
        ovs = con.execute(
            f"SELECT CASE WHEN whole THEN thread_id END AS tid, tbl, k, count(*), max(bytes), min(begins) FROM ov {w} "
            "GROUP BY gkey, tbl, k ORDER BY tid NULLS FIRST, tbl, k", params)
        oversized = (OversizedKeys(tid, table, KEY_COLUMNS[table][k], n, longest, begins)
                     for tid, table, k, n, longest, begins in ovs)
        try:
            yield from assemble(
                map(CheckpointRow._make, cps), map(BlobRow._make, bls), map(WriteRow._make, wrs), self.where, oversized,
                self._delta_writes, self._fetch_blob,
            )
        finally:
            for cur in (cps, bls, wrs, ovs):
                cur.close()

    def _fetch_blob(self, thread_id: str, ns: str, version: str) -> bytes | None:
        """One staged `messages` blob by its key (a blob a thread held past `pg_rows.HELD_BLOB_BYTES`)."""
        row = self.stage.con.execute(
            "SELECT blob FROM bl WHERE thread_id = ? AND checkpoint_ns = ? AND version = ? LIMIT 1", (thread_id, ns, version)
        ).fetchone()
        return None if row is None else row[0]

    def _delta_writes(self, thread_id: str) -> Iterator[tuple]:
        """A DeltaChannel thread's `messages` writes (`loaders.delta.read.WriteRows`), streamed in
        the export's order (the rebuild reads their values up to `delta.read.DELTA_WRITES_MAX_BYTES`;
        no ORDER BY: SQLite's sorter would hold the blobs)."""
        return iter(self.stage.con.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_path, task_id, idx, type, blob FROM dw WHERE thread_id = ?", (thread_id,)))

    def close(self) -> None:
        self.stage.close()


def _open_borrowed(folder: str, where: str, shallow: bool, options: SinceOptions) -> StagedReader:
    return StagedReader(Stage.borrow(folder), where, options, shallow)
