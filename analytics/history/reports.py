"""CSV reports of a conversation's history: `branches`, `edits`, `subgraphs`, `backlog`.

Each is the API's frame over every thread of the report filters (`--thread`,
`--tenant`, …), registered like any other kind (`analytics.reporting`):

    transcript-lens report branches --db lens.duckdb --out branches.csv      # every branch of every forked thread
    transcript-lens report edits --db lens.duckdb --thread T --out edits.csv # one thread's edit log
    transcript-lens report subgraphs --db lens.duckdb --out runs.csv
    transcript-lens report backlog --db lens.duckdb --waited-until now --out waiting.csv
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

import duckdb

from analytics import _pandas as pd
from analytics.history.backlog import BACKLOG_COLUMNS, UNTIL, backlog
from analytics.history.branches import BRANCH_COLUMNS, branches_of
from analytics.filters import Filters
from analytics.history.edits import EDIT_LOG_COLUMNS, edit_logs
from analytics.reporting.spec import ReportSpec, register_report
from analytics.subgraphs import RUN_COLUMNS, subgraph_runs_of


def _rows(frame_of: Callable[[duckdb.DuckDBPyConnection, Filters, Mapping[str, Any]], pd.DataFrame]):
    def build(con: duckdb.DuckDBPyConnection, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
        return con.from_df(frame_of(con, filters, options))

    return build


def _backlog_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--waited-until", choices=UNTIL, help="backlog: wait measured up to the newest ts in the "
                        "database (store, the default) or the wall clock (now)")


def _edits_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all-branches", action="store_true",
                        help="edits: every branch's edits, not only those of the current branch")


register_report(ReportSpec(
    "branches", "every branch of every thread with more than one: analytics.branches()", tuple(BRANCH_COLUMNS),
    _rows(lambda con, filters, options: branches_of(con, filters)),
))  # fmt: skip
register_report(ReportSpec(
    "edits", "edits, removals, re-adds and reorders behind each transcript: analytics.edit_log()",
    tuple(EDIT_LOG_COLUMNS),
    _rows(lambda con, filters, options: edit_logs(con, filters, bool(options.get("all_branches")))),
    arguments=_edits_arguments,
))  # fmt: skip
register_report(ReportSpec(
    "subgraphs", "every subgraph run, under the message that started it: analytics.subgraph_runs()",
    tuple(RUN_COLUMNS), _rows(lambda con, filters, options: subgraph_runs_of(con, filters)),
))  # fmt: skip
register_report(ReportSpec(
    "backlog", "threads waiting on an interrupt(), longest wait first: analytics.backlog()", tuple(BACKLOG_COLUMNS),
    _rows(lambda con, filters, options: backlog(con, filters, options.get("waited_until") or "store")),
    arguments=_backlog_arguments,
))  # fmt: skip
