"""Review: every review queue with its progress, or one queue walked thread by thread; the label set."""

import streamlit as st

from ui import queue_walk, review, state

url = state.Url(queue_walk.PAGE)
db = state.require_db()
ws = review.workspace_of(db)

st.title("Review")
review.flash()
url.bind("queue", None, state.INT)
url.bind("item", None, state.INT)
if url.value("queue") is None:
    queue_walk.all_queues(ws, url)
else:
    queue_walk.walk(db, ws, url)
queue_walk.label_editor(ws)
review.orphan_table(db, ws)
url.publish()
