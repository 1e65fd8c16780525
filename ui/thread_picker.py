"""The thread picker: pick from the recent threads, narrow them by text, or type any thread id.

The list holds the most recent threads (or those the "Find threads" text matches in
their id, key parts or messages); a thread id typed into the picker and confirmed with
Enter is looked up however many threads the database holds. An id that is not there
says so and lists the threads that contain it.

>>> thread = thread_picker(url, db)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from analytics.masking import mask_text
from ui import cache, flow, markup, state
from ui.database import DbRef


#: What a page says of a stored thread id in a masking session's URL (never the id itself).
RAW_ID_REFUSED = ("This link names a thread by its stored id, which holds personal data: with masking on, a thread "
                  "opens only by its masked id, as the app shows it. Pick it from the list.")


def refuse_raw_thread(key: str) -> bool:
    """In a masking session, a thread id bound to `key` (from the URL or typed) that is a stored
    id holding a personal value is refused: the page says so without echoing it and forgets it,
    so nothing opens it and the address bar drops it (`RAW_ID_REFUSED`). A masked id — what the
    app shows, which it maps back to the thread — and an id holding no personal value (its own
    masked form) pass. True when refused."""
    wanted = st.session_state.get(key)
    if not isinstance(wanted, str) or mask_text(wanted) == wanted:
        return False
    st.warning(RAW_ID_REFUSED)
    st.session_state[key] = None
    return True


def thread_picker(url: state.Url, db: DbRef, label: str = "Thread",
                  on_missing: Callable[[str], None] | None = None) -> str | None:
    """Draw the picker and the find box (bound to `thread` and `find`); the picked thread id or None.
    `on_missing(id)` draws more under the warning about a thread that is not there (what the
    review workspace still holds of it)."""
    key = url.bind("thread", None)
    find_key = url.bind("find", "")
    refuse_raw_thread(key)
    wanted = st.session_state.get(key)
    choices = cache.thread_choices(db, st.session_state.get(find_key) or "", wanted)
    labels = dict(zip(choices["thread_id"], choices["label"]))
    if wanted is not None and wanted not in labels:
        # As a masking session may show it: a stored key typed or linked is not echoed (nor searched for)
        # when it holds a personal value; the thread opens by the masked key the app shows.
        echo = mask_text(wanted)
        st.warning(f"No thread {markup.code(echo)} in this database; the list shows threads that contain that text.")
        if on_missing is not None:
            on_missing(wanted)
        st.session_state[key] = None
        st.session_state[find_key] = echo  # before the box is drawn: the list narrows to near matches
        choices = cache.thread_choices(db, echo, None)
        labels = dict(zip(choices["thread_id"], choices["label"]))
    pick, find = flow.row(("wide", "field"), "thread-picker")
    find.text_input("Find threads", key=find_key, placeholder="id, tenant or text in a message",
                    help="Narrows the list to threads whose id, tenant or messages contain this text")
    return pick.selectbox(
        label, list(labels), key=key, index=None, format_func=lambda t: labels.get(t, t), accept_new_options=True,
        placeholder="Pick a thread, or type its id and press Enter…",
        help="The list holds recent threads (or those the find box matches); any thread id typed here is found.",
    )
