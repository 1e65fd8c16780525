"""Conversations: the matching threads sorted and paged in DuckDB, their CSV, charts; a row opens its transcript."""

import streamlit as st

from ui import cache, charts, columns, flow, render, review, state
from ui.filters import cohort_filter, filter_bar, outcome_filter, stale_filter
from ui.models.compare import cohort_facets
from ui.models.outcomes import transcript_link
from ui.ranges import range_filters

url = state.Url("conversations")
db = state.require_db()

st.title("Conversations")
review.flash()
ws = review.workspace_of(db)
filters = filter_bar(url, cache.facets(db))
c1, c2, c3, c4, c5 = flow.row(("field", "control", "control", "control", "control"), "sort-flags", align="bottom")
sort = c1.selectbox("Sort by", columns.SORTABLE, format_func=columns.SORT_LABELS.get,
                    key=url.bind("sort", "last_ts", state.choice(columns.SORTABLE)))
order = c2.segmented_control("Order", ["desc", "asc"], format_func={"desc": "↓ High first", "asc": "↑ Low first"}.get,
                             key=url.bind("order", "desc", state.choice(("desc", "asc"))))
pending = c3.checkbox("Pending interrupt only", key=url.bind("pending", False, state.BOOL))
forks = c4.checkbox("Forked threads only", key=url.bind("forks", False, state.BOOL))
filters = stale_filter(url, filters, c5)
o1, o2, o3, o4 = flow.row("field", "outcome-cohort", 4, align="bottom")
filters = outcome_filter(url, filters, o1, o2)
filters = cohort_filter(url, filters, cache.call(cohort_facets, db), o3, o4)
ranges = range_filters(url)
filters = review.review_filters(url, ws, filters)
descending = order != "asc"  # a deselected segmented control (None) keeps the default order

page_key = url.bind("page", 1, state.INT)
page = state.first_page_on_new_question(page_key, (filters, ranges, pending, forks, sort, descending))

view = cache.conversations(db, filters, pending, forks, ranges, sort, descending, page)
st.session_state[page_key] = view.page  # a page past the end (an old link) shows the last one

shown, config = review.review_columns(*columns.conversations_table(view.table), view.table["thread_id"], db, ws)
st.caption(render.rows_caption(view.offset, len(view.table), view.matching, view.total, view.in_database)
           + columns.sort_caption(sort, descending))
picked = render.table(
    columns.styled(shown), key=columns.table_key(sort, descending), hide_index=True, column_config=config,
    keep=(sort,), on_select=columns.header_sort(columns.table_key(sort, descending), url.key("sort"), url.key("order")),
    selection_mode=columns.SELECTION_MODES, row_height=columns.ROW_PX, height=columns.conversations_height(len(shown)),
)
p1, p2, p3 = flow.row(("field", "control", "control"), "page-download", align="bottom")
p1.number_input(f"Page (of {view.pages:,})", min_value=1, max_value=view.pages, step=1, key=page_key)
with p2:
    render.download_data(
        lambda: cache.conversations_csv(db, view.conditions, sort, descending, columns.CSV_COLUMNS), "conversations.csv",
        key="conversations.csv", rows=view.matching, label=render.download_label(view.matching, "row"), help=columns.csv_help(sort, descending),
    )
with p3:
    review.queue_button(view.conditions, sort, descending, url.params(), view.matching)
url.publish()

if picked.selection.rows:
    row = view.table.iloc[picked.selection.rows[0]]
    state.go_to("transcript", f"Open {render.thread_label(row['thread_id'])} in the transcript explorer",
                thread=row["thread_id"], **transcript_link(row["outcome"], row["signals"], row["outcome_message"],
                                                           filters.signals, filters.outcomes))

left, right, turns, activity = flow.row("wide", "charts", 4)
with left:
    s = view.latency_summary
    render.chart_panel(
        charts.CONVERSATION_CHARTS["latency"], view.latency, "user → assistant pairs",
        lambda f: charts.conversations_chart("latency", f), key="conv_latency",
        caption=None if view.latency.empty else (
            f"{render.plural(s['pairs'], 'user → assistant pair')} · median {render.seconds(s['median_s'])} · "
            f"p90 {render.seconds(s['p90_s'])} (reply time − question time, as checkpoints record them)"
            + (f" · the last bar also counts the replies slower than {render.seconds(s['top_s'])} (the slowest "
               f"{render.seconds(s['max_s'])})" if s["max_s"] > s["top_s"] else "")),
    )
with right:
    render.chart_panel(charts.CONVERSATION_CHARTS["tokens_by_model"], view.tokens_by_model, "token usage",
                       lambda f: charts.conversations_chart("tokens_by_model", f), key="conv_tokens")
with turns:
    render.chart_panel(charts.CONVERSATION_CHARTS["turns"], view.turns, "threads",
                       lambda f: charts.conversations_chart("turns", f), key="conv_turns")
with activity:
    render.chart_panel(charts.CONVERSATION_CHARTS["activity"], view.activity, "activity",
                       lambda f: charts.conversations_chart("activity", f),
                       key="conv_activity")
