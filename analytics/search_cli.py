"""`transcript-lens search` and the `search` CSV report: full-text search from the command line.

    transcript-lens search refund --db lens.duckdb --speaker user --tenant acme
    transcript-lens search "A-1043" --db lens.duckdb --in tool_calls --format csv > hits.csv
    transcript-lens report search --db lens.duckdb --text refund --speaker user --out hits.csv

`search` prints a page of hits (newest first) with a snippet around the match, as a
table (the match between »« marks), CSV or JSON; `--limit` / `--offset` page through
them. `report search` writes every hit (no snippet: the whole text), in the report
format of every other report (ISO UTC `Z` times). Both go through
`analytics.search`, so they find what the app's Search page finds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping
from typing import Any

from analytics import _pandas as pd
from analytics.cli import command
from analytics.errors import BadRequest
from analytics.export_log import log_cli_export
from analytics.filters import Filters
from analytics.masking import mask_keys, premasked
from analytics.terminal import document_output
from analytics.terminal_table import aligned
from analytics.reporting.filter_options import add_filter_arguments, filters_from_args
from analytics.reporting.spec import ReportSpec, register_report
from analytics.reporting.writer import ISO_UTC, frame_text_csv
from analytics.searching import SEARCH_IN, SEARCH_SPEAKERS, SearchQuery, report_sql, search
from analytics.cli_types import integer

FORMATS = ("table", "csv", "json")
#: Columns of the `search` report (and of `search --format csv`, plus the snippet there).
REPORT_COLUMNS = ("thread_id", "tenant_id", "sub_tenant_id", "ordinal", "message", "role", "name", "ts", "message_id",
                  "text")


def _configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Find messages containing a text (case-insensitive, any script), newest first: thread, "
                     "message number, speaker, time and a snippet around the match.")
    p.add_argument("text", help="the text to find (a phrase: quote it)")
    p.add_argument("--db", required=True, help="Transcript Lens DuckDB file")
    _search_arguments(p, "")
    add_filter_arguments(p)
    p.add_argument("--limit", type=integer(), default=50, metavar="N", help="hits to print (default 50)")
    p.add_argument("--offset", type=integer(), default=0, metavar="N", help="hits to skip first (default 0)")
    p.add_argument("--format", default="table", metavar="{table,csv,json}", help="default: table")


def _search_arguments(p: argparse.ArgumentParser, prefix: str) -> None:
    p.add_argument("--speaker", default="all", metavar="{" + ",".join(SEARCH_SPEAKERS) + "}",
                   help=f"{prefix}keep messages of this role (default all)")
    p.add_argument("--in", dest="search_in", default="messages", metavar="{" + ",".join(SEARCH_IN) + "}",
                   help=f"{prefix}search message text (default) or the tool calls (names and arguments)")


@command("search", _configure, help="find messages containing a text (full-text, case-insensitive)")
def run(args: argparse.Namespace) -> int:
    if args.format not in FORMATS:
        raise BadRequest(f"--format must be one of {', '.join(FORMATS)}; got {args.format!r}")
    # The positional text and `--text` share one name: it is what is sought, not also a thread filter
    # on message text (which would hide a tool's name, said in no message), as in `query_of`.
    filters = dataclasses.replace(filters_from_args(args), text=None)
    query = SearchQuery(args.text, args.speaker, args.search_in, filters, args.limit, args.offset)
    result = search(args.db, query)
    hits = result.hits
    log_cli_export(args, "search", len(hits), threads=hits["thread_id"].dropna().unique().tolist())
    shown = f"hits {result.offset + 1:,}–{result.offset + len(hits):,}" if len(hits) else "no hits shown"
    print(f"# {result.total:,} messages in {result.threads:,} threads match {query.text!r} · {shown} · newest first "
          "· times are UTC", file=sys.stderr)
    out = hits.assign(message=hits["ordinal"] + 1)
    out = mask_keys(out[["thread_id", "tenant_id", "ordinal", "message", "role", "name", "ts", "message_id",
                         "snippet", "match_start", "match_end"]])
    with premasked():  # each value is masked already: a line of the CSV or JSON is not a value
        if args.format == "table":
            if len(out):
                print(_table(out))
            return 0
        with document_output():  # a file or a pipe gets the data as it is (analytics.terminal)
            _print_document(out, args.format)
    return 0


def _print_document(out: pd.DataFrame, fmt: str) -> None:
    if fmt == "csv":
        sys.stdout.write(frame_text_csv(out.assign(ts=out["ts"].dt.strftime(ISO_UTC))))
    else:
        records = json.loads(out.to_json(orient="records", date_format="iso", date_unit="us", force_ascii=False))
        print(json.dumps(records, ensure_ascii=False, indent=2))


def _table(hits: pd.DataFrame) -> str:
    marked = [
        s if pd.isna(a) else s[: int(a)] + "»" + s[int(a): int(b)] + "«" + s[int(b):]
        for s, a, b in zip(hits["snippet"], hits["match_start"], hits["match_end"])
    ]
    return aligned([
        ("thread", hits["thread_id"].tolist()),
        ("message", hits["message"].astype(str).tolist()),
        ("speaker", hits["role"].tolist()),
        ("ts (UTC)", hits["ts"].dt.strftime("%Y-%m-%d %H:%M:%S").fillna("-").tolist()),
        ("snippet", marked),
    ])


# --- the report ----------------------------------------------------------------------


def query_of(filters: Filters, options: Mapping[str, Any]) -> SearchQuery:
    """The search a `report search` asks for: the `--text` filter is the text to find."""
    if not filters.text:
        raise BadRequest("report search needs --text, the text to find")
    scope = dataclasses.replace(filters, text=None)  # the text is what is sought, not a thread filter
    return SearchQuery(filters.text, options.get("speaker") or "all", options.get("search_in") or "messages", scope)


def _report_rows(con, filters: Filters, options: Mapping[str, Any]):
    sql, params = report_sql(query_of(filters, options))
    return con.sql(sql, params=params)


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    _search_arguments(parser, "search: ")


register_report(ReportSpec(
    "search", "every message containing --text (newest first): analytics.search", REPORT_COLUMNS, _report_rows,
    arguments=_report_arguments,
))  # fmt: skip
