"""What a connection may see: personal data masked, and only some tenants' rows (contract §11).

A `Policy` is applied to a connection once, when it is opened (`analytics.connect`).
Under a tenant scope every table of the database is shadowed by a view of the same
name, in the connection's temporary schema, that keeps only the allowed tenants'
rows: every query of the analytics layer names tables unqualified, so every page,
report, CSV and API answer reads through those views, and a query added later
cannot forget the rule. Masking applies to every text as it leaves the query layer
(`analytics.masking`), and a masking connection's text search is blind inside the
values it masks (`analytics.masking.SEARCH_BARRIER_VARIABLE`).

A deployment sets its policy in the environment (`TRANSCRIPT_LENS_REDACT=1`,
`TRANSCRIPT_LENS_TENANTS=acme,globex`; `transcript-lens app --redact --tenants …`
sets them for the app); a caller can only add to it (`Policy.stricter`): masking
cannot be switched off, nor a tenant added, below what the deployment says.

>>> Policy(redact=True).stricter(Policy(tenants=frozenset({"acme"})))
Policy(redact=True, tenants=frozenset({'acme'}))
>>> deployment_policy({"TRANSCRIPT_LENS_TENANTS": "acme, globex"}).tenants == {"acme", "globex"}
True
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb

from analytics.redact import ENV as REDACT_ENV

#: The deployment's tenant scope: a comma-separated list of tenant ids.
TENANTS_ENV = "TRANSCRIPT_LENS_TENANTS"

#: Tables that hold no row of any tenant (load provenance, schema version): kept under a tenant scope.
GLOBAL_TABLES = frozenset({"meta", "loads"})
#: The connection's temporary table of allowed tenant ids.
SCOPE_TABLE = "tl_policy_tenants"


@dataclass(frozen=True)
class Policy:
    """`redact`: mask personal data; `tenants`: the tenant ids whose rows may be read (None: all;
    threads without a tenant are outside every scope). What is masked besides the built-in
    kinds is the process's redaction config (`TRANSCRIPT_LENS_REDACT_CONFIG`)."""

    redact: bool = False
    tenants: frozenset[str] | None = None

    @property
    def is_open(self) -> bool:
        """Nothing masked, nothing hidden: the connection reads the tables themselves."""
        return not self.redact and self.tenants is None

    def covers(self, other: Policy) -> bool:
        """Whether reading under this policy hides at least what `other` hides.

        >>> Policy(redact=True, tenants=frozenset({"a"})).covers(Policy(tenants=frozenset({"a", "b"})))
        True
        """
        masks = self.redact or not other.redact
        scoped = other.tenants is None or (self.tenants is not None and self.tenants <= other.tenants)
        return masks and scoped

    def stricter(self, other: Policy | None) -> Policy:
        """Both policies at once: masking if either masks, the tenants both allow."""
        if other is None:
            return self
        tenants = self.tenants if other.tenants is None else other.tenants if self.tenants is None else self.tenants & other.tenants
        return Policy(self.redact or other.redact, tenants)


def deployment_policy(environ: Mapping[str, str] | None = None) -> Policy:
    """The policy the environment sets for this process (see the module's doc)."""
    env = os.environ if environ is None else environ
    redact = env.get(REDACT_ENV, "") not in ("", "0")
    tenants = env.get(TENANTS_ENV)
    # Set, even to nothing, it scopes: an empty list allows no tenant (never "all").
    scope = None if tenants is None else frozenset(t.strip() for t in tenants.split(",") if t.strip())
    return Policy(redact, scope)


# The policy of whoever the current thread reads for: one app session among many served by
# one process (its masking choice, its user's tenants). A context variable, not the
# environment: sessions run side by side in one process, each in its own script thread.
_session: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("transcript_lens_session_policy", default=None)


def set_session_policy(policy: Policy | None) -> None:
    """Read under `policy` (on top of the deployment's) from now on in this thread / context:
    what the app sets at the start of each session's run and before each data call."""
    _session.set(policy)


@contextmanager
def reading_as(policy: Policy | None) -> Iterator[None]:
    """Connections opened inside the block read under `policy` too (a download built on
    another thread than its session's, say).

    >>> with reading_as(Policy(redact=True)):
    ...     effective().redact
    True
    """
    token = _session.set(policy)
    try:
        yield
    finally:
        _session.reset(token)


def effective(policy: Policy | None = None) -> Policy:
    """`policy` on top of the session's (`reading_as`) on top of the deployment's."""
    return deployment_policy().stricter(_session.get()).stricter(policy)


def apply(con: duckdb.DuckDBPyConnection, policy: Policy) -> None:
    """Put `con` under `policy`: under a tenant scope, shadow every table of its database
    with a view of the same name that keeps only the allowed tenants' rows. Masking
    happens where answers leave the query layer (`analytics.masking`), not in SQL: DuckDB shares a
    Python function among every connection to a database and crashes when the
    connection that made it closes first, and masking only the rows an answer returns
    is cheaper than masking every row a query scans."""
    if policy.tenants is None:
        return
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    columns: dict[str, list[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall():
        columns.setdefault(table, []).append(column)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {SCOPE_TABLE} AS SELECT unnest(?::VARCHAR[]) AS tenant_id",
                [sorted(policy.tenants)]).fetchall()
    raw = f'"{database.replace(chr(34), chr(34) * 2)}".main'
    for table, cols in columns.items():
        con.execute(f'CREATE OR REPLACE TEMP VIEW "{table}" AS {scoped_sql(raw, table, cols)}').fetchall()


def scoped_sql(raw: str, table: str, cols: list[str]) -> str:
    """The view that stands for `raw.table` under a tenant scope (the allowed tenants are rows
    of the connection's temporary table `SCOPE_TABLE`: a view cannot take parameters).
    Rows are kept by their tenant, else by their thread's tenant; a table with neither
    column shows nothing, unless it holds no tenant's rows at all (`GLOBAL_TABLES`).

    >>> scoped_sql("db.main", "messages", ["thread_id", "tenant_id", "content"])
    'SELECT * FROM db.main."messages" WHERE tenant_id IN (SELECT tenant_id FROM temp.main.tl_policy_tenants)'
    """
    sql = f'SELECT * FROM {raw}."{table}"'
    if table in GLOBAL_TABLES:
        return sql
    scope = f"SELECT tenant_id FROM temp.main.{SCOPE_TABLE}"
    if "tenant_id" in cols:
        return f"{sql} WHERE tenant_id IN ({scope})"
    if "thread_id" in cols:
        return f"{sql} WHERE thread_id IN (SELECT thread_id FROM {raw}.threads WHERE tenant_id IN ({scope}))"
    return f"{sql} WHERE false"
