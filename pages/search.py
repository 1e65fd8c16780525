"""Search: every message containing a text, across all conversations, newest first; a hit opens
its conversation at that message."""

import streamlit as st

from ui import cache, render, session, state
from ui.filters import filter_bar
from ui.models import search as model

url = state.Url("search")
db = state.require_db()

st.title("Search")
text = st.text_input("Search messages", key=url.bind("q", ""), placeholder="e.g. refund, Rückerstattung, 返金",
                     help="Case-insensitive, any script; finds the text anywhere in a message")
c_who, c_in, _ = st.columns([5, 3, 1], vertical_alignment="bottom")
speaker = c_who.segmented_control("Said by", model.SPEAKERS, format_func=model.SPEAKER_LABELS.get, required=True,
                                  key=url.bind("speaker", "all", state.choice(model.SPEAKERS)))
where = c_in.segmented_control("Search in", model.WHERE, format_func=model.IN_LABELS.get, required=True,
                               key=url.bind("in", "messages", state.choice(model.WHERE)),
                               help="Message text, or the tools assistants called: their names and arguments")
filters = filter_bar(url, cache.facets(db), text=False)
page_key = url.bind("page", 1, state.INT)
page = state.first_page_on_new_question(page_key, (text, speaker, where, filters))
url.publish()

view = cache.search(db, text, speaker, where, filters, page)
st.session_state[page_key] = view.page  # a page past the end (an old link) shows the last one
if view.problem is not None:
    render.problem(view.problem)
elif not view.searched:
    st.info("Type a word or a phrase to find the messages that contain it.")
elif not view.total:
    st.info("No message contains that text (with these filters).")
else:
    st.caption(f"{render.plural(view.total, 'message')} in {render.plural(view.threads, 'conversation')} · newest first · "
               f"{view.offset + 1:,}–{view.offset + len(view.hits):,} shown · select a hit to open it in its conversation")
    opened = render.opened_hit()  # a hit pressed in a masking session
    if opened is not None:
        state.go_to("transcript", "Open the conversation at this message", **opened)
    masked = session.policy().redact  # a hit is then a button: no link holding its thread key
    for i, hit in enumerate(view.hits):
        render.search_hit(hit, {"thread": hit.thread_id, "msg": hit.number} if masked else
                          state.link_params(thread=hit.thread_id, msg=hit.number),
                          button_key=f"search.hit-{i}" if masked else None)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.pagination(view.pages, key=page_key)
    with right:
        render.download_data(lambda: cache.search_csv(db, text, speaker, where, filters), "search.csv",
                             key="search.csv", rows=view.total, label=render.download_label(view.total, "hit"))
