"""Failure patterns: failed conversations (and those abandoned after a failure) grouped by what led to the
failure; a pattern lists its conversations, each opening its transcript at the failing message."""

import streamlit as st

from ui import cache, charts, markup, render, state
from ui.filters import filter_bar
from ui.trend_period import trend_period
from ui.models import patterns as model
from ui.models.overview import bucket_range

url = state.Url("patterns")
db = state.require_db()

st.title("Failure patterns")
st.caption(
    "A pattern is the tools the failing turn called, in order, and the error: its class and its message with "
    "ids, numbers, hex, uuids, addresses, paths and quoted values replaced by placeholders."
)
facets = cache.facets(db)
filters = filter_bar(url, facets, text=False)
c1, _ = st.columns([5, 7], vertical_alignment="bottom")
period = trend_period(url, facets, filters, c1)
pattern_key = url.bind("pattern", None)
url.publish()

view = cache.call(model.patterns_page, db, filters, period)
render.headline([
    ("Failed or abandoned after a failure", render.number(len(view.threads)), "Conversations with a failure pattern"),
    ("Patterns", render.number(len(view.patterns)), None),
    ("In the top pattern", render.number(view.patterns["threads"].iloc[0]) if len(view.patterns) else "—",
     "Conversations of the most frequent pattern, listed below until another row is selected"),
])
if view.patterns.empty:
    st.success("No conversation failed under these filters.", icon=":material/check_circle:")
    st.stop()
st.caption("Most frequent first · select a row to list its conversations")
config = {
    "label": st.column_config.TextColumn("Pattern (tools → error)", width="large", pinned=True),
    "threads": "Conversations", "failed": "Failed", "abandoned": "Abandoned", "tenants": "Tenants",
    "first_seen": st.column_config.DatetimeColumn("First seen (UTC)", format="YYYY-MM-DD HH:mm"),
    "last_seen": st.column_config.DatetimeColumn("Last seen (UTC)", format="YYYY-MM-DD HH:mm"),
}  # fmt: skip
picked = render.table(view.table, key="patterns.table", on_select="rerun", selection_mode="single-row", hide_index=True,
                      column_config=config)
render.download(view.patterns, "patterns.csv", key="patterns.csv", label="Download every pattern (CSV)", headers=config)
if picked.selection.rows:
    st.session_state[pattern_key] = view.patterns["signature"].iloc[picked.selection.rows[0]]
    url.publish()

# (until a row is chosen, the most frequent pattern is the one listed: the question a newcomer asks first)
chosen = st.session_state.get(pattern_key) or view.patterns["signature"].iloc[0]
if chosen:
    rows = view.of(chosen)
    label = dict(zip(view.patterns["signature"], view.patterns["label"])).get(chosen, chosen)
    top = chosen == view.patterns["signature"].iloc[0]
    st.subheader(f"Top pattern: {markup.text(label)}" if top else markup.text(label))
    st.caption(f"{render.plural(len(rows), 'conversation')} · select a row to open its transcript at the failing message")
    config = {"thread_id": st.column_config.TextColumn("Thread", pinned=True), "tenant_id": "Tenant",
              "outcome": "Outcome", "message": "Failing message", "failing_ordinal": None,
              "first_ts": st.column_config.DatetimeColumn("Started (UTC)", format="YYYY-MM-DD HH:mm")}
    opened = render.table(rows, key="patterns.threads", on_select="rerun", selection_mode="single-row", hide_index=True,
                          column_config=config)
    render.download(rows, "pattern_conversations.csv", key="patterns.threads.csv",
                    label="Download these conversations (CSV)", headers=config)
    if opened.selection.rows:
        row = rows.iloc[opened.selection.rows[0]]
        state.go_to("transcript", f"Open {render.thread_label(row['thread_id'])} at the failing message",
                    thread=row["thread_id"], msg=int(row["message"]))

if render.chart_panel(f"The top patterns' conversations per {period}", view.trend, "failed conversations with a time",
                      lambda f: charts.period_trend(f, "failed conversations", period, bucket_range(facets, filters)[1]),
                      key="patterns.trend"):
    render.download(view.trend, f"patterns_per_{period}.csv", key="patterns.trend.csv", label="Download the trend (CSV)")
