"""Conversations: one row per thread with its metrics; a selected row opens its transcript."""

import streamlit as st

from ui import cache, charts, columns, render, state
from ui.filters import filter_bar

url = state.Url("conversations")
db = state.require_db()

st.title("Conversations")
filters = filter_bar(url, cache.facets(db))
c1, c2, c3, _ = st.columns([2, 2, 2, 6])
min_turns = c1.number_input("Min user turns", min_value=0, step=1, key=url.bind("min_turns", 0, state.INT))
pending = c2.checkbox("Pending interrupt only", key=url.bind("pending", False, state.BOOL))
forks = c3.checkbox("Forked threads only", key=url.bind("forks", False, state.BOOL))
url.publish()

view = cache.conversations(db, filters, int(min_turns), pending, forks)

shown, matching = len(view.table), len(view.matching)
st.caption(
    f"{matching:,} of {view.total:,} threads"
    + (f" · the {shown:,} most recently active shown" if shown < matching else "")
    + " · select a row to open its transcript"
)
picked = st.dataframe(
    view.table,
    key="conversations.table",
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    column_config=columns.conversations(),
)
render.download(view.table, "conversations.csv", key="conversations.csv")
if shown < matching:
    render.download(view.matching, "conversations-all.csv", key="conversations.all_csv",
                    label=f"Download all {matching:,} rows")

if picked.selection.rows:
    thread_id = view.table["thread_id"].iloc[picked.selection.rows[0]]
    st.switch_page("pages/transcript.py", query_params=state.link_params(thread=thread_id))

left, right = st.columns(2)
with left:
    s = view.latency_summary
    render.chart_panel(
        "Reply latency", view.latency, "user → assistant pairs",
        lambda f: charts.histogram_bars(f, "model", "seconds"), key="conv_latency",
        caption=None if view.latency.empty else (
            f"{s['pairs']:,} user → assistant pairs · median {render.seconds(s['median_s'])} · "
            f"p90 {render.seconds(s['p90_s'])} (reply ts − user ts, checkpoint granularity)"),
    )
with right:
    render.chart_panel("Tokens by model", view.tokens_by_model, "token usage",
                       lambda f: charts.bars(f, "model", "tokens", "kind"), key="conv_tokens")
left, right = st.columns(2)
with left:
    render.chart_panel("User turns per thread", view.turns, "threads",
                       lambda f: charts.bars(f, "user_turns", "threads", xlabel="user turns"), key="conv_turns")
with right:
    render.chart_panel("Activity over time", view.activity, "activity",
                       lambda f: charts.lines(f, "day", ["active_conversations", "messages", "user_messages"]),
                       key="conv_activity")
