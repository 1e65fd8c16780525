"""How long each thread's human-in-the-loop waits lasted: the figure behind `slow_hitl`.

A wait runs from a root checkpoint on the current branch that raised an interrupt to the
first checkpoint resuming from it; a wait on the transcript checkpoint not yet answered runs
to the store's latest checkpoint time (as `slow_hitl` measures it, not the wall clock).

>>> longest_waits("lens.duckdb", ["acme:web:s1"])  # doctest: +SKIP
       thread_id  longest_wait_hours
0  acme:web:s1                 5.5
"""

from __future__ import annotations

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.conversation_outcomes import signals as q
from analytics.conversation_outcomes.materialize import store_latest

_LONGEST = """
WITH waits AS (""" + q.INTERRUPTS_SQL + """)
SELECT thread_id,
       max(epoch(coalesce(resumed_ts, CASE WHEN is_transcript THEN ?::TIMESTAMPTZ END) - pending_ts)) / 3600
         AS longest_wait_hours
FROM waits GROUP BY thread_id ORDER BY thread_id
"""


def longest_waits(con_or_path: ConOrPath, thread_ids: list[str]) -> pd.DataFrame:
    """The longest human-in-the-loop wait of each of `thread_ids`, in hours (thread_id,
    longest_wait_hours); a thread with no timed wait is absent."""
    if not thread_ids:
        return pd.DataFrame({"thread_id": pd.Series(dtype=object), "longest_wait_hours": pd.Series(dtype="float64")})
    with connection(con_or_path) as con:
        sql = _LONGEST.format(where="t.thread_id IN (SELECT unnest(?::VARCHAR[]))")
        frame = con.execute(sql, [list(thread_ids), store_latest(con)]).df()
    return frame[frame["longest_wait_hours"].notna()].reset_index(drop=True)
