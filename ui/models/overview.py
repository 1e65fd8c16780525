"""The overview page: headline numbers, daily messages by role and activity, the top lists.

>>> overview_page("demo.duckdb").headline["threads"]  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from analytics import metrics
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from ui.models.frames import per_day

#: How the top-tenants chart names the threads without a tenant.
NO_TENANT = "(no tenant)"


@dataclass(frozen=True)
class OverviewPage:
    """Everything the overview page draws."""

    headline: dict[str, Any]
    messages_by_role: pd.DataFrame  # day, role, messages
    activity: pd.DataFrame  # day, active_conversations, conversations_started
    top_tenants: pd.DataFrame
    top_models: pd.DataFrame
    top_tools: pd.DataFrame


def _label_tenants(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(tenant_id=frame["tenant_id"].astype(object).where(frame["tenant_id"].notna(), NO_TENANT))


def overview_page(con_or_path: ConOrPath, filters: Filters = Filters(), top: int = 10) -> OverviewPage:
    """Headline numbers, daily messages by role, daily activity and the top tenants/models/tools."""
    with connection(con_or_path) as con:
        headline = dict(metrics.overview(con, filters))
        days = per_day(metrics.daily(con, filters, latency=False))  # messages and activity only
        tenants = metrics.top_tenants(con, filters, limit=top)
        models = metrics.top_models(con, filters, limit=top)
        tools = metrics.top_tools(con, filters, limit=top)
    role_cols = {f"{r}_messages": r for r in metrics.ROLES}
    by_role = days[["day", *role_cols]].melt(id_vars="day", var_name="role", value_name="messages")
    by_role["role"] = by_role["role"].map(role_cols)
    by_role = by_role[by_role["messages"] > 0].reset_index(drop=True)
    activity = days[["day", "active_conversations", "conversations_started"]]
    return OverviewPage(headline, by_role, activity, _label_tenants(tenants), models, tools)
