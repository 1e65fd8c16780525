"""Transcript explorer: one thread read under the query contract (contract §4), as a chat or a table."""

import streamlit as st

from ui import cache, history, render, review, state

SPEAKERS = ("all", "user", "assistant")
MODES = ("index", "time")
MODE_LABELS = {"index": "By position (index)", "time": "By time range"}

url = state.Url("transcript")
db = state.require_db()

st.title("Transcript explorer")
review.flash()

pick, find = st.columns([3, 2])
text = find.text_input("Find threads", key=url.bind("find", ""), placeholder="id, tenant or text in a message")
thread_key = url.bind("thread", None)
choices = cache.thread_choices(db, text, url.value("thread"))
labels = dict(zip(choices["thread_id"], choices["label"]))
if url.value("thread") is not None and url.value("thread") not in labels:
    st.warning(f"Thread `{url.value('thread')}` is not in this database.")
    review.orphan_table(db, review.workspace_of(db), url.value("thread"), expanded=True)  # its annotations are kept
    url.set("thread", None)
thread = pick.selectbox(
    "Thread", list(labels), key=thread_key, index=None, format_func=labels.get, placeholder="Pick a thread…",
    help="Type to filter; the search box on the right also looks inside messages.",
)

c_speaker, c_mode, c_a, c_b, c_limit = st.columns([2, 2, 2, 2, 1])
speaker = c_speaker.radio("Speaker", SPEAKERS, key=url.bind("speaker", "all", state.choice(SPEAKERS)), horizontal=True)
mode = c_mode.radio(
    "Select", MODES, key=url.bind("mode", "index", state.choice(MODES)), format_func=MODE_LABELS.get, horizontal=True
)
index = since = until = None
if mode == "index":
    index = c_a.number_input(
        "Index", value=None, step=1, key=url.bind("index", None, state.INT), placeholder="all rows",
        help="0 = first row of the speaker's view, -1 = last; empty = every row",
    )
    url.drop("since", "until")  # the two modes are exclusive, in the URL too
else:
    since = c_a.text_input("Since", key=url.bind("since", ""), placeholder="2025-03-03T09:00:00Z",
                           help="ISO 8601, inclusive; no offset means UTC") or None
    until = c_b.text_input("Until", key=url.bind("until", ""), placeholder="2025-03-03T18:00:00Z",
                           help="ISO 8601, inclusive; no offset means UTC") or None
    url.drop("index")
limit = c_limit.number_input("Limit", value=None, min_value=0, step=1, key=url.bind("limit", None, state.INT),
                             placeholder="none", help="Keep the first N rows, applied last")
t_table, t_raw, _ = st.columns([2, 2, 8])
table_view = t_table.toggle("Table view", key=url.bind("table", False, state.BOOL))
raw = t_raw.toggle("Raw text", key=url.bind("raw", False, state.BOOL), help="Show content as plain text, not markdown")
url.publish()

if thread is None:
    st.info("Pick a thread to read its transcript.")
    st.stop()

view = cache.transcript(
    db, thread, speaker, None if index is None else int(index), since, until, None if limit is None else int(limit)
)

if view.thread:
    st.caption(render.thread_caption(view.thread))

if view.problem is not None:
    render.problem(view.problem)
elif view.rows.empty:
    st.info("No message matches (an index past the end or an empty time range answers empty).")
else:
    st.caption(f"{len(view.rows):,} message(s)")
    if table_view:
        st.dataframe(view.table, hide_index=True, key="transcript.table")
    else:
        review.transcript(db, review.workspace_of(db), thread, view.rows, raw=raw, key="transcript")
    render.download(view.table, render.file_name("transcript", thread), key="transcript.csv")

# --- History (issue 20): branch tree and picker, compare with…, edit log, subgraph runs (ui/history.py) ---
history.section(db, thread, url)
