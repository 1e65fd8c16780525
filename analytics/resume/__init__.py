"""Restart-resume fidelity QA (contract §5): resume points, expected windows, store-only risks.

On the first turn after a restart a runtime rebuilds its recency window from
the durable transcript: the last `cap` user/assistant messages of
`state['messages']` at the checkpoint it resumes from (tool, system and other
rows skipped), each tagged `source = "resume_rehydrate"`. `analytics.resume`
answers, from the database alone:

- `resume_points`: where a thread was resumed — an idle gap between consecutive
  root checkpoints of the current branch above a threshold, or a change of a
  run / process identifier in checkpoint metadata (`PROCESS_KEYS`);
  `analytics/resume/chain.py`, with the chain order they follow;
- `expected_window`: the window a resume from a given root checkpoint rebuilds,
  and `resume_windows`: that window at every resume point of many threads (the
  CSV report); `analytics/resume/rehydrate.py`;
- `timeline`: one thread's root checkpoints with its resume points marked;
  `analytics/resume/timelines.py`;
- `risks` / `thread_risks`: what in the store makes a faithful rebuild doubtful;
  `analytics/resume/risk_figures.py`.

This module is their public face: `analytics.resume.X` is every public name of
the four, and of what they share (`analytics/resume/common.py`: the defaults
and argument checks; the idle-gap threshold is `analytics/resume/gap.py`).
Comparing an *observed* window (JSONL) with the expected one is
`analytics.observed.compare`. The workflow, the formats and every column are
in docs/resume_qa.md.

Ordering. `ts` is the writer's wall clock: it ties within a step and goes
backwards across processes with skewed clocks, so checkpoints are ordered by
their parent chain, never by `ts`; gaps are *measured* on `ts` between a
checkpoint and its parent (`analytics/resume/chain.py` says how).

>>> import analytics
>>> analytics.resume_points("lens.duckdb", "acme:web:sess-restart")  # doctest: +SKIP
>>> analytics.expected_window("lens.duckdb", "acme:web:sess-restart", cap=10)  # doctest: +SKIP
"""

from __future__ import annotations

from analytics.resume.common import DEFAULT_CAP, NO_FILTERS, PROCESS_KEYS, RESUME_SOURCE, SPEAKERS, check_cap
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap
from analytics.resume.chain import (
    RESUME_COLUMNS,
    current_chain,
    points_ctes,
    resume_counts_sql,
    resume_points,
)
from analytics.resume.rehydrate import (
    RESUME_WINDOW_COLUMNS,
    WINDOW_COLUMNS,
    expected_window,
    latest_root,
    resume_windows,
    resume_windows_sql,
    windows_at,
)
from analytics.resume.timelines import (
    TIMELINE_COLUMNS,
    timeline,
)
from analytics.resume.risk_figures import (
    DEFAULT_RISK_SORT,
    RISKS_TABLE,
    RISK_COLUMNS,
    RISK_FLAGS,
    RISK_SORT_COLUMNS,
    THREAD_RISK_COLUMNS,
    RiskFlag,
    materialize_risks,
    risk_count_sql,
    risk_list_sql,
    risks,
    risks_sql,
    thread_risks,
)

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_GAP_MINUTES",
    "DEFAULT_RISK_SORT",
    "NO_FILTERS",
    "PROCESS_KEYS",
    "RESUME_COLUMNS",
    "RESUME_SOURCE",
    "RESUME_WINDOW_COLUMNS",
    "RISKS_TABLE",
    "RISK_COLUMNS",
    "RISK_FLAGS",
    "RISK_SORT_COLUMNS",
    "RiskFlag",
    "SPEAKERS",
    "THREAD_RISK_COLUMNS",
    "TIMELINE_COLUMNS",
    "WINDOW_COLUMNS",
    "check_cap",
    "check_gap",
    "current_chain",
    "expected_window",
    "latest_root",
    "materialize_risks",
    "points_ctes",
    "resume_counts_sql",
    "resume_points",
    "resume_windows",
    "resume_windows_sql",
    "risk_count_sql",
    "risk_list_sql",
    "risks",
    "risks_sql",
    "thread_risks",
    "timeline",
    "windows_at",
]
