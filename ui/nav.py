"""The app's pages and the navigation between them (drawn by app.py in the sidebar).

Each page is declared once: its file, title, icon, address, and which shared filters
(`ui.state.SHARED`) it takes. The links carry state (`ui.state.nav_params`): a page
opens as it was last seen, with the current shared filters and the open database, so
a tenant chosen on Overview is still chosen on Conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import state


@dataclass(frozen=True)
class PageSpec:
    file: str
    title: str
    icon: str
    url_path: str
    shared: tuple[str, ...] = ()  # the shared filters the page's filter bar binds

    @property
    def stem(self) -> str:
        return self.file.rsplit("/", 1)[-1].removesuffix(".py")


#: The browser tab's icon: an emoji, which Streamlit draws as an inline SVG. A `:material/…:`
#: icon there is fetched from fonts.gstatic.com on every page view: a request to Google from an
#: app that works offline (and one the page's own image policy blocks).
FAVICON = "💬"

_DAYS = ("tenant", "sub", "from", "to")
PAGES = (
    PageSpec("pages/overview.py", "Overview", ":material/insights:", "overview", state.SHARED),
    PageSpec("pages/conversations.py", "Conversations", ":material/table_rows:", "conversations", state.SHARED),
    PageSpec("pages/outcomes.py", "Outcomes", ":material/flag:", "outcomes", state.SHARED),
    PageSpec("pages/search.py", "Search", ":material/search:", "search", state.SHARED),
    PageSpec("pages/transcript.py", "Transcript explorer", ":material/forum:", "transcript"),
    PageSpec("pages/resume_qa.py", "Resume QA", ":material/restart_alt:", "resume_qa", _DAYS),
    PageSpec("pages/backlog.py", "Waiting on a human", ":material/pending_actions:", "backlog", _DAYS),
    PageSpec("pages/topics.py", "Topics", ":material/category:", "topics", _DAYS),
    PageSpec("pages/patterns.py", "Failure patterns", ":material/error:", "patterns", _DAYS),
    PageSpec("pages/compare.py", "Compare", ":material/compare_arrows:", "compare", _DAYS),
    PageSpec("pages/review.py", "Review", ":material/rate_review:", "review"),
)


def pages() -> list[st.Page]:
    """The `st.Page`s for `st.navigation`, the default (Overview) first.

    A page's url_path must stay its file stem: ui.state.router_guard relies on v1 and v2
    page ids agreeing. The default page is the exception: Streamlit serves it at "/" and
    at no other address, so the same file again, hidden, answers a typed or bookmarked
    /overview (query params kept) under the stem.
    """
    home, *rest = PAGES
    out = [st.Page(home.file, title=home.title, icon=home.icon, url_path="home", default=True),
           st.Page(home.file, title=home.title, icon=home.icon, url_path=home.url_path, visibility="hidden")]
    out += [st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path) for p in rest]
    return out


def stem(page: st.Page) -> str:
    """The page's file stem, the name its widgets and params go by (the default page's address is "home")."""
    return PAGES[0].stem if page.url_path in ("", "home") else page.url_path


def draw(where, pages_: list[st.Page], current: st.Page) -> None:
    """The links to every visible page, each carrying the state that travels with it."""
    visible = [p for p in pages_ if getattr(p, "visibility", "visible") != "hidden"]
    with where:
        for page, spec in zip(visible, PAGES):
            params = state.nav_params(spec.stem, spec.shared, stem(current))
            st.page_link(page, label=spec.title, icon=spec.icon, query_params=params)
