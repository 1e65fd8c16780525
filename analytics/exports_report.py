"""`report exports`: the export log as CSV or JSON (`analytics.exports`).

    transcript-lens report exports --db lens.duckdb --out exports.csv
    transcript-lens report exports --db lens.duckdb --out exports.json

Filters do not apply (the log is not rows of threads); writing it is itself logged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb

from analytics.export_log import COLUMNS, exports
from analytics.filters import Filters
from analytics.reporting.spec import ReportSpec, register_report
from analytics.workspace.store import report_workspace


def _rows(con: duckdb.DuckDBPyConnection, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    frame = exports(None, workspace=report_workspace(con, options))
    return con.from_df(frame.astype({c: "string" for c in frame.columns if frame[c].dtype == object}))


register_report(ReportSpec(
    "exports", "the export log: every report, transcript, search, diff and app download (who, when, what, masked)",
    COLUMNS, _rows,
))  # fmt: skip
