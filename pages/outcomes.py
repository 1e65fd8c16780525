"""Outcomes: how the filtered conversations ended and what went wrong on the way; every count
opens the conversations behind it (docs/outcomes.md defines each outcome and signal)."""

import streamlit as st

from ui import cache, charts, flow, outcomes, render, state
from ui.filters import filter_bar
from ui.trend_period import trend_period
from ui.models import outcomes as model
from ui.models import overview as overview_model

url = state.Url("outcomes")
db = state.require_db()

st.title("Outcomes")
st.caption("How each conversation ended and what went wrong on the way, read from the transcripts without a model "
           "(resolved, abandoned, failed, waiting on a human, or unknown). Every count opens the conversations behind "
           "it; a row opens them, and a conversation opens at the flagged message.")
facets = cache.facets(db)
filters = filter_bar(url, facets)
by = trend_period(url, facets, filters)
url.publish()

view = cache.call(model.outcomes_page, db, filters, by)
shared = outcomes.shared_params(url)
outcomes.tiles(view.shares, shared, outcomes=model.TILE_ORDER)
if not view.threads:
    st.info("No conversation passes these filters.")
    st.stop()


#: The tenants table's width beside the trend chart (half the page in a 1400 px window): a column
#: that would lie past it waits in the table's column chooser, named beneath.
TENANTS_PX = 460


def opened(picked, frame, target: str, **params) -> None:
    """Open `target` for the row selected in a table of `frame` (`params`: a value, or row → value)."""
    rows = picked.selection.rows
    if rows and rows[0] < len(frame):
        row = frame.iloc[rows[0]]
        query = {k: (f(row) if callable(f) else f) for k, f in params.items()}
        state.go_to(target, f"Open the {target} page", **query)


st.subheader("Signals: what went wrong on the way")
st.caption(f"Conversations on which each signal fired, of {view.threads:,} · most frequent first · select a row to list them")
signals = view.signals.assign(rate=view.signals["rate"] * 100)[["label", "threads", "rate"]]
table, meaning = flow.row("wide", "signals", 2)
picked = table.dataframe(signals, key="outcomes.signals", on_select="rerun", selection_mode="single-row",
                         hide_index=True, column_config={
                             "label": st.column_config.TextColumn("Signal", help="Each signal's definition is beside the table"),
                             "threads": st.column_config.NumberColumn("Conversations"),
                             "rate": st.column_config.NumberColumn("Rate", format=render.PERCENT_FORMAT,
                                                                   help="Share of the filtered conversations"),
                         })  # fmt: skip
# (the definitions in full beside the table: a table cell clips a sentence)
meaning.markdown("\n".join(f"- **{r.label}**: {r.definition}" for r in view.signals.itertuples()))
render.download(view.signals, "outcome_signals.csv", key="outcomes.signals_csv",
                headers={"signal": None, "label": "Signal", "threads": "Conversations"})
opened(picked, view.signals, "conversations", signal=lambda r: r["signal"], **shared)

left, right = flow.row("chart", "trend-tenants", 2)
with left:
    if render.chart_panel("Outcomes over time", view.trend, "conversations with a time",
                          lambda f: charts.outcome_trend(f, view.by, overview_model.bucket_range(facets, filters)[1]), key="out_trend",
                          caption="Conversations per period by outcome (the period of their last activity)"):
        with st.expander("Table"):
            render.table(view.trend.assign(share=view.trend["share"] * 100), hide_index=True, key="out_trend_table", fit_px=440,
                         column_config={"share": st.column_config.NumberColumn("% of the period", format=render.PERCENT_FORMAT)})
            render.download(view.trend, f"outcomes_by_{view.by}.csv", key="out_trend_csv")
