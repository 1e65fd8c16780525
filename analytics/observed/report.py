"""The `resume` CSV report (contract §9): expected windows at every resume point, or an observed log's verdicts.

    transcript-lens report resume --db lens.duckdb --out windows.csv
    transcript-lens report resume --db lens.duckdb --observed observed.jsonl --out findings.csv

Without `--observed` every row is an expected entry (`kind = expected`, or
`empty_window` for a resume with nothing to rehydrate), streamed by DuckDB.
With it, every row is a per-window `verdict` (with how the window was
attributed) or one finding (`FINDING_KINDS`), naming its window and resume.
docs/resume_qa.md, "The report", has every column.
"""

from __future__ import annotations

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.frames import fetch_frame, typed
from analytics.observed.windows import FINDING_KINDS, compare
from analytics.observed.log import Source
from analytics.reporting.spec import ReportSpec, register_report
from analytics.resume.chain import resume_points
from analytics.resume.common import DEFAULT_CAP, NO_FILTERS, check_cap
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap, gap_option
from analytics.resume.rehydrate import resume_windows_sql
from analytics.cli_types import integer

__all__ = ["RESUME_REPORT_COLUMNS", "resume_report"]

#: Columns of `report resume` (docs/resume_qa.md, "The report").
RESUME_REPORT_COLUMNS: tuple[str, ...] = (
    "thread_id",
    "checkpoint_id",
    "resume_no",
    "after_checkpoint_id",
    "before_ts",
    "after_ts",
    "gap_s",
    "reason",
    "process_change",
    "kind",
    "verdict",
    "window",
    "attributed_by",
    "confidence",
    "line",
    "position",
    "observed_position",
    "speaker",
    "observed_speaker",
    "content",
    "observed_content",
    "text_diff",
    "message_id",
    "ts",
    "source",
    "observed_source",
    "ordinal",
    "detail",
)

_REPORT_DTYPES: dict[str, str] = {
    **{c: "str" for c in RESUME_REPORT_COLUMNS},
    "resume_no": "Int64",
    "before_ts": "datetime64[us, UTC]",
    "after_ts": "datetime64[us, UTC]",
    "gap_s": "Float64",
    "window": "Int64",
    "line": "Int64",
    "position": "Int64",
    "observed_position": "Int64",
    "ts": "datetime64[us, UTC]",
    "ordinal": "Int64",
}

_WINDOW_REPORT_SQL = """
SELECT thread_id, before_checkpoint_id AS checkpoint_id, resume_no, after_checkpoint_id, before_ts, after_ts,
       gap_s, reason, process_change,
       CASE WHEN position IS NULL THEN 'empty_window' ELSE 'expected' END AS kind,
       CAST(NULL AS VARCHAR) AS verdict, CAST(NULL AS BIGINT) AS "window",
       CAST(NULL AS VARCHAR) AS attributed_by, CAST(NULL AS VARCHAR) AS confidence, CAST(NULL AS BIGINT) AS line,
       position, CAST(NULL AS BIGINT) AS observed_position,
       speaker, CAST(NULL AS VARCHAR) AS observed_speaker,
       content, CAST(NULL AS VARCHAR) AS observed_content, CAST(NULL AS VARCHAR) AS text_diff,
       message_id, ts, source, CAST(NULL AS VARCHAR) AS observed_source, ordinal,
       CASE WHEN position IS NULL THEN 'no user or assistant message to rehydrate' END AS detail
FROM ({inner}) AS r
ORDER BY thread_id, resume_no, position
"""


