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
left out of the URL to keep links short; so a list the user cleared where the
default is not empty (Compare's model pair) is a param present with no value
(`?a_model=`, `EMPTY`), which reads back as the empty list wherever the URL
goes: the session's page params, the navigation, share links and saved views.

One view, one history entry: `publish` sends the whole query string once (the
browser adds a history entry per change Streamlit sends), so browser Back goes
to the previous view, whose URL restores it.

State that travels: the shared filters (`SHARED`: tenant, sub-tenant, days,
text) a page binds are remembered for the session, and so is every page's last
URL; the navigation (`ui.nav`) links each page with its own last params, the
current shared filters and the open database (`nav_params`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from ui import database
from ui.database import DbRef

DB_KEY = "tl.db"  # session: path of the open database
DB_PARAM = "db"  # URL: the name the server knows the open database by (never a path); absent: the default
#: URL params of the filter bar shared by the pages: they carry from page to page.
SHARED = ("tenant", "sub", "from", "to", "q")
_SEEN = "tl.url_seen"  # session: {"<page>.<param>": raw URL values last read or written}
_PROBLEM = "tl.db_problem"
_PENDING = "tl.url_pending"  # session: {param: raw values} to write with the next publish
_DB_NAMES = "tl.db_names"  # session, this run only: {database path: its URL name} (see `new_run`)
_SHARED_VALUES = "tl.shared"  # session: {shared param: raw values last published}
_PAGE_PARAMS = "tl.page_params"  # session: {page: its query params when last published}
_BINDINGS = "tl.bindings"  # session: {page: {param: (default, codec)}} as that page last bound them
_demo_lock = threading.Lock()


# --- codecs: URL strings <-> widget values -----------------------------------------


#: The URL's spelling of a list the user cleared: the param present with no value (`?model=`).
#: Absent means the page's default, which for some lists is not empty (Compare's model pair).
EMPTY = ""


@dataclass(frozen=True)
class Codec:
    decode: Callable[[list[str]], Any]  # raises ValueError on a bad value
    encode: Callable[[Any], list[str]]
    clearable: bool = False  # a value that encodes to nothing and is not the default is written as `EMPTY`

    def to_url(self, value: Any, default: Any) -> list[str]:
        """`value`'s URL values: none for the default, `[EMPTY]` for a cleared value of a clearable codec.

        >>> LIST.to_url([], ["gpt-4o"]), LIST.to_url(["gpt-4o"], ["gpt-4o"]), LIST.to_url(["a", "b"], [])
        ([''], [], ['a', 'b'])
        """
        if value == default:
            return []
        raw = self.encode(value)
        return raw if raw or not self.clearable else [EMPTY]

    def from_url(self, raw: list[str]) -> Any:
        """The value of a param the URL holds (`raw` not empty); raises ValueError on a bad value.

        >>> LIST.from_url([EMPTY]), LIST.from_url(["a", "b"])
        ([], ['a', 'b'])
        """
        return self.decode([] if self.clearable and raw == [EMPTY] else raw)


def _last(raw: list[str]) -> str:
    return raw[-1]


TEXT = Codec(_last, lambda v: [v] if v else [])
LIST = Codec(list, lambda v: [str(x) for x in v or ()], clearable=True)
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
        self._absent: dict[str, Callable[[Any], Any]] = {}
        self._dropped: set[str] = set()

    def key(self, param: str) -> str:
        return f"{self.page}.{param}"

    def bind(
        self, param: str, default: Any, codec: Codec = TEXT, absent: Callable[[Any], Any] | None = None
    ) -> str:
        """Make sure the widget keyed `<page>.<param>` starts from the URL; return that key.

        `absent(query_params)`, when given, is the value to take when the URL lacks
        `param` (an older link's spelling of it); else `default`.
        """
        key = self.key(param)
        self._bound[param] = (default, codec)
        if absent is not None:
            self._absent[param] = absent
        raw = st.query_params.get_all(param)
        seen = st.session_state.setdefault(_SEEN, {})
        if key not in st.session_state or seen.get(key) != raw:
            try:
                value = codec.from_url(raw) if raw else (absent(st.query_params) if absent else default)
            except (ValueError, TypeError):
                value = default  # a hand-edited link with a bad value falls back, it does not crash the page
            st.session_state[key] = value
            seen[key] = raw
        return key

    def value(self, param: str) -> Any:
        return st.session_state.get(self.key(param))

    def set(self, param: str, value: Any) -> None:
        """Change a bound value from code (before its widget is drawn in this run)."""
        st.session_state[self.key(param)] = value

    def _raw(self, param: str) -> list[str]:
        default, codec = self._bound[param]
        return codec.to_url(st.session_state.get(self.key(param), default), default)

    def publish(self) -> None:
        """Write every bound value to the URL (defaults removed) in one change, so the browser
        keeps one history entry per view; remember the page's params and the shared filters.

        A param bound with `absent` is left out when the rest of the URL already implies its value."""
        seen = st.session_state.setdefault(_SEEN, {})
        wanted = {param: self._raw(param) for param in self._bound if param not in self._absent}
        wanted.update({param: [] for param in self._dropped})
        implied = {k: v for k, v in wanted.items() if v}
        for param, absent in self._absent.items():
            default, codec = self._bound[param]
            value = st.session_state.get(self.key(param), default)
            wanted[param] = codec.to_url(value, absent(implied))
        for param, raw in wanted.items():
            seen[self.key(param)] = raw
        params = _write(wanted)
        st.session_state.setdefault(_PAGE_PARAMS, {})[self.page] = params
        st.session_state.setdefault(_BINDINGS, {})[self.page] = dict(self._bound)
        shared = st.session_state.setdefault(_SHARED_VALUES, {})
        for param in SHARED:
            if param in self._bound:
                shared[param] = wanted[param]

    def drop(self, *params: str) -> None:
        """Leave params this view does not use right now (e.g. the other mode's inputs) out of the URL."""
        seen = st.session_state.setdefault(_SEEN, {})
        for param in params:
            self._dropped.add(param)
            self._bound.pop(param, None)
            seen[self.key(param)] = []

    def params(self) -> dict[str, list[str] | str]:
        """The bound values as query params (for a link to this view from elsewhere)."""
        out: dict[str, list[str] | str] = {}
        for param in self._bound:
            raw = self._raw(param)
            if raw:
                out[param] = raw if len(raw) > 1 or raw == [EMPTY] else raw[0]  # (a cleared list stays a list)
        return out


def _write(changes: dict[str, list[str]]) -> dict[str, list[str]]:
    """Apply `changes` (and any pending ones) to the URL as one query string; return the params it then has."""
    current = {k: st.query_params.get_all(k) for k in st.query_params}
    wanted = {**current, **st.session_state.pop(_PENDING, {}), **changes}
    wanted = {k: v for k, v in wanted.items() if v}
    if wanted != current:
        st.query_params.from_dict({k: v if len(v) > 1 else v[0] for k, v in wanted.items()})
    return wanted


def flush() -> None:
    """Write what is still pending (e.g. the open database, on a page that stopped before publishing)."""
    if st.session_state.get(_PENDING):
        _write({})


def params_now(page: str) -> dict[str, list[str]]:
    """The params of `page` as this run shows them, for what is drawn before the page runs (the
    sidebar's share link and saved view): the URL lags a widget change by one run."""
    return _now(page)


def _now(page: str) -> dict[str, list[str]]:
    """The params of `page` as this run will show them, before the page has run: what the URL
    says, except where a widget changed since (the same rule as `Url.bind`)."""
    url = {k: st.query_params.get_all(k) for k in st.query_params}
    out = dict(url)
    seen = st.session_state.get(_SEEN, {})
    for param, (default, codec) in st.session_state.get(_BINDINGS, {}).get(page, {}).items():
        key = f"{page}.{param}"
        if key in st.session_state and seen.get(key) == url.get(param, []):
            out[param] = codec.to_url(st.session_state[key], default)
    return {k: v for k, v in out.items() if v}


def nav_params(page: str, shared: tuple[str, ...], current: str | None = None) -> dict[str, list[str] | str]:
    """Query params for a navigation link to `page`: its own params from the last time it was
    shown, the current values of the `shared` filters it takes, and the open database.

    `current` is the page this run shows: its state is read as it is now (a widget just changed,
    or a link just opened), since the links are drawn before it runs."""
    pages = {k: dict(v) for k, v in st.session_state.get(_PAGE_PARAMS, {}).items()}
    values = dict(st.session_state.get(_SHARED_VALUES, {}))
    if current is not None:
        now = _now(current)
        pages[current] = now
        bound = st.session_state.get(_BINDINGS, {}).get(current)
        takes = SHARED if bound is None else [p for p in SHARED if p in bound]  # a first visit: what the URL says
        values.update({p: now.get(p, []) for p in takes if p in now or bound is not None})
    out = {k: list(v) for k, v in pages.get(page, {}).items() if k not in SHARED}
    for param in shared:
        if values.get(param):
            out[param] = list(values[param])
    out.pop(DB_PARAM, None)
    name = _db_param()
    if name:
        out[DB_PARAM] = [name]
    return {k: v if len(v) > 1 else v[0] for k, v in out.items() if v}


def clear(*keys: str) -> None:
    """A widget callback: empty the widgets (or bound values) `keys` (e.g. the other of two exclusive inputs)."""
    for key in keys:
        st.session_state[key] = None


def put(key: str, value: Any) -> None:
    """A widget callback: set `key` to `value` (e.g. a button that moves a window)."""
    st.session_state[key] = value


def kept_while(key: str, question: Any, default: Any = None) -> Any:
    """A session value that holds while `question` (thread, focus, …) stays the same, and goes
    back to `default` when it changes (not in the URL: e.g. which part of a long list is drawn)."""
    seen = f"{key}.question"
    if st.session_state.get(seen, question) != question or key not in st.session_state:
        st.session_state[key] = default
    st.session_state[seen] = question
    return st.session_state[key]


# --- the open database ----------------------------------------------------------------


def _default_db() -> Path:
    configured = database.configured_db()
    if configured is not None:
        return configured
    with _demo_lock:  # one build per process even when several sessions start at once
        return database.ensure_demo_db()


def current_db() -> DbRef | None:
    """The database this session reads: the one the URL names (by a name the server knows), else
    the command line's, env's or the demo; a name the server does not know says so."""
    raw = st.query_params.get_all(DB_PARAM)
    seen = st.session_state.setdefault(_SEEN, {})
    if seen.get(DB_PARAM) != raw or DB_KEY not in st.session_state:
        seen[DB_PARAM] = raw
        linked = database.from_linkable_name(raw[-1]) if raw else None
        if raw and linked is None:  # (the names the server does know are not listed: not every visitor's business)
            st.session_state[_PROBLEM] = (
                f"The link is for a database named “{raw[-1]}”, which this server does not know or does not open "
                "here. Showing the default database instead."
            )
        if linked is not None:
            st.session_state[DB_KEY] = str(linked)
        else:
            try:
                st.session_state[DB_KEY] = str(_default_db())
            except Exception as exc:  # noqa: BLE001 — the app must still start and offer "load a source"
                st.session_state[_PROBLEM] = f"No database open: {exc}"
                st.session_state.pop(DB_KEY, None)
                return None
    try:
        db = _session_ref(st.session_state[DB_KEY])
    except FileNotFoundError as exc:  # (gone; or, named by a visitor, no longer the file checked: `database.ref`)
        why = f" ({exc})" if exc.errno is None else ""
        st.session_state[_PROBLEM] = f"No Transcript Lens database at {st.session_state[DB_KEY]}{why}"
        return None
    problem = database.schema_problem(db.version)
    if problem is not None:
        st.session_state[_PROBLEM] = problem
        return None
    _publish_db(db)
    return db


def _session_ref(path: str | Path) -> DbRef:
    # The file's version and this session's policy: the key of every cached answer (ui.session).
    from ui import session

    return database.ref(path)._replace(policy=session.policy())


def new_run() -> None:
    """Forget what one run remembers: the router calls it first thing in every run."""
    st.session_state.pop(_DB_NAMES, None)


def _db_param() -> str | None:
    """The URL name of the open database; None for the default one (a link without `db` opens it).

    Asked by every link a run draws (about thirty): found once per run and database, as it
    resolves paths and reads the list of known databases (a fifth of an Overview rerun's time)."""
    path = st.session_state.get(DB_KEY)
    if not path:
        return None
    names = st.session_state.setdefault(_DB_NAMES, {})
    if path not in names:
        names[path] = None if Path(path).resolve() == database.default_db_path() else database.name_of(path)
    return names[path]


def _publish_db(db: DbRef) -> None:
    # Pending until the page publishes its own params: one URL change per view.
    name = _db_param()
    raw = [name] if name else []
    if st.query_params.get_all(DB_PARAM) != raw:
        st.session_state.setdefault(_PENDING, {})[DB_PARAM] = raw
    st.session_state.setdefault(_SEEN, {})[DB_PARAM] = raw


def open_db(path: str | Path) -> DbRef:
    """Make `path` the session's database (the caller has checked it is one); it gets a name a link can use."""
    resolved = Path(path).resolve()
    db = _session_ref(resolved)  # (first: FileNotFoundError leaves the session as it was)
    if database.name_of(resolved) is None:
        database.remember_opened(resolved)
    st.session_state[DB_KEY] = str(resolved)
    st.session_state.pop(_PROBLEM, None)
    _publish_db(db)
    flush()  # now: the caller reruns before any page publishes
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
    """Query params for `st.switch_page` / `st.page_link`, keeping the open database in the link.

    A value that says nothing (None, "", an empty list) is left out; `[EMPTY]`, a list the user
    cleared (`Url.params`), is kept: the link opens it cleared, not at the page's default."""
    name = _db_param()
    out = {k: v for k, v in params.items() if v not in (None, "", [], ())}
    if name:
        out[DB_PARAM] = name
    return out


def go_to(page: str, label: str, **params: Any) -> None:
    """Open `pages/<page>.py` at `params` (plus the open database) as ONE browser history entry,
    then stop this page.

    `st.switch_page(…, query_params=…)` first rewrites this page's URL with the target's
    params and then changes page: two history entries, and browser Back lands on this page
    with the other page's params (its own filters gone). Here the browser is told to go
    there the way its Back and Forward buttons do (a history entry and a `popstate`, which
    Streamlit answers by running that page with that URL). A link to the same place is
    drawn too, for a browser that runs no script.
    """
    query = link_params(**params)
    target = json.dumps(f"{page}?{urlencode(query, doseq=True)}")
    st.html(
        "<script>(function () {"
        f"  const url = new URL({target}, window.location.href);"
        "  if (url.href !== window.location.href) {"
        "    window.history.pushState({}, '', url);"
        "    window.dispatchEvent(new PopStateEvent('popstate'));"
        "  }"
        "})();</script>",
        unsafe_allow_javascript=True,
    )
    st.page_link(f"pages/{page}.py", label=label, icon=":material/open_in_new:", query_params=query)
    st.stop()


def subset(options: tuple[str, ...] | list[str]) -> Codec:
    """A list whose values must be among `options` (unknown values in a link are dropped)."""
    allowed = set(options)
    return Codec(lambda raw: [v for v in raw if v in allowed], LIST.encode, clearable=True)


def first_page_on_new_question(page_key: str, question: Any) -> int:
    """The page to show: back to 1 when `question` (filters, sort, …) differs from the
    last run's, else the page the user is on (`page_key`, bound to the URL)."""
    seen = f"{page_key}.question"
    if st.session_state.get(seen, question) != question:
        st.session_state[page_key] = 1
    st.session_state[seen] = question
    return st.session_state[page_key]
