"""The filter options every report and listing takes on the command line, and the `Filters` they give.

`add_filter_arguments` adds `--tenant`, `--sub-tenant`, `--thread`, `--since`, `--until`,
`--text`, `--stale`, `--model` and `--meta` to a parser; `filters_from_args` reads them back:

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_filter_arguments(parser)
>>> filters_from_args(parser.parse_args(["--tenant", "acme", "--meta", "app_version=1.1"])).metadata
(('app_version', '1.1'),)
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.policy import effective
from analytics.transcript import parse_time


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """The `Filters` options every report takes."""
    many = dict(action="append", default=[], metavar="ID")
    parser.add_argument("--tenant", help="keep this tenant (repeatable)", **many)
    parser.add_argument("--sub-tenant", help="keep this sub-tenant (repeatable)", **many)
    parser.add_argument("--thread", help="keep this thread (repeatable)", **many)
    parser.add_argument("--since", metavar="ISO", help="threads active, messages stamped from then (no offset = UTC)")
    parser.add_argument("--until", metavar="ISO", help="threads active, messages stamped until then (no offset = UTC)")
    parser.add_argument("--text", help="keep threads with a message containing this text (case-insensitive)")
    parser.add_argument("--stale", action="store_true",
                        help="keep threads whose transcript is not their latest root checkpoint's (it did not decode)")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="keep threads with a message naming this model (repeatable)")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                        help="keep threads whose transcript checkpoint's metadata has KEY = VALUE, e.g. app_version=1.1 "
                             "(repeatable: all must hold)")


def metadata_pairs(given: Iterable[str], flag: str = "--meta") -> tuple[tuple[str, str], ...]:
    """`KEY=VALUE` options as `Filters.metadata` pairs; a missing `=` or key is a `BadRequest`.

    >>> metadata_pairs(["app_version=1.1", "region=eu=west"])
    (('app_version', '1.1'), ('region', 'eu=west'))
    """
    pairs = []
    for item in given or ():
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise BadRequest(f"{flag} {item!r}: give KEY=VALUE")
        pairs.append((key.strip(), value))
    return tuple(pairs)


def filters_from_args(args: argparse.Namespace) -> Filters:
    """`Filters` from the options of `add_filter_arguments`; a bad date is a `BadRequest`.

    Under masking a `--thread`, `--tenant` or `--sub-tenant` value holding a personal value matches
    nothing, as a `--meta` guess does (`analytics.masking.shown_whole`): else one hit against none
    would confirm a guessed masked key (an e-mail in a thread id)."""
    given = (tuple(args.tenant), tuple(args.sub_tenant), tuple(args.thread))
    tenants, sub_tenants, threads = given
    within = None
    if effective().redact:
        from analytics.masking import shown_whole

        tenants, sub_tenants, threads = shown = tuple(tuple(shown_whole(values)) for values in given)
        if any(values and not kept for values, kept in zip(given, shown)):
            within = ()  # every value of an option hidden: no thread passes it
    return Filters(
        tenants=tenants,
        sub_tenants=sub_tenants,
        thread_ids=threads,
        within=within,
        since=parse_time(args.since, "--since"),
        until=parse_time(args.until, "--until"),
        text=args.text or None,
        stale=bool(getattr(args, "stale", False)),
        models=tuple(getattr(args, "model", None) or ()),
        metadata=metadata_pairs(getattr(args, "meta", None) or ()),
    )
