"""What an erasure keeps of the review queues' and labels' names and descriptions: them, without the erased threads' text.

A reviewer names a queue or a label after what it is for ("Quarrington complaints"), and that
can be the erased thread's text: a customer's name, an e-mail its metadata carries. Those texts
live in the review workspace, which the erasure's scan reads, and no command rewrites them
once the thread is gone. So the erasure masks them as it masks its reason
(`analytics.erasure.reason`): the masks are chosen before the rows go (`names_of`, then
`masked_texts`), and written in the workspace purge's transaction (`rename`), where the scan's
windows (an earlier erasure's thread) are replaced too.

Queue names and label names stay unique: a name that becomes one another row holds gets a
number (`<erased> queue 2`), within the column's length.

>>> _unique("<erased> queue", {"<erased> queue"}, 100)
'<erased> queue 2'
>>> _unique("x" * 60, {"x" * 60}, 60) == "x" * 58 + " 2"
True
"""

from __future__ import annotations

import sqlite3

from analytics.erasure.reason import replaced_within

#: (table, key, the name column's longest) of the named rows an erasure masks.
NAMED = (("queues", "queue_id", 100), ("labels", "name", 60))


def names_of(conn: sqlite3.Connection) -> list[str]:
    """Every queue's and label's name and description in the workspace on `conn`."""
    found: set[str] = set()
    for table, _key, _longest in NAMED:
        for name, description in conn.execute(f"SELECT name, description FROM {table}"):
            found.update(t for t in (name, description) if t)
    return sorted(found)


def _unique(name: str, taken: set[str], longest: int) -> str:
    """`name`, or it with the first number from 2 that makes it none of `taken`, cut to `longest`."""
    out, n = name[:longest], 2
    while out in taken:
        suffix = f" {n}"
        out, n = name[:longest - len(suffix)].rstrip() + suffix, n + 1
    return out


def rename(conn: sqlite3.Connection, masks: dict[str, str], texts: tuple[str, ...] = ()) -> int:
    """Write the masked names and descriptions `masks` ({text: masked}) of the queues and labels
    in the workspace on `conn`, with the scan's windows `texts` replaced in them too, inside the
    caller's transaction; how many rows changed. A label's annotations follow its new name
    (the column's `ON UPDATE CASCADE`)."""
    def masked(text: str | None) -> str | None:
        if not text:
            return text
        return replaced_within(masks.get(text, text), texts)[0]

    changed = 0
    for table, key, longest in NAMED:
        rows = conn.execute(f"SELECT {key}, name, description FROM {table} ORDER BY {key}").fetchall()
        taken = {name for _, name, _ in rows}
        for row_key, name, description in rows:
            new_name, new_description = masked(name), masked(description)
            if new_name == name and new_description == description:
                continue
            if new_name != name:
                taken.discard(name)
                new_name = _unique(new_name.strip() or "<erased>", taken, longest)
                taken.add(new_name)
            conn.execute(f"UPDATE {table} SET name = ?, description = ? WHERE {key} = ?",
                         (new_name, new_description, row_key))
            changed += 1
    return changed
