"""Annotations: a label, a pass/fail verdict and/or a note on a thread, a message or a checkpoint.

Each annotation is its own row (several reviewers, several labels on one message),
so two sessions annotating at once never overwrite each other. An edit names the
revision it read and is refused (`Conflict`) when someone changed the annotation
since. `annotations()` lists them with where they are now (`resolve`): `ok`, or
`orphaned` with the reason — an annotation is never dropped because a reload
removed what it points at.

>>> annotate("lens.duckdb", "acme:web:sess-1", message_id="run-1-2", label="wrong answer",
...          verdict="fail", note="refund amount", author="ana")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import duckdb

from analytics import _pandas as pd
from analytics.db import connection
from analytics.errors import BadRequest, NotFound
from analytics.workspace.authors import AUTHOR_ENV, AUTHOR_MAX, check_author, default_author  # noqa: F401
from analytics.workspace.label_set import check_name, offered, offered_names
from analytics.workspace.resolve import RESOLVED_COLUMNS, Anchor, resolve_sql, resolve_sql_lists
from analytics.workspace.store import Conflict, Workspace, now, takes_workspace, workspace_of

VERDICTS = ("pass", "fail")
ORIGINS = ("app", "api", "import")
NOTE_MAX = 10_000


@dataclass(frozen=True)
class Annotation:
    """One stored annotation (the `annotations` table's row)."""

    annotation_id: str
    target: str
    thread_id: str
    message_id: str | None
    ordinal: int | None
    checkpoint_ns: str | None
    checkpoint_id: str | None
    label: str | None
    verdict: str | None
    note: str | None
    author: str
    created_at: str
    updated_at: str
    revision: int
    origin: str
    role: str | None
    excerpt: str | None
    content_digest: str | None
    source: str | None

    @property
    def anchor(self) -> Anchor:
        # (a message found by id keeps its ordinal: the copy there is preferred when an id repeats)
        return Anchor(self.thread_id, self.message_id, self.ordinal, self.checkpoint_id, self.checkpoint_ns,
                      self.content_digest)


STORED_COLUMNS = tuple(f.name for f in fields(Annotation))
#: `annotations()`'s columns, in order: where it is now, then the stored row.
COLUMNS = (
    "annotation_id", "status", "orphan_reason", "target", "thread_id", "tenant_id", "sub_tenant_id",
    "message_id", "ordinal", "annotated_ordinal", "checkpoint_ns", "checkpoint_id", "label", "label_color",
    "verdict", "note", "author", "created_at", "updated_at", "revision", "origin", "role", "excerpt", "source",
)
_SELECT = f"SELECT {', '.join('a.' + c for c in STORED_COLUMNS)} FROM annotations a"


def check_content(label: object, verdict: object, note: object) -> tuple[str | None, str | None, str | None]:
    """The (label, verdict, note) of an annotation as stored: at least one of them, each valid.

    >>> check_content(None, "fail", " ")
    (None, 'fail', None)
    """
    label = None if label is None else check_name(label)
    if verdict is not None and verdict not in VERDICTS:
        raise BadRequest(f"a verdict is 'pass' or 'fail', got {verdict!r}")
    if note is not None:
        if not isinstance(note, str):
            raise BadRequest(f"a note is text, got {note!r}")
        note = note.strip() or None
        if note is not None and len(note) > NOTE_MAX:
            raise BadRequest(f"a note has at most {NOTE_MAX:,} characters, got {len(note):,}")
    if label is None and verdict is None and note is None:
        raise BadRequest("an annotation needs a label, a verdict or a note")
    return label, verdict, note


@dataclass(frozen=True)
class Found:
    """What the database says about an anchor now (a `resolve_sql` row)."""

    status: str
    orphan_reason: str | None
    ordinal: int | None
    message_id: str | None
    role: str | None
    excerpt: str | None
    content_digest: str | None
    tenant_id: str | None
    sub_tenant_id: str | None


def locate(con: duckdb.DuckDBPyConnection, anchors: Sequence[Anchor]) -> list[Found]:
    """`resolve_sql` for these anchors, in their order."""
    if not anchors:
        return []
    rows = con.execute(*resolve_sql(anchors)).fetchall()
    return [Found(*row[1:]) for row in rows]


def database_source(con: duckdb.DuckDBPyConnection) -> str | None:
    """The source of the database's latest load (`loads.source`: passwords are masked there)."""
    row = con.execute("SELECT source FROM loads ORDER BY load_id DESC LIMIT 1").fetchone()
    return row[0] if row else None


def labelled(conn: sqlite3.Connection, label: str | None) -> None:
    """Refuse a label that is not in the set (or retired) before the foreign key does, with its name."""
    if label is None:
        return
    if not offered(conn, label):  # (one another tenant scope defined is unknown here, as a missing one)
        known = offered_names(conn)
        raise BadRequest(f"unknown label {label!r}; the labels are: {', '.join(known)} "
                         "(add one with `transcript-lens annotations labels --add NAME --color #rrggbb`)")
    if conn.execute("SELECT retired_at FROM labels WHERE name = ?", (label,)).fetchone()[0] is not None:
        raise BadRequest(f"the label {label!r} is retired; define it again to use it")


def insert(conn: sqlite3.Connection, rows: Iterable[Annotation]) -> int:
    """Insert annotations (inside a write); an id already there is left as it is. Returns how many were new."""
    placeholders = ", ".join("?" for _ in STORED_COLUMNS)
    before = conn.total_changes
    conn.executemany(
        f"INSERT INTO annotations ({', '.join(STORED_COLUMNS)}) VALUES ({placeholders}) "
        "ON CONFLICT (annotation_id) DO NOTHING",
        [tuple(getattr(r, c) for c in STORED_COLUMNS) for r in rows],
    )
    return conn.total_changes - before


def new_annotation(anchor: Anchor, found: Found | None, label, verdict, note, author: str, origin: str,
                   source: str | None, annotation_id: str | None = None, created_at: str | None = None) -> Annotation:
    """An annotation of `anchor` as it is stored: anchored by the message id the database
    knows for it, with the message's role, excerpt and digest as they are now."""
    if origin not in ORIGINS:
        raise BadRequest(f"origin is one of {', '.join(ORIGINS)}, got {origin!r}")
    stamp = created_at or now()
    message_id, ordinal, role, excerpt, digest = anchor.message_id, anchor.ordinal, None, None, anchor.content_digest
    if anchor.target == "message" and found is not None and found.status == "ok":
        message_id = found.message_id if message_id is None else message_id
        ordinal, role, excerpt, digest = found.ordinal, found.role, found.excerpt, found.content_digest
    return Annotation(
        annotation_id or uuid.uuid4().hex, anchor.target, anchor.thread_id, message_id, ordinal,
        anchor.checkpoint_ns, anchor.checkpoint_id, label, verdict, note, author, stamp, stamp, 1, origin,
        role, excerpt, digest, source,
    )


def annotate(
    db,
    thread_id: str,
    *,
    message_id: str | None = None,
    ordinal: int | None = None,
    checkpoint_id: str | None = None,
    checkpoint_ns: str | None = None,
    label: str | None = None,
    verdict: str | None = None,
    note: str | None = None,
    author: str | None = None,
    workspace=None,
    origin: str = "api",
) -> Annotation:
    """Annotate a thread, one of its messages (`message_id`, or `ordinal` for a message
    without id) or one of its checkpoints (`checkpoint_id`, `checkpoint_ns` default root),
    with a `label` from the set, a `verdict` (`pass` / `fail`) and/or a `note`.

    `db` is the loaded database (a path, or a connection with `workspace=` given): the
    target must be in it (NotFound otherwise), and a message's id, role and excerpt are
    taken from it. The workspace is the one beside `db` unless `workspace` names one.

    >>> annotate("lens.duckdb", "acme:web:sess-1", label="good answer")  # doctest: +SKIP
    Annotation(annotation_id='…', target='thread', ...)
    """
    anchor = Anchor(thread_id, message_id, ordinal, checkpoint_id, checkpoint_ns)
    label, verdict, note = check_content(label, verdict, note)
    author = check_author(author if author is not None else default_author())
    ws = workspace_of(db, workspace)
    with connection(db) as con:
        (found,) = locate(con, [anchor])
        source = database_source(con)
    if found.status != "ok":
        raise NotFound(f"cannot annotate {_describe(anchor)}: {found.orphan_reason} in this database")
    row = new_annotation(anchor, found, label, verdict, note, author, origin, source)
    with ws.write() as conn:
        labelled(conn, label)
        insert(conn, [row])
    return row


def _describe(anchor: Anchor) -> str:
    if anchor.target == "thread":
        return f"thread {anchor.thread_id!r}"
    if anchor.target == "checkpoint":
        return f"checkpoint {anchor.checkpoint_id!r} of thread {anchor.thread_id!r}"
    which = f"id {anchor.message_id!r}" if anchor.message_id is not None else f"ordinal {anchor.ordinal}"
    return f"the message with {which} of thread {anchor.thread_id!r}"


_UNCHANGED: Any = object()


@takes_workspace
def edit_annotation(
    ws: Workspace, annotation_id: str, revision: int, *, label: Any = _UNCHANGED, verdict: Any = _UNCHANGED,
    note: Any = _UNCHANGED, author: str | None = None,
) -> Annotation:
    """Change an annotation's label, verdict or note (None clears one), as of `revision`.

    Refused with `Conflict` when the stored revision is not `revision` (someone else
    changed it since it was read); nothing is lost either way. `author`, when given,
    becomes the annotation's author (the last person to change it).
    """
    with ws.write() as conn:
        current = _get(conn, annotation_id)
        if current.revision != revision:
            raise Conflict(f"annotation {annotation_id} was changed by {current.author} at {current.updated_at} "
                           f"(revision {current.revision}, you edited {revision}); reload it and edit again")
        values = {
            "label": current.label if label is _UNCHANGED else label,
            "verdict": current.verdict if verdict is _UNCHANGED else verdict,
            "note": current.note if note is _UNCHANGED else note,
        }
        values["label"], values["verdict"], values["note"] = check_content(**values)
        if values["label"] != current.label:
            labelled(conn, values["label"])
        by = current.author if author is None else check_author(author)
        conn.execute(
            "UPDATE annotations SET label = ?, verdict = ?, note = ?, author = ?, updated_at = ?, "
            "revision = revision + 1 WHERE annotation_id = ? AND revision = ?",
            (values["label"], values["verdict"], values["note"], by, now(), annotation_id, revision),
        )
        return _get(conn, annotation_id)


@takes_workspace
def delete_annotation(ws: Workspace, annotation_id: str, revision: int | None = None) -> None:
    """Delete an annotation (as of `revision`, when given: `Conflict` if it changed since)."""
    with ws.write() as conn:
        current = _get(conn, annotation_id)
        if revision is not None and current.revision != revision:
            raise Conflict(f"annotation {annotation_id} was changed by {current.author} at {current.updated_at}; "
                           "reload it before deleting")
        conn.execute("DELETE FROM annotations WHERE annotation_id = ?", (annotation_id,))


def _get(conn: sqlite3.Connection, annotation_id: str) -> Annotation:
    row = conn.execute(f"{_SELECT} WHERE a.annotation_id = ?", (annotation_id,)).fetchone()
    if row is None:
        raise NotFound(f"no annotation {annotation_id!r} (deleted meanwhile?)")
    return Annotation(*row)


@takes_workspace
def stored(
    ws: Workspace, thread_ids: Sequence[str] | None = None, *, label: str | None = None, verdict: str | None = None,
    target: str | None = None, author: str | None = None,
) -> pd.DataFrame:
    """The stored annotations (`STORED_COLUMNS`, then `label_color`; Python values, object dtype), oldest
    first; optionally narrowed."""
    clauses, params = [], []
    if thread_ids is not None:
        clauses.append("a.thread_id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(thread_ids)))
    for column, value in (("label", label), ("verdict", verdict), ("target", target), ("author", author)):
        if value is not None:
            clauses.append(f"a.{column} = ?")
            params.append(value)
    where = " AND ".join(clauses) or "1"
    with ws.read() as conn:
        rows = conn.execute(
            f"SELECT {', '.join('a.' + c for c in STORED_COLUMNS)}, l.color FROM annotations a "
            f"LEFT JOIN labels l ON l.name = a.label WHERE {where} ORDER BY a.created_at, a.annotation_id", params,
        ).fetchall()
    return pd.DataFrame(rows, columns=[*STORED_COLUMNS, "label_color"], dtype=object)


def records(rows: pd.DataFrame) -> list[Annotation]:
    """The rows of a `stored()` frame as `Annotation`s."""
    return [Annotation(*r) for r in rows[list(STORED_COLUMNS)].itertuples(index=False, name=None)]


def with_status(con: duckdb.DuckDBPyConnection | None, rows: pd.DataFrame) -> pd.DataFrame:
    """Stored annotations (`stored()`) with where each is now, in `COLUMNS`.

    Without a database (`con` None) every status is NULL.
    """
    out = rows.rename(columns={"ordinal": "annotated_ordinal"})
    if con is not None and len(rows):
        # The stored fields straight into the query (checked when written); one row back per annotation.
        fields = ("target", "thread_id", "message_id", "ordinal", "checkpoint_ns", "checkpoint_id", "content_digest")
        found = con.execute(*resolve_sql_lists(*(rows[f].tolist() for f in fields))).df()
        found = found.astype(object).where(found.notna(), None)
    else:
        found = pd.DataFrame({c: [None] * len(rows) for c in RESOLVED_COLUMNS}, dtype=object)
    out = out.reset_index(drop=True)
    for column in ("status", "orphan_reason", "tenant_id", "sub_tenant_id"):
        out[column] = found[column].to_numpy()
    # Where the message is now (a message found by id may have moved); the stored id otherwise.
    out["ordinal"] = pd.array(found["ordinal"].to_numpy(), dtype="Int64")
    out["message_id"] = [f if f is not None else s for f, s in zip(found["message_id"], out["message_id"])]
    for column in ("annotated_ordinal", "revision"):
        out[column] = out[column].astype("Int64")
    text = [c for c in COLUMNS if c not in ("ordinal", "annotated_ordinal", "revision")]
    out[text] = out[text].astype(object).where(out[text].notna(), None)  # None, never NaN, for what is missing
    return out[list(COLUMNS)]
