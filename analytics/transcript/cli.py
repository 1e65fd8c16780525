"""`python -m analytics transcript`: one thread's transcript under the query contract (contract §4).

    python -m analytics transcript --db lens.duckdb --thread acme:eu:42 --speaker user --index 0
    python -m analytics transcript --db lens.duckdb --thread acme:eu:42 \\
        --since 2025-01-31T14:00 --until 2025-01-31T15:00 --format csv > window.csv
    python -m analytics transcript --db lens.duckdb --thread acme:eu:42 --branch 2   # an abandoned branch

Times are UTC: `--since` / `--until` without an offset are read as UTC, and
every printed `ts` is UTC (the table says so on stderr; CSV and JSON carry
the `Z`). Every mistake — a bad ISO date, a bad number, an unknown thread, a
time range over a thread without timestamps — is one `error: …` line on
stderr and exit status 2. A stale transcript (the thread's latest root checkpoint did
not decode) is read all the same, with one `warning: …` line on stderr naming the
checkpoint shown and why.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import duckdb

from analytics import _pandas as pd
from analytics.cli import command
from analytics.errors import AnalyticsError, BadRequest, StaleTranscript
from analytics.export_log import log_cli_export
from analytics.transcript.reading import SPEAKERS, TranscriptQuery, parse_time, read, stale_note
from analytics.cli_types import integer
from analytics.masking import mask_keys, premasked
from analytics.reporting.writer import frame_text_csv
from analytics.terminal import document_output
from analytics.terminal_table import aligned

FORMATS = ("table", "csv", "json")
TABLE_CONTENT_WIDTH = 100


def _configure(p: argparse.ArgumentParser) -> None:
    p.description = "Read one thread's transcript (speaker filter → since/until → index → limit)."
    p.add_argument("--db", required=True, help="Transcript Lens DuckDB file")
    p.add_argument("--thread", required=True, help="thread id, e.g. tenant:sub:session")
    # Values are checked by TranscriptQuery, not argparse, so a mistake is one clear line.
    p.add_argument("--speaker", default="all", metavar="{user,assistant,all}", help="default: all (every role)")
    p.add_argument("--index", metavar="N", help="one row of the speaker's view; negative counts from the end")
    p.add_argument("--since", metavar="ISO", help="inclusive lower bound on ts; no offset = UTC")
    p.add_argument("--until", metavar="ISO", help="inclusive upper bound on ts; no offset = UTC")
    p.add_argument("--limit", metavar="N", help="keep the first N rows (applied last)")
    p.add_argument("--format", default="table", metavar="{table,csv,json}", help="default: table")
    # A branch or an older state of the thread, read under the same rules (analytics/history/cli.py).
    from analytics.history.cli import add_side_arguments

    add_side_arguments(p)


def _int_arg(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    try:
        return integer()(value)
    except argparse.ArgumentTypeError as exc:
        raise BadRequest(f"{flag}: {exc}") from None


def _naive(value: str | None) -> bool:
    # Only called after TranscriptQuery parsed it, so fromisoformat succeeds.
    return value is not None and pd.Timestamp(value).tzinfo is None


def check_format_and_speaker(args: argparse.Namespace) -> None:
    """`--format` and `--speaker` as this command (and `diff`) take them; a mistake is a `BadRequest`."""
    if args.format not in FORMATS:
        raise BadRequest(f"--format must be one of {', '.join(FORMATS)}; got {args.format!r}")
    if args.speaker not in SPEAKERS:
        raise BadRequest(f"--speaker must be one of {', '.join(SPEAKERS)}; got {args.speaker!r}")


@command("transcript", _configure, help="print one thread's transcript (table, CSV or JSON)")
def run(args: argparse.Namespace) -> int:
    """Print the transcript read as a table (default), CSV or JSON records."""
    check_format_and_speaker(args)
    from analytics.history.cli import checkpoint_of

    query = TranscriptQuery(
        args.thread,
        speaker=args.speaker,
        index=_int_arg(args.index, "--index"),
        since=_time_arg(args.since, "--since"),
        until=_time_arg(args.until, "--until"),
        limit=_int_arg(args.limit, "--limit"),
        checkpoint_id=checkpoint_of(args.db, args.thread, args.checkpoint, args.branch, "--checkpoint / --branch"),
    )
    try:
        with warnings.catch_warnings():  # said below in one line of our own, not Python's two
            warnings.simplefilter("ignore", StaleTranscript)
            frame = read(args.db, query)
    except duckdb.Error as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise AnalyticsError(f"cannot read a Transcript Lens database at {args.db}: {first_line}") from None

    log_cli_export(args, "transcript", len(frame))
    if frame.attrs.get("stale_reason"):
        print(f"warning: {stale_note(args.thread, **frame.attrs)}", file=sys.stderr)
    naive = [flag for flag, value in (("--since", args.since), ("--until", args.until)) if _naive(value)]
    frame = mask_keys(frame)  # (the read masked the text; the keys it left as stored are masked here, once)
    with premasked():  # every value masked once already: a line printed is not a value
        if args.format == "table":
            print(_table_header(query, len(frame), naive), file=sys.stderr)
            if not frame.empty:
                print(_table(frame))
            return 0
        _note_naive(naive)
        with document_output():  # a file or a pipe gets the data as it is (analytics.terminal)
            if args.format == "csv":
                sys.stdout.write(frame_text_csv(frame.assign(ts=_iso_utc(frame["ts"]))))
            else:
                print(json.dumps(_records(frame), ensure_ascii=False, indent=2))
    return 0


def _time_arg(value: str | None, flag: str) -> str | None:
    # TranscriptQuery parses the ISO text; an error names the flag the user typed.
    if value is None:
        return None
    parse_time(value, flag)
    return value


def _table_header(query: TranscriptQuery, rows: int, naive: list[str]) -> str:
    parts = [f"thread {query.thread_id}", f"speaker={query.speaker}"]
    if query.checkpoint_id is not None:
        parts.append(f"at checkpoint {query.checkpoint_id}")
    if query.index is not None:
        parts.append(f"index={query.index}")
    if query.since is not None:
        parts.append(f"since={query.since.isoformat()}")
    if query.until is not None:
        parts.append(f"until={query.until.isoformat()}")
    if query.limit is not None:
        parts.append(f"limit={query.limit}")
    parts.append(f"{rows} row{'s' if rows != 1 else ''}")
    note = "times are UTC"
    if naive:
        note += f" ({' and '.join(naive)} without an offset read as UTC)"
    return "# " + " · ".join(parts) + " · " + note


def _note_naive(naive: list[str]) -> None:
    if naive:
        print(f"note: {' and '.join(naive)} without an offset read as UTC", file=sys.stderr)


def _iso_utc(ts: pd.Series) -> pd.Series:
    return ts.dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _table(frame: pd.DataFrame) -> str:
    content = frame["content"].fillna("").str.replace(r"\s+", " ", regex=True).str.strip()
    long = content.str.len() > TABLE_CONTENT_WIDTH
    content = content.where(~long, content.str.slice(0, TABLE_CONTENT_WIDTH - 1) + "…")
    return aligned([
        ("index", frame["index"].astype(str).tolist()),
        ("ordinal", frame["ordinal"].astype(str).tolist()),
        ("role", frame["role"].tolist()),
        ("name", frame["name"].fillna("").tolist()),
        ("ts (UTC)", frame["ts"].dt.strftime("%Y-%m-%d %H:%M:%S").fillna("-").tolist()),
        ("content", content.tolist()),
    ], right={"index", "ordinal"})  # (numbers right-aligned, text left-aligned)


def _records(frame: pd.DataFrame) -> list[dict]:
    records = json.loads(frame.to_json(orient="records", date_format="iso", date_unit="us", force_ascii=False))
    for record in records:
        # tool_calls is JSON text in the database; nest it so `jq '.[].tool_calls[].name'` works.
        if record.get("tool_calls"):
            record["tool_calls"] = json.loads(record["tool_calls"])
    return records
