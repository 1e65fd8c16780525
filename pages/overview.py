"""Overview: headline numbers, trends per day / week / month, the top lists, over the filtered conversations."""

import streamlit as st

from ui import cache, charts, flow, outcomes, render, review, state
from ui.filters import filter_bar
from ui.trend_period import trend_period
from ui.models import outcomes as outcomes_model
from ui.models import overview as model

url = state.Url("overview")
db = state.require_db()

st.title("Overview")
facets = cache.facets(db)
filters = filter_bar(url, facets)
tiles = st.container()  # the headline, drawn above the trend controls once the numbers are in
views = tuple(model.TREND_VIEWS)
left, right = st.columns([3, 2])
trend_view = left.radio("Trends", views, key=url.bind("trend", views[0], state.choice(views)), horizontal=True,
                        format_func=lambda v: model.TREND_VIEWS[v][0])
by = trend_period(url, facets, filters, right)
url.publish()

view = cache.overview(db, filters, by)
through = model.bucket_range(facets, filters)[1]  # (a last period past it is labelled partial)
h = view.headline

first, last = h["first_ts"], h["last_ts"]
span_help = (
    f"First and last message checkpoint time: {render.ts_text(first)} → {render.ts_text(last)}"
    if first is not None and last is not None else "No message has a checkpoint time"
)
with tiles:
    render.headline([
        ("Threads", render.number(h["threads"]), "Conversations (threads) that pass the filters"),
        ("Messages", render.number(h["messages"]), "Transcript messages, every role"),
        ("Tenants", render.number(h["tenants"]), "Distinct tenants (threads outside the key pattern count as one)"),
        ("User turns", render.number(h["user_turns"]), "Messages from the user"),
        ("Tokens", render.number(h["total_tokens"]),
         f"input {render.number(h['input_tokens'])} · output {render.number(h['output_tokens'])} (as the model reported them)"),
    ])
    render.headline([
        (*render.date_span(first, last), span_help),
        ("Assistant messages", render.number(h["assistant_messages"]), None),
        ("Tool calls", render.number(h["tool_calls"]), None),
        ("Models", render.number(h["models"]), None),
        ("Median reply", render.seconds(h["latency_median_s"]),
         f"Reply time − question time, as checkpoints record them, over {render.plural(int(h['latency_pairs'] or 0), 'user → assistant pair')}"),
    ])
    if h["stale_threads"]:
        st.page_link("pages/conversations.py", icon=":material/history:", query_params=state.link_params(stale="1"),
                     label=f"{render.number(h['stale_threads'])} of these threads show a stale transcript (their latest "
                           "checkpoint did not decode): list them")
    head, link = flow.row("link", "outcomes-head", 2)
    head.markdown("**How the conversations ended**")
    link.page_link("pages/outcomes.py", icon=":material/flag:", label="Why: signals, trend, tenants on Outcomes",
                   query_params=state.link_params(**outcomes.shared_params(url)))
    outcomes.tiles(cache.call(outcomes_model.outcome_counts, db, filters), outcomes.shared_params(url),
                   outcomes=outcomes_model.TILE_ORDER)
    outcomes.next_steps(outcomes.shared_params(url))


def panel(title, frame, empty, build, key, file_name, caption=None) -> None:
    """A chart with its table and CSV beneath, folded: drawn when unfolded (five tables the browser
    would build, hidden, on every first render)."""
    if render.chart_panel(title, frame, empty, build, key=key, caption=caption):
        table = st.expander("Table", key=f"{key}_open", on_change="rerun")
        if table.open:
            with table:
                render.table(frame, hide_index=True, key=f"{key}_table")
                render.download(frame, file_name, key=f"{key}_csv")


for col, p in zip(flow.row("chart", "trends", 2), model.trend_panels(trend_view)):
    with col:
        panel(p.title, getattr(view, p.field), p.empty, lambda f, p=p: charts.trend(p.field, f, view.by, through),
              f"ov_{p.field}", model.csv_name(p.field, view.by), p.caption)

for col, (field, (title, _, _, what)) in zip(flow.row("chart", "top-lists", 3), charts.TOP_LISTS.items()):
    with col:
        panel(title, getattr(view, field), what, lambda f, field=field: charts.top_list(field, f), f"ov_{what}",
              f"{field}.csv")

review.overview_numbers(db, review.workspace_of(db), filters)
