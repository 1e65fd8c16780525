"""The filter bar the overview and conversations pages share (tenant, sub-tenant, days, text), the stale
filter, the outcome and signal filters, and the cohort (model, metadata) filter."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from analytics.cohorts.facets import CohortFacets
from analytics.contents import Facets
from analytics.filters import Filters, day_window
from ui import flow, state
from ui.models.compare import cohort_filters, meta_choices
from ui.models.outcomes import OUTCOME_LABELS, OUTCOMES, SIGNAL_LABELS, SIGNALS
from ui.models.overview import NO_TENANT


#: The choices that keep the threads without a tenant / sub-tenant (None in `Filters`); the first
#: is the name the Overview's "Top tenants" bar carries.
NO_SUB_TENANT = "(no sub-tenant)"


def choices(values: tuple[str, ...], none: str | None) -> tuple[str, ...]:
    """A key part's filter options: its values, and `none` (threads without one) when given.

    >>> choices(("acme",), NO_TENANT), choices(("acme",), None)
    (('acme', '(no tenant)'), ('acme',))
    """
    return values + ((none,) if none is not None and none not in values else ())


def chosen(picked: list[str], none: str) -> tuple[str | None, ...]:
    """The chosen options as `Filters` values: `none` is None (a NULL in SQL).

    >>> chosen(["acme", NO_TENANT], NO_TENANT)
    ('acme', None)
    """
    return tuple(None if v == none else v for v in picked)


def filter_bar(url: state.Url, facets: Facets, text: bool = True) -> Filters:
    """Draw the shared filters (bound to the URL) and return them as a `Filters`."""
    cols = flow.row("field", "filter-bar", 5 if text else 4)  # (narrow: wraps onto a second row)
    options = choices(facets.tenants, NO_TENANT if facets.tenantless else None)
    tenants = cols[0].multiselect(
        "Tenant", options, key=url.bind("tenant", [], state.subset(options)), placeholder="all tenants"
    )
    subs_of, subless = facets.sub_tenants_of(chosen(tenants, NO_TENANT))  # the chosen tenants' own
    options = choices(subs_of, NO_SUB_TENANT if subless else None)
    subs = cols[1].multiselect(
        "Sub-tenant", options, key=url.bind("sub", [], state.subset(options)), placeholder="all sub-tenants",
    )
    day_help = (
        f"UTC days, inclusive. Data runs {facets.first_day} → {facets.last_day}." if facets.first_day else "UTC days"
    )
    first = cols[2].date_input("From", value=None, key=url.bind("from", None, state.DATE), help=day_help)
    last = cols[3].date_input("To", value=None, key=url.bind("to", None, state.DATE), help=day_help)
    query = ""
    if text:
        query = cols[4].text_input(
            "Text in messages", key=url.bind("q", ""), placeholder="e.g. refund", help="Case-insensitive substring"
        )
    if first and last and first > last:
        st.warning(f"From ({first}) is after To ({last}): nothing can match.")
    since, until = day_window(first, last)
    return Filters(
        tenants=chosen(tenants, NO_TENANT), sub_tenants=chosen(subs, NO_SUB_TENANT), since=since, until=until, text=query.strip() or None
    )


def stale_filter(url: state.Url, filters: Filters, where=st) -> Filters:
    """"Stale threads only" (bound to the URL as `stale`): `filters` narrowed to the threads whose
    transcript is not their latest root checkpoint's (`Filters.stale`)."""
    stale = where.checkbox("Stale threads only", key=url.bind("stale", False, state.BOOL),
                           help="Threads whose latest root checkpoint did not decode (no key, a wrong key, a damaged "
                                "row): their transcript is an older checkpoint's")
    return replace(filters, stale=True) if stale else filters


def outcome_filter(url: state.Url, filters: Filters, outcome_where=st, signal_where=st) -> Filters:
    """"Outcome" and "Signal" (bound to the URL as `outcome` and `signal`, so `?signal=agent_loop`
    lists those threads): `filters` narrowed to the threads of these outcomes and on which any of
    these signals fired (`Filters.outcomes`, `Filters.signals`)."""
    outcomes = outcome_where.multiselect(
        "Outcome", OUTCOMES, format_func=OUTCOME_LABELS.get, placeholder="any outcome",
        key=url.bind("outcome", [], state.subset(OUTCOMES)), help="How the conversation ended (the Outcomes page defines each)")
    signals = signal_where.multiselect(
        "Signal", SIGNALS, format_func=SIGNAL_LABELS.get, placeholder="any signal",
        key=url.bind("signal", [], state.subset(SIGNALS)),
        help="Conversations on which any of these signals fired; a row opens its transcript at the flagged message")
    return replace(filters, outcomes=tuple(outcomes), signals=tuple(signals))


def cohort_filter(url: state.Url, filters: Filters, facets: CohortFacets, model_where=st, meta_where=st) -> Filters:
    """"Model" and "Metadata" (bound to the URL as `model` and `meta`, the Compare page's cohort
    choices, so its links list a cohort's conversations): `filters` narrowed to threads with a
    message of these models and whose transcript checkpoint's metadata holds every KEY = VALUE."""
    metas = meta_choices(facets)
    models = model_where.multiselect("Model", facets.models, key=url.bind("model", [], state.subset(facets.models)),
                                     placeholder="any model", help="Threads with a message from one of these models")
    meta = meta_where.multiselect("Metadata", metas, key=url.bind("meta", [], state.subset(metas)),
                                  placeholder="any metadata", help="The transcript checkpoint's metadata holds KEY = VALUE")
    return cohort_filters(filters, models=models, meta=meta)
