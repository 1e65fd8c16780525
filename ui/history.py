"""The transcript page's History section: branch tree and picker, a branch read with its
markers, compare with…, the edit log and subgraph runs. The page calls `section(db, thread, url)`;
the data and labels are `ui.models.history`'s.

URL: `history` (the section shown), `branch` (the branch read, 1 = current), `compare` (`b2`,
`c:<checkpoint>`, `t:<thread>`), `compare_kind` (which picker), `compare_table`, `edits_all` (the
edit log of every branch). Hidden, the section is one line (`history_summary`, one small read).
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from analytics.history.edits import edit_log
from ui import cache, charts, chat, diffs, render, state
from ui.database import DbRef
from ui import markup
from ui.markup import inert
from ui.models import history as model
from ui.models.chat import message_item
from ui.models.transcript import table_of

_TS = "YYYY-MM-DD HH:mm:ss"
COMPARE_KINDS = ("branch", "checkpoint", "thread")
_KIND_LABELS = {"branch": "another branch", "checkpoint": "a checkpoint", "thread": "another thread"}
_NOTE = {  # marker kind: (symbol, border colour, background)
    "left": ("⎇", "#d62728", "#fdf1f1"),
    "fork": ("⎇", "#7f7f7f", "#f4f4f4"),
    "edited": ("✎", "#e6a700", "#fff8e1"),
    "re_added": ("↺", "#2ca02c", "#eefaee"),
    "reordered": ("⇅", "#9467bd", "#f5f0fa"),
    "removed": ("✂", "#d62728", "#fdeeee"),
    "subgraph": ("↳", "#17becf", "#eafafc"),
}


def _note(kind: str, text: str, body: str = "") -> None:
    symbol, border, background = _NOTE[kind]
    st.markdown(inert(
        f'<div style="border-left:4px solid {border};background:{background};padding:6px 12px;margin:0 0 12px 3rem;'
        f'border-radius:4px;font-size:0.9rem">{symbol} {diffs.text_html(text)}'
        + (f'<div style="margin-top:4px;white-space:pre-wrap">{body}</div>' if body else "")
        + "</div>"),
        unsafe_allow_html=True,
    )


def _run_messages(history: model.ThreadHistory, ns: str) -> None:
    said = history.run_messages[history.run_messages["checkpoint_ns"] == ns]
    key = "history-run-" + hashlib.sha256(ns.encode()).hexdigest()[:12]  # a run's bubbles, apart from the chat's
    for _, r in said.iterrows():
        chat.message(message_item(r), key=key)
        if pd.notna(r["transcript_ordinal"]):
            st.caption(f"↑ handed back: Message {int(r['transcript_ordinal']) + 1} of the transcript")


def _subgraph(history: model.ThreadHistory, marker: model.Marker) -> None:
    runs = history.runs
    run = runs[runs["checkpoint_ns"] == marker.run].iloc[0]
    parent_of = dict(zip(runs["checkpoint_ns"], runs["parent_ns"]))

    def inside(ns: str) -> bool:  # a run nested (at any depth) in the one started here
        ns = parent_of.get(ns)
        while isinstance(ns, str):
            if ns == marker.run:
                return True
            ns = parent_of.get(ns)
        return False

    nested = runs[runs["checkpoint_ns"].map(inside)]
    title = f"↳ {marker.text}" + (f", {len(nested)} nested" if len(nested) else "")
    with st.expander(title):
        st.caption(f"namespace {markup.code(run['checkpoint_ns'])} · {render.ts_text(run['first_ts'])} → {render.ts_text(run['last_ts'])}"
                   f" · {run['checkpoints']} checkpoints · never part of the transcript")  # fmt: skip
        _run_messages(history, marker.run)
        for n in nested.itertuples():
            st.markdown(f"**↳ nested run {markup.code(n.node)}** · {markup.code(n.checkpoint_ns)} · "
                        f"{render.plural(n.messages, 'message')}")
            _run_messages(history, n.checkpoint_ns)


def _marker(history: model.ThreadHistory, marker: model.Marker) -> None:
    if marker.kind == "subgraph":
        _subgraph(history, marker)
    elif marker.kind == "from_subgraph":
        st.caption(f"↳ {marker.text}")
    else:
        _note(marker.kind, marker.text, diffs.diff_html(marker.old, marker.new) if marker.diff else "")


def transcript(history: model.ThreadHistory) -> None:
    """The branch read as a chat, each marker under the message it belongs after."""
    by_after: dict[int, list[model.Marker]] = {}
    for m in history.markers:
        by_after.setdefault(m.after, []).append(m)
    for m in by_after.get(-1, []):
        _marker(history, m)
    shown = history.rows.head(render.CHAT_MAX)
    for _, row in shown.iterrows():
        chat.message(message_item(row), key="history")
        for m in by_after.get(int(row["ordinal"]), []):
            _marker(history, m)
    if len(history.rows) > render.CHAT_MAX:
        st.info(f"Showing the first {render.CHAT_MAX} of {len(history.rows):,} messages.")


def _branches_tab(history: model.ThreadHistory, url: state.Url, branch_key: str) -> None:
    render.chart(charts.branch_tree(history.tree, history.labels, history.branch), key="history.tree")
    st.caption("Each lane is a branch (blue: the current one, red: the one read below, grey: the others), each "
               "point a checkpoint: ◆ fork point, ★ replay, ■ update_state, ● new input, ○ a step; the last checkpoint "
               "of a branch is larger, an orange ring marks a pending interrupt. Hover for details.")  # fmt: skip
    config = {
        "created_by": st.column_config.TextColumn("Began with", help="What wrote its first own checkpoint: "
                                                  "fork = a replay, update = update_state, input = new input"),
        "checkpoints": st.column_config.NumberColumn("Own checkpoints", help="After the fork point"),
        "fork_messages": st.column_config.NumberColumn("Forks after message", help="The messages it shares with "
                                                       "the branch it forks from: its own begin after Message N"),
        "fork_checkpoint_id": st.column_config.TextColumn("Fork point (checkpoint)", help="The checkpoint where "
                                                          "the branch leaves the one it forks from"),
        "parent_branch": "Forks from",
        "first_ts": st.column_config.DatetimeColumn("Began (UTC)", format=_TS),
        "last_ts": st.column_config.DatetimeColumn("Last active (UTC)", format=_TS),
        "has_interrupt": "Interrupt waits", "head_checkpoint_id": "Last checkpoint",
    }  # fmt: skip
    render.table(history.branches, key="history.branches", hide_index=True, column_config=config)
    render.download(history.branches, render.file_name("branches", history.thread_id), key="history.branches_csv",
                    headers=config)  # fmt: skip
    st.selectbox("Read branch", list(history.labels), key=branch_key, format_func=history.labels.get,
                 help="The same rules as the transcript, applied to the branch's last checkpoint.")  # fmt: skip
    st.caption(f"Branch {history.branch} as a transcript, read at its last checkpoint {markup.code(history.head_checkpoint_id)} · "
               f"{render.plural(len(history.rows), 'message')}")  # fmt: skip
    transcript(history)
    render.download(table_of(history.rows),  # (the transcript's CSV, of this branch)
                    render.file_name("transcript", history.thread_id, f"branch{history.branch}"),
                    key="history.branch_csv", label="Download this branch (CSV)")  # fmt: skip


def _compare_choice(db: DbRef, history: model.ThreadHistory, url: state.Url) -> str:
    kind = st.radio("Compare with", COMPARE_KINDS, format_func=_KIND_LABELS.get, horizontal=True,
                    key=url.bind("compare_kind", "branch", state.choice(COMPARE_KINDS)))  # fmt: skip
    spec_key = url.bind("compare", "")
    spec = st.session_state.get(spec_key) or ""
    if kind == "branch":
        options = {f"b{b}": label for b, label in history.labels.items() if b != history.branch}
        if not options:
            st.info("This thread has one branch: compare with one of its checkpoints or another thread.")
            return ""
    elif kind == "checkpoint":
        options = {f"c:{cid}": label for cid, label in history.checkpoints.items() if cid != history.head_checkpoint_id}
        first = f"c:{history.default_checkpoint}"
        if first in options:  # the state before the last edit first: one click to "before / after update_state"
            edited = (history.edits["event"] == "edited").any()
            options = {first: options[first] + (" · before the last edit" if edited else " · the one before"), **options}
    else:
        choices = cache.thread_choices(db, "", spec[2:] if spec.startswith("t:") else None)
        options = {f"t:{t}": label for t, label in zip(choices["thread_id"], choices["label"]) if t != history.thread_id}
    if spec not in options:
        st.session_state[spec_key] = next(iter(options), "")
    st.selectbox("Side to compare with (−)", list(options), key=spec_key, format_func=options.get)
    return st.session_state[spec_key]


def _side_by_side(view: model.CompareView) -> None:
    a, b = st.columns(2)
    a.caption(f"Left (−): {markup.text(view.left)}")
    b.caption(f"Right (+): {markup.text(view.right)}")
    for r in view.frame.head(render.CHAT_MAX).itertuples():
        colour = diffs.COLOURS["moved" if r.moved and r.status == "same" else r.status]
        status = r.status + (" · moved" if r.moved else "")
        left = right = None
        if pd.notna(r.left_ordinal):
            body = (diffs.diff_html(r.left_content, r.right_content, "old") if r.status == "edited"
                    else diffs.text_html(r.left_content))  # fmt: skip
            left = (f"{r.left_role} · Message {int(r.left_ordinal) + 1} · {status}", body, colour)
        if pd.notna(r.right_ordinal):
            body = (diffs.diff_html(r.left_content, r.right_content, "new") if r.status == "edited"
                    else diffs.text_html(r.right_content))  # fmt: skip
            right = (f"{r.right_role} · Message {int(r.right_ordinal) + 1} · {status}", body, colour)
        diffs.pair(left, right)
    if len(view.frame) > render.CHAT_MAX:
        st.info(f"Showing the first {render.CHAT_MAX} of {len(view.frame):,} rows; the table and the CSV have all.")


def _compare_tab(db: DbRef, history: model.ThreadHistory, url: state.Url) -> None:
    spec = _compare_choice(db, history, url)
    if not spec:
        return
    view = cache.call(model.compare_view, db, history.thread_id, history.branch, spec)
    if view.problem is not None:
        render.problem(view.problem)
        return
    st.caption(f"From {markup.text(view.left)} (−) to {markup.text(view.right)} (+)")
    c = view.counts
    render.headline([("Same", c["same"], None), ("Edited", c["edited"], "Same message, another text, role, tool calls "
                     "or name"), ("Removed", c["removed"], "Only on the − side"), ("Added", c["added"], "Only on the + side"),
                     ("Moved", c["moved"], "Out of order relative to the others")])  # fmt: skip
    if st.toggle("Table view", key=url.bind("compare_table", False, state.BOOL)):
        render.table(view.table, key="history.compare", hide_index=True)
    else:
        _side_by_side(view)
    render.download(view.frame, render.file_name("diff", history.thread_id, history.branch), key="history.compare_csv")


def _edits_tab(db: DbRef, history: model.ThreadHistory, url: state.Url) -> None:
    every = st.toggle("Every branch", key=url.bind("edits_all", False, state.BOOL),
                      help="Edits, removals and re-adds of all branches, not only those behind the branch read")  # fmt: skip
    edits = history.edits if not every else cache.call(edit_log, db, history.thread_id, None, True)
    if edits.empty:
        st.info("No edit, removal, re-add or reorder" + (" on any branch." if every else " behind this branch."))
        return
    table = edits[list(model.EDIT_TABLE_COLUMNS)]
    st.markdown(inert(diffs.edit_log_html(table)), unsafe_allow_html=True)
    st.caption("Removed text struck through in red, added text in green; the CSV has the ids and both texts.")
    render.download(table, render.file_name("edits", history.thread_id), key="history.edits_csv")


def _runs_tab(history: model.ThreadHistory) -> None:
    if history.runs.empty:
        st.info("No subgraph ran in this thread.")
        return
    shown = history.runs.drop(columns=["thread_id"])
    config = {"first_ts": st.column_config.DatetimeColumn("Began (UTC)", format=_TS),
              "last_ts": st.column_config.DatetimeColumn("Last active (UTC)", format=_TS)}
    render.table(shown, key="history.runs", hide_index=True, column_config=config)
    render.download(history.runs, render.file_name("subgraph_runs", history.thread_id), key="history.runs_csv",
                    headers=config)  # fmt: skip
    st.caption("Each run is also shown under the message that started it, in the Branches tab.")


def section(db: DbRef, thread: str, url: state.Url) -> None:
    """The History section of `thread`: a summary line, and (when shown) four tabs. Publishes its URL params."""
    summary = cache.call(model.history_summary, db, thread)
    st.divider()
    st.subheader("History")
    shown = st.toggle(
        f"Show the history: {summary}" if summary else "Show the history", key=url.bind("history", False, state.BOOL),
        help="Every branch as a tree (read any of them as a transcript, with its fork point, edits, removals and "
             "subgraph runs marked), compare with another branch, checkpoint or thread, the edit log, subgraph runs.",
    )  # fmt: skip
    if not shown:
        url.publish()
        return
    branch_key = url.bind("branch", 1, state.INT)
    history = cache.call(model.thread_history, db, thread, int(st.session_state.get(branch_key) or 1))
    if history.problem is not None:
        render.problem(history.problem)
        url.publish()
        return
    st.session_state[branch_key] = history.branch  # a branch the thread lacks (an old link) reads the current one
    st.caption(history.summary + " · every branch, what changed and where, and what subgraphs said")
    branches, compare, edits, runs = st.tabs(["Branches", "Compare with…", "Edit log", "Subgraph runs"])
    with branches:
        _branches_tab(history, url, branch_key)
    with compare:
        _compare_tab(db, history, url)
    with edits:
        _edits_tab(db, history, url)
    with runs:
        _runs_tab(history)
    url.publish()
