"""Annotations as JSON Lines: export every stored field; import from anywhere (an evaluator's output).

One JSON object per line. An import line needs `thread_id` and at least one of
`label`, `verdict`, `note`; it may name a message (`message_id`, or `ordinal`
for a message without id) or a checkpoint (`checkpoint_id`, `checkpoint_ns`),
an `author` (else `--author`), `created_at` (ISO 8601; else now) and an
`annotation_id` (`id` also works). Every field an export writes is accepted back,
so export → import moves annotations between workspaces; any other key is an
error. `verdict` is `pass` / `fail` (JSON `true` / `false` also).

An import is all or nothing: every line is checked first, and any bad line
(not JSON, a missing or mistyped field, an unknown label without
`add_labels`) fails it with the file's line numbers and nothing written. A line
without `annotation_id` gets one from its content, and an id already in the
workspace is skipped, so importing the same file twice adds nothing. Lines whose
thread, message or checkpoint is not in the database are kept (shown orphaned)
and counted.

    {"thread_id": "acme:web:sess-1002", "label": "lost context", "verdict": "fail", "author": "eval-v3"}
    {"thread_id": "acme:web:sess-1002", "message_id": "run-7-3", "note": "refund amount is wrong"}
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import duckdb

from analytics.db import connection
from analytics import jsontext
from analytics.jsonlines import bounded
from analytics.errors import AnalyticsError, BadRequest
from analytics.user_files import MAX_JSONL_BYTES, open_user_file
from analytics.workspace.annotating import (
    STORED_COLUMNS, Annotation, check_author, check_content, database_source, default_author, insert, labelled,
    locate, new_annotation,
)
from analytics.db import applied_policy
from analytics.workspace.guard import EXPORT_TEXT, masked, reader_policy
from analytics.workspace.label_set import ensure_labels
from analytics.workspace.resolve import Anchor
from analytics.workspace.store import Workspace, takes_workspace, workspace_of

#: Keys an import line may have (an export writes exactly `STORED_COLUMNS`).
KEYS = frozenset(STORED_COLUMNS) | {"id"}
_REQUIRED_TEXT = ("thread_id",)
_OPTIONAL_TEXT = ("annotation_id", "id", "message_id", "checkpoint_id", "checkpoint_ns", "label", "note", "author",
                  "role", "excerpt", "content_digest", "source", "created_at", "updated_at", "target", "origin")
#: At most this many bad lines are listed in the error.
SHOWN_ERRORS = 20


@dataclass(frozen=True)
class ImportSummary:
    lines: int
    added: int
    already: int  # ids already in the workspace (skipped)
    orphaned: int  # added, but not found in the database (shown orphaned)
    new_labels: tuple[str, ...]

    def line(self) -> str:
        parts = [f"imported {self.added} of {self.lines} annotations"]
        if self.already:
            parts.append(f"{self.already} already there")
        if self.orphaned:
            parts.append(f"{self.orphaned} not in the database (kept, shown orphaned)")
        if self.new_labels:
            parts.append(f"new labels: {', '.join(self.new_labels)}")
        return "; ".join(parts)


class ImportFailed(BadRequest):
    """An import refused as a whole; the message lists the bad lines."""


@takes_workspace
def export_lines(ws: Workspace, db=None) -> Iterator[str]:
    """Every annotation as one JSON line (the stored fields, `STORED_COLUMNS`), oldest first.

    Under the deployment's policy (`guard`): a tenant scope exports only the annotations
    of threads the scoped database `db` holds (so it needs `db`); masking masks the free
    text and the keys (an export leaves the tool, as a masked CSV report does).
    """
    from analytics.workspace.annotating import stored
    from analytics.workspace.review import annotations

    rows = stored(ws)
    policy = reader_policy()
    if policy.tenants is not None:
        if db is None:
            raise BadRequest("under a tenant scope an export needs the database (--db) to tell whose annotations "
                             "are whose")
        rows = rows[rows["annotation_id"].isin(set(annotations(db, workspace=ws)["annotation_id"]))]
    if policy.redact:
        rows = masked(rows, EXPORT_TEXT)
    for record in rows[list(STORED_COLUMNS)].itertuples(index=False, name=None):
        values = {k: (None if v is None or v != v else v) for k, v in zip(STORED_COLUMNS, record)}  # NA → null
        for k in ("ordinal", "revision"):
            values[k] = None if values[k] is None else int(values[k])
        yield json.dumps(values, ensure_ascii=False)


@takes_workspace
def export_jsonl(ws: Workspace, out: str | os.PathLike | IO[str], db=None) -> int:
    """Write every annotation to `out` (a path, replaced atomically, or an open text file); how many.
    `db`: the loaded database (needed under a tenant scope: `export_lines`)."""
    if not isinstance(out, (str, os.PathLike)):
        return sum(out.write(line + "\n") > 0 for line in export_lines(ws, db))
    path = Path(out)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            count = sum(fh.write(line + "\n") > 0 for line in export_lines(ws, db))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return count


def _time(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{key} is an ISO 8601 time, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{key} is an ISO 8601 time, got {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def content_id(anchor: Anchor, label, verdict, note, author: str) -> str:
    """The id of an imported line that has none: a digest of what it says (the same line, the same id)."""
    key = [anchor.thread_id, anchor.message_id, anchor.ordinal, anchor.checkpoint_ns, anchor.checkpoint_id,
           label, verdict, note, author]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class _Line:
    number: int
    anchor: Anchor
    label: str | None
    verdict: str | None
    note: str | None
    author: str
    annotation_id: str
    created_at: str | None
    carried: dict[str, Any]  # role, excerpt, content_digest, source of an exported line


def _parse(number: int, text: str, author: str | None) -> _Line:
    try:
        record = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError(f"a line is a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (keys: thread_id, message_id, ordinal, checkpoint_id, "
                         "checkpoint_ns, label, verdict, note, author, created_at, annotation_id)")
    for key in _REQUIRED_TEXT:
        if not isinstance(record.get(key), str) or not record[key]:
            raise ValueError(f"{key} is required (a non-empty string)")
    for key in _OPTIONAL_TEXT:
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ValueError(f"{key} is a string, got {record[key]!r}")
    verdict = record.get("verdict")
    if isinstance(verdict, bool):
        verdict = "pass" if verdict else "fail"
    try:
        anchor = Anchor(record["thread_id"], record.get("message_id"), record.get("ordinal"),
                        record.get("checkpoint_id"), record.get("checkpoint_ns"), record.get("content_digest"))
        label, verdict, note = check_content(record.get("label"), verdict, record.get("note"))
        who = check_author(record.get("author") or author or default_author())
    except AnalyticsError as exc:
        raise ValueError(str(exc)) from None
    if record.get("target") is not None and record["target"] != anchor.target:
        raise ValueError(f"target {record['target']!r} does not match the fields given (a {anchor.target})")
    given_id = record.get("annotation_id") or record.get("id")
    if given_id is not None and not (1 <= len(given_id) <= 64):
        raise ValueError("annotation_id is 1-64 characters")
    created = _time(record["created_at"], "created_at") if record.get("created_at") else None
    carried = {k: record.get(k) for k in ("role", "excerpt", "content_digest", "source")}
    return _Line(number, anchor, label, verdict, note, who, given_id or content_id(anchor, label, verdict, note, who),
                 created, carried)


def read_lines(lines: Iterable[str], author: str | None = None, name: str = "<input>") -> list[_Line]:
    """Parse every line (blank lines skipped; at most `jsonlines.MAX_LINES` lines, else BadRequest);
    ImportFailed listing the first bad ones, if any."""
    parsed, errors, bad = [], [], 0
    for number, text in enumerate(bounded(lines, name), 1):
        if not text.strip():
            continue
        try:
            parsed.append(_parse(number, text, author))
        except ValueError as exc:
            bad += 1
            if len(errors) < SHOWN_ERRORS:  # the rest are only counted
                errors.append(f"{name}:{number}: {exc}")
    if bad:
        more = f"\n… and {bad - SHOWN_ERRORS} more" if bad > SHOWN_ERRORS else ""
        raise ImportFailed(f"{bad} bad line(s), nothing imported:\n" + "\n".join(errors) + more)
    return parsed


def import_jsonl(
    db, source: str | os.PathLike | Iterable[str], *, author: str | None = None, add_labels: bool = False,
    workspace: Workspace | None = None,
) -> ImportSummary:
    """Import annotations from a JSON Lines file (or lines) into the workspace of `db`, all or nothing.

    `db` is the loaded database (a path, or a connection with `workspace=`, or None to
    import without looking anything up): a message's id, role and excerpt are filled in
    from it, and lines it lacks are counted as orphaned. `add_labels` creates labels
    the set does not have (palette colours) instead of refusing the import.
    """
    if isinstance(source, (str, os.PathLike)):
        name = str(source)
        try:
            with open_user_file(source, "annotations file", MAX_JSONL_BYTES) as raw:
                parsed = read_lines(io.TextIOWrapper(raw, encoding="utf-8"), author, name)
        except (OSError, UnicodeDecodeError) as exc:
            raise BadRequest(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    else:
        parsed = read_lines(source, author)
    ws = workspace_of(db, workspace)
    found, origin_source, scoped = [None] * len(parsed), None, reader_policy().tenants is not None
    looked_up = db is not None and (isinstance(db, duckdb.DuckDBPyConnection) or Path(db).is_file())
    if looked_up:
        with connection(db) as con:
            found = locate(con, [p.anchor for p in parsed])
            origin_source = database_source(con)
            scoped = applied_policy(con).tenants is not None
    if scoped:  # a reader limited to some tenants writes about their threads only
        if not looked_up:
            raise ImportFailed("under a tenant scope an import needs the database (--db) to check each thread")
        outside = [f"line {p.number}: thread {p.anchor.thread_id!r} is not in the database you may read"
                   for p, where in zip(parsed, found) if where.orphan_reason == "thread gone"]
        if outside:
            raise ImportFailed(f"{len(outside)} line(s) about threads outside your tenants, nothing imported:\n"
                               + "\n".join(outside[:SHOWN_ERRORS]))
    rows = []
    for line, where in zip(parsed, found):
        row = new_annotation(line.anchor, where, line.label, line.verdict, line.note, line.author, "import",
                             line.carried["source"] or origin_source, line.annotation_id, line.created_at)
        if where is None or where.status != "ok":  # keep what the exporting workspace knew of the message
            row = Annotation(**{**vars(row), **{k: v for k, v in line.carried.items() if v is not None}})
        rows.append(row)
    labels = {p.label for p in parsed if p.label is not None}
    with ws.write() as conn:
        new = ensure_labels(conn, labels) if add_labels else []
        bad = []
        for line in parsed:
            try:
                labelled(conn, line.label)
            except BadRequest as exc:
                bad.append(f"line {line.number}: {exc}")
        if bad:
            raise ImportFailed(f"{len(bad)} line(s) with an unknown label, nothing imported (--add-labels creates "
                               "them):\n" + "\n".join(bad[:SHOWN_ERRORS]))
        added = insert(conn, rows)
    orphaned = sum(1 for w in found if w is not None and w.status != "ok")
    return ImportSummary(len(parsed), added, len(parsed) - added, orphaned, tuple(new))