with right:
    st.subheader("Tenants with the most abandoned or failed")
    if view.tenants.empty:
        st.success("No abandoned or failed conversation for these filters.", icon=":material/check_circle:")
    else:
        st.caption("Select a row to list that tenant's abandoned and failed conversations")
        picked = render.table(
            view.tenants.assign(went_wrong_share=view.tenants["went_wrong_share"] * 100), key="outcomes.tenants",
            on_select="rerun", selection_mode="single-row", hide_index=True, fit_px=TENANTS_PX,
            column_order=["tenant_id", "abandoned", "failed", "went_wrong_share", "threads"], column_config={
                "tenant_id": "Tenant", "abandoned": "Abandoned", "failed": "Failed",
                "threads": st.column_config.NumberColumn("Total", help="The tenant's conversations"),
                "went_wrong": "Both", "went_wrong_share": st.column_config.NumberColumn(
                    "Share", format=render.PERCENT_FORMAT, help="Abandoned or failed, of the tenant's conversations"),
            })  # fmt: skip
        render.download(view.tenants, "outcomes_by_tenant.csv", key="outcomes.tenants_csv",
                        headers={"threads": "Conversations", "went_wrong": "Abandoned or failed",
                                 "went_wrong_share": "Abandoned or failed: share"})
        opened(picked, view.tenants, "conversations", outcome=list(model.WENT_WRONG),
               tenant=lambda r: None if r["tenant_id"] == model.NO_TENANT else r["tenant_id"],
               **{k: v for k, v in shared.items() if k != "tenant"})

hours = f"{view.hitl_hours:g} h"
st.subheader(f"Slow human-in-the-loop: who breaches the {hours} service level")
if view.slow_hitl.empty:
    st.success(f"No interrupt waited longer than the service level ({hours}).", icon=":material/check_circle:")
else:
    st.caption(f"Interrupts answered, or still waiting, after more than {hours} · select a thread to open its "
               "transcript at the wait")
    left, right = flow.row("wide", "slow-hitl", 2)
    with left:
        config = {"tenant_id": "Tenant", "breaches": st.column_config.NumberColumn("Breaches", width="small"),
                  "waiting_now": st.column_config.NumberColumn("Still waiting", width="small")}
        render.table(view.slow_by_tenant, key="outcomes.slow_tenants", hide_index=True, fit_px=240, column_config=config)
        render.download(view.slow_by_tenant, "slow_human_in_the_loop_by_tenant.csv", key="outcomes.slow_tenants_csv",
                        headers=config)
    with right:
        since = view.slow_hitl["waiting_since"].map(render.minute_text)  # (a missing time reads "—", not "None")
        waited = view.slow_hitl["longest_wait"].map(render.duration)
        picked = render.table(
            view.slow_hitl.assign(waiting_since=since, longest_wait=waited)[
                ["thread_id", "tenant_id", "status", "longest_wait", "waiting_since", "first_message"]], key="outcomes.slow",
            fit_px=640,
            on_select="rerun", selection_mode="single-row", hide_index=True, column_config={
                "thread_id": st.column_config.TextColumn("Thread", pinned=True), "tenant_id": "Tenant",
                "status": "Status", "longest_wait": st.column_config.TextColumn(
                    "Longest wait", help="Its longest wait for a human; a pending one measured to the store's latest checkpoint"),
                "first_message": st.column_config.NumberColumn(
                    "At message", help="The last message before the interrupt"),
                "waiting_since": st.column_config.TextColumn("Waiting since (UTC)", help="Only for a pending interrupt"),
            })  # fmt: skip
        render.download(view.slow_hitl, "slow_human_in_the_loop.csv", key="outcomes.slow_csv",
                        headers={"longest_wait": "Longest wait (s)", "first_message": "At message",
                                 "outcome_reason": "Why"})
    st.page_link("pages/backlog.py", icon=":material/pending_actions:", label="Everyone still waiting on a human",
                 query_params=state.link_params(**{k: v for k, v in shared.items() if k != "q"}))
    opened(picked, view.slow_hitl, "transcript", thread=lambda r: r["thread_id"], signal="slow_hitl")
