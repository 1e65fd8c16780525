"""The `compare` and `costs` CSV reports.

    transcript-lens report compare --db lens.duckdb --a-meta app_version=1.0 --b-meta app_version=1.1
    transcript-lens report compare --db lens.duckdb --a-since 2025-01-01 --a-until 2025-01-31 \\
        --b-since 2025-02-01 --b-until 2025-02-28 --tenant acme --prices prices.toml
    transcript-lens report costs --db lens.duckdb --prices prices.toml --cost-by topic,outcome

A cohort is the shared filters (`--tenant`, `--since`, `--meta`, …) with its own `--a-…` /
`--b-…` options in place of the shared option of the same name.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any

import duckdb

from analytics.cohorts.compare import COLUMNS, DEFAULT_ALPHA, compare_cohorts
from analytics.cohorts.costs import FIGURES, GROUPS, costs
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.reporting.filter_options import metadata_pairs
from analytics.reporting.spec import ReportSpec, register_report
from analytics.transcript import parse_time
from analytics.cli_types import number

#: Each cohort option: (its `Filters` field, argparse keywords, how a value becomes the field's).
_COHORT_OPTIONS = {
    "tenant": ("tenants", dict(action="append", metavar="ID", help="tenant (repeatable)"), tuple),
    "sub-tenant": ("sub_tenants", dict(action="append", metavar="ID", help="sub-tenant (repeatable)"), tuple),
    "since": ("since", dict(metavar="ISO", help="threads active from then (no offset = UTC)"),
              lambda v, flag: parse_time(v, flag)),
    "until": ("until", dict(metavar="ISO", help="threads active until then"), lambda v, flag: parse_time(v, flag)),
    "model": ("models", dict(action="append", metavar="NAME", help="threads with a message naming this model"), tuple),
    "meta": ("metadata", dict(action="append", metavar="KEY=VALUE", help="transcript checkpoint metadata KEY = VALUE"),
             lambda v, flag: metadata_pairs(v, flag)),
    "text": ("text", dict(metavar="TEXT", help="threads with a message containing this text"), lambda v, flag: v),
}


def cohort(base: Filters, options: Mapping[str, Any], side: str) -> Filters:
    """`base` with the options of cohort `side` ("a" or "b") in place of its fields of the same name.

    >>> cohort(Filters(tenants=("acme",)), {"a_meta": ["app_version=1.1"]}, "a").metadata
    (('app_version', '1.1'),)
    """
    changes = {}
    for flag, (field, _, convert) in _COHORT_OPTIONS.items():
        value = options.get(f"{side}_{flag.replace('-', '_')}")
        if value is None or value == []:
            continue
        changes[field] = convert(value) if convert is tuple else convert(value, f"--{side}-{flag}")
    return dataclasses.replace(base, **changes)


def _compare_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    a, b = cohort(filters, options, "a"), cohort(filters, options, "b")
    if a == b:
        raise BadRequest("compare: the two cohorts are the same; give --a-… and --b-… options that differ")
    frame = compare_cohorts(con, a, b, options.get("prices"), options.get("alpha") or DEFAULT_ALPHA)
    return con.from_df(frame)


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    for side in ("a", "b"):
        group = parser.add_argument_group(f"compare: cohort {side.upper()} (in place of the shared filter of the same name)")
        for flag, (_, kwargs, _) in _COHORT_OPTIONS.items():
            group.add_argument(f"--{side}-{flag}", **kwargs)
    parser.add_argument("--alpha", type=number(hi=1e6), metavar="Q",
                        help=f"compare: a row is significant when its Benjamini-Hochberg q is below this (default {DEFAULT_ALPHA})")


def _cost_keys(options: Mapping[str, Any]) -> tuple[str, ...]:
    given = options.get("cost_by") or "thread"
    keys = tuple(k.strip() for k in str(given).split(",") if k.strip())
    if not keys or any(k not in GROUPS for k in keys):
        raise BadRequest(f"--cost-by {given!r}: comma-separated, from {', '.join(GROUPS)}")
    return keys


def _cost_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    if not options.get("prices"):
        raise BadRequest("costs: give --prices FILE (.toml or .csv; docs/cost.md)")
    return con.from_df(costs(con, options["prices"], _cost_keys(options), filters))


def _cost_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prices", metavar="FILE", help="costs, compare: the price table per model, per million tokens "
                                                         "(.toml or .csv; docs/cost.md)")
    parser.add_argument("--cost-by", metavar="A,B", help=f"costs: group by these, comma-separated: {', '.join(GROUPS)} "
                                                         "(default thread)")


register_report(ReportSpec(
    "compare", "two cohorts (--a-… / --b-…) on every metric, signal, outcome and topic: difference, CI, p and q",
    COLUMNS, _compare_rows, arguments=_compare_arguments,
))
register_report(ReportSpec(
    "costs", "tokens priced by --prices, per thread, tenant, model, topic, outcome, day or week (--cost-by)",
    (*GROUPS, *FIGURES), _cost_rows, arguments=_cost_arguments,
    columns_of=lambda options: (*_cost_keys(options), *FIGURES),
))  # fmt: skip
