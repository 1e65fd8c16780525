"""Waiting on a human: threads whose latest checkpoint waits on an interrupt() (contract §3.10), longest first."""

import streamlit as st

from ui import cache, render, state
from ui.filters import filter_bar
from ui.models import backlog as model

url = state.Url("backlog")
db = state.require_db()

st.title("Waiting on a human")
st.caption(
    "Threads whose latest checkpoint waits on an `interrupt()` (an approval, a question): who, since when, "
    "and what the graph asked. The wait runs from that checkpoint's time to the newest checkpoint in the "
    "database (a snapshot's “now”) or to the wall clock."
)
filters = filter_bar(url, cache.facets(db), text=False)
c1, c2, c3, c4 = st.columns([3, 3, 3, 3], vertical_alignment="bottom")
until = c1.segmented_control(
    "Waited until", ["store", "now"], format_func={"store": "Newest checkpoint", "now": "Now"}.get,
    key=url.bind("until", "store", state.choice(("store", "now"))),
) or "store"
sort = c2.selectbox("Sort by", model.SORTABLE, format_func=model.SORT_LABELS.get,
                    key=url.bind("sort", "waited_s", state.choice(model.SORTABLE)))  # fmt: skip
order = c3.segmented_control("Order", ["desc", "asc"], format_func={"desc": "↓ High first", "asc": "↑ Low first"}.get,
                             key=url.bind("order", "desc", state.choice(("desc", "asc"))))  # fmt: skip
over = c4.checkbox(f"Over {model.DEFAULT_HITL_HOURS:g} h only",
                   key=url.bind("over", False, state.BOOL),
                   help="Threads waiting longer than the human-in-the-loop service level (the slow_hitl signal): "
                        "those who breach it")
url.publish()

view = cache.call(model.backlog_page, db, filters, until, sort, order != "asc", over)
render.headline([
    ("Waiting", render.number(len(view.frame)), "Threads whose latest checkpoint waits on an interrupt"),
    (f"Over {view.service_level_h:g} h", render.number(view.breaches),
     "Waiting longer than the human-in-the-loop service level: they breach it"),
    ("Longest wait", model.waited_text(view.longest_s), None),
    ("Median wait", model.waited_text(view.median_s), None),
    ("Measured until (UTC)", model.short_time(view.reference_ts),
     f"{render.ts_text(view.reference_ts)}: the newest checkpoint in the database, or now"),
])  # fmt: skip
if view.frame.empty:
    st.success("No thread is waiting on a human for these filters.", icon=":material/check_circle:")
    st.stop()
st.caption(f"{len(view.frame):,} waiting · sorted by {model.SORT_LABELS[sort]} · select a row to open its transcript")
config = {
    "thread_id": st.column_config.TextColumn("Thread", pinned=True),
    "tenant_id": "Tenant", "sub_tenant_id": "Sub-tenant", "waited": "Waited",
    "over_service_level": st.column_config.CheckboxColumn(
        f"Over {view.service_level_h:g} h", help="Waiting longer than the human-in-the-loop service level"),
    "waiting_since": st.column_config.DatetimeColumn("Waiting since (UTC)", format="YYYY-MM-DD HH:mm"),
    "request": st.column_config.TextColumn("Request (the interrupt's value)", width="large"),
    "last_message": st.column_config.TextColumn("Last message", width="medium"),
    "interrupts": "Interrupts", "messages": "Messages",
}  # fmt: skip
picked = render.table(view.table, key="backlog.table", on_select="rerun", selection_mode="single-row", hide_index=True,
                      column_config=config)
render.download(view.frame, "waiting_on_a_human.csv", key="backlog.csv", label="Download every row (CSV)", headers=config)
st.page_link("pages/outcomes.py", icon=":material/flag:", label="Interrupts answered late: Outcomes, slow human-in-the-loop",
             query_params=state.link_params(**{k: v for k, v in url.params().items() if k in state.SHARED}))
if picked.selection.rows:
    thread_id = view.frame["thread_id"].iloc[picked.selection.rows[0]]
    st.switch_page("pages/transcript.py", query_params=state.link_params(
        thread=thread_id, signal="slow_hitl" if view.frame["over_service_level"].iloc[picked.selection.rows[0]] else None))
