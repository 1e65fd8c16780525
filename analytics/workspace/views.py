"""Saved views: a name for one page of the app with its URL query parameters (its filters, sort, page).

Every filter of every page lives in the URL (`ui.state`), so a view is exactly a
page and its query parameters; reopening it opens that URL. The open database
(`db`) is left out: a workspace belongs to its database, and the app adds it back.

>>> v = save_view(ws, "acme refunds", "conversations", {"tenant": ["acme"], "q": ["refund"]}, author="ana")  # doctest: +SKIP
>>> v.query_string()  # doctest: +SKIP
'tenant=acme&q=refund'
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from analytics.errors import BadRequest, NotFound
from analytics.workspace.annotating import check_author, default_author
from analytics.workspace.guard import reader_policy, scope_json, within_scope
from analytics.workspace.store import Workspace, now, takes_workspace

_PAGE = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
#: Query parameters a view never keeps (the app's own, not the view's).
LEFT_OUT = ("db", "view")


@dataclass(frozen=True)
class SavedView:
    view_id: int
    name: str
    page: str
    params: dict[str, list[str]]
    created_by: str
    created_at: str
    updated_at: str
    scope: tuple[str, ...] | None = None  # the tenants its maker was limited to (None: none)

    def query_string(self) -> str:
        """The view's parameters as a URL query string (no leading `?`).

        >>> SavedView(1, "v", "conversations", {"tenant": ["a", "b"]}, "x", "", "").query_string()
        'tenant=a&tenant=b'
        """
        return urlencode(self.params, doseq=True)

    def path(self) -> str:
        """`/page?query` (relative to the app's address)."""
        query = self.query_string()
        return f"/{self.page}" + (f"?{query}" if query else "")


def normalize(params: Mapping[str, object]) -> dict[str, list[str]]:
    """Query parameters as `{name: [values]}`, strings only, `db` and `view` left out.

    >>> normalize({"tenant": "acme", "sub": ["a", "b"], "db": "x.duckdb", "page": 2})
    {'tenant': ['acme'], 'sub': ['a', 'b'], 'page': ['2']}
    """
    out: dict[str, list[str]] = {}
    for key, value in params.items():
        if not isinstance(key, str) or key in LEFT_OUT:
            continue
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if any(v is None or isinstance(v, (dict, list, tuple)) for v in values):
            raise BadRequest(f"a view parameter is text or a list of text; {key!r} is {value!r}")
        if values:
            out[key] = [str(v) for v in values]
    return out


def _row(row: tuple) -> SavedView:
    view_id, name, page, params, *rest, scope = row
    return SavedView(view_id, name, page, json.loads(params), *rest, tuple(json.loads(scope)) if scope else None)


def _shown(view: SavedView) -> SavedView:
    """`view` as a reader under masking sees it: its name, its parameters' values (a thread id, a
    label's or a queue's name, a searched text) and its maker masked, as every text that leaves
    the tool is (`analytics.masking`; the erasure masks queue and label names the same way)."""
    if not reader_policy().redact:
        return view
    from analytics.masking import mask_text  # (the masker's detectors: only a masked reading pays for them)

    params = {key: [mask_text(v) for v in values] for key, values in view.params.items()}
    return dataclasses.replace(view, name=mask_text(view.name), params=params, created_by=mask_text(view.created_by))


_SELECT = "SELECT view_id, name, page, params, created_by, created_at, updated_at, scope FROM saved_views"


def _visible(where: str, params: list) -> tuple[str, list]:
    """`_SELECT` of the views matching `where` that the reader may see (`guard`)."""
    within, scope_params = within_scope("scope", reader_policy().tenants)
    return f"{_SELECT} WHERE {where} AND {within}", [*params, *scope_params]


@takes_workspace
def save_view(
    ws: Workspace, name: str, page: str, params: Mapping[str, object], author: str | None = None,
    replace: bool = False,
) -> SavedView:
    """Save `page` with `params` as `name`; a name taken is refused unless `replace`."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise BadRequest(f"a view name is 1–100 characters, got {name!r}")
    name = name.strip()
    if not isinstance(page, str) or not _PAGE.match(page):
        raise BadRequest(f"a view's page is a page's URL path (e.g. conversations), got {page!r}")
    author = check_author(author if author is not None else default_author())
    params_json = json.dumps(normalize(params), ensure_ascii=False)
    stamp, scope = now(), scope_json(reader_policy().tenants)
    with ws.write() as conn:
        taken = conn.execute(f"{_SELECT} WHERE name = ?", (name,)).fetchone()
        if taken is not None and not (replace and conn.execute(*_visible("name = ?", [name])).fetchone()):
            raise BadRequest(f"a view named {name!r} exists already")  # (one the reader cannot see is not replaced)
        conn.execute(
            "INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at, scope) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET page = excluded.page, "
            "params = excluded.params, created_by = excluded.created_by, updated_at = excluded.updated_at, "
            "scope = excluded.scope",
            (name, page, params_json, author, stamp, stamp, scope),
        )
        return _shown(_row(conn.execute(f"{_SELECT} WHERE name = ?", (name,)).fetchone()))


@takes_workspace
def saved_views(ws: Workspace) -> list[SavedView]:
    """Every saved view, by name."""
    sql, params = _visible("1", [])
    with ws.read() as conn:
        rows = conn.execute(f"{sql} ORDER BY name COLLATE NOCASE, view_id", params).fetchall()
    return [_shown(_row(r)) for r in rows]


def _find(conn, view: int | str) -> tuple:
    """The stored row of a view the reader may see, by id or name (NotFound otherwise)."""
    column = "name" if isinstance(view, str) else "view_id"
    row = conn.execute(*_visible(f"{column} = ?", [view])).fetchone()
    if row is None:
        raise NotFound(f"no saved view {view!r}")
    return row


@takes_workspace
def get_view(ws: Workspace, view: int | str) -> SavedView:
    """A saved view by id or name (NotFound otherwise), masked under masking (`_shown`)."""
    with ws.read() as conn:
        return _shown(_row(_find(conn, view)))


@takes_workspace
def delete_view(ws: Workspace, view: int | str) -> None:
    with ws.write() as conn:
        conn.execute("DELETE FROM saved_views WHERE view_id = ?", (_find(conn, view)[0],))
