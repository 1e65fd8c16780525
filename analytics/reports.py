"""CSV reports (contract §9): one registry of report kinds, one writer, one CLI.

A kind is a `ReportSpec`: its documented columns and a function that builds
the rows as a DuckDB relation. `write_report` hands that relation to DuckDB's
own CSV writer (no pandas; a large kind part by part, so memory stays bounded);
`report_frame` returns the very same rows as a DataFrame, so what a page
shows is exactly what it offers for download. One format for every kind, the
app's downloads included: timestamps as ISO-8601 UTC text
(`2025-03-01T09:00:12.500000Z`), dates as `YYYY-MM-DD`, booleans `true`/`false`,
floating-point figures rounded to `FLOAT_DECIMALS` decimals.

Other modules add kinds the way the built-ins are added:

>>> register_report(ReportSpec("resume", "resume QA per thread", COLUMNS, build))  # doctest: +SKIP

    python -m analytics report conversations --db lens.duckdb --out conv.csv --tenant acme
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import orjson

from analytics import metrics, trends
from analytics import _pandas as pd
from analytics.cli import command
from analytics.db import ConOrPath, applied_policy, connect, connection
from analytics.errors import AnalyticsError, BadRequest
from analytics.filters import Filters, Range
from analytics.masking import mask_arrow, premasked
from analytics.policy import effective
from analytics.resume.gap import add_gap_argument, gap_option
from analytics.scope import ThreadConditions, thread_scope
from analytics.transcript import parse_time
from analytics.cli_types import INT64_MAX
from loaders.catalog import DATE, MESSAGES, TIMESTAMPTZ

ISO_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"
ISO_DATE = "%Y-%m-%d"
#: Decimals of a DOUBLE column in a CSV (seconds to the millisecond; 1.9396370000000003 → 1.94).
FLOAT_DECIMALS = 3

#: (connection, filters, options) → the report's rows, columns exactly `ReportSpec.columns`.
BuildRows = Callable[[duckdb.DuckDBPyConnection, Filters, Mapping[str, Any]], duckdb.DuckDBPyRelation]
#: The same, as consecutive parts.
BuildParts = Callable[[duckdb.DuckDBPyConnection, Filters, Mapping[str, Any]], Iterable[duckdb.DuckDBPyRelation]]


@dataclass(frozen=True)
class ReportSpec:
    """One kind of CSV report.

    `build` gets the connection, the filters and free-form `options` (from the
    CLI: every parsed argument by name; from Python: the `options` mapping).
    `arguments`, when given, adds the kind's own options to the `report`
    subcommand; name them so they cannot clash with another kind's.
    """

    name: str
    help: str
    columns: tuple[str, ...]
    build: BuildRows
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    #: Optional: the rows of `build` again, as consecutive parts, for reports too
    #: big to sort in memory; `write_report` then writes them part by part.
    parts: BuildParts | None = None
    #: Optional: the columns for given options, when they depend on them (`trends --split`).
    columns_of: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None

    def columns_for(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        return self.columns if self.columns_of is None else self.columns_of(options)


REPORTS: dict[str, ReportSpec] = {}


def registry() -> dict[str, ReportSpec]:
    """Every registered report, the built-in ones of other modules included (`analytics.register_all`).

    >>> sorted(registry())[:3]
    ['annotations', 'backlog', 'branches']
    """
    import analytics

    analytics.register_all()
    return REPORTS


def register_report(spec: ReportSpec) -> ReportSpec:
    """Make `spec` available to `write_report`, `report_frame` and `python -m analytics report`.

    >>> register_report(ReportSpec("daily", "…", metrics.DAILY_COLUMNS, build))  # doctest: +SKIP
    """
    if spec.name in REPORTS and REPORTS[spec.name] is not spec:
        raise ValueError(f"a report named {spec.name!r} is already registered")
    REPORTS[spec.name] = spec
    return spec


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


def _spec(kind: str) -> ReportSpec:
    spec = registry().get(kind)
    if spec is None:
        raise BadRequest(f"unknown report {kind!r}; known: {', '.join(sorted(registry()))}")
    return spec


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
    spec = _spec(kind)
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
    spec = _spec(kind)
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
                _write_csv(next(parts), tmp, header=True)
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
            _write_csv(rows, path, header=True)
            return path.read_bytes()
    finally:
        con.close()


def _write_csv(rows: duckdb.DuckDBPyRelation, path: Path, header: bool) -> None:
    # The path is handed to DuckDB as a value, never spliced into SQL text.
    rows.write_csv(str(path), sep=",", header=header, encoding="utf-8", overwrite=True)


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
                _write_csv(rows, piece, header=False)
                with piece.open("rb") as source:
                    shutil.copyfileobj(source, sink)
    finally:
        piece.unlink(missing_ok=True)


# --- built-in kinds ------------------------------------------------------------------

#: Columns of the `transcript` report: `messages` columns (checked against the catalogue), in this order.
TRANSCRIPT_COLUMNS = MESSAGES.pick(
    "thread_id",
    "tenant_id",
    "sub_tenant_id",
    "session_id",
    "ordinal",
    "role",
    "lc_type",
    "chat_role",
    "name",
    "message_id",
    "ts",
    "checkpoint_id",
    "content",
    "content_chars",
    "non_text_blocks",
    "tool_calls",
    "tool_call_count",
    "tool_call_id",
    "tool_status",
    "model",
    "input_tokens",
    "output_tokens",
    "total_tokens",
)


def _ranges(options: Mapping[str, Any]) -> tuple[Range, ...]:
    """`--min COLUMN=VALUE` / `--max COLUMN=VALUE` as ranges (several on one column combine).

    >>> _ranges({"min": ["duration_s=60"], "max": ["tool_errors=0", "duration_s=3600"]})
    (Range(column='duration_s', low=60.0, high=3600.0), Range(column='tool_errors', low=None, high=0.0))
    """
    bounds: dict[str, list[float | None]] = {}
    for end, flag in ((0, "min"), (1, "max")):
        for given in options.get(flag) or ():
            column, sep, value = str(given).partition("=")
            try:
                number = float(value)
            except ValueError:
                number = None
            if not sep or number is None or column.strip() not in metrics.RANGE_COLUMNS:
                raise BadRequest(f"--{flag} {given!r}: give COLUMN=NUMBER, COLUMN one of {', '.join(metrics.RANGE_COLUMNS)}")
            bounds.setdefault(column.strip(), [None, None])[end] = number
    return tuple(Range(column, low, high) for column, (low, high) in bounds.items())


def _conversation_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    # The load-time conversation_metrics table when it is current and the gap is the default;
    # sorted (and cut) in DuckDB, so the app's download and the CLI's file are the same rows.
    # Options `sort` (a column; default thread_id), `desc` (descending), `limit` (the first N rows),
    # `min` / `max` (COLUMN=VALUE ranges on the metrics, as the app's "Metric ranges").
    ranges = _ranges(options)
    if ranges and not isinstance(filters, ThreadConditions):
        filters = thread_scope(con, filters, ranges=ranges).conditions
    sort, descending = options.get("sort") or "thread_id", bool(options.get("desc"))
    sql, params = metrics.conversation_list_sql(
        con, filters, sort, descending, _limit_option(options.get("limit")), gap_minutes=gap_option(options),
    )
    return with_outcomes(con, filters, sql, params, sort, descending)


def with_outcomes(con, filters: Filters, sql: str, params: list, sort: str, descending: bool) -> duckdb.DuckDBPyRelation:
    """The conversation list's rows (`sql`, `params`) with each thread's outcome and the signals that
    fired (`;` between them, `resolved_closing` aside), as the app's list shows them, in the list's order."""
    from analytics.conversation_outcomes.report import outcomes_relation
    from analytics.conversation_outcomes.signals import SIGNALS

    fired = ", ".join(f"CASE WHEN {s} THEN '{s}' END" for s in SIGNALS if s != "resolved_closing")
    con.register("tl_report_outcomes", outcomes_relation(con, filters).select(
        f"thread_id, outcome, concat_ws(';', {fired}) AS signals").arrow().read_all())
    return con.sql(f"WITH l AS ({sql}) SELECT l.*, o.outcome, nullif(o.signals, '') AS signals FROM l "
                   f"LEFT JOIN tl_report_outcomes o USING (thread_id) ORDER BY {metrics.list_order('l', sort, descending)}",
                   params=params)


def _limit_option(value: Any) -> int | None:
    if value is None:
        return None
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= INT64_MAX or str(value).strip() != str(limit):
        raise BadRequest(f"--limit must be a positive integer, got {value!r}")
    return limit


def _conversation_arguments(parser: argparse.ArgumentParser) -> None:
    # Checked by the report (one `error:` line naming the valid columns), not by argparse's choices
    # (a usage block listing 37 names).
    parser.add_argument("--sort", metavar="COLUMN",
                        help="conversations: sort by this column (default thread_id; ties by thread_id, "
                             "empty values last)")
    parser.add_argument("--desc", action="store_true", help="conversations: sort descending")
    parser.add_argument("--limit", metavar="N", help="conversations: keep the first N rows of the sort")
    ranged = ", ".join(metrics.RANGE_COLUMNS)
    parser.add_argument("--min", action="append", default=[], metavar="COLUMN=VALUE",
                        help=f"conversations: keep threads whose COLUMN is at least VALUE (repeatable; {ranged})")
    parser.add_argument("--max", action="append", default=[], metavar="COLUMN=VALUE",
                        help="conversations: keep threads whose COLUMN is at most VALUE (repeatable)")


def _daily_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    sql, params = metrics.daily_sql(filters)
    return con.sql(sql, params=params)


#: About this many messages per part of a written transcript report (one sort each).
TRANSCRIPT_PART_MESSAGES = 100_000

_TRANSCRIPT_SQL = "SELECT {columns} FROM messages m WHERE {where} ORDER BY m.thread_id, m.ordinal"


def _transcript_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    where, params = filters.message_where("m")
    columns = ", ".join(f"m.{c}" for c in TRANSCRIPT_COLUMNS)
    return con.sql(_TRANSCRIPT_SQL.format(columns=columns, where=where), params=params)


def _transcript_parts(con, filters: Filters, options: Mapping[str, Any]) -> Iterator[duckdb.DuckDBPyRelation]:
    # Sorting a million messages with their content holds them all in memory;
    # consecutive thread-id ranges, each sorted alone, give the same rows in
    # the same order a bounded slice at a time.
    thread_sql, thread_params = filters.thread_where("t")
    ranges = con.execute(
        f"""
        SELECT min(thread_id), max(thread_id)
        FROM (SELECT t.thread_id, sum(t.message_count) OVER (ORDER BY t.thread_id) // ? AS part
              FROM threads t WHERE {thread_sql})
        GROUP BY part ORDER BY 1""",
        [TRANSCRIPT_PART_MESSAGES, *thread_params],
    ).fetchall()
    where, params = filters.message_where("m")
    columns = ", ".join(f"m.{c}" for c in TRANSCRIPT_COLUMNS)
    sql = _TRANSCRIPT_SQL.format(columns=columns, where=f"({where}) AND m.thread_id BETWEEN ? AND ?")
    for first, last in ranges:
        yield con.sql(sql, params=[*params, first, last])


register_report(ReportSpec(
    "conversations", "one row per conversation: metrics.conversation_list(), its outcome and the signals that fired",
    (*metrics.LIST_COLUMNS, "outcome", "signals"),
    _conversation_rows, arguments=_conversation_arguments,
))  # fmt: skip
register_report(ReportSpec(
    "transcript", "the messages of the matching threads, in transcript order", TRANSCRIPT_COLUMNS, _transcript_rows,
    parts=_transcript_parts,
))  # fmt: skip
def _trend_options(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    return options.get("by"), options.get("split")


def _trend_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    by, split = _trend_options(options)
    if by is None:  # chosen from the data range in scope, as the Overview page chooses it
        h = metrics.overview(con, filters)
        by = trends.default_bucket(h["first_ts"], h["last_ts"])
    sql, params = trends.trends_sql(filters, by, split, metrics.current_trend_tables(con))
    return con.sql(sql, params=params)


def _trend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", choices=trends.BUCKETS, help="trends: bucket by UTC day, ISO week (Monday) or month "
                        "(default: from the date range, as the Overview page)")
    parser.add_argument("--split", choices=sorted(trends.SPLITS), help="trends: one row per period and model, tool "
                        "or tenant")


register_report(ReportSpec(
    "trends", "per day / ISO week / month (--by), optionally --split model|tool|tenant: trends.trends()",
    trends.TREND_COLUMNS, _trend_rows, arguments=_trend_arguments,
    columns_of=lambda options: trends.columns(_trend_options(options)[1]),
))  # fmt: skip
register_report(ReportSpec(
    "daily", "per UTC day and tenant: metrics.daily()", metrics.DAILY_COLUMNS, _daily_rows,
))  # fmt: skip


# --- CLI -----------------------------------------------------------------------------


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """The `Filters` options every report takes."""
    many = dict(action="append", default=[], metavar="ID")
    parser.add_argument("--tenant", help="keep this tenant (repeatable)", **many)
    parser.add_argument("--sub-tenant", help="keep this sub-tenant (repeatable)", **many)
    parser.add_argument("--thread", help="keep this thread (repeatable)", **many)
    parser.add_argument("--since", metavar="ISO", help="threads active, messages stamped from then (no offset = UTC)")
    parser.add_argument("--until", metavar="ISO", help="threads active, messages stamped until then (no offset = UTC)")
    parser.add_argument("--text", help="keep threads with a message containing this text (case-insensitive)")
    parser.add_argument("--stale", action="store_true",
                        help="keep threads whose transcript is not their latest root checkpoint's (it did not decode)")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="keep threads with a message naming this model (repeatable)")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                        help="keep threads whose transcript checkpoint's metadata has KEY = VALUE, e.g. app_version=1.1 "
                             "(repeatable: all must hold)")


def metadata_pairs(given: Iterable[str], flag: str = "--meta") -> tuple[tuple[str, str], ...]:
    """`KEY=VALUE` options as `Filters.metadata` pairs; a missing `=` or key is a `BadRequest`.

    >>> metadata_pairs(["app_version=1.1", "region=eu=west"])
    (('app_version', '1.1'), ('region', 'eu=west'))
    """
    pairs = []
    for item in given or ():
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise BadRequest(f"{flag} {item!r}: give KEY=VALUE")
        pairs.append((key.strip(), value))
    return tuple(pairs)


def filters_from_args(args: argparse.Namespace) -> Filters:
    """`Filters` from the options of `add_filter_arguments`; a bad date is a `BadRequest`.

    Under masking a `--thread`, `--tenant` or `--sub-tenant` value holding a personal value matches
    nothing, as a `--meta` guess does (`analytics.masking.shown_whole`): else one hit against none
    would confirm a guessed masked key (an e-mail in a thread id)."""
    given = (tuple(args.tenant), tuple(args.sub_tenant), tuple(args.thread))
    tenants, sub_tenants, threads = given
    within = None
    if effective().redact:
        from analytics.masking import shown_whole

        tenants, sub_tenants, threads = shown = tuple(tuple(shown_whole(values)) for values in given)
        if any(values and not kept for values, kept in zip(given, shown)):
            within = ()  # every value of an option hidden: no thread passes it
    return Filters(
        tenants=tenants,
        sub_tenants=sub_tenants,
        thread_ids=threads,
        within=within,
        since=parse_time(args.since, "--since"),
        until=parse_time(args.until, "--until"),
        text=args.text or None,
        stale=bool(getattr(args, "stale", False)),
        models=tuple(getattr(args, "model", None) or ()),
        metadata=metadata_pairs(getattr(args, "meta", None) or ()),
    )


def _configure(parser: argparse.ArgumentParser) -> None:
    kinds = "; ".join(f"{name}: {spec.help}" for name, spec in sorted(registry().items()))
    parser.description = f"Write a CSV report ({kinds})."
    parser.add_argument("kind", choices=sorted(REPORTS), help="which report")
    parser.add_argument("--db", required=True, help="Transcript Lens DuckDB file")
    parser.add_argument("--out", metavar="FILE.csv",
                        help="CSV file to write (replaced); default (or -): the CSV on stdout")
    add_filter_arguments(parser)
    add_gap_argument(parser)  # one flag for every kind that counts resume points (conversations, resume)
    for spec in REPORTS.values():
        if spec.arguments is not None:
            spec.arguments(parser)


@command("report", _configure, help="write a CSV report from a loaded database")
def run(args: argparse.Namespace) -> int:
    """`python -m analytics report KIND --db PATH --out FILE.csv [filters]`."""
    filters = filters_from_args(args)
    try:
        con = connect(args.db)
        try:
            # A long report would otherwise draw DuckDB's progress bar over the terminal.
            con.execute("SET enable_progress_bar = false")
            if args.out is None:
                with tempfile.TemporaryDirectory() as folder:
                    out = write_report(con, args.kind, Path(folder) / "report.csv", filters, vars(args), printed=True)
                    with out.open("rb") as fh, premasked():  # the file's values are masked: its bytes as --out has them
                        shutil.copyfileobj(fh, sys.stdout.buffer)
                return 0
            out = write_report(con, args.kind, args.out, filters, vars(args))
        finally:
            con.close()
    except duckdb.Error as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise AnalyticsError(f"report {args.kind} from {args.db} failed: {first_line}") from None
    print(out)
    return 0
