"""`python -m analytics diff` and the history options of `transcript` (`--checkpoint`, `--branch`).

    transcript-lens transcript --db lens.duckdb --thread T --branch 2              # read an abandoned branch
    transcript-lens diff --db lens.duckdb --thread T --branch 2                     # branch 2 against the transcript
    transcript-lens diff --db lens.duckdb --thread T --checkpoint C1 --with-checkpoint C2 --format csv
    transcript-lens diff --db lens.duckdb --thread A --with-thread B --out a-vs-b.csv

A side is a thread (`--thread`, `--with-thread`: the left one's by default)
read at its transcript, a root checkpoint (`--checkpoint`) or a branch's head
(`--branch N`, 1 = current, as `report branches` numbers them). Mistakes are
one `error: …` line and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from analytics import _pandas as pd
from analytics.history.branches import branch_head
from analytics.cli import command
from analytics.history.diff import diff, diff_counts
from analytics.errors import BadRequest
from analytics.export_log import log_cli_export
from analytics.masking import mask_lines
from analytics.reporting.writer import frame_csv
from analytics.terminal import document_output
from analytics.transcript import TranscriptQuery

_MARK = {"same": " ", "edited": "~", "added": "+", "removed": "-"}
TABLE_WIDTH = 70


def checkpoint_of(db, thread: str, checkpoint: str | None, branch: str | None, flags: str) -> str | None:
    """The root checkpoint a `--checkpoint` / `--branch` pair names (None: the transcript)."""
    if checkpoint is not None and branch is not None:
        raise BadRequest(f"{flags}: give a checkpoint or a branch, not both")
    if branch is None:
        return checkpoint
    try:
        number = int(branch)
    except ValueError:
        raise BadRequest(f"{flags.split()[-1]}: expected a branch number (1 = current), got {branch!r}") from None
    return branch_head(db, thread, number)


def add_side_arguments(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """`--checkpoint` and `--branch` (with `prefix`: `--with-checkpoint`, `--with-branch`)."""
    p.add_argument(f"--{prefix}checkpoint", metavar="ID", help="read this root checkpoint's list (any branch)")
    p.add_argument(f"--{prefix}branch", metavar="N", help="read this branch's last checkpoint (1 = current)")


def _configure(p: argparse.ArgumentParser) -> None:
    p.description = "Compare two transcripts message by message: two branches, two checkpoints or two threads."
    p.add_argument("--db", required=True, help="Transcript Lens DuckDB file")
    p.add_argument("--thread", required=True, help="the left side's thread")
    add_side_arguments(p)
    p.add_argument("--with-thread", metavar="ID", help="the right side's thread (default: the left one's)")
    add_side_arguments(p, "with-")
    p.add_argument("--speaker", default="all", metavar="{user,assistant,all}", help="compare these rows only (default all)")
    p.add_argument("--format", default="table", metavar="{table,csv,json}", help="default: table")
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout (-: stdout)")


@command("diff", _configure, help="compare two transcripts (branches, checkpoints or threads) message by message")
def run(args: argparse.Namespace) -> int:
    from analytics.transcript.cli import check_format_and_speaker

    check_format_and_speaker(args)
    right_thread = args.with_thread or args.thread
    left = TranscriptQuery(
        args.thread, speaker=args.speaker,
        checkpoint_id=checkpoint_of(args.db, args.thread, args.checkpoint, args.branch, "--checkpoint / --branch"),
    )  # fmt: skip
    if args.with_checkpoint is None and args.with_branch is None and right_thread == args.thread and (
        args.checkpoint is None and args.branch is None
    ):
        raise BadRequest("both sides are the same transcript: name a --with-thread, --with-checkpoint or --with-branch")
    right = TranscriptQuery(
        right_thread, speaker=args.speaker,
        checkpoint_id=checkpoint_of(args.db, right_thread, args.with_checkpoint, args.with_branch,
                                    "--with-checkpoint / --with-branch"),
    )  # fmt: skip
    frame = diff(args.db, left, right)
    if args.format == "csv":
        data = frame_csv(frame)
    elif args.format == "json":
        data = (json.dumps(json.loads(frame.to_json(orient="records", date_format="iso", date_unit="us")),
                           ensure_ascii=False, indent=2) + "\n").encode()  # fmt: skip
    else:
        data = (_header(left, right, frame) + "\n" + _table(frame) + "\n").encode()
    log_cli_export(args, "diff", len(frame), target=args.out)
    if args.out:  # a file leaves the tool as printed lines do: masked (analytics.masking)
        data = mask_lines(data.decode("utf-8")).encode("utf-8")
        with open(args.out, "wb") as fh:
            fh.write(data)
        print(args.out)
    elif args.format == "table":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        with document_output():  # a file or a pipe gets the data as it is (analytics.terminal)
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
    return 0


def _side(q: TranscriptQuery) -> str:
    return f"{q.thread_id} @ {q.checkpoint_id or 'transcript'}"


def _header(left: TranscriptQuery, right: TranscriptQuery, frame: pd.DataFrame) -> str:
    counts = diff_counts(frame)
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return f"# - {_side(left)}\n# + {_side(right)}\n# {summary or 'both empty'}"


def _cut(text: object) -> str:
    s = " ".join(str(text).split()) if isinstance(text, str) else ""
    return s if len(s) <= TABLE_WIDTH else s[: TABLE_WIDTH - 1] + "…"


def _table(frame: pd.DataFrame) -> str:
    lines = []
    for r in frame.itertuples(index=False):
        mark = _MARK[r.status] + ("↕" if r.moved else " ")
        where = f"{'' if pd.isna(r.left_ordinal) else r.left_ordinal:>4} {'' if pd.isna(r.right_ordinal) else r.right_ordinal:>4}"
        role = r.right_role if isinstance(r.right_role, str) else r.left_role
        text = r.text_diff if isinstance(r.text_diff, str) else (r.right_content if isinstance(r.right_content, str) else r.left_content)
        lines.append(f"{mark} {where}  {role:<9} {_cut(text)}")
    return "\n".join(lines)
