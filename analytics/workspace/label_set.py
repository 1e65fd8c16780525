"""The configurable label set: names with colours, in order; retired labels stay readable.

A new workspace starts with a default set (migration 1); `define_label` adds a
label or changes its colour, description or place, `rename_label` renames it
everywhere it is used, `retire_label` stops offering it (annotations that carry it
keep it, and its colour). The app's label editor, `transcript-lens annotations
labels` and a notebook all come here.

>>> define_label(ws, "refund wrong", "#d32f2f", "Refund amount or policy misstated")  # doctest: +SKIP
Label(name='refund wrong', color='#d32f2f', ...)
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from analytics.errors import BadRequest, NotFound
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


@takes_workspace
def labels(ws: Workspace, include_retired: bool = True) -> list[Label]:
    """The label set in its order (retired ones last, when included)."""
    with ws.read() as conn:
        rows = conn.execute(
            "SELECT name, color, description, position, retired_at IS NOT NULL FROM labels "
            "WHERE ? OR retired_at IS NULL ORDER BY retired_at IS NOT NULL, position, name",
            (include_retired,),
        ).fetchall()
    return [Label(n, c, d, p, bool(r)) for n, c, d, p, r in rows]


@takes_workspace
def define_label(
    ws: Workspace, name: str, color: str, description: str | None = None, position: int | None = None
) -> Label:
    """Add a label, or change an existing one's colour, description or place (a retired one comes back)."""
    name, color = check_name(name), check_color(color)
    with ws.write() as conn:
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
    return Label(name, color, description, int(position), False)


@takes_workspace
def rename_label(ws: Workspace, old: str, new: str) -> None:
    """Rename a label; every annotation carrying it follows (ON UPDATE CASCADE)."""
    old, new = check_name(old), check_name(new)
    with ws.write() as conn:
        if conn.execute("SELECT 1 FROM labels WHERE name = ?", (old,)).fetchone() is None:
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
        if conn.execute("UPDATE labels SET retired_at = ? WHERE name = ?", (now(), name)).rowcount == 0:
            raise NotFound(f"no label {name!r} in {ws.path}")


def ensure_labels(conn: sqlite3.Connection, names: set[str]) -> list[str]:
    """Create the labels of `names` that do not exist, with palette colours (inside a write); the new ones."""
    known = {r[0] for r in conn.execute("SELECT name FROM labels")}
    missing = sorted(names - known)
    (start,) = conn.execute("SELECT coalesce(max(position), 0) FROM labels").fetchone()
    stamp = now()
    conn.executemany(
        "INSERT INTO labels (name, color, description, position, created_at) VALUES (?, ?, NULL, ?, ?)",
        [(name, PALETTE[i % len(PALETTE)], start + 1 + i, stamp) for i, name in enumerate(missing)],
    )
    return missing
