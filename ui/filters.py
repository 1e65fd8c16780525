"""The filter bar the overview and conversations pages share (tenant, sub-tenant, days, text)."""

from __future__ import annotations

import streamlit as st

from analytics.contents import Facets
from analytics.filters import Filters, day_window
from ui import state


def filter_bar(url: state.Url, facets: Facets, text: bool = True) -> Filters:
    """Draw the shared filters (bound to the URL) and return them as a `Filters`."""
    cols = st.columns([3, 3, 2, 2, 3] if text else [3, 3, 2, 2])
    tenants = cols[0].multiselect(
        "Tenant", facets.tenants, key=url.bind("tenant", [], state.subset(facets.tenants)), placeholder="all tenants"
    )
    subs = cols[1].multiselect(
        "Sub-tenant", facets.sub_tenants, key=url.bind("sub", [], state.subset(facets.sub_tenants)),
        placeholder="all sub-tenants",
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
        tenants=tuple(tenants), sub_tenants=tuple(subs), since=since, until=until, text=query.strip() or None
    )
