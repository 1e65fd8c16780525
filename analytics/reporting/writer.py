"""The one writer of reports and the one format they share.

`write_report` hands a kind's rows (a DuckDB relation, `analytics.reporting.spec`) to DuckDB's
own CSV writer (no pandas; a large kind part by part, so memory stays bounded) and records
the export (`analytics.export_log`); `report_frame` returns the very same rows as a DataFrame,
so what a page shows is exactly what it offers for download; `frame_csv` writes any DataFrame
in the same format (`frame_text_csv` a frame as it is). One format for every kind, the app's downloads
included, every text cell that would start a spreadsheet formula written as text (`csv_cells`): timestamps as
ISO-8601 UTC text (`2025-03-01T09:00:12.500000Z`), dates as `YYYY-MM-DD`, booleans
`true`/`false`, floating-point figures rounded to `FLOAT_DECIMALS` decimals; under the
deployment's masking, every text column masked.

>>> write_report("demo.duckdb", "conversations", "conv.csv", Filters(tenants=("acme",)))  # doctest: +SKIP
PosixPath('conv.csv')
>>> frame_csv(pd.DataFrame({"day": [pd.Timestamp("2025-03-01 09:00:12.5")]})).decode().splitlines()
['day', '2025-03-01T09:00:12.500000Z']
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb
import orjson

from analytics import _pandas as pd
from analytics.db import ConOrPath, applied_policy, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.masking import mask_arrow
from analytics.policy import effective
from analytics.reporting.csv_cells import frame_cells, sql_cell
from analytics.reporting.spec import ReportSpec, report_spec
from loaders.catalog import DATE, TIMESTAMPTZ

ISO_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"
ISO_DATE = "%Y-%m-%d"
#: Decimals of a DOUBLE column in a CSV (seconds to the millisecond; 1.9396370000000003 → 1.94).
FLOAT_DECIMALS = 3


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _as_text(name: str, type_name: str) -> str:
    """A column of a report's relation as its CSV text (`type_name`: DuckDB's name of its type)."""
    col = _quote(name)
    if type_name == TIMESTAMPTZ.duckdb:
        # The UTC wall clock from epoch microseconds: independent of the session time
        # zone, and half the cost of a per-row AT TIME ZONE conversion.
        return f"strftime(make_timestamp(epoch_us({col})), '{ISO_UTC}') AS {col}"
    if type_name.startswith("TIMESTAMP"):  # naive timestamps are UTC throughout the project
        return f"strftime(CAST({col} AS TIMESTAMP), '{ISO_UTC}') AS {col}"
    if type_name == DATE.duckdb:
        return f"strftime({col}, '{ISO_DATE}') AS {col}"
    if type_name in ("DOUBLE", "FLOAT"):
        return f"round({col}, {FLOAT_DECIMALS}) AS {col}"
    return col

def _as_csv_rows(
    spec: ReportSpec, rel: duckdb.DuckDBPyRelation, options: Mapping[str, Any]
) -> duckdb.DuckDBPyRelation:
    documented = spec.columns_for(options)
    if tuple(rel.columns) != documented:
        # The column order is a documented contract; a kind that drifts from it is a bug.
        raise AssertionError(f"report {spec.name!r} built columns {rel.columns}, documented {list(documented)}")
    return rel.project(", ".join(_as_text(n, str(t)) for n, t in zip(rel.columns, rel.types)))


def report_frame(
    con_or_path: ConOrPath, kind: str, filters: Filters = Filters(), options: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """The rows `write_report` writes, as a DataFrame (timestamps as the same ISO text).

    >>> report_frame("demo.duckdb", "daily", Filters(tenants=("acme",))).columns[:3].tolist()  # doctest: +SKIP
    ['day', 'tenant_id', 'conversations_started']
    """
    spec = report_spec(kind)
    options = options or {}
    with connection(con_or_path) as con:
        return _masked(con, _as_csv_rows(spec, spec.build(con, filters, options), options)).df()


def write_report(
    con_or_path: ConOrPath,
    kind: str,
    out_path: str | os.PathLike,
    filters: Filters = Filters(),
    options: Mapping[str, Any] | None = None,
    printed: bool = False,
) -> Path:
    """Write report `kind` as a UTF-8 CSV with a header row (a path ending `.json`: a JSON
    array of objects, `.jsonl`: one object per line, with the same values); returns the
    path written. `printed`: the file is only on its way to stdout, so the export log names
    no file (as for every printed export: no file of it is left to find or erase).

    DuckDB writes the rows (a kind with `parts` part by part, each sorted on
    its own) to a temporary file renamed into place at the end, so memory stays
    bounded and a failed report never leaves half a file behind.

    >>> write_report("demo.duckdb", "conversations", "conv.csv", Filters(tenants=("acme",)))  # doctest: +SKIP
    PosixPath('conv.csv')
    """
    out = Path(out_path)
    if out.is_dir():
        raise BadRequest(f"--out {out} is a directory; name a file")
    if not out.parent.is_dir():
        raise BadRequest(f"cannot write {out}: no directory {out.parent}")
    if _streamed(out):  # `--out /dev/null`, `/dev/stdout`, a FIFO: written into, never replaced, no file left
        with tempfile.TemporaryDirectory(prefix="tl-out-") as folder:
            written = write_report(con_or_path, kind, Path(folder) / f"report{out.suffix}", filters, options, True)
            with written.open("rb") as src, out.open("wb") as sink:
                shutil.copyfileobj(src, sink)
        return out
    from loaders.writer import TargetError, refuse_non_file  # (here: importing the writer costs every reader)

    try:
        refuse_non_file(out, "--out")
    except TargetError as exc:
        raise BadRequest(str(exc)) from None
    spec = report_spec(kind)
    options = options or {}
    tmp = out.with_name(f".{out.name}.{os.getpid()}.partial")
    counts: list[int] = []
    held: set[str] = set()  # the threads its rows belong to, for the export log
    try:
        with connection(con_or_path) as con:
            if spec.parts is None:
                parts = iter([_masked(con, _as_csv_rows(spec, spec.build(con, filters, options), options), held)])
            else:
                parts = (_masked(con, _as_csv_rows(spec, p, options), held) for p in spec.parts(con, filters, options))
            parts = _counted(parts, counts)
            json_format = JSON_SUFFIXES.get(out.suffix.lower())
            if json_format is not None:
                _write_json(parts, tmp, lines=json_format == "lines")
            elif spec.parts is None:
                write_csv_rows(next(parts), tmp, header=True)
            else:
                _write_parts(spec.columns_for(options), parts, tmp)
            _log_export(con, con_or_path, kind, filters, options, sum(counts), None if printed else out, held)
        os.replace(tmp, out)  # only once the export log has its row (fail closed)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def _streamed(out: Path) -> bool:
    """`out` is, or links to, a character device or a FIFO: a stream to write into, not a file to
    replace (renaming a finished file over `/dev/null` would make it a regular file)."""
    try:
        mode = out.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _counted(parts: Iterator[duckdb.DuckDBPyRelation], counts: list[int]) -> Iterator[duckdb.DuckDBPyRelation]:
    # The export log records the rows written: each part counted as it is handed to the writer.
    for part in parts:
        counts.append(part.aggregate("count(*)").fetchall()[0][0])
        yield part


def _log_export(con, con_or_path: ConOrPath, kind: str, filters: Filters, options: Mapping[str, Any], rows: int,
                out: Path | None, threads: set[str] = frozenset()) -> None:
    """One row of the export log for a written report (`analytics.exports`; raises `ExportRefused`)."""
    from analytics.export_log import arguments_of, record_export
    from analytics.workspace.store import database_file, report_workspace

    db = options.get("db") or (database_file(con) if isinstance(con_or_path, duckdb.DuckDBPyConnection) else con_or_path)
    arguments = {**arguments_of(options, skip=("db", "out", "kind", "command", "redact", "redact_config")),
                 "filters": filters}
    record_export(db, kind, arguments=arguments, rows=rows, masked=applied_policy(con).redact,
                  target=None if out is None else out.resolve(), workspace=report_workspace(con, {**options, "db": db}),
                  threads=threads)


def _masked(con: duckdb.DuckDBPyConnection, rows: duckdb.DuckDBPyRelation,
            held: set[str] | None = None) -> duckdb.DuckDBPyRelation:
    """`rows` as they may leave the tool: on a connection that masks personal data, every
    text column masked (ids and labels too: a thread key can hold an email; contract §11).
    `held`: gets the `thread_id`s of the rows as stored (the export log records them)."""
    policy = applied_policy(con)
    if not policy.redact:
        if held is not None and "thread_id" in rows.columns:
            held.update(t for (t,) in rows.project('"thread_id"').distinct().fetchall() if t is not None)
        return rows
    table = rows.to_arrow_table()
    if held is not None and "thread_id" in table.column_names:
        held.update(t for t in table.column("thread_id").unique().to_pylist() if t is not None)
    return con.from_arrow(mask_arrow(table, policy, every_text_column=True))


def frame_csv(frame: pd.DataFrame) -> bytes:
    """A DataFrame as CSV in the reports' one format (ISO-8601 UTC times, `true`/`false`,
    floats to `FLOAT_DECIMALS`), for answers that are frames rather than report kinds
    (a transcript diff, a page's table); under the deployment's masking, every text
    column masked, as a report's are.

    >>> frame_csv(pd.DataFrame({"ok": [True], "s": [1.23456]})).decode().splitlines()
    ['ok,s', 'true,1.235']
    """
    con = duckdb.connect()
    try:
        rel = con.from_df(frame)
        rows = rel.project(", ".join(_as_text(n, str(t)) for n, t in zip(rel.columns, rel.types)))
        policy = effective()
        if policy.redact:  # a CSV leaving the tool: every text column, as the reports mask theirs
            rows = con.from_arrow(mask_arrow(rows.to_arrow_table(), policy, every_text_column=True))
        with tempfile.TemporaryDirectory(prefix="tl-csv-") as tmp:
            path = Path(tmp) / "frame.csv"
            write_csv_rows(rows, path, header=True)
            return path.read_bytes()
    finally:
        con.close()


#: Rows handed from a reader's connection to the CSV writer's at a time.
CSV_BATCH_ROWS = 65_536


def write_csv_rows(rows: duckdb.DuckDBPyRelation, path: Path, header: bool = True) -> None:
    """The one place a relation's rows become CSV cells: a text cell that a spreadsheet would
    run as a formula is written as text (`analytics.reporting.csv_cells`)."""
    safe = rows.project(", ".join(sql_cell(_quote(n)) + " AS " + _quote(n) if str(t) == "VARCHAR" else _quote(n)
                                  for n, t in zip(rows.columns, rows.types)))
    # Written by a connection of its own, the rows streamed to it: a reader's connection reads
    # no file but its database (`analytics.stored_code`). The path is a value, never SQL text.
    out = duckdb.connect()
    try:
        out.from_arrow(safe.to_arrow_reader(CSV_BATCH_ROWS)).write_csv(
            str(path), sep=",", header=header, encoding="utf-8", overwrite=True)
    finally:
        out.close()


def frame_text_csv(frame: pd.DataFrame) -> str:
    """`frame` as CSV as it is (no report format: `frame_csv` is that), written by the one
    writer of CSV cells (`write_csv_rows`): a text cell a spreadsheet would run as a formula is
    written as text, and a value holding a line break or carriage return is quoted.

    >>> frame_text_csv(pd.DataFrame({"t": ["=1+1", "a\\rb"], "n": [-1, 2]})).split("\\n")
    ['t,n', "'=1+1,-1", '"a\\rb",2', '']
    """
    con = duckdb.connect()
    try:
        with tempfile.TemporaryDirectory(prefix="tl-csv-") as tmp:
            path = Path(tmp) / "frame.csv"
            write_csv_rows(con.from_df(frame), path)
            return path.read_bytes().decode("utf-8")
    finally:
        con.close()


#: Output file suffixes written as JSON instead of CSV: an array, or one object per line.
JSON_SUFFIXES = {".json": "array", ".jsonl": "lines", ".ndjson": "lines"}


def _write_json(parts: Iterable[duckdb.DuckDBPyRelation], path: Path, lines: bool) -> None:
    # The CSV's values (ISO UTC text for times, rounded floats), as JSON scalars.
    first = True
    with path.open("wb") as sink:
        if not lines:
            sink.write(b"[")
        for rows in parts:
            for batch in rows.to_arrow_reader(batch_size=10_000):
                for record in batch.to_pylist():
                    if not lines and not first:
                        sink.write(b",")
                    sink.write(b"\n" if not lines else b"")
                    sink.write(orjson.dumps(record))
                    if lines:
                        sink.write(b"\n")
                    first = False
        if not lines:
            sink.write(b"\n]\n")


def _write_parts(columns: tuple[str, ...], parts: Iterable[duckdb.DuckDBPyRelation], path: Path) -> None:
    piece = path.with_name(path.name + ".part")
    try:
        with path.open("wb") as sink:
            # Column names are plain identifiers; written here, an empty report still has its header.
            sink.write((",".join(columns) + "\n").encode())
            for rows in parts:
                write_csv_rows(rows, piece, header=False)
                with piece.open("rb") as source:
                    shutil.copyfileobj(source, sink)
    finally:
        piece.unlink(missing_ok=True)
