"""What the resume QA parts share: the defaults and the argument checks.

`analytics.resume` (the public face) re-exports the public ones; the parts
(`chain`, `rehydrate`, `timelines`, `risk_figures`), `analytics.observed`,
`analytics.history.branches` and `analytics.subgraphs` import them from here.

>>> check_cap(3), DEFAULT_CAP
(3, 50)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.frames import fetch_rows

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


def process_paths(keys: Sequence[str]) -> list[str]:
    if isinstance(keys, str):
        raise BadRequest("process_keys must be a sequence of key names, not one string")
    paths = []
    for key in keys:
        # The key becomes a JSON path value (bound, never SQL); a quote would break the path.
        if not isinstance(key, str) or not key or '"' in key or "\\" in key:
            raise BadRequest(f"process key {key!r} must be a non-empty name without quotes or backslashes")
        paths.append(f'$."{key}"')
    return paths


def require_thread(con, thread_id: str) -> None:
    """Refuse a `thread_id` that is not a non-empty string (BadRequest) or not in the database (NotFound)."""
    if not isinstance(thread_id, str) or not thread_id:
        raise BadRequest(f"thread_id must be a non-empty string, got {thread_id!r}")
    if not fetch_rows(con, "SELECT 1 FROM threads WHERE thread_id = ?", [thread_id]):
        raise NotFound(f"no thread {thread_id!r} in this database")
