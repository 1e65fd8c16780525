"""From a source to a DuckDB database: `load()` and the batch generator it drives."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from loaders.records import LoadError, SourceError, SourceOptions, SourceReader
from loaders.registry import resolve
from loaders.transform import DEFAULT_THREAD_KEY_PATTERN, compile_thread_key, transform_thread
from loaders.writer import SCHEMA_VERSION, DatabaseWriter

TOOL_VERSION = "0.1.0"

Batch = tuple[str, list]
Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class LoadSummary:
    """What a load did; also stored as its `loads` row."""

    load_id: int
    source: str
    source_kind: str
    mode: str
    db: str
    threads: int
    checkpoints: int
    messages: int
    errors: int
    seconds: float

    def line(self) -> str:
        return (
            f"loaded {self.threads} threads, {self.checkpoints} checkpoints, {self.messages} messages "
            f"from {self.source_kind} {self.source} into {self.db} in {self.seconds:.1f}s"
            f" ({self.errors} row errors{', see load_errors' if self.errors else ''})"
        )


def batches(reader: SourceReader, thread_key_pattern: str | None = None, only: frozenset[str] | None = None) -> Iterator[Batch]:
    """Yield `(table, rows)` batches for every thread a reader holds, one thread at a time.

    >>> for table, rows in batches(reader):  # doctest: +SKIP
    ...     print(table, len(rows))
    """
    regex = compile_thread_key(thread_key_pattern)
    for bundle in reader.threads(only):
        rows = transform_thread(bundle, regex)
        yield "threads", rows.threads
        yield "checkpoints", rows.checkpoints
        yield "messages", rows.messages
        yield "message_versions", rows.message_versions
        yield "message_events", rows.message_events
        yield "load_errors", rows.errors


def _changed_threads(reader: SourceReader, db: Path) -> tuple[frozenset[str], list[str]]:
    """Threads whose checkpoint set differs from the database's: (to load, to drop)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        known: dict[str, set[tuple[str, str]]] = {}
        for t, ns, cid in con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints").fetchall():
            known.setdefault(t, set()).add((ns, cid))
    finally:
        con.close()
    seen: dict[str, set[tuple[str, str]]] = {}
    for t, ns, cid in reader.checkpoint_keys():
        seen.setdefault(t, set()).add((ns, cid))
    changed = frozenset(t for t, keys in seen.items() if known.get(t) != keys)
    gone = [t for t in known if t not in seen]
    return changed, gone


def load(
    source: str,
    db: str | Path,
    *,
    kind: str | None = None,
    thread_key_pattern: str | None = None,
    options: SourceOptions = SourceOptions(),
    incremental: bool = False,
    progress: Progress | None = None,
) -> LoadSummary:
    """Load a checkpoint store into a DuckDB database, atomically.

    A full load replaces the database; `incremental=True` re-reads only the
    threads whose checkpoints changed since the previous load (new threads, new
    checkpoints of old threads) and drops threads gone from the source.

    >>> load("demo/demo.sqlite", "demo.duckdb").messages  # doctest: +SKIP
    412
    """
    db = Path(db)
    src = resolve(str(source), kind)
    compile_thread_key(thread_key_pattern)  # fail before touching anything
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    reader = src.open(str(source), options)
    try:
        mode = "incremental" if incremental and db.exists() else "full"
        with DatabaseWriter(db, start_from_existing=(mode == "incremental")) as writer:
            only = None
            if mode == "incremental":
                only, gone = _changed_threads(reader, db)
                writer.delete_threads(sorted(only) + gone)
            else:
                writer.previous_loads()
            load_id = writer.next_load_id()
            total = len(only) if only is not None else reader.thread_count()
            counts = {"threads": 0, "checkpoints": 0, "messages": 0, "load_errors": 0}
            done = 0
            if progress:
                progress(0, total)
            for table, rows in batches(reader, thread_key_pattern, only):
                if table == "load_errors":
                    writer.append_errors(load_id, rows)
                    done += 1
                    if progress:
                        progress(done, total)
                else:
                    writer.append(table, rows)
                if table in counts:
                    counts[table] += len(rows)
            seconds = time.perf_counter() - t0
            if mode == "incremental":
                # Counts describe the whole database, not only what was re-read.
                for table in ("threads", "checkpoints", "messages"):
                    writer.flush(table)
                    counts[table] = writer.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            summary = LoadSummary(
                load_id, reader.describe(), src.kind, mode, str(db),
                counts["threads"], counts["checkpoints"], counts["messages"], counts["load_errors"], seconds,
            )
            writer.flush()
            writer.con.execute(
                "INSERT INTO loads VALUES (?, ?, ?, ?, ?, ?, 'ok', ?, ?, ?, ?, ?, ?, ?)",
                [
                    load_id, summary.source, src.kind, mode, started, datetime.now(timezone.utc),
                    summary.threads, summary.checkpoints, summary.messages, summary.errors,
                    thread_key_pattern or DEFAULT_THREAD_KEY_PATTERN, TOOL_VERSION, json.dumps(asdict(options)),
                ],
            ).fetchall()
            writer.con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?), ('tool_version', ?)",
                [SCHEMA_VERSION, TOOL_VERSION],
            ).fetchall()
            writer.commit()
    finally:
        reader.close()
    return summary


__all__ = ["LoadError", "LoadSummary", "SourceError", "batches", "load"]
