"""Staging a COPY CSV export: each table's file read by DuckDB's CSV reader, piece by piece."""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from loaders.pg_export.archive import MAX_LINE, uncompressed
from loaders.pg_export.csv_files import collect_csv_files
from loaders.pg_export.csv_pieces import RowTooLong, csv_pieces, first_long_line, line_at
from loaders.pg_export.rows import channel_filter, source_columns
from loaders.pg_export.stage import Stage, StageLoader
from loaders.pg_rows import TABLES, table_shape
from loaders.records import SourceError

# DuckDB's CSV reader holds a buffer of at least one row, and sizes it from
# max_line_size: left unbounded, it asked for the whole file at once (1.3 GB for
# a 1.4 GB export) and failed under the memory limit. 64 MB of CSV is a 32 MB
# `messages` blob in hex.
CSV_MEMORY_LIMIT = "256MB"
CSV_MAX_ROW = MAX_LINE
CSV_PIECE = 16 << 20  # see `csv_pieces`


def stage_csv_export(stage: Stage, path: Path, where: str) -> bool:
    """Stage the export's three CSV files (a folder or zip at `path`); returns `shallow`."""
    files = collect_csv_files(path, stage.dir)
    columns = {table: set(cols) for table, (_, cols) in files.items() if table in TABLES}
    shallow = table_shape(columns, where)
    # DuckDB's CSV reader tells NULL (an empty field) from "" (a quoted empty string).
    con = duckdb.connect(config={"memory_limit": CSV_MEMORY_LIMIT, "threads": 2, "preserve_insertion_order": False})
    try:
        for table in TABLES:
            file, header = files[table]
            label = f"{where}: {file.name}" if path.is_dir() else f"{where}!{file.name}"
            _stage_csv(con, stage, table, uncompressed(file, stage.dir, label), header, shallow, label)
    finally:
        con.close()
    return shallow


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


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.3g} MB"


def _stage_csv(
    con: duckdb.DuckDBPyConnection, stage: Stage, table: str, file: Path, header: list[str], shallow: bool, where: str
) -> None:
    position = {name: i for i, name in enumerate(header)}
    # Columns are named c0..cN, never after the header, so nothing from the
    # file is ever spliced into SQL.
    wanted = [f"c{position[c]}" if c is not None and c in position else "NULL" for c in source_columns(table, shallow)]
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
    loader = StageLoader(stage, table, shallow, where)
    piece_path = Path(stage.dir) / f"{table}.piece.csv"
    try:
        for offset, parts in csv_pieces(file, CSV_PIECE, CSV_MAX_ROW):
            with piece_path.open("wb") as out:
                out.writelines(parts)
            try:
                cur = con.execute(query, [str(piece_path), *(channels or ())])
                while batch := cur.fetchmany(64 if table == "checkpoint_blobs" else 1000):
                    for raw in batch:
                        loader.add(raw, sum(len(v) for v in raw if v is not None))
            except duckdb.Error as exc:
                raise _PieceError(_duckdb_error(exc), line_at(file, offset)) from None
        loader.flush()
    except (_PieceError, RowTooLong) as exc:
        # DuckDB reports a row over its line limit as a wrong column count: say what it is.
        long_line = first_long_line(file, CSV_MAX_ROW)
        if long_line is not None:
            raise SourceError(
                f"{where}: line {long_line} is longer than {_mb(CSV_MAX_ROW)}, the longest row this reader takes "
                "from a CSV export; load that database live (postgresql://...) or from a pg_dump instead"
            ) from None
        if isinstance(exc, RowTooLong):  # lines of its own, inside a quoted field that does not end
            raise SourceError(
                f"{where}: the row starting at line {line_at(file, exc.offset)} runs past {_mb(CSV_MAX_ROW)}, the longest "
                "row this reader takes from a CSV export (a quoted field that is never closed?)"
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
