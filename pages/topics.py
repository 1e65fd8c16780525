"""Topics: what users ask about (their first questions clustered), how each topic ends, its trend;
a topic (and an outcome) lists the conversations behind the numbers, each opening its transcript."""

import streamlit as st

from ui import cache, charts, markup, render, state
from ui.filters import filter_bar
from ui.trend_period import trend_period
from ui.models import topics as model
from ui.models.overview import bucket_range

url = state.Url("topics")
db = state.require_db()

st.title("Topics")
st.caption(
    "Users' first questions grouped by what they ask (words, their character 4-grams and the tools the agent "
    "called; offline, the same on every reload), and how each topic's conversations end."
)
facets = cache.facets(db)
filters = filter_bar(url, facets, text=False)
c1, c2, _ = st.columns([5, 4, 3], vertical_alignment="bottom")
period = trend_period(url, facets, filters, c1)
outcome = c2.selectbox("List a selected topic's conversations that ended", model.OUTCOME_CHOICES,
                       key=url.bind("outcome", "all", state.choice(model.OUTCOME_CHOICES)),
                       format_func=lambda o: "any way" if o == "all" else o)
topic_key = url.bind("topic", None, state.INT)
url.publish()

view = cache.call(model.topics_page, db, filters, period)
render.headline([
    ("Conversations", render.number(view.conversations), "Conversations with a user message that pass the filters"),
    ("Topics", render.number(view.topics), "Topics with conversations under these filters"),
])
if not view.topics:
    st.info("No conversation with a user message passes these filters.", icon=":material/info:")
    st.stop()
largest = view.table.iloc[0]
st.markdown(f"Largest: **{markup.text(largest['topic_label'])}** "
            f"({render.plural(int(largest['threads']), 'conversation')}, {largest['share']:.0%})."
            + (f" {view.sentence()}" if view.sentence() else ""))
st.caption("Rates: the share of the topic's conversations with that outcome · × rest: that rate over the "
           "other topics' · select a row to list its conversations")
percent = [c for c in view.table.columns if c == "share" or c.endswith("_rate")]  # (shown in percent, as elsewhere)
picked = render.table(
    view.table.assign(**{c: view.table[c] * 100 for c in percent}), key="topics.table", on_select="rerun",
    selection_mode="single-row", hide_index=True,
    column_config={
        "topic": st.column_config.NumberColumn("Topic", pinned=True),
        "topic_label": st.column_config.TextColumn("Label (top terms)", width="medium"),
        "threads": "Conversations",
        "share": st.column_config.NumberColumn("Share", format=render.PERCENT_FORMAT),
        **{f"{o}_rate": st.column_config.NumberColumn(o.capitalize(), format=render.PERCENT_FORMAT)
           for o in ("resolved", "abandoned", "failed", "waiting", "unknown")},
        "abandoned_vs_rest": st.column_config.TextColumn("Abandoned × rest", help="The topic's rate over the other topics'"),
        "failed_vs_rest": st.column_config.TextColumn("Failed × rest", help="The topic's rate over the other topics'"),
        "typical_questions": st.column_config.TextColumn("Typical questions", width="large"),
    },
)  # fmt: skip
render.download(view.overview, "topics.csv", key="topics.csv", label="Download every topic (CSV)",
                headers={"topic_label": "Label (top terms)", "threads": "Conversations"})
if picked.selection.rows:
    st.session_state[topic_key] = int(view.table["topic"].iloc[picked.selection.rows[0]])
    url.publish()

chosen = st.session_state.get(topic_key)
if chosen is not None:
    label = dict(zip(view.table["topic"], view.table["topic_label"])).get(chosen, "?")
    st.subheader(f"Topic {chosen} · {markup.text(label)}" + ("" if outcome == "all" else f" · {outcome}"))
    threads = cache.call(model.topic_threads, db, filters, chosen, outcome)
    st.caption(f"{render.plural(len(threads), 'conversation')} · select a row to open its transcript at the question")
    config = {"thread_id": st.column_config.TextColumn("Thread", pinned=True), "outcome": "Outcome",
              "question": st.column_config.TextColumn("First question", width="large"),
              "message": "Message", "question_ordinal": None}
    opened = render.table(threads, key="topics.threads", on_select="rerun", selection_mode="single-row", hide_index=True,
                          column_config=config)
    render.download(threads, f"topic_{chosen}_{outcome}.csv", key="topics.threads.csv",
                    label="Download these conversations (CSV)", headers=config)
    if opened.selection.rows:
        row = threads.iloc[opened.selection.rows[0]]
        state.go_to("transcript", f"Open {render.thread_label(row['thread_id'])} in the transcript explorer",
                    thread=row["thread_id"], msg=int(row["message"]))

if render.chart_panel(f"Conversations per topic and {period}", view.trend, "conversations with a time",
                      lambda f: charts.period_trend(f, by=period, through=bucket_range(facets, filters)[1]),
                      key="topics.trend"):
    render.download(view.trend, f"topics_per_{period}.csv", key="topics.trend.csv", label="Download the trend (CSV)")
