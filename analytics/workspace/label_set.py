"""The configurable label set: names with colours, in order; retired labels stay readable.

A new workspace starts with a default set (migration 1); `define_label` adds a
label or changes its colour, description or place, `rename_label` renames it
everywhere it is used, `retire_label` stops offering it (annotations that carry it
keep it, and its colour). The app's label editor, `transcript-lens annotations
labels` and a notebook all come here.

A label defined by a reader limited to some tenants (`TRANSCRIPT_LENS_TENANTS`, a user the app
maps to tenants) records that scope (`label_scopes`) and is offered, listed and accepted only for
readers within it and readers without a scope; the default set and labels an unscoped reader
defines are everyone's. Names stay unique across scopes: a scoped reader who picks a name another
scope holds is told it is taken (no more: not whose, nor its colour or description).

>>> define_label(ws, "refund wrong", "#d32f2f", "Refund amount or policy misstated")  # doctest: +SKIP
Label(name='refund wrong', color='#d32f2f', ...)
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from analytics.errors import BadRequest, NotFound
from analytics.workspace.guard import reader_policy, scope_json, within_scope
from analytics.workspace.store import Workspace, takes_workspace, now

_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
NAME_MAX = 60
#: Colours given to labels an import creates (`--add-labels`), in turn.
PALETTE = ("#5d4037", "#ad1457", "#283593", "#558b2f", "#f9a825", "#4e342e", "#00695c", "#6d4c41")


@dataclass(frozen=True)
class Label:
    name: str
    color: str
    description: str | None
    position: int
    retired: bool


def check_name(name: object) -> str:
    """A label name as stored, or BadRequest.

    >>> check_name("  lost context ")
    'lost context'
    """
    if not isinstance(name, str) or not name.strip():
        raise BadRequest(f"a label is a non-empty string, got {name!r}")
    name = name.strip()
    if len(name) > NAME_MAX:
        raise BadRequest(f"a label has at most {NAME_MAX} characters, got {len(name)}: {name[:20]!r}…")
    return name


def check_color(color: object) -> str:
    """`#rrggbb` (lower case), or BadRequest.

    >>> check_color("#2E7D32")
    '#2e7d32'
    """
    if not isinstance(color, str) or not _COLOR.match(color.strip()):
        raise BadRequest(f"a label colour is #rrggbb (e.g. #2e7d32), got {color!r}")
    return color.strip().lower()


def _offered() -> tuple[str, list]:
    """`(sql, params)`: labels `l` (joined with their scope `s`) offered to the reader."""
    within, params = within_scope("s.scope", reader_policy().tenants)
    return f"labels l LEFT JOIN label_scopes s ON s.name = l.name WHERE (s.scope IS NULL OR {within})", params


def offered(conn: sqlite3.Connection, name: str) -> bool | None:
    """Whether the label `name` is offered to the reader: None when there is no such label at all."""
    within, params = within_scope("s.scope", reader_policy().tenants)
    row = conn.execute(f"SELECT s.scope IS NULL OR {within} FROM labels l LEFT JOIN label_scopes s ON s.name = l.name "
                       "WHERE l.name = ?", [*params, name]).fetchone()
    return None if row is None else bool(row[0])


def offered_names(conn: sqlite3.Connection) -> list[str]:
    """The names of the labels offered to the reader and not retired, in order."""
    sql, params = _offered()
    return [r[0] for r in conn.execute(f"SELECT l.name FROM {sql} AND l.retired_at IS NULL ORDER BY l.position", params)]


def _taken(name: str) -> BadRequest:
    return BadRequest(f"the label name {name!r} is taken; choose another")


def _scoped(conn: sqlite3.Connection, names: list[str]) -> None:
    """Record the reader's tenant scope on labels it has just made (none: the labels are everyone's)."""
    scope = scope_json(reader_policy().tenants)
    if scope is not None:
        conn.executemany("INSERT INTO label_scopes (name, scope) VALUES (?, ?)", [(n, scope) for n in names])


@takes_workspace
def labels(ws: Workspace, include_retired: bool = True) -> list[Label]:
    """The label set offered to the reader, in its order (retired ones last, when included)."""
    sql, params = _offered()
    with ws.read() as conn:
        rows = conn.execute(
            f"SELECT l.name, l.color, l.description, l.position, l.retired_at IS NOT NULL FROM {sql} "
            "AND (? OR l.retired_at IS NULL) ORDER BY l.retired_at IS NOT NULL, l.position, l.name",
            (*params, include_retired),
        ).fetchall()
    return [Label(n, c, d, p, bool(r)) for n, c, d, p, r in rows]


@takes_workspace
def define_label(
    ws: Workspace, name: str, color: str, description: str | None = None, position: int | None = None
) -> Label:
    """Add a label, or change an existing one's colour, description or place (a retired one comes back)."""
    name, color = check_name(name), check_color(color)
    with ws.write() as conn:
        known = offered(conn, name)
        if known is False:
            raise _taken(name)
        if position is None:
            row = conn.execute("SELECT position FROM labels WHERE name = ?", (name,)).fetchone()
            position = row[0] if row else conn.execute("SELECT coalesce(max(position), 0) + 1 FROM labels").fetchone()[0]
        conn.execute(
            "INSERT INTO labels (name, color, description, position, created_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET color = excluded.color, "
            "description = coalesce(excluded.description, labels.description), position = excluded.position, "
            "retired_at = NULL",
            (name, color, description, int(position), now()),
        )
        if known is None:
            _scoped(conn, [name])
    return Label(name, color, description, int(position), False)


@takes_workspace
def rename_label(ws: Workspace, old: str, new: str) -> None:
    """Rename a label; every annotation carrying it follows (ON UPDATE CASCADE), and its scope."""
    old, new = check_name(old), check_name(new)
    with ws.write() as conn:
        if not offered(conn, old):
            raise NotFound(f"no label {old!r} in {ws.path}")
        try:
            conn.execute("UPDATE labels SET name = ? WHERE name = ?", (new, old))
        except sqlite3.IntegrityError:
            raise BadRequest(f"a label {new!r} exists already") from None


@takes_workspace
def retire_label(ws: Workspace, name: str) -> None:
    """Stop offering a label; the annotations that carry it keep it."""
    name = check_name(name)
    with ws.write() as conn:
        if not offered(conn, name):
            raise NotFound(f"no label {name!r} in {ws.path}")
        conn.execute("UPDATE labels SET retired_at = ? WHERE name = ?", (now(), name))


def ensure_labels(conn: sqlite3.Connection, names: set[str]) -> list[str]:
    """Create the labels of `names` that do not exist, with palette colours (inside a write); the new ones.
    A name another tenant scope holds is refused (`define_label`)."""
    states = {name: offered(conn, name) for name in sorted(names)}
    taken = [name for name, state in states.items() if state is False]
    if taken:
        raise _taken(taken[0])
    missing = [name for name, state in states.items() if state is None]
    (start,) = conn.execute("SELECT coalesce(max(position), 0) FROM labels").fetchone()
    stamp = now()
    conn.executemany(
        "INSERT INTO labels (name, color, description, position, created_at) VALUES (?, ?, NULL, ?, ?)",
        [(name, PALETTE[i % len(PALETTE)], start + 1 + i, stamp) for i, name in enumerate(missing)],
    )
    _scoped(conn, missing)
    return missing
