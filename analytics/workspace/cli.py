"""`transcript-lens annotations …`, `transcript-lens queues …` and `report annotations`: thin shells over the API.

    transcript-lens annotations import evaluator.jsonl --db lens.duckdb --author eval-v3 [--add-labels]
    transcript-lens annotations export --db lens.duckdb --out annotations.jsonl
    transcript-lens annotations add --db lens.duckdb --thread acme:web:1 --label "lost context" --verdict fail
    transcript-lens annotations labels --db lens.duckdb [--add NAME --color '#2e7d32'] [--retire NAME]
    transcript-lens queues create "week 12" --db lens.duckdb --tenant acme --sample 10 --seed 7 --assign ana
    transcript-lens queues list --db lens.duckdb
    transcript-lens report annotations --db lens.duckdb --out annotations.csv [--tenant acme …]

The workspace is the one beside `--db` (`lens.duckdb.workspace.sqlite`) unless
`--workspace` or `$TRANSCRIPT_LENS_WORKSPACE` names another. Mistakes are one
`error: …` line and exit status 2 (`analytics.cli`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from analytics import metrics
from analytics.cli import add_policy_arguments, command
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.reporting.filter_options import add_filter_arguments, filters_from_args
from analytics.reporting.spec import ReportSpec, register_report
from analytics.workspace import annotating as notes
from analytics.workspace import jsonl, label_set, queueing
from analytics.workspace.review import annotations as listed
from analytics.workspace.store import ENV, Workspace, as_workspace, report_workspace, workspace_of
from analytics.cli_types import integer


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="the Transcript Lens DuckDB database (its workspace is beside it)")
    parser.add_argument("--workspace", metavar="FILE",
                        help=f"the workspace file (default: ${ENV}, else DB.workspace.sqlite beside --db)")
    add_policy_arguments(parser, nested=True)


def _ws(args: argparse.Namespace) -> Workspace:
    return workspace_of(args.db, args.workspace)


def _database(args: argparse.Namespace) -> str:
    if not Path(args.db).is_file():
        raise FileNotFoundError(f"no Transcript Lens database at {args.db}")
    return args.db


# --- annotations ------------------------------------------------------------------------


def _configure_annotations(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Annotations of the review workspace: import from / export to JSON Lines, add one, "
                          "edit the label set. `report annotations` writes them as CSV.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    p = sub.add_parser("import", help="import annotations from a JSON Lines file (all or nothing)")
    p.add_argument("file", help="JSON Lines: one object per line with thread_id and a label, verdict or note")
    _common(p)
    p.add_argument("--author", help="author of lines that name none (default: $TRANSCRIPT_LENS_AUTHOR or your login)")
    p.add_argument("--add-labels", action="store_true", help="create labels the set lacks instead of refusing")

    p = sub.add_parser("export", help="write every annotation as JSON Lines")
    _common(p)
    p.add_argument("--out", metavar="FILE.jsonl", help="file to write (replaced); default (or -): stdout")

    p = sub.add_parser("add", help="annotate a thread, a message or a checkpoint")
    _common(p)
    p.add_argument("--thread", required=True, metavar="ID")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--message-id", metavar="ID", help="a message of the thread, by id")
    which.add_argument("--ordinal", type=integer(), metavar="N", help="a message of the thread without id, by ordinal")
    which.add_argument("--checkpoint-id", metavar="ID", help="a checkpoint of the thread")
    p.add_argument("--checkpoint-ns", metavar="NS", help="the checkpoint's namespace (default: root)")
    p.add_argument("--label", help="a label of the set (`annotations labels` lists them)")
    p.add_argument("--verdict", choices=notes.VERDICTS)
    p.add_argument("--note")
    p.add_argument("--author", help="default: $TRANSCRIPT_LENS_AUTHOR or your login")

    p = sub.add_parser("labels", help="list the label set; add, recolour, rename or retire a label")
    _common(p)
    p.add_argument("--add", metavar="NAME", help="add (or change) this label; needs --color")
    p.add_argument("--color", metavar="#RRGGBB")
    p.add_argument("--description")
    p.add_argument("--rename", nargs=2, metavar=("OLD", "NEW"))
    p.add_argument("--retire", metavar="NAME", help="stop offering it (annotations keep it)")


@command("annotations", _configure_annotations, help="import, export and add review annotations; edit the label set")
def run_annotations(args: argparse.Namespace) -> int:
    return _ACTIONS[args.action](args)


def _import(args: argparse.Namespace) -> int:
    db = args.db if Path(args.db).is_file() else None  # a database not loaded yet: nothing to look up
    summary = jsonl.import_jsonl(db, args.file, author=args.author, add_labels=args.add_labels,
                                 workspace=_ws(args))
    print(summary.line())
    return 0


def _export(args: argparse.Namespace) -> int:
    from analytics.export_log import log_cli_export

    ws = _ws(args)
    db = args.db if Path(args.db).is_file() else None
    if args.out is None:
        log_cli_export(args, "annotations export", None)
        count = jsonl.export_jsonl(ws, sys.stdout, db)
    else:
        out = Path(args.out)
        if not out.parent.is_dir():
            raise BadRequest(f"cannot write {out}: no directory {out.parent}")
        # Logged first (the notes quote message text: erasure must find this file; the log refuses, nothing is written).
        log_cli_export(args, "annotations export", None, target=out)
        count = jsonl.export_jsonl(ws, out, db)
    print(f"exported {count} annotations from {ws.path}", file=sys.stderr)
    return 0


def _add(args: argparse.Namespace) -> int:
    made = notes.annotate(
        _database(args), args.thread, message_id=args.message_id, ordinal=args.ordinal,
        checkpoint_id=args.checkpoint_id, checkpoint_ns=args.checkpoint_ns, label=args.label, verdict=args.verdict,
        note=args.note, author=args.author, workspace=_ws(args),
    )
    print(made.annotation_id)
    return 0


def _labels(args: argparse.Namespace) -> int:
    ws = _ws(args)
    if args.add:
        if not args.color:
            raise BadRequest("--add needs --color #rrggbb")
        label_set.define_label(ws, args.add, args.color, args.description)
    if args.rename:
        label_set.rename_label(ws, *args.rename)
    if args.retire:
        label_set.retire_label(ws, args.retire)
    for label in label_set.labels(ws):
        retired = " (retired)" if label.retired else ""
        print(f"{label.color}  {label.name}{retired}" + (f"  — {label.description}" if label.description else ""))
    return 0


# --- queues -----------------------------------------------------------------------------


def _configure_queues(parser: argparse.ArgumentParser) -> None:
    parser.description = "Review queues: make one from a Conversations view (filters, sort, sample), list progress."
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("create", help="a queue of the threads the filters match (or a seeded sample of them)")
    p.add_argument("name")
    _common(p)
    add_filter_arguments(p)
    p.add_argument("--sort", default=metrics.DEFAULT_SORT, metavar="COLUMN",
                   help=f"walking order, a conversations column (default {metrics.DEFAULT_SORT})")
    p.add_argument("--asc", action="store_true", help="ascending (default: descending, as the Conversations page)")
    p.add_argument("--sample", type=integer(), metavar="N", help="take a random sample of N of the matching threads")
    p.add_argument("--seed", type=integer(), help="the sample's seed (default: drawn, and printed)")
    p.add_argument("--assign", action="append", default=[], metavar="NAME",
                   help="reviewer (repeatable: items are dealt round-robin); default anyone")
    p.add_argument("--description")
    p.add_argument("--author", help="default: $TRANSCRIPT_LENS_AUTHOR or your login")
    p = sub.add_parser("list", help="every queue with its progress per reviewer")
    _common(p)


@command("queues", _configure_queues, help="make review queues from a filter; list their progress")
def run_queues(args: argparse.Namespace) -> int:
    ws = _ws(args)
    if args.action == "create":
        q = queueing.create_queue(
            _database(args), args.name, conditions=filters_from_args(args), sort=metrics.sort_column(args.sort),
            descending=not args.asc, sample=args.sample, seed=args.seed, assignees=args.assign,
            description=args.description, author=args.author, workspace=ws,
        )
        sampled = f" (a sample of {q.matching:,}, seed {q.seed})" if q.sample_size else ""
        print(f"queue {q.queue_id} {q.name!r}: {q.items} threads{sampled}")
        return 0
    frame = queueing.progress(ws)
    if frame.empty:
        print(f"no review queues in {ws.path}", file=sys.stderr)
        return 0
    print(frame.to_string(index=False))
    return 0


# --- report annotations -----------------------------------------------------------------


def _annotation_rows(con: duckdb.DuckDBPyConnection, filters: Filters,
                     options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    frame = listed(con, filters=filters, workspace=report_workspace(con, options))
    for column in ("ordinal", "annotated_ordinal", "revision"):
        frame[column] = frame[column].astype("Int64")
    return con.from_df(frame.astype({c: "string" for c in frame.columns if frame[c].dtype == object}))


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", metavar="FILE", help="annotations: the workspace file "
                        f"(default ${ENV}, else beside --db)")


register_report(ReportSpec(
    "annotations", "every review annotation with where it is now (ok / orphaned): workspace.annotations()",
    notes.COLUMNS, _annotation_rows, arguments=_report_arguments,
))  # fmt: skip

_ACTIONS = {"import": _import, "export": _export, "add": _add, "labels": _labels}
