"""The thread ids each tombstone covered, recorded in the workspace (`tombstone_threads`).

A tenant or session tombstone names a value that a load parses out of thread ids
(`--thread-key-pattern`); a load that parses them another way would no longer find
the erased threads under that value. So the ids a tombstone covered are recorded
when the erasure is made, and again whenever a load holds threads back under it, and
every load holds back the union of the recorded ids and what the tombstone matches
now (`analytics.erasure.hold_back`). The table is only ever added to (its triggers
refuse UPDATE and DELETE); lifting the tombstone releases its ids with it.

>>> with ws.write() as conn:  # doctest: +SKIP
...     record(conn, 3, ["acme:web:sess-001"])
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from analytics.workspace.store import now


def record(conn: sqlite3.Connection, tombstone_id: int, thread_ids: Iterable[str]) -> None:
    """Add the ids to those tombstone `tombstone_id` covers (an id recorded already stays as it was),
    inside the caller's write transaction."""
    stamp = now()
    conn.executemany("INSERT OR IGNORE INTO tombstone_threads (tombstone_id, thread_id, at) VALUES (?, ?, ?)",
                     [(tombstone_id, t, stamp) for t in thread_ids])


def recorded(conn: sqlite3.Connection) -> dict[int, list[str]]:
    """{tombstone_id: the thread ids it covered, sorted} for every standing tombstone that has some."""
    found: dict[int, list[str]] = {}
    for tombstone_id, thread_id in conn.execute(
            "SELECT c.tombstone_id, c.thread_id FROM tombstone_threads c JOIN tombstones t USING (tombstone_id) "
            "WHERE t.lifted_at IS NULL ORDER BY c.tombstone_id, c.thread_id"):
        found.setdefault(tombstone_id, []).append(thread_id)
    return found


#: A column of a query on `tombstones AS t`: how many thread ids that tombstone covered.
COUNT = "(SELECT count(*) FROM tombstone_threads c WHERE c.tombstone_id = t.tombstone_id)"
