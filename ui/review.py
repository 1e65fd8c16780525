"""The review workspace in the app: the reviewer's name, annotation chips and the annotate /
edit dialogs, the Conversations review filters, columns and queue dialog, the Overview's
review numbers, and saved views in the sidebar.

Pages call one function each (`notes`, `annotate_button`, `orphans`, `review_filters`,
`review_columns`, `queue_button`, `overview_numbers`); the data comes through `ui.cache`
(keyed by the workspace's revision) and every write through `analytics.workspace`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote, unquote, urlencode

import pandas as pd
import streamlit as st

from analytics import workspace
from analytics.errors import AnalyticsError
from analytics.filters import Filters
from analytics.workspace.views import LEFT_OUT
from ui import cache, chat, database, flow, nav, render, review_dialogs, state
from ui.database import DbRef, WsRef
from ui.formats import plural
from ui import markup
from ui.markup import inert
from ui.models.chat import MessageItem
from ui.models.review import NO_COLOR, VERDICT_MARKS, Note

REVIEWER_KEY = "tl.reviewer"
#: The browser-session cookie that remembers the reviewer's name (no expiry: gone when the browser closes).
COOKIE = "tl_reviewer"
_SET_COOKIE = "tl.reviewer.set"
_PENDING = "tl.reviewer.pending"
_FLASH = "tl.review.flash"
#: The app's pages by URL path, for links to a saved view (`page_link` takes the file): every page
#: of the navigation (`ui.nav.PAGES`), so a view saved or shared on any page opens that page.
PAGE_FILES = {p.url_path: p.file for p in nav.PAGES}


def workspace_of(db: DbRef) -> WsRef:
    """The open database's review workspace as of now (`database.workspace_ref`)."""
    return database.workspace_ref(db)


# --- who is reviewing -------------------------------------------------------------------


def reviewer() -> str | None:
    """The name this browser session annotates as (typed once, remembered in a session cookie)."""
    if _PENDING in st.session_state:  # typed in a dialog: taken before the sidebar's field is drawn
        st.session_state[REVIEWER_KEY] = st.session_state.pop(_PENDING)
        _remember_name()
    if REVIEWER_KEY not in st.session_state:
        try:
            remembered = st.context.cookies.get(COOKIE)
        except Exception:  # noqa: BLE001 — no browser (a bare script run): nothing remembered
            remembered = None
        st.session_state[REVIEWER_KEY] = unquote(remembered)[:100] if isinstance(remembered, str) else ""
    return (st.session_state[REVIEWER_KEY] or "").strip() or None


def _remember_name() -> None:
    st.session_state[_SET_COOKIE] = True


def set_reviewer(name: str) -> None:
    """Take `name` as this session's reviewer from the next run on (typed in a dialog)."""
    st.session_state[_PENDING] = name.strip()


def reviewer_input() -> None:
    """The sidebar's name field; a change is written to the browser-session cookie."""
    reviewer()
    st.text_input(
        "Reviewer", key=REVIEWER_KEY, on_change=_remember_name, placeholder="your name", max_chars=100,
        help="Stamped on the annotations you make; remembered in this browser until it is closed.",
    )
    if st.session_state.pop(_SET_COOKIE, False):
        value = quote(st.session_state[REVIEWER_KEY].strip())
        st.html(f"<script>document.cookie = '{COOKIE}={value}; path=/; SameSite=Lax';</script>",
                unsafe_allow_javascript=True, width="content")


# --- chips and notes ----------------------------------------------------------------------


def _text_color(color: str) -> str:
    """Black or white, whichever reads on `color` (#rrggbb).

    >>> _text_color("#ffeb3b"), _text_color("#1565c0")
    ('#000', '#fff')
    """
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"


def chip(text: str, color: str | None) -> str:
    """A label as a coloured chip (HTML; the text escaped, the colour a checked #rrggbb)."""
    color = color or NO_COLOR
    return (f'<span style="background:{color};color:{_text_color(color)};border-radius:0.7rem;'
            f'padding:0.05rem 0.55rem;margin-right:0.3rem;font-size:0.8rem;white-space:nowrap">'
            f"{html.escape(text)}</span>")


_VERDICT_COLORS = {"pass": "#2e7d32", "fail": "#c62828"}


def note_html(note: Note) -> str:
    """One annotation on one line: its label chip, verdict, note, who and when."""
    parts = []
    if note.label:
        parts.append(chip(note.label, note.color))
    if note.verdict:
        parts.append(f'<b style="color:{_VERDICT_COLORS[note.verdict]}">{VERDICT_MARKS[note.verdict]}</b>')
    if note.note:
        parts.append(html.escape(note.note).replace("\n", "<br>"))
    edited = " (edited)" if note.revision > 1 else ""
    parts.append(f'<span style="opacity:0.6;font-size:0.8rem">— {html.escape(note.author)}, {note.when()}{edited}</span>')
    return " ".join(parts)


