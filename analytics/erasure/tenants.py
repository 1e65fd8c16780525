"""What a reader limited to some tenants (`TRANSCRIPT_LENS_TENANTS`, `analytics.policy.effective`)
may do with erasure: erase their own tenants' threads, nothing of anyone else's.

The rule is the one reads and annotations follow: a scoped reader writes only about the threads
their scoped database holds. So under a tenant scope

- `--thread ID` erases a thread whose tenant is in the scope; a thread of another tenant and a
  thread the database does not hold get the same refusal (no answer tells them apart);
- `--tenant T` erases a tenant of the scope;
- `--session S` is refused: a session mark holds back that session's threads of every tenant, in
  this load and every later one;
- lifting a tombstone, and reading the tombstones or the erasure log, are refused: a tombstone
  keeps ids out whatever tenant a later load parses from them, and the log's rows name every
  tenant's threads and reasons without saying whose scope wrote them (as the export log,
  `analytics.export_log.exports`).

>>> check_erase(None, "session", "sess-1", frozenset({"acme"}))
Traceback (most recent call last):
...
analytics.errors.BadRequest: a reader scoped to tenants cannot erase a session: its mark holds back that session's threads of every tenant
"""

from __future__ import annotations

from pathlib import Path

from analytics.errors import BadRequest
from analytics.policy import effective

#: Why `erase --list`, `--log` and `--lift` are refused under a tenant scope.
SPANS_EVERY_TENANT = ("tombstones and the erasure log span every tenant (thread ids, reasons), so a reader "
                      "scoped to tenants cannot {}")


def scope_tenants() -> frozenset[str] | None:
    """The tenants the caller is limited to (None: every tenant)."""
    return effective().tenants


def refuse_scoped(what: str) -> None:
    """Refuse `what` (lifting, listing, reading the log) under a tenant scope."""
    if scope_tenants() is not None:
        raise BadRequest(SPANS_EVERY_TENANT.format(what))


def check_erase(source: Path | None, kind: str, value: str, tenants: frozenset[str] | None) -> None:
    """Refuse an erasure of (`kind`, `value`) that reaches outside `tenants` (None: allowed), read
    from the database file `source` (None: no database yet, so no thread of the scope)."""
    if tenants is None:
        return
    if kind == "session":
        raise BadRequest("a reader scoped to tenants cannot erase a session: its mark holds back that "
                         "session's threads of every tenant")
    if kind == "tenant":
        if value not in tenants:
            raise BadRequest(f"tenant {value!r} is outside your tenants: a reader scoped to tenants erases "
                             "only their own")
        return
    if _tenant_of(source, value) not in tenants:  # a thread of another tenant, or none at all: one answer
        raise BadRequest(f"no thread {value!r} in your tenants: a reader scoped to tenants erases only "
                         "their own threads")


def _tenant_of(source: Path | None, thread_id: str) -> str | None:
    """The tenant the database holds `thread_id` under (None: not held, or no tenant)."""
    if source is None:
        return None
    from loaders.writer import connect_read_only

    con = connect_read_only(source)
    try:
        has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
                          "AND table_name = 'threads'").fetchall()[0][0]
        if not has:
            return None
        row = con.execute("SELECT tenant_id FROM threads WHERE thread_id = ?", [thread_id]).fetchone()
    finally:
        con.close()
    return None if row is None else row[0]
