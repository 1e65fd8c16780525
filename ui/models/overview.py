"""The overview page: headline numbers, trends per day / week / month, the top lists.

>>> page = overview_page("demo.duckdb", by="week")  # doctest: +SKIP
>>> page.headline["threads"], page.by, page.tokens.columns.tolist()  # doctest: +SKIP
(31, 'week', ['period', 'input_tokens', 'output_tokens'])
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import pandas as pd

from analytics import metrics, trends
from analytics.catalog import ROLES
from analytics.contents import Facets
from analytics.db import ConOrPath, connection
from analytics.filters import Filters

#: How the top-tenants chart names the threads without a tenant.
NO_TENANT = "(no tenant)"
#: The bucket choices of the page; "auto" is `trends.default_bucket` of the date range.
AUTO = "auto"
BUCKET_CHOICES = (AUTO, *trends.BUCKETS)
#: Tools drawn one by one in the tool-calls chart; the rest are summed as `OTHER_TOOLS`.
TOP_TOOLS = 8
OTHER_TOOLS = "(other tools)"


@dataclass(frozen=True)
class TrendPanel:
    """One trend chart of the page: its `OverviewPage` field, title, what an empty one lacks, help."""

    field: str
    title: str
    empty: str
    caption: str


#: The trend charts.
TREND_PANELS = (
    TrendPanel("conversations", "Conversations", "messages with a timestamp",
               "Threads with at least one message stamped in the period"),
    TrendPanel("messages_by_role", "Messages by role", "messages with a timestamp",
               "Each message counts in the period of its time"),
    TrendPanel("tokens", "Tokens in / out", "messages with a timestamp",
               "Input / output tokens the model reported for the period's messages"),
    TrendPanel("tool_calls", "Tool calls by tool", "tool calls",
               f"Calls requested in the period; beyond the {TOP_TOOLS} most called, summed as {OTHER_TOOLS}"),
    TrendPanel("model_mix", "Model mix", "messages naming a model", "Replies naming each model"),
    TrendPanel("latency", "Reply latency p50 / p90", "user→assistant pairs",
               "Reply time − question time (as checkpoints record them), in the period of the question"),
    TrendPanel("latency_pairs", "Questions answered", "user→assistant pairs",
               "User messages of the period with a later stamped reply: what the percentiles are over"),
    TrendPanel("problems", "Tool errors and interrupts", "periods",
               "Tool results with status error; root checkpoints carrying an interrupt"),
)


#: The trend views of the page, two charts at most each: only the chosen view is drawn (each
#: chart costs the browser some first-render time, and a page of eight is hard to read).
TREND_VIEWS = {
    "activity": ("Activity", ("conversations", "messages_by_role")),
    "tokens": ("Tokens and models", ("tokens", "model_mix")),
    "tools": ("Tools, errors, interrupts", ("tool_calls", "problems")),
    "latency": ("Reply latency", ("latency", "latency_pairs")),
}
_PANELS = {p.field: p for p in TREND_PANELS}


def trend_panels(view: str) -> tuple[TrendPanel, ...]:
    """The panels of trend view `view` (a `TREND_VIEWS` key).

    >>> [p.title for p in trend_panels("tokens")]
    ['Tokens in / out', 'Model mix']
    """
    return tuple(_PANELS[f] for f in TREND_VIEWS[view][1])


def bucket_label(choice: str, resolved: str) -> str:
    """The bucket control's label for `choice` ("Auto (week)").

    >>> bucket_label("auto", "week"), bucket_label("month", "month")
    ('Auto (week)', 'Month')
    """
    return f"Auto ({resolved})" if choice == AUTO else choice.capitalize()


def csv_name(field: str, by: str) -> str:
    """The CSV name of a trend table.

    >>> csv_name("tool_calls", "week")
    'trend_tool_calls_by_week.csv'
    """
    return f"trend_{field}_by_{by}.csv"


@dataclass(frozen=True)
class OverviewPage:
    """Everything the overview page draws; each trend frame is also its table and CSV."""

    headline: dict[str, Any]
    by: str  # day / week / month
    conversations: pd.DataFrame  # period, conversations
    messages_by_role: pd.DataFrame  # period, role, messages
    tokens: pd.DataFrame  # period, input_tokens, output_tokens
    tool_calls: pd.DataFrame  # period, tool, calls, errors
    model_mix: pd.DataFrame  # period, model, messages, input_tokens, output_tokens
    latency: pd.DataFrame  # period, latency_pairs, reply_latency_p50_s, reply_latency_p90_s
    latency_pairs: pd.DataFrame  # period, latency_pairs
    problems: pd.DataFrame  # period, tool_errors, interrupts
    top_tenants: pd.DataFrame
    top_models: pd.DataFrame
    top_tools: pd.DataFrame


def _label_tenants(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(tenant_id=frame["tenant_id"].astype(object).where(frame["tenant_id"].notna(), NO_TENANT))


def bucket_range(facets: Facets, filters: Filters) -> tuple[date | None, date | None]:
    """The days the filter bar covers: its From/To, else the data's first/last day.

    >>> bucket_range(Facets((), (), date(2025, 1, 1), date(2025, 9, 1), 3), Filters())
    (datetime.date(2025, 1, 1), datetime.date(2025, 9, 1))
    """
    first = filters.since.date() if filters.since is not None else facets.first_day
    last = filters.until.date() if filters.until is not None else facets.last_day
    if first is not None and facets.first_day is not None:
        first = max(first, facets.first_day)
    if last is not None and facets.last_day is not None:
        last = min(last, facets.last_day)
    return first, last


def resolve_bucket(choice: str, facets: Facets, filters: Filters) -> str:
    """`choice` from the page's control ("auto" → chosen from the date range)."""
    return trends.default_bucket(*bucket_range(facets, filters)) if choice == AUTO else choice


