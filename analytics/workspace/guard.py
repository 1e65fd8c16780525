"""The review workspace under the reader's policy (`analytics.policy`, contract §11).

The workspace is one file for everyone who reviews a database, while a reader may
be limited to some tenants and may read with personal data masked:

- **annotations** are shown only where the reader's (scoped) database holds their
  thread; under a tenant scope an annotation whose thread is not there is not
  shown at all — not even as an orphan — since nothing says whose it was;
- their free text (`note`, and `excerpt`, copied from the message) is masked when
  the reader's connection masks, as the message itself would be;
- **queues and saved views** remember the tenant scope they were made under
  (`scope`, NULL: none); a reader under a scope sees only those made within it;
- **importing** under a scope refuses lines about threads the reader cannot see.

>>> scope_json(frozenset({"globex", "acme"}))
'["acme", "globex"]'
>>> scope_json(None) is None
True
"""

from __future__ import annotations

import json

import duckdb

from analytics import _pandas as pd
from analytics.db import applied_policy
from analytics.masking import redactor
from analytics.policy import Policy, effective

#: The annotation fields a reviewer or the data wrote as free text: masked when the reader masks.
FREE_TEXT = ("note", "excerpt")
#: …and, in an export leaving the tool, the keys too (a thread key can hold an email).
EXPORT_TEXT = (*FREE_TEXT, "thread_id", "message_id", "checkpoint_id", "author", "source")


def reader_policy(con: duckdb.DuckDBPyConnection | None = None) -> Policy:
    """What the reader reads under: `con`'s policy, or without a connection the deployment's."""
    return applied_policy(con) if con is not None else effective()


def scope_json(tenants: frozenset[str] | None) -> str | None:
    """A tenant scope as the workspace stores it (a sorted JSON list; NULL: no scope)."""
    return None if tenants is None else json.dumps(sorted(tenants))


#: SQL: the row's `scope` (JSON list or NULL) lies within the reader's (`?`, the same; NULL: any).
WITHIN_SCOPE = ("(? IS NULL OR ({col} IS NOT NULL AND NOT EXISTS ("
                "SELECT 1 FROM json_each({col}) s WHERE s.value NOT IN (SELECT r.value FROM json_each(?) r))))")


def within_scope(column: str, tenants: frozenset[str] | None) -> tuple[str, list]:
    """`(sql, params)`: the row's recorded scope is inside `tenants` (any row when None)."""
    reader = scope_json(tenants)
    return WITHIN_SCOPE.format(col=column), [reader, reader]


def shown(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> pd.DataFrame:
    """Resolved annotations (`annotating.with_status`) as this connection's reader may see them."""
    policy = applied_policy(con)
    if policy.tenants is not None:
        frame = frame[frame["orphan_reason"].fillna("") != "thread gone"].reset_index(drop=True)
    if policy.redact:
        frame = masked(frame, FREE_TEXT)
    return frame


def masked(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """`frame` with these text columns masked by the process's redactor (one placeholder per value)."""
    r = redactor()
    out = frame.copy()
    for column in columns:
        if column in out:
            out[column] = [None if v is None else r.text(v) for v in out[column]]
    return out
