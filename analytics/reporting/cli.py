"""The `report` subcommand: a registered report kind written to a file or to stdout.

    python -m analytics report conversations --db lens.duckdb --out conv.csv --tenant acme
    python -m analytics report daily --db lens.duckdb --out daily.jsonl
    python -m analytics report conversations --db lens.duckdb --table   # a table to read

`--table` prints the rows for a person (a kind of `readable.READABLE`): the app's headers and
formats (durations as "43 m 07 s", times to the minute, counts with separators); a CSV or JSON
file, and the CSV on stdout, keep machine values.

It takes the filter options (`analytics.reporting.filter_options`), the resume gap, and each
kind's own options (`ReportSpec.arguments`); `write_report` writes the rows.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _configure(parser)
>>> parser.parse_args(["daily", "--db", "lens.duckdb"]).out is None
True
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb

from analytics.cli import command
from analytics.db import connect
from analytics.errors import AnalyticsError
from analytics.masking import premasked
from analytics.terminal import document_output
from analytics.reporting.filter_options import add_filter_arguments, filters_from_args
from analytics.reporting.readable import READABLE, text_table
from analytics.reporting.spec import registry
from analytics.reporting.writer import report_frame, write_report
from analytics.resume.gap import add_gap_argument


def _configure(parser: argparse.ArgumentParser) -> None:
    reports = registry()
    kinds = "; ".join(f"{name}: {spec.help}" for name, spec in sorted(reports.items()))
    parser.description = f"Write a CSV report ({kinds})."
    parser.add_argument("kind", choices=sorted(reports), help="which report")
    parser.add_argument("--db", required=True, help="Transcript Lens DuckDB file")
    parser.add_argument("--out", metavar="FILE.csv",
                        help="CSV file to write (replaced); default (or -): the CSV on stdout")
    parser.add_argument("--table", action="store_true", help=(
        f"print the rows as a table to read, under the app's headers and in its formats ({', '.join(READABLE)}); "
        "the CSV and JSON keep machine values"))
    add_filter_arguments(parser)
    add_gap_argument(parser)  # one flag for every kind that counts resume points (conversations, resume)
    for spec in reports.values():
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
            if args.table:
                if args.kind not in READABLE:
                    raise AnalyticsError(f"report {args.kind} has no --table form ({', '.join(READABLE)} has); "
                                         "write it as CSV or JSON (--out)")
                if args.out not in (None, "-"):
                    raise AnalyticsError("--table prints to the terminal; a file (--out) takes CSV or JSON")
                rows = report_frame(con, args.kind, filters, vars(args))
                print(text_table(rows, READABLE[args.kind]))
                return 0
            if args.out is None:
                with tempfile.TemporaryDirectory() as folder:
                    out = write_report(con, args.kind, Path(folder) / "report.csv", filters, vars(args), printed=True)
                    # The file's values are masked, and a pipe gets its bytes as --out has them (analytics.terminal).
                    with out.open("rb") as fh, premasked(), document_output():
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
