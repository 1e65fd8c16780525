"""Transcript explorer: one thread as the whole conversation (what happened between messages
marked, a message scrolled to and highlighted, its outcome on top and the messages its signals
point at badged), or read under the query contract (contract §4)."""

import streamlit as st

from ui import cache, chat, flow, history, markup, outcomes, render, review, state
from ui.models import outcomes as outcomes_model
from ui.models import transcript as model
from ui.thread_picker import thread_picker

url = state.Url("transcript")
db = state.require_db()

st.title("Transcript explorer")
review.flash()
ws = review.workspace_of(db)
thread = thread_picker(url, db, on_missing=lambda gone: review.orphan_table(db, ws, gone, expanded=True))
c_view, c_jump, c_msg, c_show = flow.row(("wide", "wide", "field", "field"), "view-jump", align="bottom")
toggles = c_show.popover("Display", icon=":material/tune:", width="stretch")
view = c_view.segmented_control(
    "View", model.VIEWS, format_func=model.VIEW_LABELS.get, required=True,
    key=url.bind("view", "conversation", state.choice(model.VIEWS), absent=model.view_of_link),
    help="The whole conversation with what happened between messages, or a read under the query contract "
         "(speaker → time range → index → limit)",
)
table_view = toggles.toggle("Table of every row", key=url.bind("table", False, state.BOOL))
raw = toggles.toggle("Text as typed (not markdown)", key=url.bind("raw", False, state.BOOL))
show_ids = toggles.toggle("Message ids", key=url.bind("ids", False, state.BOOL),
                          help="Each message's id, the checkpoint that first held it and its stored position")

if view != "filtered":
    at_key, msg_key, signal_key = url.key("at"), url.key("msg"), url.key("signal")
    at = c_jump.segmented_control(
        "Jump to", model.JUMPS, format_func=model.JUMP_LABELS.get, key=url.bind("at", None, state.choice(model.JUMPS)),
        on_change=state.clear, args=(msg_key, signal_key),
    )
    number = c_msg.number_input("Message", min_value=1, step=1, value=None, placeholder="number",
                                key=url.bind("msg", None, state.INT), on_change=state.clear, args=(at_key, signal_key))
    # A link about a signal (Outcomes, Conversations) opens at the first message it points at.
    signal = st.session_state.get(url.bind("signal", None, state.choice(outcomes_model.SIGNALS)))
    url.drop(*model.FILTERED_PARAMS)
    url.publish()
    if thread is None:
        st.info("Pick a thread to read its conversation.")
        st.stop()
    conv = cache.conversation(db, thread, model.DEFAULT_GAP_MINUTES)
    if conv.problem is not None:
        render.problem(conv.problem)
        st.stop()
    markup.caption(render.thread_caption(conv.thread))
    render.stale_warning(conv.thread)
    outcome = cache.call(outcomes_model.thread_outcome, db, thread)
    if outcome is not None:
        outcomes.banner(outcome)
    flagged = outcome.focus(signal) if outcome is not None and at is None and number is None else None
    focus, note = model.focus_of(conv, at, None if number is None else int(number)) if flagged is None else (flagged, None)
    start = state.kept_while("transcript.start", (thread, at, number, signal))
    win = model.window(conv, focus, start, size=model.CHAT_WINDOW, note=note)
    if win.note:
        st.warning(win.note)
    if table_view:
        render.table(conv.table, hide_index=True, key="transcript.table")
    else:
        if win.earlier:
            st.button(f"Show earlier messages ({win.earlier:,} before)", icon=":material/expand_less:",
                      on_click=state.put, args=("transcript.start", win.start_before))
        notes = review.thread_review(db, ws, thread, win.items, key="transcript")  # the thread's own box, above
        chat.draw(win.items, focus=win.focus, raw=raw, show_ids=show_ids, extra=notes,  # each message's notes inside it
                  head=outcomes.marks(outcome))  # and the signals that point at it, under its header
        review.orphans(db, ws, thread)
        if win.later:
            st.button(f"Show later messages ({win.later:,} after)", icon=":material/expand_more:",
                      on_click=state.put, args=("transcript.start", win.start_after))
    render.download(conv.table, render.file_name("transcript", thread), key="transcript.csv")
    history.section(db, thread, url)  # branch tree, compare with…, edit log, subgraph runs (ui/history.py)
    st.stop()

c_speaker, c_mode, c_a, c_b, c_limit = flow.row(("wide", "control", "field", "field", "field"), "filtered-read")
speaker = c_speaker.radio("Speaker", model.SPEAKERS, key=url.bind("speaker", "all", state.choice(model.SPEAKERS)),
                          horizontal=True)
mode = c_mode.radio("Select", model.READ_MODES, key=url.bind("mode", "index", state.choice(model.READ_MODES)),
                    format_func=model.READ_MODE_LABELS.get, horizontal=True)
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
url.drop("at", "msg", "signal")
url.publish()

if thread is None:
    st.info("Pick a thread to read its transcript.")
    st.stop()

read = cache.transcript(
    db, thread, speaker, None if index is None else int(index), since, until, None if limit is None else int(limit)
)
if read.thread:
    markup.caption(render.thread_caption(read.thread))
    render.stale_warning(read.thread)
if read.problem is not None:
    render.problem(read.problem)
elif read.rows.empty:
    st.info("No message matches (an index past the end or an empty time range answers empty).")
else:
    st.caption(render.plural(len(read.rows), "message"))
    if table_view:
        render.table(read.table, hide_index=True, key="transcript.table")
    else:
        notes = review.thread_review(db, ws, thread, read.items, key="transcript")
        chat.draw(read.items, raw=raw, show_ids=show_ids, extra=notes)
        review.orphans(db, ws, thread)
        if len(read.rows) > len(read.items):
            st.info(f"Showing the first {len(read.items)} of {len(read.rows):,} messages; set a limit or use the table.")
    render.download(read.table, render.file_name("transcript", thread), key="transcript.csv")
history.section(db, thread, url)