def notes(found: list[Note], key: str) -> None:
    """Annotations, one per line, each with an edit button."""
    for note in found:
        text, edit = st.columns([20, 1], vertical_alignment="center")
        text.markdown(inert(note_html(note)), unsafe_allow_html=True)
        edit.button("Edit or delete this annotation", icon=":material/edit:", key=f"{key}.edit.{note.annotation_id}", type="tertiary",
                    help="Edit or delete this annotation", on_click=review_dialogs.open_dialog, args=("edit",),
                    kwargs={"note": note})


def say(text: str) -> None:
    """Confirm a write on the next run (`flash`), after the rerun that shows it."""
    st.session_state[_FLASH] = text


def flash() -> None:
    """The last write's confirmation (set before the rerun that shows it)."""
    said = st.session_state.pop(_FLASH, None)
    if said:
        st.toast(said, icon=":material/check_circle:")


def annotate_button(key: str, where: str, targets: Mapping[str, Mapping[str, Any]], label: str = "Annotate") -> None:
    """A small button opening the annotate dialog for `targets` ({what it is called: annotate()'s arguments})."""
    st.button(label, key=key, icon=":material/edit_note:", type="tertiary", on_click=review_dialogs.open_dialog,
              args=("annotate",), kwargs={"where": where, "targets": dict(targets)})


def annotate_icon(key: str, where: str, targets: Mapping[str, Mapping[str, Any]], help: str) -> None:
    """An icon-only button opening the annotate dialog (`annotate_button`): one per message, in its
    header line, so a transcript is not lengthened by a row of buttons. Its label is `help`, hidden
    on screen (`markup.icon_buttons`) and read by a screen reader as the button's name."""
    st.button(help, key=key, icon=":material/rate_review:", type="tertiary", help=help,
              on_click=review_dialogs.open_dialog, args=("annotate",),
              kwargs={"where": where, "targets": dict(targets)})


def _message_targets(thread_id: str, item: MessageItem) -> dict[str, dict[str, Any]]:
    on = {"thread_id": thread_id, **({"message_id": item.message_id} if item.message_id else {"ordinal": item.ordinal})}
    targets = {"this message": on}
    if item.checkpoint_id:
        targets["the checkpoint that saved it"] = {"thread_id": thread_id, "checkpoint_id": item.checkpoint_id}
    return targets


