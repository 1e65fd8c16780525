"""Writing, inside an erasure's transaction, to the workspace's rows whose triggers refuse any change.

The tombstones, the erasure log and the export log refuse an UPDATE (their triggers: the
auditor's record). An erasure rewrites the erased threads' text out of them (a reason, an
argument, a name); `unguarded` drops the trigger and makes it again, as it was, in the same
transaction, so no other writer ever sees the row open.

>>> import sqlite3; c = sqlite3.connect(":memory:")
>>> _ = c.execute("CREATE TABLE t (x)"); _ = c.execute("INSERT INTO t VALUES (1)")
>>> _ = c.execute("CREATE TRIGGER t_kept BEFORE UPDATE ON t BEGIN SELECT RAISE(ABORT, 'kept'); END")
>>> with unguarded(c, "t_kept"):
...     _ = c.execute("UPDATE t SET x = 2")
>>> c.execute("SELECT x FROM t").fetchall(), c.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()
([(2,)], (1,))
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def unguarded(conn: sqlite3.Connection, trigger: str | None) -> Iterator[None]:
    """The trigger `trigger` of the workspace on `conn` dropped for the block's statements and made
    again after them (no trigger of that name, or None: the block runs as it is)."""
    found = None if trigger is None else conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    if found is not None:
        conn.execute(f"DROP TRIGGER {trigger}")
    yield
    if found is not None:
        conn.execute(found[0])
