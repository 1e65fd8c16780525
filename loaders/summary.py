"""What a load reports and records: its summary (`LoadSummary`, also its `loads` row) and the
contract of the tables the query layer computes in the load's commit (`DerivedTables`).

>>> LoadSummary(1, "demo.sqlite", "sqlite", "full", "demo.duckdb", 37, 900, 217, 0, 1.2).line()
'loaded 37 threads, 900 checkpoints, 217 messages from sqlite demo.sqlite into demo.duckdb in 1.2s (0 row errors)'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Protocol

from loaders.source import SourceOptions
from loaders.thread_keys import DEFAULT_THREAD_KEY_PATTERN
from loaders.version import __version__


TOOL_VERSION = __version__  # stored in `loads` and `meta` (loaders/version.py)

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
    #: Threads an incremental load re-read or dropped (0: nothing had changed, the database
    #: was left untouched); None for a full load.
    changed: int | None = None

    def line(self) -> str:
        if self.changed == 0:
            return f"nothing changed in {self.source_kind} {self.source}: {self.db} is up to date ({self.seconds:.1f}s)"
        return (
            f"loaded {self.threads} threads, {self.checkpoints} checkpoints, {self.messages} messages "
            f"from {self.source_kind} {self.source} into {self.db} in {self.seconds:.1f}s"
            f" ({self.errors} row errors{', see load_errors' if self.errors else ''})"
        )


def load_row(summary: LoadSummary, started: datetime, thread_key_pattern: str | None, options: SourceOptions) -> list:
    """The `loads` row of a load that is about to commit (`writer.record_load`)."""
    return [
        summary.load_id, summary.source, summary.source_kind, summary.mode, started, datetime.now(timezone.utc),
        summary.threads, summary.checkpoints, summary.messages, summary.errors,
        thread_key_pattern or DEFAULT_THREAD_KEY_PATTERN, TOOL_VERSION, json.dumps(asdict(options)),
    ]


class DerivedTables(Protocol):
    """Tables computed from the loaded rows and written in the same commit as them
    (per-conversation metrics and the like).

    The loader does not know what they are: the query layer defines them and the
    composition root (`transcript_lens.load`, the CLI) hands them to `load()`, so
    that loaders never import analytics. `prepare()` runs in a thread while the
    workers decode (imports, say); `write(con, threads)` runs on the load's
    connection: `threads` None after a full load (write every row), else the
    threads an incremental load replaced or dropped (only their rows changed).
    """

    def prepare(self) -> None: ...

    def write(self, con, threads: list[str] | None) -> None: ...
    # Optional: `context() -> str`, what else besides the source decides what `write` leaves
    # (the standing erasure tombstones, say); part of the source's change token, so an
    # incremental load whose source did not change still runs when it did.