def _with_dates(frame: pd.DataFrame) -> pd.DataFrame:
    # Plain dates: tables show `2025-03-03`, not a midnight time, and the CSV matches the CLI's.
    return frame.assign(period=pd.to_datetime(frame["period"]).dt.date)


def _long_roles(rows: pd.DataFrame) -> pd.DataFrame:
    role_cols = {f"{r}_messages": r for r in ROLES}
    long = rows[["period", *role_cols]].melt(id_vars="period", var_name="role", value_name="messages")
    long["role"] = long["role"].map(role_cols)
    return long[long["messages"] > 0].reset_index(drop=True)


def _top_tools_only(calls: pd.DataFrame, keep: int = TOP_TOOLS) -> pd.DataFrame:
    """The `keep` most-called tools as they are; every other tool summed per period as `OTHER_TOOLS`."""
    totals = calls.groupby("tool")["calls"].sum().sort_values(ascending=False, kind="stable")
    if len(totals) <= keep:
        return calls.reset_index(drop=True)
    top = set(totals.index[:keep])
    named = calls[calls["tool"].isin(top)]
    rest = calls[~calls["tool"].isin(top)].groupby("period", as_index=False)[["calls", "errors"]].sum()
    rest.insert(1, "tool", OTHER_TOOLS)
    return pd.concat([named, rest]).sort_values(["period", "calls"], ascending=[True, False]).reset_index(drop=True)


def overview_page(
    con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "day", top: int = 10
) -> OverviewPage:
    """Headline numbers, the trends bucketed `by` day / week / month, and the top tenants/models/tools."""
    with connection(con_or_path) as con:
        headline = dict(metrics.overview(con, filters))
        rows = _with_dates(trends.trends(con, filters, by=by))
        mix = _with_dates(trends.model_mix(con, filters, by=by))
        calls = _with_dates(trends.tool_calls(con, filters, by=by))
        tenants = metrics.top_tenants(con, filters, limit=top)
        models = metrics.top_models(con, filters, limit=top)
        tools = metrics.top_tools(con, filters, limit=top)
    active = rows[rows["messages"] > 0]
    paired = rows[rows["latency_pairs"] > 0]
    return OverviewPage(
        headline=headline,
        by=by,
        conversations=active[["period", "conversations"]].reset_index(drop=True),
        messages_by_role=_long_roles(rows),
        tokens=active[["period", "input_tokens", "output_tokens"]].reset_index(drop=True),
        tool_calls=_top_tools_only(calls),
        model_mix=mix,
        latency=paired[["period", "latency_pairs", "reply_latency_p50_s", "reply_latency_p90_s"]].reset_index(
            drop=True),
        latency_pairs=paired[["period", "latency_pairs"]].reset_index(drop=True),
        problems=rows[["period", "tool_errors", "interrupts"]].reset_index(drop=True),
        top_tenants=_label_tenants(tenants),
        top_models=models,
        top_tools=tools,
    )
