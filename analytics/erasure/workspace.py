"""What an erasure removes from the review workspace: the annotations, queue items and saved views of the erased threads.

An annotation keeps the excerpt of the message it is on and the reviewer's note;
a queue item and a saved view name the thread. None of them may outlive the
thread (`report annotations` would print the excerpt as "orphaned, thread gone").
The tombstone and the two append-only logs (erasure, export) keep the erased
*id*: the tombstone is what keeps the thread out of later loads, the logs are the
record an auditor reads; they never hold message text (a reason or a `by` quoting it is stored
masked, and earlier reasons and export arguments are rid of it: `analytics.erasure.reason`,
`analytics.erasure.exports`). The queues and labels stay, their names and descriptions masked
(`analytics.erasure.names`), and so is the free text of the kept rows: a note on a kept thread
quoting the erased one (`analytics.erasure.free_text`).

SQLite leaves deleted rows in free pages and in the write-ahead log: the rows are
deleted with `secure_delete` (freed space overwritten with zeros), then the file is
rebuilt (`VACUUM`) and the log folded back and truncated (`wal_checkpoint(TRUNCATE)`).
A reader holding a snapshot open at that moment (an app server mid-page) can stop
the truncation: the erasure's scan then finds the text and says so.

>>> purge_workspace(Workspace.beside("lens.duckdb"), ["acme:web:sess-001"])  # doctest: +SKIP
{'annotations': 2, 'queue_items': 1}
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

from analytics.erasure.exports import scrub
from analytics.erasure.free_text import rewrite
from analytics.erasure.names import rename
from analytics.erasure.reason import scrub_reasons
from analytics.workspace.store import Workspace, temp_ids


def purge_workspace(ws: Workspace, thread_ids: list[str], export_values: tuple[str, ...] = (),
                    texts: tuple[str, ...] = (), names: dict[str, str] | None = None) -> dict[str, int]:
    """Delete the threads' annotations, queue items and the saved views that name them from
    `ws`, replace the erased ids and `export_values` in the export log's arguments, and the
    scan's windows `texts` inside them (`analytics.erasure.exports`) and inside the reasons of
    the tombstones and the erasure log (`analytics.erasure.reason`), write the queues' and labels'
    names and descriptions masked (`names`, {text: masked}, and `texts` inside them:
    `analytics.erasure.names`) and the free text of the kept rows so (`analytics.erasure.free_text`),
    then compact the file;
    {table: rows deleted or changed}. A workspace not created yet is left so."""
    if not thread_ids or not ws.exists():
        return {}
    removed: dict[str, int] = {}
    with ws.write() as conn:
        conn.execute("PRAGMA secure_delete = ON")
        temp_ids(conn, "erased_ids", thread_ids)
        for table in ("annotations", "queue_items"):
            n = conn.execute(f"DELETE FROM {table} WHERE thread_id IN (SELECT thread_id FROM temp.erased_ids)").rowcount
            if n:
                removed[table] = n
        # A saved view whose parameters name an erased thread (its JSON string) goes with it.
        n = conn.execute("DELETE FROM saved_views WHERE EXISTS (SELECT 1 FROM temp.erased_ids e "
                         "WHERE instr(saved_views.params, json_quote(e.thread_id)) > 0)").rowcount
        if n:
            removed["saved_views"] = n
        n = scrub(conn, export_values, tuple(thread_ids), texts)
        if n:
            removed["exports scrubbed"] = n
        n = scrub_reasons(conn, texts)
        if n:
            removed["reasons scrubbed"] = n
        n = rename(conn, names or {}, texts)
        if n:
            removed["names masked"] = n
        n = rewrite(conn, names or {}, texts)
        if n:
            removed["free text masked"] = n
        conn.execute("DROP TABLE temp.erased_ids")
    compact(ws)
    return removed


def compact(ws: Workspace) -> None:
    """Rebuild the workspace file and fold its write-ahead log back (truncated to nothing), so
    no deleted row survives in a free page or an old log frame."""
    with closing(sqlite3.connect(str(ws.path), timeout=30, isolation_level=None)) as conn:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def ids_left(ws: Workspace, thread_ids: list[str]) -> list[str]:
    """The erased ids still named by an annotation, a queue item or a saved view (the scan's
    check of the workspace, whose tombstone and logs keep the ids by design)."""
    if not thread_ids or not ws.exists():
        return []
    with ws.read() as conn:
        temp_ids(conn, "erased_ids", thread_ids)
        left = conn.execute(
            "SELECT thread_id FROM temp.erased_ids e WHERE EXISTS (SELECT 1 FROM annotations a WHERE a.thread_id = e.thread_id) "
            "OR EXISTS (SELECT 1 FROM queue_items q WHERE q.thread_id = e.thread_id) "
            "OR EXISTS (SELECT 1 FROM saved_views v WHERE instr(v.params, json_quote(e.thread_id)) > 0) "
            "ORDER BY thread_id").fetchall()
    return [t for (t,) in left]
