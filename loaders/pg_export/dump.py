"""A plain pg_dump (SQL text): recognised by its header or COPY lines, and its COPY
blocks of the checkpoint tables streamed into the stage."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import IO

from loaders.pg_export.archive import capped_lines, read_head
from loaders.pg_export.copy_text import copy_text_field, idents, python_encoding
from loaders.pg_export.rows import OPTIONAL_COLUMNS, channel_filter, source_columns
from loaders.pg_export.stage import Stage, StageLoader
from loaders.pg_rows import TABLES, table_shape
from loaders.records import SourceError

_COPY_RE = re.compile(
    rb'^COPY\s+(?P<name>(?:"(?:[^"]|"")+"|[^\s."(]+)(?:\.(?:"(?:[^"]|"")+"|[^\s."(]+))?)'
    rb"\s*(?:\((?P<cols>.*)\))?\s+FROM\s+stdin\s*;\s*$",
    re.IGNORECASE,
)
_INSERT_RE = re.compile(rb"^INSERT INTO\s+(?:\S+\.)?\"?(checkpoints|checkpoint_blobs|checkpoint_writes)\"?\s", re.IGNORECASE)
_ENCODING_RE = re.compile(rb"^SET client_encoding = '([^']+)';")
_PLAIN_MARKERS = (b"PostgreSQL database dump",)
_COPY_LINE_RE = re.compile(rb"^COPY\s+\S.*\sFROM\s+stdin;\s*$", re.MULTILINE)


def is_plain_dump(path: Path) -> bool:
    if not path.is_file():
        return False
    head = read_head(path)
    return any(m in head for m in _PLAIN_MARKERS) or _COPY_LINE_RE.search(head) is not None


def stage_dump(
    stage: Stage, fh: IO[bytes], where: str, schema: str | None,
    restore_failed: Callable[[], str | None] | None = None,
) -> bool:
    """Stream a plain dump's COPY blocks of the checkpoint tables into the stage, a line
    (`archive.MAX_LINE` at most) at a time; returns `shallow`."""
    encoding = "utf-8"
    columns: dict[str, set[str]] = {}
    schema_of: dict[str, str] = {}
    inserts = False
    block: _DumpBlock | None = None
    line_no = 0
    for line_no, line in enumerate(capped_lines(fh, where), 1):
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
            encoding = python_encoding(m.group(1).decode("ascii", "replace"), where)
            continue
        if _INSERT_RE.match(line):
            inserts = True
            continue
        m = _COPY_RE.match(line)
        if m is None:
            continue
        parts = idents(m.group("name").decode(encoding))
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
        cols = idents(m.group("cols").decode(encoding))
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
        self.loader: StageLoader | None = None
        if stage is None:
            return
        # Each table's own columns say which schema wrote it; `table_shape`
        # checks at the end that all three agree.
        shallow = "checkpoint_id" not in cols if name == "checkpoints" else "version" not in cols
        needed = source_columns(name, shallow and name != "checkpoint_writes")
        lacking = [c for c in needed if c is not None and c not in cols and c not in OPTIONAL_COLUMNS]
        if lacking:
            raise SourceError(f"{where}: COPY {name} lacks column{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}")
        self.positions = [cols.index(c) if c is not None and c in cols else None for c in needed]
        self.width = len(cols)
        channels = channel_filter(name)
        self.channel_at = cols.index("channel") if channels else -1
        self.channels = {c.encode() for c in channels} if channels else None
        self.loader = StageLoader(stage, name, shallow, where)

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
