"""Session and URL state: the open database and widgets bound to query params.

Every filter of every page lives in the URL, so a copied link opens the same
view. A page binds each widget before drawing it and publishes once after its
widgets:

    url = state.Url("conversations")
    st.multiselect("Tenant", options, key=url.bind("tenant", [], state.LIST))
    ...
    url.publish()   # the URL now holds every non-default value

`bind` initialises the widget from the URL on a page's first run, and again
whenever the URL changed behind the widget's back (back/forward, an edited or
pasted link, `st.switch_page(..., query_params=...)`); otherwise the widget's
own value wins and `publish` writes it back. Values equal to their default are
left out of the URL to keep links short.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import streamlit as st

from ui import database
from ui.database import DbRef

DB_KEY = "tl.db"  # session: path of the open database
DB_PARAM = "db"  # URL: name of a database in the loads folder (never a path)
_SEEN = "tl.url_seen"  # session: {param: raw URL values last read or written}
_PROBLEM = "tl.db_problem"
_demo_lock = threading.Lock()


# --- codecs: URL strings <-> widget values -----------------------------------------


@dataclass(frozen=True)
class Codec:
    decode: Callable[[list[str]], Any]  # raises ValueError on a bad value
    encode: Callable[[Any], list[str]]


def _last(raw: list[str]) -> str:
    return raw[-1]


TEXT = Codec(_last, lambda v: [v] if v else [])
LIST = Codec(list, lambda v: [str(x) for x in v or ()])
INT = Codec(lambda raw: int(_last(raw)), lambda v: [] if v is None else [str(int(v))])
FLOAT = Codec(lambda raw: float(_last(raw)), lambda v: [] if v is None else [f"{float(v):g}"])
BOOL = Codec(lambda raw: _last(raw).lower() in ("1", "true", "yes", "on"), lambda v: ["1"] if v else [])
DATE = Codec(lambda raw: date.fromisoformat(_last(raw)), lambda v: [v.isoformat()] if v else [])


def choice(options: tuple[str, ...]) -> Codec:
    """A value that must be one of `options` (anything else in the URL is ignored)."""

    def decode(raw: list[str]) -> str:
        value = _last(raw)
        if value not in options:
            raise ValueError(value)
        return value

    return Codec(decode, lambda v: [v] if v else [])


class Url:
    """Query-param bindings of one page; widget keys are `<page>.<param>`."""

    def __init__(self, page: str) -> None:
        self.page = page
        self._bound: dict[str, tuple[Any, Codec]] = {}

    def key(self, param: str) -> str:
        return f"{self.page}.{param}"

    def bind(self, param: str, default: Any, codec: Codec = TEXT) -> str:
        """Make sure the widget keyed `<page>.<param>` starts from the URL; return that key."""
        key = self.key(param)
        self._bound[param] = (default, codec)
        raw = st.query_params.get_all(param)
        seen = st.session_state.setdefault(_SEEN, {})
        if key not in st.session_state or seen.get(param) != raw:
            try:
                value = codec.decode(raw) if raw else default
            except (ValueError, TypeError):
                value = default  # a hand-edited link with a bad value falls back, it does not crash the page
            st.session_state[key] = value
            seen[param] = raw
        return key

    def value(self, param: str) -> Any:
        return st.session_state.get(self.key(param))

    def set(self, param: str, value: Any) -> None:
        """Change a bound value from code (before its widget is drawn in this run)."""
        st.session_state[self.key(param)] = value

    def publish(self) -> None:
        """Write every bound value to the URL (defaults removed); only what changed is sent."""
        seen = st.session_state.setdefault(_SEEN, {})
        for param, (default, codec) in self._bound.items():
            value = st.session_state.get(self.key(param), default)
            raw = [] if value == default else codec.encode(value)
            if st.query_params.get_all(param) != raw:
                if raw:
                    st.query_params[param] = raw if len(raw) > 1 else raw[0]
                elif param in st.query_params:
                    del st.query_params[param]
            seen[param] = raw

    def drop(self, *params: str) -> None:
        """Remove params this view does not use right now (e.g. the other mode's inputs) from the URL."""
        seen = st.session_state.setdefault(_SEEN, {})
        for param in params:
            if param in st.query_params:
                del st.query_params[param]
            seen[param] = []

    def params(self) -> dict[str, list[str] | str]:
        """The bound values as query params (for a link to this view from elsewhere)."""
        out: dict[str, list[str] | str] = {}
        for param, (default, codec) in self._bound.items():
            value = st.session_state.get(self.key(param), default)
            raw = [] if value == default else codec.encode(value)
            if raw:
                out[param] = raw if len(raw) > 1 else raw[0]
        return out


# --- the open database ----------------------------------------------------------------


def _default_db() -> Path:
    configured = database.configured_db()
    if configured is not None:
        return configured
    with _demo_lock:  # one build per process even when several sessions start at once
        return database.ensure_demo_db()


def current_db() -> DbRef | None:
    """The database this session reads (initialised from the URL, the command line, env, or the demo)."""
    raw = st.query_params.get_all(DB_PARAM)
    seen = st.session_state.setdefault(_SEEN, {})
    if raw and seen.get(DB_PARAM) != raw:
        seen[DB_PARAM] = raw
        linked = database.from_linkable_name(raw[-1])
        if linked is not None:
            st.session_state[DB_KEY] = str(linked)
        else:
            st.session_state[_PROBLEM] = (
                f"The link names a database ({raw[-1]!r}) that is not here; showing the default."
            )
    if DB_KEY not in st.session_state:
        try:
            st.session_state[DB_KEY] = str(_default_db())
        except Exception as exc:  # noqa: BLE001 — the app must still start and offer "load a source"
            st.session_state[_PROBLEM] = f"No database open: {exc}"
            return None
    try:
        db = database.ref(st.session_state[DB_KEY])
    except FileNotFoundError:
        st.session_state[_PROBLEM] = f"No Transcript Lens database at {st.session_state[DB_KEY]}"
        return None
    _publish_db(db)
    return db


def _publish_db(db: DbRef) -> None:
    # Only loads-folder databases are linkable; a URL never carries a filesystem path.
    name = database.linkable_name(db.path)
    raw = [name] if name else []
    if st.query_params.get_all(DB_PARAM) != raw:
        if name:
            st.query_params[DB_PARAM] = name
        elif DB_PARAM in st.query_params:
            del st.query_params[DB_PARAM]
    st.session_state.setdefault(_SEEN, {})[DB_PARAM] = raw


def open_db(path: str | Path) -> DbRef:
    """Make `path` the session's database (the caller has checked it is one)."""
    st.session_state[DB_KEY] = str(Path(path).resolve())
    st.session_state.pop(_PROBLEM, None)
    db = database.ref(path)
    _publish_db(db)
    return db


def db_problem() -> str | None:
    return st.session_state.get(_PROBLEM)


def take_db_problem() -> str | None:
    """The problem to show once (e.g. a link naming a database that is not here)."""
    return st.session_state.pop(_PROBLEM, None)


def router_guard() -> None:
    """Make sure a page runs inside app.py's router (sidebar and navigation included).

    Streamlit treats an app with a `pages/` folder as a v1 multipage app until
    some session runs `st.navigation`; so the first request of a fresh server
    that is a deep link (/transcript?thread=…) runs the page file alone. Switching
    to v2 and rerunning lands on the same page (v1 and v2 page ids both hash the
    url path, which is the file stem) with the same query params.
    """
    from streamlit.runtime.pages_manager import PagesManager  # pinned streamlit 1.67 internals

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def require_db() -> DbRef:
    """The open database, or an error and a stopped page when there is none.

    Every page calls this first (it also puts the page under the router)."""
    router_guard()
    db = current_db()
    if db is None:
        st.error(db_problem() or "No database is open.")
        st.info("Load a checkpoint store from the sidebar (**Load a source**).")
        st.stop()
    return db


def link_params(**params: Any) -> dict[str, Any]:
    """Query params for `st.switch_page`, keeping the open database in the link."""
    db = st.session_state.get(DB_KEY)
    name = database.linkable_name(db) if db else None
    out = {k: v for k, v in params.items() if v not in (None, "", [], ())}
    if name:
        out[DB_PARAM] = name
    return out


def subset(options: tuple[str, ...] | list[str]) -> Codec:
    """A list whose values must be among `options` (unknown values in a link are dropped)."""
    allowed = set(options)
    return Codec(lambda raw: [v for v in raw if v in allowed], LIST.encode)


def first_page_on_new_question(page_key: str, question: Any) -> int:
    """The page to show: back to 1 when `question` (filters, sort, …) differs from the
    last run's, else the page the user is on (`page_key`, bound to the URL)."""
    seen = f"{page_key}.question"
    if st.session_state.get(seen, question) != question:
        st.session_state[page_key] = 1
    st.session_state[seen] = question
    return st.session_state[page_key]
