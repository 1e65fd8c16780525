"""One thread's timeline: every root checkpoint, in chain order, with its resume points marked.

>>> timeline("lens.duckdb", "acme:web:sess-restart").query("resume == 'after #1'")  # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.frames import fetch_frame, typed
from analytics.resume.common import PROCESS_KEYS, process_paths, require_thread
from analytics.resume.chain import current_chain, resume_points
from analytics.resume.gap import DEFAULT_GAP_MINUTES

__all__ = ["TIMELINE_COLUMNS", "timeline"]

#: Columns of `timeline()`.
TIMELINE_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_id": "str",
    "parent_checkpoint_id": "str",
    "ts": "datetime64[us, UTC]",
    "step": "Int64",
    "source": "str",
    "message_count": "Int64",
    "on_current_branch": "boolean",
    "chain_position": "Int64",
    "is_latest": "boolean",
    "is_leaf": "boolean",
    "has_interrupt": "boolean",
    "branch_root_id": "str",
    "process": "str",
    "resume": "str",
    "resume_no": "Int64",
}


_TIMELINE_SQL = """
SELECT thread_id, checkpoint_id, parent_checkpoint_id, ts, step, source,
       len(message_versions) AS message_count, on_current_branch, is_latest, is_leaf, has_interrupt,
       branch_root_id, json_extract_string(metadata, ?) AS process_values
FROM checkpoints
WHERE thread_id = ? AND is_root
ORDER BY checkpoint_id
"""


def timeline(
    con_or_path: ConOrPath,
    thread_id: str,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    *,
    process_keys: Sequence[str] = PROCESS_KEYS,
) -> pd.DataFrame:
    """Every root checkpoint of one thread, current branch in chain order first, then the others.

    Columns: `TIMELINE_COLUMNS`. `chain_position` is 1.. along the current
    branch (NULL off it); `process` lists the `process_keys` values in the
    checkpoint's metadata; `resume` marks the two checkpoints of each resume
    point (`before #1`, `after #1`; both roles when one point follows another)
    and `resume_no` is the point a checkpoint opens (else the one it closes).

    >>> timeline("lens.duckdb", "acme:web:sess-restart").query("resume == 'after'")  # doctest: +SKIP
    """
    keys = list(process_keys)
    paths = process_paths(keys)
    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        frame = fetch_frame(con, _TIMELINE_SQL, [paths, thread_id])
        points = resume_points(con, thread_id, gap_minutes, process_keys=keys)
        chain = current_chain(con, thread_id)
    position = {cid: i + 1 for i, (cid, _) in enumerate(chain)}
    frame["chain_position"] = frame["checkpoint_id"].map(position).astype("Int64")
    frame["process"] = [
        None
        if vals is None or isinstance(vals, str) or all(v is None for v in vals)
        else ", ".join(f"{k}={v}" for k, v in zip(keys, vals) if v is not None)
        for vals in frame["process_values"]
    ]
    # A checkpoint can close one resume point and open the next: "after #1, before #2".
    roles: dict[str, list[str]] = defaultdict(list)
    number: dict[str, int] = {}
    for p in points.itertuples():
        roles[p.after_checkpoint_id].append(f"after #{p.resume_no}")
        roles[p.before_checkpoint_id].append(f"before #{p.resume_no}")
        number[p.before_checkpoint_id] = p.resume_no
        number.setdefault(p.after_checkpoint_id, p.resume_no)
    frame["resume"] = frame["checkpoint_id"].map(
        lambda c: ", ".join(sorted(roles[c], key=lambda r: r.split("#")[1])) if c in roles else None
    )
    frame["resume_no"] = frame["checkpoint_id"].map(number).astype("Int64")
    frame = frame.sort_values(["chain_position", "ts", "checkpoint_id"], na_position="last", kind="stable")
    return typed(frame, TIMELINE_COLUMNS)