def _findings_report(con, filters: Filters, gap_minutes: float, cap: int, observed: Source) -> pd.DataFrame:
    findings, summary = compare(con, observed, cap, gap_minutes)
    if filters != NO_FILTERS:
        where, params = filters.thread_where("t")
        # `where` is Filters' own SQL with placeholders; values stay bound.
        keep = {r[0] for r in con.sql(f"SELECT t.thread_id FROM threads AS t WHERE {where}", params=params).fetchall()}
        findings = findings[findings["thread_id"].isin(keep)]
        summary = summary[summary["thread_id"].isin(keep)]
    threads = sorted(set(summary["thread_id"]))
    points = resume_points(con, None, gap_minutes, filters=Filters(thread_ids=tuple(threads))) if threads else None
    verdicts = summary.assign(
        kind="verdict",
        detail=[
            f"{s.matched}/{s.expected_entries} expected entries matched faithfully, {s.observed_entries} observed, "
            f"{sum(int(getattr(s, k)) for k in FINDING_KINDS if k != 'unresolved')} finding(s); "
            f"attributed by {s.attributed_by} ({s.confidence}): {s.attribution}"
            for s in summary.itertuples()
        ],
    )[["thread_id", "window", "resume_no", "checkpoint_id", "kind", "verdict", "attributed_by", "confidence", "detail"]]
    by_window = summary.set_index("window")
    rows = findings.rename(
        columns={"expected_position": "position", "expected_speaker": "speaker", "expected_content": "content"}
    ).assign(
        verdict=[by_window.at[w, "verdict"] if pd.notna(w) else None for w in findings["window"]],
        attributed_by=[by_window.at[w, "attributed_by"] if pd.notna(w) else None for w in findings["window"]],
        confidence=[by_window.at[w, "confidence"] if pd.notna(w) else None for w in findings["window"]],
    )
    # Verdict first, then the findings of that window in window order; lines nobody could place last.
    frame = pd.concat([verdicts.assign(_order=0), rows.assign(_order=1)], ignore_index=True)
    if points is not None and len(points):
        info = points[["thread_id", "resume_no", "after_checkpoint_id", "before_ts", "after_ts", "gap_s", "reason",
                       "process_change"]]  # fmt: skip
        frame = frame.merge(info, on=["thread_id", "resume_no"], how="left")
    frame = frame.assign(_w=frame["window"].fillna(1 << 30)).sort_values(
        ["_w", "_order", "position", "observed_position", "line"], na_position="last", kind="stable"
    )
    return typed(frame.reset_index(drop=True), _REPORT_DTYPES)


def resume_report(
    con_or_path: ConOrPath,
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    cap: int = DEFAULT_CAP,
    observed: Source | None = None,
) -> pd.DataFrame:
    """The rows of `report resume` as a DataFrame (`RESUME_REPORT_COLUMNS`, timestamps as datetimes).

    Without `observed`: the expected window at every resume point of the
    threads in `filters`. With it: a `verdict` row per observed window and a
    row per finding.

    >>> resume_report("lens.duckdb", cap=10).kind.unique().tolist()  # doctest: +SKIP
    ['expected']
    """
    with connection(con_or_path) as con:
        if observed is None:
            inner, params = resume_windows_sql(filters, gap_minutes, cap)
            return fetch_frame(con, _WINDOW_REPORT_SQL.format(inner=inner), params, _REPORT_DTYPES)
        return _findings_report(con, filters, check_gap(gap_minutes), check_cap(cap), observed)


def _report_rows(con, filters: Filters, options):
    gap = gap_option(options)
    cap = check_cap(DEFAULT_CAP if options.get("cap") is None else options["cap"])
    source = options.get("observed")
    if source is None:
        # Set-based all the way: DuckDB streams the rows to the CSV.
        inner, params = resume_windows_sql(filters, gap, cap)
        return con.sql(_WINDOW_REPORT_SQL.format(inner=inner), params=params)
    return con.from_df(_findings_report(con, filters, gap, cap, source))


def _report_arguments(parser) -> None:
    parser.add_argument(
        "--observed",
        metavar="FILE.jsonl",
        help="resume: compare these observed windows; the report lists verdicts and findings",
    )
    parser.add_argument(
        "--cap", type=integer(), metavar="N", help="resume: window size, user/assistant messages (default 50)"
    )


register_report(ReportSpec(
    "resume",
    "restart-resume QA: the expected window at each resume point, or with --observed the verdicts and findings",
    RESUME_REPORT_COLUMNS,
    _report_rows,
    _report_arguments,
))  # fmt: skip
