"""The Review page's parts: every queue with its progress, one queue walked item by item, the label set.

A queue's place is in the URL (`queue`, `item`, `mine`), so a link opens the same
thread of the same queue; the buttons only change those values (and mark items
done), the page then draws what they name.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analytics import workspace
from analytics.errors import AnalyticsError, NotFound
from ui import cache, chat, render, review, state
from ui import markup
from ui.models import transcript as transcript_model
from ui.database import DbRef, WsRef
from ui.models.review import queue_view

PAGE = "review"


def _open_queue(url: state.Url, queue_id: int | None) -> None:
    url.set("queue", queue_id)
    url.set("item", None)


def all_queues(ws: WsRef, url: state.Url) -> None:
    """The queues with their progress; picking a row opens it."""
    queues = workspace.queues(ws.workspace)
    if not queues:
        st.info("No review queue yet. On **Conversations**, filter the threads to review, then "
                "**Review queue…** makes one of them (all, or a seeded random sample).", icon=":material/info:")
        return
    table = pd.DataFrame([{
        "queue_id": q.queue_id, "name": q.name, "done": 100 * q.done / q.items if q.items else 0.0,
        "threads": q.items,
        "made from": made_from(q.view, q.matching, q.sample_size, q.seed),
        "by": q.created_by, "created (UTC)": q.created_at[:16].replace("T", " "), "description": q.description or "",
    } for q in queues])
    st.subheader("Queues")
    st.caption("Select a queue to walk it.")
    picked = render.table(
        table.drop(columns="queue_id"), hide_index=True, key="review.queues", on_select="rerun",
        selection_mode="single-row",
        # One column per fact, headers as every page writes them ("Thread", "Tenant").
        column_config={"done": st.column_config.ProgressColumn("Done", format=render.PERCENT_FORMAT, min_value=0,
                                                                   max_value=100),
                       "threads": "Threads", "by": "By", "created (UTC)": "Created (UTC)",
                       "description": "Description",
                       "name": st.column_config.TextColumn("Queue", pinned=True),
                       "made from": st.column_config.TextColumn("Made from", width="large",
                                                                help="The Conversations view it was made from")},
    )
    if picked.selection.rows:
        _open_queue(url, int(table["queue_id"].iloc[picked.selection.rows[0]]))
        url.publish()
        st.rerun()
    per = workspace.progress(ws.workspace)
    per = per[per["assignee"] != "(all)"]
    if not per.empty:
        st.subheader("Per reviewer")
        render.table(per[["queue", "assignee", "done_pct", "items"]], hide_index=True,
                     key="review.per_reviewer",
                     column_config={"queue": "Queue", "assignee": "Reviewer", "items": "Items",
                                    "done_pct": st.column_config.ProgressColumn("Done", format=render.PERCENT_FORMAT,
                                                                                min_value=0, max_value=100)})


#: How a queue's view parameters read ("made from"); the others are shown as `name=value`.
_VIEW_WORDS = {"tenant": "tenant", "sub": "sub-tenant", "q": "text", "from": "from", "to": "to", "label": "label",
               "failed": "failed review", "pending": "pending interrupt", "forks": "forked", "stale": "stale"}
_NOT_FILTERS = {"sort", "order", "page", "db"}


def made_from(view: dict | None, matching: int, sample: int | None, seed: int | None) -> str:
    """The filter a queue was made from, in words, and how many of its threads it took.

    >>> made_from({"tenant": ["acme", "globex"], "q": "refund", "sort": "messages"}, 4, None, None)
    'tenant acme, globex · text “refund” · all 4 threads'
    >>> made_from({}, 31, 10, 7)
    'every thread · a sample of 10 of 31 (seed 7)'
    """
    said = []
    for name, value in (view or {}).items():
        if name in _NOT_FILTERS or value in (None, "", [], False):
            continue
        values = value if isinstance(value, list) else [value]
        shown = ", ".join(map(str, values))
        if name == "q":
            said.append(f"text “{shown}”")
        elif shown in ("1", "True", "true"):
            said.append(_VIEW_WORDS.get(name, name))
        else:
            said.append(f"{_VIEW_WORDS.get(name, name)} {shown}")
    taken = (f"a sample of {sample:,} of {matching:,} (seed {seed})" if sample
             else f"all {render.plural(matching, 'thread')}")
    return " · ".join([*(said or ["every thread"]), taken])


def _go(url: state.Url, position: int | None) -> None:
    url.set("item", position)


def _mark(ws: WsRef, url: state.Url, queue_id: int, position: int, done: bool, then: int | None) -> None:
    name = review.reviewer()
    if not name:
        st.session_state["review.need_name"] = True
        return
    try:
        workspace.mark(ws.workspace, queue_id, position, done=done, by=name)
    except AnalyticsError as exc:
        st.session_state["review.error"] = str(exc)
        return
    if then is not None:
        url.set("item", then)


def walk(db: DbRef, ws: WsRef, url: state.Url) -> None:
    """One queue at one item: where it is, previous / next / done, and the thread with its annotations."""
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    left.button("All queues", key="review.back", icon=":material/arrow_back:", type="tertiary",
                on_click=_open_queue, args=(url, None))
    me = review.reviewer()
    mine = right.toggle("Only my items", key=url.bind("mine", False, state.BOOL), disabled=me is None,
                        help="Walk the items assigned to you (set your name in the sidebar)")
    try:
        view = queue_view(ws.workspace, url.value("queue"), url.value("item"), me if mine and me else None)
    except NotFound:
        st.warning(f"There is no review queue {markup.code(url.value('queue'))} in this workspace.")
        _open_queue(url, None)
        return
    q = view.queue
    st.subheader(q.name)
    made = f"sample of {q.sample_size} from {render.plural(q.matching, 'thread')}, seed {q.seed}" if q.sample_size else \
        render.plural(q.matching, "thread")
    st.caption(" · ".join(filter(None, [q.description, f"made by {q.created_by} {q.created_at[:10]}", made])))
    st.progress(q.done / q.items if q.items else 0.0, text=f"{q.done} of {q.items} done")
    per = view.progress[view.progress["assignee"] != "(all)"]
    if len(per) > 1 or (len(per) == 1 and per["assignee"].iloc[0] != "(anyone)"):
        st.caption(" · ".join(f"{r.assignee}: {r.done}/{r.items}" for r in per.itertuples()))
    if st.session_state.pop("review.need_name", False):
        st.error("Type your name in the sidebar (Reviewer) first: it is stamped on what you mark done.")
    if "review.error" in st.session_state:
        st.error(st.session_state.pop("review.error"))
    it = view.item
    if it is None:
        st.info("You have no item in this queue." if mine else "This queue has no item.")
        return
    url.set("item", it.position)
    prev, where, nxt, done = st.columns([2, 6, 2, 3], vertical_alignment="center")
    prev.button("Previous", key="review.prev", icon=":material/chevron_left:", disabled=view.previous is None,
                on_click=_go, args=(url, view.previous), width="stretch")
    done_by = f" by {markup.text(it.done_by)}" if it.done_by else ""
    status = "✓ done" + done_by if it.status == "done" else "pending"
    where.markdown(f"**Item {it.position} of {q.items}** · {markup.code(render.thread_label(it.thread_id))} · {status}"
                   + (f" · assigned to {markup.text(it.assignee)}" if it.assignee else ""))
    nxt.button("Next", key="review.next", icon=":material/chevron_right:", disabled=view.next is None,
               on_click=_go, args=(url, view.next), width="stretch")
    if it.status == "pending":
        done.button("Mark done, next", key="review.done", icon=":material/task_alt:", type="primary", width="stretch",
                    on_click=_mark, args=(ws, url, q.queue_id, it.position, True, view.next_pending))
    else:
        done.button("Mark pending", key="review.undo", icon=":material/undo:", width="stretch",
                    on_click=_mark, args=(ws, url, q.queue_id, it.position, False, None))
    conv = cache.conversation(db, it.thread_id, transcript_model.DEFAULT_GAP_MINUTES)
    st.page_link("pages/transcript.py", label="Open in the Transcript explorer", icon=":material/forum:",
                 query_params=state.link_params(thread=it.thread_id))
    if conv.problem is not None:
        st.warning(f"{markup.text(conv.problem.message)} — the thread may be gone since the queue was made; "
                   "what was said of it is kept (orphaned).")
        review.orphan_table(db, ws, it.thread_id, expanded=True)
        return
    win = transcript_model.window(conv)
    notes = review.thread_review(db, ws, it.thread_id, win.items, key="review.walk")
    chat.draw(win.items, extra=notes)
    if win.later:
        st.caption(f"{render.plural(win.later, 'later message')}: open the thread in the Transcript explorer to read them.")
    review.orphans(db, ws, it.thread_id)


def label_editor(ws: WsRef) -> None:
    """The label set: add or recolour a label, retire one."""
    labels = cache.labels(ws)
    with st.expander("Labels", icon=":material/label:"):
        st.markdown(" ".join(review.chip(label.name + (" (retired)" if label.retired else ""), label.color)
                             for label in labels), unsafe_allow_html=True)
        with st.form("labels.add", border=False):
            a, b, c = st.columns([3, 1, 4], vertical_alignment="bottom")
            name = a.text_input("Label", max_chars=60, placeholder="e.g. refund wrong",
                                help="A new label, or an existing one to recolour (a retired one comes back)")
            color = b.color_picker("Colour", "#5d4037")
            description = c.text_input("Meaning", placeholder="shown as help")
            if st.form_submit_button("Add or update label", icon=":material/new_label:"):
                try:
                    workspace.define_label(ws.workspace, name, color, description.strip() or None)
                except AnalyticsError as exc:
                    st.error(str(exc))
                else:
                    st.rerun()
        active = [label.name for label in labels if not label.retired]
        a, b = st.columns([3, 1], vertical_alignment="bottom")
        gone = a.selectbox("Retire a label", active, index=None, key="labels.retire", placeholder="pick a label",
                           help="No longer offered; the annotations that carry it keep it")
        if b.button("Retire", key="labels.retire.go", disabled=gone is None):
            workspace.retire_label(ws.workspace, gone)
            st.rerun()
