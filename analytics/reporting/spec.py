"""A kind of CSV report (`ReportSpec`) and the registry of every kind.

A kind is its documented columns and a function that builds the rows as a DuckDB relation;
`analytics.reporting.writer` writes any kind the same way. A module adds its kinds when
imported, and is named in `analytics.REGISTRARS` so that `registry()` finds them:

>>> spec = ReportSpec("one", "a single row", ("n",), lambda con, filters, options: con.sql("SELECT 1 AS n"))
>>> spec.columns_for({})
('n',)
>>> register_report(ReportSpec("resume", "resume QA per thread", COLUMNS, build))  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

from analytics.errors import BadRequest
from analytics.filters import Filters

#: (connection, filters, options) → the report's rows, columns exactly `ReportSpec.columns`.
BuildRows = Callable[[duckdb.DuckDBPyConnection, Filters, Mapping[str, Any]], duckdb.DuckDBPyRelation]
#: The same, as consecutive parts.
BuildParts = Callable[[duckdb.DuckDBPyConnection, Filters, Mapping[str, Any]], Iterable[duckdb.DuckDBPyRelation]]


@dataclass(frozen=True)
class ReportSpec:
    """One kind of CSV report.

    `build` gets the connection, the filters and free-form `options` (from the
    CLI: every parsed argument by name; from Python: the `options` mapping).
    `arguments`, when given, adds the kind's own options to the `report`
    subcommand; name them so they cannot clash with another kind's.
    """

    name: str
    help: str
    columns: tuple[str, ...]
    build: BuildRows
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    #: Optional: the rows of `build` again, as consecutive parts, for reports too
    #: big to sort in memory; `write_report` then writes them part by part.
    parts: BuildParts | None = None
    #: Optional: the columns for given options, when they depend on them (`trends --split`).
    columns_of: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None

    def columns_for(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        return self.columns if self.columns_of is None else self.columns_of(options)


REPORTS: dict[str, ReportSpec] = {}


def registry() -> dict[str, ReportSpec]:
    """Every registered report, the built-in ones of other modules included (`analytics.register_all`).

    >>> sorted(registry())[:3]
    ['annotations', 'backlog', 'branches']
    """
    import analytics

    analytics.register_all()
    return REPORTS


def register_report(spec: ReportSpec) -> ReportSpec:
    """Make `spec` available to `write_report`, `report_frame` and `python -m analytics report`.

    >>> register_report(ReportSpec("daily", "…", metrics.DAILY_COLUMNS, build))  # doctest: +SKIP
    """
    if spec.name in REPORTS and REPORTS[spec.name] is not spec:
        raise ValueError(f"a report named {spec.name!r} is already registered")
    REPORTS[spec.name] = spec
    return spec


def report_spec(kind: str) -> ReportSpec:
    """The registered report `kind`; an unknown kind is a `BadRequest` naming the known ones.

    >>> report_spec("daily").columns[:2]
    ('day', 'tenant_id')
    """
    spec = registry().get(kind)
    if spec is None:
        raise BadRequest(f"unknown report {kind!r}; known: {', '.join(sorted(registry()))}")
    return spec
