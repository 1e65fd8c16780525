"""What a loaded database holds: its size and last load, and the values its threads span.

Plain data for a notebook as for the app's sidebar and filter widgets.

>>> from analytics import contents
>>> contents.database_info("demo.duckdb")["threads"]  # doctest: +SKIP
>>> contents.facets("demo.duckdb").tenants  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import TypedDict

from analytics.db import ConOrPath, connection


class DatabaseInfo(TypedDict, total=False):
    """`database_info()`: the counts always; the `loads` fields when the database records a load."""

    threads: int
    messages: int
    tenants: int  # distinct tenant ids (threads without one are not counted)
    source: str
    source_kind: str
    loaded_at: datetime
    load_errors: int


def database_info(con_or_path: ConOrPath) -> DatabaseInfo:
    """Threads, messages and tenants of the database, and where its last load came from.

    Raises whatever DuckDB raises on a file that is not a Transcript Lens database.
    """
    with connection(con_or_path) as con:
        counts = con.execute(
            "SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM messages), "
            "(SELECT count(DISTINCT tenant_id) FROM threads)"
        ).fetchall()[0]
        loads = con.execute(
            "SELECT source, source_kind, finished_at, errors FROM loads ORDER BY load_id DESC LIMIT 1"
        ).fetchall()
        load = loads[0] if loads else None
    info = DatabaseInfo(threads=counts[0], messages=counts[1], tenants=counts[2])
    if load:
        info.update(source=load[0], source_kind=load[1], loaded_at=load[2], load_errors=load[3])
    return info


@dataclass(frozen=True)
class Facets:
    """The tenants, sub-tenants and UTC days a database's threads span (choices for filters)."""

    tenants: tuple[str, ...]
    sub_tenants: tuple[str, ...]
    first_day: date | None
    last_day: date | None
    threads: int
    tenantless: bool = False  # some thread has no tenant (`Filters` chooses them with None)
    sub_tenantless: bool = False  # some thread has no sub-tenant
    pairs: tuple[tuple[str | None, str | None], ...] = ()  # every (tenant, sub-tenant) a thread has

    def sub_tenants_of(self, tenants: tuple[str | None, ...]) -> tuple[tuple[str, ...], bool]:
        """The sub-tenants of threads of `tenants` (all when none is chosen), and whether one of them
        has none: a sub-tenant choice that names another tenant's sub-tenant matches nothing."""
        if not tenants:
            return self.sub_tenants, self.sub_tenantless
        subs = {s for t, s in self.pairs if t in tenants}
        return tuple(sorted(s for s in subs if s is not None)), None in subs


def facets(con_or_path: ConOrPath) -> Facets:
    """Tenants, sub-tenants and the UTC day range of the database."""
    with connection(con_or_path) as con:
        tenants = [r[0] for r in con.execute("SELECT DISTINCT tenant_id FROM threads ORDER BY 1").fetchall()]
        pairs = con.execute("SELECT DISTINCT tenant_id, sub_tenant_id FROM threads ORDER BY 1, 2").fetchall()
        subs = sorted({s for _, s in pairs}, key=lambda s: (s is None, s or ""))
        first, last, n = con.execute(
            "SELECT min(first_ts), max(last_ts), count(*) FROM threads").fetchall()[0]
    return Facets(
        tuple(t for t in tenants if t is not None),
        tuple(s for s in subs if s is not None),
        first.astimezone(timezone.utc).date() if first else None,
        last.astimezone(timezone.utc).date() if last else None,
        n,
        None in tenants,
        None in subs,
        tuple(pairs),
    )
