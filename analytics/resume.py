"""Restart-resume fidelity QA (contract §5): resume points, expected windows, store-only risks.

On the first turn after a restart a runtime rebuilds its recency window from
the durable transcript: the last `cap` user/assistant messages of
`state['messages']` at the checkpoint it resumes from (tool, system and other
rows skipped), each tagged `source = "resume_rehydrate"`. `analytics.resume`
answers, from the database alone:

- `resume_points`: where a thread was resumed — an idle gap between consecutive
  root checkpoints of the current branch above a threshold, or a change of a
  run / process identifier in checkpoint metadata (`PROCESS_KEYS`);
  `analytics/resume_chain.py`, with the chain order they follow;
- `expected_window`: the window a resume from a given root checkpoint rebuilds,
  and `resume_windows`: that window at every resume point of many threads (the
  CSV report); `analytics/resume_rehydrate.py`;
- `timeline`: one thread's root checkpoints with its resume points marked;
  `analytics/resume_timeline.py`;
- `risks` / `thread_risks`: what in the store makes a faithful rebuild doubtful;
  `analytics/resume_risks.py`.

This module holds what those share (the defaults, the argument checks, the
typed fetch; the idle-gap threshold is `analytics/resume_gap.py`) and is
their public face: `analytics.resume.X` is every public name of the four.
Comparing an *observed* window (JSONL) with the expected one is
`analytics.observed.compare`. The workflow, the formats and every column are
in docs/resume_qa.md.

Ordering. `ts` is the writer's wall clock: it ties within a step and goes
backwards across processes with skewed clocks, so checkpoints are ordered by
their parent chain, never by `ts`; gaps are *measured* on `ts` between a
checkpoint and its parent (`analytics/resume_chain.py` says how).

>>> import analytics
>>> analytics.resume_points("lens.duckdb", "acme:web:sess-restart")  # doctest: +SKIP
>>> analytics.expected_window("lens.duckdb", "acme:web:sess-restart", cap=10)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Sequence
from typing import Any

from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.resume_gap import DEFAULT_GAP_MINUTES, check_gap  # noqa: F401  (analytics.resume names)

#: The tag a runtime puts on rehydrated entries (`metadata["source"]`).
RESUME_SOURCE = "resume_rehydrate"
#: Window size of the runtime's recency deque (`max_entries`).
DEFAULT_CAP = 50
#: Speakers the rehydrate keeps; every other role is skipped.
SPEAKERS = ("user", "assistant")

#: Top-level checkpoint-metadata keys that name a run, a process or a host.
#: LangGraph copies every scalar `config["configurable"]` / `config["metadata"]`
#: entry into checkpoint metadata (contract §7.13), so these are whatever the
#: runtime put in its config. A change of any of them between a checkpoint and
#: the nearest ancestor carrying the same key is a resume point.
PROCESS_KEYS: tuple[str, ...] = (
    "run_id",
    "process_id",
    "pid",
    "writer",
    "writer_pid",
    "worker",
    "worker_id",
    "host",
    "hostname",
)

NO_FILTERS = Filters()  # frozen, so one shared default is safe


# ---------------------------------------------------------------------------
# argument checks and frame plumbing


def check_cap(cap: object) -> int:
    """The window size: an integer >= 0 (0 rehydrates nothing).

    >>> check_cap(3)
    3
    """
    if isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or cap < 0:
        raise BadRequest(f"cap must be an integer >= 0, got {cap!r}")
    return int(cap)


def _process_paths(keys: Sequence[str]) -> list[str]:
    if isinstance(keys, str):
        raise BadRequest("process_keys must be a sequence of key names, not one string")
    paths = []
    for key in keys:
        # The key becomes a JSON path value (bound, never SQL); a quote would break the path.
        if not isinstance(key, str) or not key or '"' in key or "\\" in key:
            raise BadRequest(f"process key {key!r} must be a non-empty name without quotes or backslashes")
        paths.append(f'$."{key}"')
    return paths


def _rows(con, sql: str, params: list) -> list[tuple]:
    # fetchall() finishes the result; a half-read one (fetchone) blocks the caller's connection.
    return con.sql(sql, params=params).fetchall()


def _require_thread(con, thread_id: str) -> None:
    if not isinstance(thread_id, str) or not thread_id:
        raise BadRequest(f"thread_id must be a non-empty string, got {thread_id!r}")
    if not _rows(con, "SELECT 1 FROM threads WHERE thread_id = ?", [thread_id]):
        raise NotFound(f"no thread {thread_id!r} in this database")


# ---------------------------------------------------------------------------
# the public face

# The parts import this module's shared names, so it cannot import them at its
# top (a cycle); a name of theirs is looked up on first use instead (PEP 562).
_PARTS = ("analytics.resume_chain", "analytics.resume_rehydrate", "analytics.resume_timeline", "analytics.resume_risks")


def __getattr__(name: str) -> Any:
    for part in _PARTS:
        module = importlib.import_module(part)
        if name in module.__all__:
            value = globals()[name] = getattr(module, name)
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *(n for part in _PARTS for n in importlib.import_module(part).__all__)})
