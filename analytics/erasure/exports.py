"""What an erasure takes out of the export log: the erased threads' text and ids in its arguments.

The export log (`analytics.exports`) records each export's arguments: a `search --text X` or a
`report conversations --text X` keeps X, a `--meta KEY=VALUE` keeps `KEY=VALUE`, a `transcript
--thread T` keeps T. When X is text of an erased thread, the log would keep what the erasure
removed. So an erasure replaces each such argument value by `ERASED` (the row stays: who
exported what, when, stays the auditor's record):

- a value holding an erased thread id;
- a value — or, for a value reading `KEY=VALUE`, its key or its value — found (in any case) in
  what an erased thread says and in nothing a kept thread says: its messages' text and tool
  calls' arguments, and its checkpoints' metadata (`analytics.erasure.said`), the rule the scan's
  text windows follow (`analytics.erasure.scan`): a word every thread uses (`refund`) is not the
  erased thread's text, a metadata value only the erased thread carries (the customer's e-mail a
  `--meta customer=…` filter named) is.

Inside any other value, each of the scan's text windows (`analytics.erasure.scan.Needles`: a
metadata value only the erased thread carries, a short message of it) is replaced by `ERASED`
and the rest kept: `--text "ticket for frank@x.net"` becomes `ticket for <erased>`.

The values are chosen before the rows go (`erased_values`), replaced in the erasure's workspace
transaction (`scrub`, called by `analytics.erasure.workspace.purge_workspace`, before the file is
rebuilt), and looked for again by the scan (`values_left`).

>>> replaced_strings({"text": "ZQX", "tenant": ["acme", "ZQX"]}, {"zqx"}, ())
({'text': '<erased>', 'tenant': ['acme', '<erased>']}, 2)
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from typing import Any

import duckdb

from analytics.erasure.said import said_sql
from analytics.erasure.triggers import unguarded

ERASED = "<erased>"
_SHORT_ID = 4  # an id shorter than this must be the whole value (`s1` is inside too many words)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return []


def _holds_id(value: str, ids: tuple[str, ...]) -> bool:
    return any(value == i or (len(i) >= _SHORT_ID and i in value) for i in ids)


def replaced_strings(value: Any, texts: set[str], ids: tuple[str, ...],
                     within: re.Pattern | None = None) -> tuple[Any, int]:
    """`value` with each string that is one of `texts` (casefolded) or holds one of `ids` made `ERASED`,
    and each match of `within` (`inside`: the scan's windows) in the others replaced by `ERASED`;
    how many strings changed.

    >>> replaced_strings(["ticket for Zed@X.org", "refund"], set(), (), inside(("zed@x.org",)))
    (['ticket for <erased>', 'refund'], 1)
    """
    if isinstance(value, str):
        if value.strip().casefold() in texts or _holds_id(value, ids):
            return ERASED, 1
        if within is not None:
            new, n = within.subn(ERASED, value)
            return (new, 1) if n else (value, 0)
        return value, 0
    if isinstance(value, dict):
        pairs = {k: replaced_strings(v, texts, ids, within) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    if isinstance(value, list):
        pairs = [replaced_strings(v, texts, ids, within) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    return value, 0


@functools.lru_cache(maxsize=8)
def inside(texts: tuple[str, ...]) -> re.Pattern | None:
    """The pattern matching any of `texts` in any case, longest first; None for none (kept for the
    next call: an erasure masks every free text of a workspace with the same texts)."""
    wanted = sorted({t for t in texts if t.strip()}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, wanted)), re.IGNORECASE) if wanted else None


def _arguments(conn: sqlite3.Connection) -> list[tuple[int, Any]]:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'exports'").fetchone() is None:
        return []
    return [(i, json.loads(a)) for i, a in conn.execute("SELECT export_id, arguments FROM exports")]


def _forms(value: str) -> set[str]:
    """The casefolded texts `value` is looked for as: itself and, when it reads `KEY=VALUE` (a `--meta`
    filter), its key and its value.

    >>> sorted(_forms(" Customer=Frank@X.net "))
    ['customer', 'customer=frank@x.net', 'frank@x.net']
    """
    whole = value.strip().casefold()
    key, sep, rest = whole.partition("=")
    return {f.strip() for f in (whole, *((key, rest) if sep else ())) if f.strip()}


def erased_values(conn: sqlite3.Connection, db: str, thread_ids: list[str]) -> tuple[str, ...]:
    """The argument values of the export log in `conn` (the workspace) that are text of the erased
    threads only, casefolded; read from the DuckDB database at `db` before the erasure."""
    values = sorted({v.strip().casefold() for _, args in _arguments(conn) for v in _leaves(args) if v.strip()})
    if not values or not thread_ids:
        return ()
    forms = {v: _forms(v) for v in values}
    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        said = said_sql(con, "src")
        if said is None:
            return ()
        con.execute("CREATE TEMP TABLE erased (thread_id VARCHAR)")
        con.execute("INSERT INTO erased SELECT DISTINCT unnest(?::VARCHAR[])", [thread_ids])
        found = {w for (w,) in con.execute(
            f"WITH said AS (SELECT thread_id, lower(said) AS said FROM ({said})) "
            "SELECT w FROM unnest(?::VARCHAR[]) AS t(w) "
            "WHERE EXISTS (SELECT 1 FROM said s SEMI JOIN erased USING (thread_id) WHERE contains(s.said, w)) "
            "AND NOT EXISTS (SELECT 1 FROM said s WHERE contains(s.said, w) "
            "                AND (s.thread_id IS NULL OR s.thread_id NOT IN (SELECT thread_id FROM erased)))",
            [sorted(set().union(*forms.values()))]).fetchall()}
        return tuple(v for v in values if forms[v] & found)
    finally:
        con.close()


def scrub(conn: sqlite3.Connection, texts: tuple[str, ...], ids: tuple[str, ...], within: tuple[str, ...] = ()) -> int:
    """Replace the erased values in the export log's arguments, and the scan's windows (`within`) inside
    the others, inside the caller's transaction; how many rows changed. The log refuses updates (its trigger):
    it is written `unguarded`."""
    wanted, pattern = set(texts), inside(within)
    changed = []
    for export_id, args in _arguments(conn):
        new, n = replaced_strings(args, wanted, ids, pattern)
        if n:
            changed.append((json.dumps(new, sort_keys=True), export_id))
    if not changed:
        return 0
    with unguarded(conn, "exports_no_update"):
        conn.executemany("UPDATE exports SET arguments = ? WHERE export_id = ?", changed)
    return len(changed)


def values_left(conn: sqlite3.Connection, texts: tuple[str, ...], ids: tuple[str, ...], within: tuple[str, ...] = ()) -> int:
    """How many export-log rows still hold an erased value, or one of the scan's windows (`within`)
    inside a value (the scan's check)."""
    wanted, pattern = set(texts), inside(within)
    return sum(1 for _, args in _arguments(conn) if replaced_strings(args, wanted, ids, pattern)[1])
