"""What an erasure keeps of the free text on the workspace's kept rows: it, without the erased threads' text.

A reviewer's note on a kept thread can quote the erased one ("customer said …, mail …"), and so
can a saved view's name or the text it filters on, or a queue's saved view. So can a name: who wrote a
note on a kept thread (its `author`), made a queue or a view, marked an item done, was assigned
one, erased, lifted or exported — the erased person reviewing, their mail as a login. The erasure
masks them all as it masks its reason (`analytics.erasure.reason`): the masks are chosen before
the rows go (`free_texts`, then `masked_texts`), and written in the workspace purge's transaction
(`rewrite`), where the scan's windows (an earlier erasure's thread) are replaced too; the
logs' and tombstones' names through their triggers (`analytics.erasure.triggers`). Queue and
label names and descriptions are `analytics.erasure.names`'.

>>> import sqlite3; c = sqlite3.connect(":memory:")
>>> _ = c.execute("CREATE TABLE annotations (note TEXT, excerpt TEXT)")
>>> _ = c.execute("INSERT INTO annotations VALUES ('said ZEBRA-7731 twice', NULL)")
>>> rewrite(c, {"said ZEBRA-7731 twice": "said <erased> twice"}), free_texts(c)
(1, ['said <erased> twice'])
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from analytics.erasure.exports import _leaves
from analytics.erasure.names import _unique
from analytics.erasure.reason import replaced_within
from analytics.erasure.triggers import unguarded

#: (table, column, the column's longest or None, unique, the trigger refusing its update or None) of
#: the free text on the workspace's rows, who wrote each row among it.
FREE = (("annotations", "note", None, False, None), ("annotations", "excerpt", None, False, None),
        ("annotations", "author", None, False, None),
        ("saved_views", "name", 100, True, None), ("saved_views", "created_by", None, False, None),
        ("queues", "view", None, False, None), ("queues", "created_by", None, False, None),
        ("queue_items", "assignee", None, False, None), ("queue_items", "done_by", None, False, None),
        ("tombstones", "by", None, False, "tombstones_lift_once"),
        ("tombstones", "lifted_by", None, False, "tombstones_lift_once"),
        ("erasure_log", "by", None, False, "erasure_log_no_update"), ("exports", "who", None, False, "exports_no_update"))
#: (table, column) of JSON whose strings are free text: a saved view's filters (a text searched for).
FREE_JSON = (("saved_views", "params"),)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _present(conn: sqlite3.Connection) -> list[tuple[str, str, int | None, bool, str | None]]:
    columns = {t: {c for (c,) in conn.execute("SELECT name FROM pragma_table_info(?)", (t,))} for t in _tables(conn)}
    return [f for f in FREE if f[1] in columns.get(f[0], ())]


def _json_cells(conn: sqlite3.Connection) -> list[tuple[str, str, int, Any]]:
    """(table, column, rowid, decoded) of each `FREE_JSON` cell."""
    tables = _tables(conn)
    return [(table, column, rowid, json.loads(value)) for table, column in FREE_JSON if table in tables
            for rowid, value in conn.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL")]


def _masked(value: Any, mask) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _masked(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, mask) for v in value]
    return value


def free_texts(conn: sqlite3.Connection) -> list[str]:
    """Every free text (`FREE`) in the workspace on `conn`."""
    found: set[str] = set()
    for table, column, *_ in _present(conn):
        found.update(t for (t,) in conn.execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} <> ''"))
    found.update(t for *_, value in _json_cells(conn) for t in _leaves(value) if t)
    return sorted(found)


def rewrite(conn: sqlite3.Connection, masks: dict[str, str], texts: tuple[str, ...] = ()) -> int:
    """Write the masked free texts `masks` ({text: masked}), with the scan's windows `texts`
    replaced in them too, inside the caller's transaction; how many cells changed."""
    def mask(text: str) -> str:
        return replaced_within(masks.get(text, text), texts)[0]

    changed = 0
    for table, column, longest, unique, trigger in _present(conn):
        rows = conn.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} <> ''").fetchall()
        taken = {value for _, value in rows}
        updates = []
        for rowid, value in rows:
            new = mask(value)
            if new == value:
                continue
            if unique:
                taken.discard(value)
                new = _unique(new.strip() or "<erased>", taken, longest or len(new))
                taken.add(new)
            updates.append((new, rowid))
        if updates:
            with unguarded(conn, trigger):
                conn.executemany(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", updates)
        changed += len(updates)
    for table, column, rowid, value in _json_cells(conn):
        new = _masked(value, mask)
        if new != value:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (json.dumps(new, ensure_ascii=False), rowid))
            changed += 1
    return changed
