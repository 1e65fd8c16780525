"""Overview: headline numbers and trends over the filtered conversations."""

import streamlit as st

from ui import cache, charts, render, state
from ui.filters import filter_bar

url = state.Url("overview")
db = state.require_db()

st.title("Overview")
filters = filter_bar(url, cache.facets(db))
url.publish()

view = cache.overview(db, filters)
h = view.headline

first, last = h["first_ts"], h["last_ts"]
span_help = (
    f"First and last message checkpoint time: {render.ts_text(first)} → {render.ts_text(last)}"
    if first is not None and last is not None else "No message has a checkpoint time"
)
render.headline([
    ("Threads", render.number(h["threads"]), "Conversations (threads) that pass the filters"),
    ("Messages", render.number(h["messages"]), "Transcript messages, every role"),
    ("Tenants", render.number(h["tenants"]), "Distinct tenants (threads outside the key pattern count as one)"),
    ("User turns", render.number(h["user_turns"]), "Messages from the user"),
    ("Tokens", render.number(h["total_tokens"]),
     f"input {render.number(h['input_tokens'])} · output {render.number(h['output_tokens'])} (usage_metadata)"),
])
render.headline([
    ("Date range", render.date_span(first, last), span_help),
    ("Assistant messages", render.number(h["assistant_messages"]), None),
    ("Tool calls", render.number(h["tool_calls"]), None),
    ("Models", render.number(h["models"]), None),
    ("Median reply latency", render.seconds(h["latency_median_s"]),
     f"Reply ts − user ts at checkpoint granularity, over {render.number(h['latency_pairs'])} pairs"),
], widths=[2, 1, 1, 1, 1])

left, right = st.columns(2)
with left:
    render.chart_panel("Messages per day by role", view.messages_by_role, "messages with a timestamp",
                       lambda f: charts.bars(f, "day", "messages", "role"), key="ov_by_role")
with right:
    render.chart_panel("Active threads per day", view.activity, "activity",
                       lambda f: charts.grouped_bars(f, "day", ["active_conversations", "conversations_started"],
                                                     ylabel="threads"), key="ov_activity")

cols = st.columns(3)
tops = [
    ("Top tenants", view.top_tenants, "conversations", "tenant_id", "tenants", "top_tenants.csv"),
    ("Top models", view.top_models, "messages", "model", "models", "top_models.csv"),
    ("Top tools", view.top_tools, "calls", "tool", "tools", "top_tools.csv"),
]
for col, (title, frame, x, y, what, file_name) in zip(cols, tops):
    with col:
        if render.chart_panel(title, frame, what, lambda f, x=x, y=y: charts.bars(
                f, x, y, horizontal=True, ylabel="", hover=list(f.columns)), key=f"ov_{what}"):
            with st.expander("Table"):
                st.dataframe(frame, hide_index=True, key=f"ov_{what}_table")
                render.download(frame, file_name, key=f"ov_{what}_csv")
