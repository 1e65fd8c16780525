"""Observed rehydrate windows (JSONL) compared with the expected ones (contract §5.5–§5.6).

A runtime that logs what it put back into its recency window after a restart
writes one JSON object per rehydrated entry, in its own field names
(`analytics.observed.log`, docs/resume_qa.md "The observed JSONL format").
`compare` reads such a log, places every line in an observed window and each
window at the resume it belongs to (`analytics.observed.attribution`: by
checkpoint, by time, else by position order), computes the expected window
there (`analytics.resume.rehydrate.windows_at`), aligns the two
(`analytics.align`) and reports every divergence:

- `missing`: an expected entry that no observed entry stands for;
- `extra`: an observed entry that stands for no expected entry;
- `reordered`: a matched entry out of order relative to the others;
- `altered_content`: a matched entry whose text differs (exact comparison);
- `wrong_speaker`: a matched entry whose speaker differs;
- `wrong_source`: `metadata.source` present and not `resume_rehydrate`;
- `malformed` / `unresolved`: a line that could not be compared (bad JSON or
  fields / unknown thread or checkpoint, or a time no restart fits),
  reported with its line number.

A window passes when none of these concern it; a resume fails when any of its
windows does. The CSV report is `analytics.observed.report`.

This package is the public face of its parts: `windows` (the comparison), `log` (the JSONL
format), `attribution` (which resume a window belongs to) and `report` (the CSV report).

>>> findings, summary = compare("lens.duckdb", "observed.jsonl")  # doctest: +SKIP
>>> summary[["thread_id", "resume_no", "attributed_by", "confidence", "verdict"]]  # doctest: +SKIP
"""

from __future__ import annotations

from analytics.align import SIMILARITY, similar  # noqa: F401  (the text rule a comparison applies, named here too)
from analytics.observed.log import (  # noqa: F401
    LineError, ObservedEntry, ObservedLog, Source, parse_observed, template_lines,
)
from analytics.observed.report import RESUME_REPORT_COLUMNS, resume_report  # noqa: F401
from analytics.observed.windows import (  # noqa: F401
    ALIGNED_COLUMNS, FINDING_COLUMNS, FINDING_KINDS, SUMMARY_COLUMNS, ObservedComparison, compare, compare_detail,
)
