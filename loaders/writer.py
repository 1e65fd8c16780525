"""Writing the DuckDB database: schema, batched appends, atomic replace.

A load writes a new database next to the target (`<db>.tmp-<pid>-<n>`) and
only `os.replace`s it over the target once everything is written and the
file is closed, so a failed, interrupted or killed load leaves the previous
database exactly as it was.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import duckdb
import pyarrow as pa

from loaders.records import LoadError

SCHEMA_VERSION = "1"
SCHEMA_SQL = (Path(__file__).with_name("schema.sql")).read_text()
DATA_TABLES = ("threads", "checkpoints", "messages", "message_versions", "message_events")

_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP WITH TIME ZONE": pa.timestamp("us", tz="UTC"),
    "INTEGER[]": pa.list_(pa.int32()),
}
_counter = itertools.count()


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SCHEMA_SQL).fetchall()


def arrow_schema(con: duckdb.DuckDBPyConnection, table: str) -> pa.Schema:
    cols = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return pa.schema([(name, _ARROW_TYPES[dtype]) for name, dtype in cols])


class DatabaseWriter:
    """Stage a database beside `target`, then swap it in with `commit()`.

    >>> with DatabaseWriter("out.duckdb") as w:  # doctest: +SKIP
    ...     w.append("threads", rows); w.commit()
    """

    def __init__(self, target: str | os.PathLike, *, start_from_existing: bool = False, flush_rows: int = 20_000) -> None:
        self.target = Path(target)
        self.flush_rows = flush_rows
        self.tmp = self.target.with_name(f"{self.target.name}.tmp-{os.getpid()}-{next(_counter)}")
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self._buffers: dict[str, list[tuple]] = {}
        self._committed = False
        if start_from_existing and self.target.exists():
            # Incremental loads edit a copy; the original stays valid until the swap.
            shutil.copyfile(self.target, self.tmp)
        self.con = duckdb.connect(str(self.tmp))
        self.con.execute("SET TimeZone = 'UTC'").fetchall()
        create_schema(self.con)
        self._schemas = {t: arrow_schema(self.con, t) for t in (*DATA_TABLES, "load_errors")}

    def __enter__(self) -> DatabaseWriter:
        return self

    def __exit__(self, *exc) -> None:
        if not self._committed:
            self.abort()

    def previous_loads(self) -> None:
        """Carry the `loads` history of the database being replaced into the new one."""
        if not self.target.exists():
            return
        try:
            self.con.execute("ATTACH ? AS prev (READ_ONLY)", [str(self.target)])
        except duckdb.Error:
            return  # not a database of ours: it is replaced, nothing to carry
        try:
            has = self.con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'prev' AND table_name = 'loads'"
            ).fetchall()[0][0]
            if has:
                self.con.execute("INSERT INTO loads SELECT * FROM prev.loads").fetchall()
        except duckdb.Error:
            pass
        finally:
            self.con.execute("DETACH prev").fetchall()

    def next_load_id(self) -> int:
        return self.con.execute("SELECT coalesce(max(load_id), 0) + 1 FROM loads").fetchall()[0][0]

    def append(self, table: str, rows: Iterable[tuple]) -> None:
        buf = self._buffers.setdefault(table, [])
        buf.extend(rows)
        if len(buf) >= self.flush_rows:
            self.flush(table)

    def append_errors(self, load_id: int, errors: Iterable[LoadError]) -> None:
        self.append(
            "load_errors",
            ((load_id, e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.stage, e.reason) for e in errors),
        )

    def flush(self, table: str | None = None) -> None:
        for name in [table] if table else list(self._buffers):
            rows = self._buffers.get(name)
            if not rows:
                continue
            schema = self._schemas[name]
            columns = list(zip(*rows))
            batch = pa.Table.from_arrays(
                [pa.array(col, type=field.type) for col, field in zip(columns, schema)], schema=schema
            )
            self.con.register("_batch", batch)
            # `name` is one of our own table names, never data.
            self.con.execute(f"INSERT INTO {name} SELECT * FROM _batch").fetchall()
            self.con.unregister("_batch")
            rows.clear()

    def delete_threads(self, thread_ids: list[str]) -> None:
        """Drop every row of these threads (incremental reloads replace whole threads)."""
        if not thread_ids:
            return
        for table in DATA_TABLES:
            self.con.execute(f"DELETE FROM {table} WHERE thread_id IN (SELECT unnest(?))", [thread_ids]).fetchall()

    def commit(self) -> None:
        self.flush()
        self.con.execute("CHECKPOINT").fetchall()
        self.con.close()
        os.replace(self.tmp, self.target)
        self._committed = True

    def abort(self) -> None:
        try:
            self.con.close()
        except duckdb.Error:
            pass
        for p in (self.tmp, self.tmp.with_name(self.tmp.name + ".wal")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass
