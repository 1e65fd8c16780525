"""The review dialogs: annotate, edit or delete an annotation, make a review queue.

A button opens one by putting what it is about in the session (`open_dialog`, its
on_click); `show`, called on every run, draws it until it is saved or dismissed.
So the dialog survives reruns (its own widgets, a reload of the data) and each
opening starts with empty fields (its widget keys carry the opening's number).
"""

from __future__ import annotations

import itertools
from typing import Any

import streamlit as st

from analytics import workspace
from analytics.errors import AnalyticsError
from ui import cache, database, state
from ui.database import DbRef, WsRef
from ui import markup
from ui.formats import plural
from ui.markup import inert
from ui.models.review import VERDICT_MARKS, Note

_OPEN = "rv.dialog"
_counter = itertools.count(1)


def open_dialog(kind: str, **about: Any) -> None:
    """(A button's on_click.) Open dialog `kind` (`annotate`, `edit`, `queue`) about `about`."""
    st.session_state[_OPEN] = {"kind": kind, "n": next(_counter), **about}


def is_open() -> bool:
    """Whether a dialog of this module is open in this session."""
    return bool(st.session_state.get(_OPEN))


def close_dialog() -> None:
    st.session_state.pop(_OPEN, None)


def _done(said: str) -> None:
    from ui import review

    close_dialog()
    review.say(said)
    st.rerun()


def show(db: DbRef) -> None:
    """Draw the open dialog, if any."""
    opened = st.session_state.get(_OPEN)
    if not opened:
        return
    ws = database.workspace_ref(db)
    about = {k: v for k, v in opened.items() if k not in ("kind", "n")}
    {"annotate": _annotate, "edit": _edit, "queue": _queue}[opened["kind"]](db, ws, f"dlg.{opened['n']}", **about)


def _name_field(key: str) -> str | None:
    """The reviewer's name, asked for here when the sidebar has none yet.

    A name typed here stays this field's for as long as the dialog is open: a widget in the
    dialog reruns the dialog alone (a fragment), and the sidebar's field, not drawn again,
    would hand its old empty value back on the next run. `remember_name` makes it the
    sidebar's once the dialog has saved (a run of the whole page follows).
    """
    from ui import review

    name = review.reviewer()
    if name and key not in st.session_state:
        st.caption(f"As **{markup.text(name)}** (change it in the sidebar)")
        return name
    typed = st.text_input("Your name", key=key, max_chars=100, help="Remembered for this browser session")
    return typed.strip() or None


def remember_name(key: str) -> None:
    """Make the name typed in dialog `key`'s name field the sidebar's (`_name_field`)."""
    from ui import review

    typed = (st.session_state.get(key) or "").strip()
    if typed:
        review.set_reviewer(typed)


def refused(label: str) -> str:
    """Why a label typed into the Label box is not taken: it is not in the label set."""
    return (f"“{markup.text(label)}” is not in the label set: pick one from the list, "
            "or add it on the Review page (Labels) first.")


def _content_fields(key: str, labels: list[workspace.Label], note: Note | None = None) -> tuple:
    from ui import review

    offered = [label.name for label in labels if not label.retired]
    if note is not None and note.label and note.label not in offered:
        offered.append(note.label)  # a retired label stays on the annotation that carries it
    colors = {label.name: label.color for label in labels}
    # A typed name is taken as the box's value (the browser shows it as chosen), then refused here
    # at once if the set lacks it, and Save refuses it too (`refused`): the box never shows a label
    # that Save would silently drop.
    label = st.selectbox(
        "Label", offered, index=offered.index(note.label) if note and note.label else None, key=f"{key}.label",
        placeholder="no label", help="The label set is edited on the Review page (Labels)",
        accept_new_options=True,
    )
    if label and label not in offered:
        st.error(refused(label))
    elif label:
        st.markdown(review.chip(label, colors.get(label)), unsafe_allow_html=True)
    verdict = st.segmented_control(
        "Verdict", list(VERDICT_MARKS), format_func=VERDICT_MARKS.get, key=f"{key}.verdict",
        default=note.verdict if note else None,
    )
    text = st.text_area("Note", value=(note.note or "") if note else "", key=f"{key}.note", max_chars=10_000,
                        placeholder="what is right or wrong here")
    return label, verdict, text.strip() or None


