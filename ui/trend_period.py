"""The one control that sets a page's trend period, on every page with a trend (Overview, Outcomes,
Topics, Failure patterns): the same label, choices, order, default and help, in the URL as `by`.

Auto picks the period from the date range the filters cover (`ui.models.overview.resolve_bucket`);
its label says which ("Auto (week)").
"""

from __future__ import annotations

import streamlit as st

from analytics.filters import Filters
from ui import state
from ui.models.overview import AUTO, BUCKET_CHOICES, bucket_label, resolve_bucket

LABEL = "Trend per"
HELP = "Trends per UTC day, ISO week (from Monday) or month; Auto picks from the date range"


def trend_period(url: state.Url, facets, filters: Filters, where=st) -> str:
    """Draw the control in `where` (a column, or the page); return the period chosen, Auto resolved."""
    auto = resolve_bucket(AUTO, facets, filters)
    choice = where.radio(LABEL, BUCKET_CHOICES, horizontal=True, key=url.bind("by", AUTO, state.choice(BUCKET_CHOICES)),
                         format_func=lambda c: bucket_label(c, auto), help=HELP)
    return resolve_bucket(choice, facets, filters)