def _excerpt(text: Any, chars: int = 80) -> str:
    text = "" if render.is_missing(text) else " ".join(str(text).split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _quoted(item: MessageItem) -> str:
    """What the dialog quotes of a message: its text, or for one that only calls tools, its calls
    as the transcript shows them (`name(arg=…)`)."""
    if not render.is_missing(item.content) and str(item.content).strip():
        return _excerpt(item.content)
    return _excerpt(" · ".join(call.signature for call in item.tool_calls))


def _messages(items: Sequence[Any]) -> list[MessageItem]:
    """The messages chat items show, tool results drawn beneath their call included, in order."""
    found = []
    for item in items:
        if isinstance(item, MessageItem):
            found.append(item)
            found += [c.result for c in item.tool_calls if c.result is not None]
    return found


def thread_review(db: DbRef, ws: WsRef, thread_id: str, items: Sequence[Any],
                  key: str = "review") -> chat.Hooks:
    """Draw the thread's review box (its own annotations, "Annotate thread"); return the hooks
    `ui.chat.draw` calls in each message of `items`: an annotate icon in its header line, and its
    annotations beneath.

    >>> chat.draw(items, extra=thread_review(db, ws, thread, items))  # doctest: +SKIP
    """
    key = f"rv.{key}"  # (never a page's own `<page>.<param>` widget key)
    found = cache.thread_annotations(db, ws, thread_id)
    shown = _messages(items)
    # A checkpoint's annotations go with the first shown message it saved; the others with the thread.
    first_of: dict[str, int] = {}
    for item in shown:
        if item.checkpoint_id:
            first_of.setdefault(item.checkpoint_id, item.ordinal)
    unplaced = [n for cp, ns in found.by_checkpoint.items() if cp not in first_of for n in ns]
    drawn = {item.ordinal for item in shown}
    with st.container(border=True, key=f"{key.replace('.', '-')}-thread"):  # (class st-key-…: tests find it)
        hidden = sum(len(ns) for o, ns in found.by_ordinal.items() if o not in drawn)
        with st.container(horizontal=True, vertical_alignment="center"):  # (the button as wide as its label)
            st.markdown("**Review of this thread**" + (f" · {plural(hidden, 'annotation')} on messages not shown here"
                                                        if hidden else ""), width="stretch")
            annotate_button(f"{key}.thread", f"Thread {markup.code(render.thread_label(thread_id))}",
                            {"the thread": {"thread_id": thread_id}},
                            label="Annotate thread")
        notes([*found.thread, *unplaced], f"{key}.t")
        if not found.thread and not unplaced:
            st.caption("No annotation on the thread itself.")

    def after(item: MessageItem) -> None:  # beneath the message: its annotations, if any
        here = list(found.by_ordinal.get(item.ordinal, []))
        if item.checkpoint_id and first_of.get(item.checkpoint_id) == item.ordinal:
            here += found.by_checkpoint.get(item.checkpoint_id, [])
        notes(here, f"{key}.m{item.ordinal}")

    def control(item: MessageItem) -> None:  # at the end of its header line: one small button
        annotate_icon(f"{key}.m{item.ordinal}.add", f"**{markup.text(item.speaker)}** · Message {item.number}: "
                      f"“{markup.text(_quoted(item))}”", _message_targets(thread_id, item),
                      "Annotate this tool result" if item.role == "tool" else "Annotate this message")

    return chat.Hooks(header=control, after=after)


def orphans(db: DbRef, ws: WsRef, thread_id: str) -> None:
    """The thread's orphaned annotations (under its transcript): kept, and said why."""
    found = cache.thread_annotations(db, ws, thread_id).orphaned
    if not found:
        return
    with st.expander(f"{plural(len(found), 'orphaned annotation')} "
                     "(what they were on is gone after a reload)", icon=":material/link_off:"):
        for note in found:
            st.markdown(inert(f"On {note.where()} — **{note.orphan_reason}**"))
            if note.excerpt:
                st.caption(f"It read: “{markup.text(note.excerpt)}”")
            st.markdown(inert(note_html(note)), unsafe_allow_html=True)


def orphan_table(db: DbRef, ws: WsRef, thread_id: str | None = None, expanded: bool = False) -> None:
    """The orphaned annotations of the workspace (or of one thread that is gone) as a table."""
    rows = cache.orphaned(db, ws, thread_id)
    if rows.empty:
        return
    with st.expander(f"Orphaned annotations ({len(rows):,})", icon=":material/link_off:", expanded=expanded):
        st.caption("Kept, never dropped: what they were on is not in the database after a reload (another source, "
                   "a thread erased, a message removed). `excerpt` is the message as it was when annotated.")
        render.table(rows, hide_index=True, key=f"rv.orphans.{thread_id or 'all'}",
                     column_config={"orphan_reason": st.column_config.TextColumn("Why"),
                                    "thread_id": st.column_config.TextColumn("Thread", pinned=True)})


# --- Conversations ------------------------------------------------------------------------


def review_filters(url: state.Url, ws: WsRef, filters: Filters) -> Filters:
    """"Has label" and "Failed review" (bound to the URL); `filters` narrowed to the threads they keep."""
    names = tuple(label.name for label in cache.labels(ws))
    left, right = flow.row(("field", "control"), "review-filters", align="bottom")
    chosen = left.multiselect("Has label", names, key=url.bind("label", [], state.subset(names)),
                              placeholder="any or no label",
                              help="Threads carrying every chosen label (on the thread, a message or a checkpoint)")
    failed = right.checkbox("Failed review", key=url.bind("failed", False, state.BOOL),
                            help="Threads with a fail verdict on the thread or any of its messages")
    if not chosen and not failed:
        return filters
    return replace(filters, within=cache.threads_with(ws, tuple(chosen), bool(failed)))


def review_columns(shown: pd.DataFrame, config: dict, thread_ids: pd.Series, db: DbRef, ws: WsRef
                   ) -> tuple[pd.DataFrame, dict]:
    """The Conversations table with its Labels and Review columns (after the thread and the question)."""
    cells = cache.review_columns(db, ws, tuple(thread_ids))
    out = shown.copy()
    at = list(out.columns).index("first_user_message") + 1
    out.insert(at, "review", cells["review"].to_numpy())
    out.insert(at, "labels", cells["labels"].to_numpy())
    config = {**config, "labels": st.column_config.TextColumn("Labels", help="Review labels on the thread or its "
                                                               "messages"),
              "review": st.column_config.TextColumn("Review", help="✗ fail / ✓ pass verdicts, notes")}
    return out, config


def queue_button(conditions: Filters, sort: str, descending: bool, view: dict, matching: int) -> None:
    st.button("Review queue…", key="conversations.queue", icon=":material/playlist_add_check:",
              disabled=matching == 0, help="Make a review queue of these threads (all, or a random sample)",
              on_click=review_dialogs.open_dialog, args=("queue",),
              kwargs={"conditions": conditions, "sort": sort, "descending": descending, "view": view,
                      "matching": matching})


# --- Overview -----------------------------------------------------------------------------


def overview_numbers(db: DbRef, ws: WsRef, filters: Filters) -> None:
    """The review numbers of the threads in scope, and the count per label in its colour."""
    counts = cache.review_counts(db, ws, filters)
    st.subheader("Review")
    if counts.annotations == 0 and counts.orphaned == 0:
        st.caption("No annotations yet: annotate threads and messages in the Transcript explorer, or walk a "
                   "review queue (Review).")
        return
    cols = st.columns(5)
    tiles = [
        ("Annotated threads", counts.threads, "Threads in scope with at least one annotation"),
        ("Annotations", counts.annotations, "On the threads in scope, their messages and checkpoints"),
        ("Pass", counts.passes, "Pass verdicts"),
        ("Fail", counts.fails, f"Fail verdicts, on {plural(counts.failed_threads, 'thread')}"),
        ("Orphaned", counts.orphaned, "Annotations whose thread, message or checkpoint is gone after a reload "
                                      "(whole workspace)"),
    ]
    for col, (label, value, help_text) in zip(cols, tiles):
        col.metric(label, f"{value:,}", help=help_text, border=True)
    if not counts.by_label.empty:
        st.markdown(" ".join(chip(f"{r.label} · {r.annotations}", r.color) for r in counts.by_label.itertuples()),
                    unsafe_allow_html=True)


# --- the sidebar: name and saved views ----------------------------------------------------


def share_link(page: str, params: Mapping[str, list[str]]) -> str:
    """The full address of `page` with `params` (and the open database), as this browser reaches the app."""
    try:
        here = st.context.url
    except Exception:  # noqa: BLE001 — no browser (a bare script run)
        here = None
    query = urlencode({**params, **_db_param()}, doseq=True)
    return f"{app_address(here if isinstance(here, str) else '')}/{page}" + (f"?{query}" if query else "")


def app_address(here: str) -> str:
    """The app's base address from the address of the page the browser shows (its query left out).

    >>> app_address("http://host:8501/compare"), app_address("http://host:8501/"), app_address("http://h/app/home")
    ('http://host:8501', 'http://host:8501', 'http://h/app')
    """
    base = here.split("?", 1)[0].rstrip("/")
    for path in (*PAGE_FILES, "home"):  # the current page's own path is not part of the app's base address
        if base.endswith("/" + path):
            return base[: -len(path) - 1]
    return base


def _db_param() -> dict[str, str]:
    return {k: v for k, v in state.link_params().items() if k == state.DB_PARAM}


def sidebar(db: DbRef | None, page: str) -> None:
    """The reviewer's name, the saved views (links) and saving or sharing the current view; and
    the review dialog a button opened, if any (drawn on every run until saved or dismissed)."""
    if db is None:
        return
    _sidebar(db, page)
    review_dialogs.show(db)


def _sidebar(db: DbRef, page: str) -> None:
    with st.sidebar:
        st.subheader("Review")
        reviewer_input()
        ws = database.workspace_ref(db)
        try:
            saved = workspace.saved_views(ws.workspace)
        except AnalyticsError as exc:
            st.warning(str(exc))
            return
        with st.expander(f"Saved views ({len(saved)})", icon=":material/bookmarks:", expanded=False):
            for view in saved:
                st.page_link(PAGE_FILES.get(view.page, PAGE_FILES["overview"]), label=view.name,
                             icon=":material/bookmark:", query_params={**view.params, **_db_param()},
                             help=f"{view.page} · {view.query_string() or 'no filters'} · by {view.created_by}")
            if not saved:
                st.caption("No saved views yet.")
            params = {k: v for k, v in state.params_now(page).items() if k not in LEFT_OUT}
            name = st.text_input("Save this view as", key="views.name", max_chars=100, placeholder="a name")
            replace_it = st.checkbox("Replace a view of that name", key="views.replace")
            if st.button("Save view", key="views.save", icon=":material/bookmark_add:", disabled=not name.strip()):
                try:
                    workspace.save_view(ws.workspace, name, page, params, author=reviewer() or "app",
                                        replace=replace_it)
                except AnalyticsError as exc:
                    st.error(str(exc))
                else:
                    say(f"Saved the view {name.strip()!r}")
                    st.rerun()
            # A text box, not st.code: a code block makes the browser load and compile Streamlit's syntax
            # highlighter (1.5 MB of JavaScript, 0.3-1.2 s of main thread on a busy machine) on every page's
            # first render, for a link inside a folded expander.
            st.text_input("Link to this view (copy to share)", share_link(page, params),
                          help="Select it and copy: the address of this page with its filters and the open database")