@st.dialog("Annotate", width="medium", on_dismiss=close_dialog)
def _annotate(db: DbRef, ws: WsRef, key: str, where: str, targets: dict[str, dict[str, Any]]) -> None:
    """Annotate one of `targets` ({what it is called: annotate()'s keyword arguments})."""
    from ui import review

    st.markdown(inert(where))
    choice = st.radio("On", list(targets), key=f"{key}.on", horizontal=True) if len(targets) > 1 else next(iter(targets))
    name = _name_field(f"{key}.name")
    label, verdict, text = _content_fields(key, cache.labels(ws))
    if st.button("Save", type="primary", key=f"{key}.save", icon=":material/check:"):
        if not name:
            st.error("Type your name first: it is stamped on the annotation.")
            return
        if label and label not in {x.name for x in cache.labels(ws) if not x.retired}:
            return  # `_content_fields` already says why, above
        try:
            target = dict(targets[choice])
            if target.get("thread_id"):  # the key the page holds (masked in a masking session) → the stored one
                target["thread_id"] = cache.stored_thread(db, target["thread_id"])
            with cache.reading(db) as path:
                made = workspace.annotate(path, **target, label=label, verdict=verdict, note=text,
                                          author=name, workspace=ws.workspace, origin="app")
        except AnalyticsError as exc:
            st.error(str(exc))
            return
        remember_name(f"{key}.name")
        _done(f"Annotated the {made.target}" + (f" · {made.label}" if made.label else ""))


@st.dialog("Edit annotation", width="medium", on_dismiss=close_dialog)
def _edit(db: DbRef, ws: WsRef, key: str, note: Note) -> None:
    from ui import review

    st.markdown(inert(review.note_html(note)), unsafe_allow_html=True)
    name = _name_field(f"{key}.name")
    label, verdict, text = _content_fields(key, cache.labels(ws), note)
    save, delete = st.columns(2)
    try:
        if save.button("Save", type="primary", key=f"{key}.save", icon=":material/check:"):
            if not name:
                st.error("Type your name first.")
                return
            if label and label != note.label and label not in {x.name for x in cache.labels(ws) if not x.retired}:
                return  # `_content_fields` already says why, above
            workspace.edit_annotation(ws.workspace, note.annotation_id, note.revision, label=label, verdict=verdict,
                                      note=text, author=name)
            remember_name(f"{key}.name")
            _done("Annotation saved")
        if delete.button("Delete", key=f"{key}.delete", icon=":material/delete:"):
            workspace.delete_annotation(ws.workspace, note.annotation_id, note.revision)
            _done("Annotation deleted")
    except workspace.Conflict as exc:
        st.warning(f"{markup.text(exc)}. Close this and open it again to see the newer version.")
    except AnalyticsError as exc:
        st.error(str(exc))


@st.dialog("New review queue", width="medium", on_dismiss=close_dialog)
def _queue(db: DbRef, ws: WsRef, key: str, conditions, sort: str, descending: bool, view: dict,
           matching: int) -> None:
    from ui import review

    st.markdown(f"From the **{matching:,}** threads of this view, in its order.")
    name = st.text_input("Queue name", key=f"{key}.name", max_chars=100)
    sample = st.toggle("Take a random sample", key=f"{key}.sampled", value=matching > 20)
    size = seed = None
    if sample:
        left, right = st.columns(2)
        size = left.number_input("Threads", min_value=1, max_value=max(1, matching), value=min(10, matching),
                                 key=f"{key}.size")
        seed = right.number_input("Seed", min_value=0, value=None, step=1, key=f"{key}.seed", placeholder="random",
                                  help="The same view, size and seed give the same threads")
    reviewers = st.text_input("Reviewers", key=f"{key}.reviewers", placeholder="ana, ben (empty: anyone)",
                              help="Items are dealt round-robin to these names")
    author = _name_field(f"{key}.author")
    if st.button("Create queue", type="primary", key=f"{key}.create", icon=":material/playlist_add:"):
        if not author:
            st.error("Type your name first.")
            return
        try:
            with cache.reading(db) as path:
                q = workspace.create_queue(
                    path, name, conditions=conditions, sort=sort, descending=descending,
                    sample=int(size) if sample else None, seed=None if seed is None else int(seed),
                    assignees=[r.strip() for r in reviewers.split(",") if r.strip()], view=view, author=author,
                    workspace=ws.workspace,
                )
        except AnalyticsError as exc:
            st.error(str(exc))
            return
        remember_name(f"{key}.author")
        close_dialog()
        review.say(f"Queue {q.name!r}: {plural(q.items, 'thread')}")
        st.switch_page(review.PAGE_FILES["review"], query_params=state.link_params(queue=str(q.queue_id)))
