"""The export log: who took what out of the tool, when, and whether it was masked.

Every report `write_report` writes (CLI or API), every `transcript`, `search` and
`diff` the CLI prints or writes, and every CSV downloaded from the app appends one
row to the `exports` table of the review workspace (append-only: its triggers
refuse UPDATE and DELETE). Who is the app's signed-in user, else the OS user;
origin says which door it left by (`cli`, `app`, `api`). The log is written before
the export is handed over, and an export whose row cannot be written is refused
(`ExportRefused`): nothing leaves unrecorded.

>>> with acting_as("ana@acme.com", "app"):  # doctest: +SKIP
...     record_export("lens.duckdb", "conversations", arguments={"tenant": ["acme"]}, rows=12, masked=True,
...                   target="conversations.csv")
"""

from __future__ import annotations

import contextvars
import dataclasses
import getpass
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from analytics import _pandas as pd
from analytics.errors import AnalyticsError, BadRequest
from analytics.workspace.store import Workspace, WorkspaceError, now, temp_ids, workspace_of

ORIGINS = ("cli", "app", "api")
#: Columns of `exports()` and of `report exports` (the workspace table's).
COLUMNS = ("export_id", "at", "who", "origin", "what", "arguments", "rows", "masked", "target", "db")


class ExportRefused(AnalyticsError):
    """The export log could not be written, so the export was not made."""


@dataclass(frozen=True)
class Actor:
    """Who is exporting, and through which door."""

    who: str
    origin: str = "api"


_actor: contextvars.ContextVar[Actor | None] = contextvars.ContextVar("transcript_lens_export_actor", default=None)


def os_user() -> str:
    """The login name of this process (`unknown` where the system has none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def current_actor() -> Actor:
    """The actor `acting_as` set for this context, else the OS user through the API."""
    return _actor.get() or Actor(os_user(), "api")


@contextmanager
def acting_as(who: str | None = None, origin: str = "api") -> Iterator[Actor]:
    """Exports made inside the block are logged as `who` (default: the OS user) through `origin`."""
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, got {origin!r}")
    actor = Actor((who or "").strip() or os_user(), origin)
    token = _actor.set(actor)
    try:
        yield actor
    finally:
        _actor.reset(token)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # What was asked: a condition left at "none" (empty, or a flag not set) is left out.
        return {k: _jsonable(v) for k, v in dataclasses.asdict(value).items() if v not in (None, (), [], "") and v is not False}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _masked(value: Any) -> Any:
    from analytics.masking import redactor

    if isinstance(value, str):
        return redactor().text(value)
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    return value


def arguments_of(options: Mapping[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The arguments worth recording from a command's options: given values only (no
    unset flags, no functions, nothing in `skip`).

    >>> arguments_of({"tenant": ["acme"], "since": None, "desc": False, "run": print, "limit": "5"})
    {'tenant': ['acme'], 'limit': '5'}
    """
    out = {}
    for key, value in options.items():
        if key in skip or callable(value) or value is None or value is False or value in ((), []):
            continue
        out[key] = _jsonable(value)
    return out


def record_export(db: str | os.PathLike | None, what: str, *, arguments: Mapping[str, Any], rows: int | None,
                  masked: bool, target: str | os.PathLike | None,
                  workspace: Workspace | str | os.PathLike | None = None, actor: Actor | None = None,
                  threads: Iterable[str] = ()) -> int:
    """Append one row to the export log, with the ids of the `threads` its rows belong to
    (`export_threads`: an erasure names the exports that held an erased thread); its id. Raises
    `ExportRefused` when it cannot be written (the caller must then not hand the export over)."""
    actor = actor or current_actor()
    recorded = _jsonable(dict(arguments))
    if masked:  # a masked export's arguments (a searched email, say) are logged masked too
        recorded = _masked(recorded)
    try:
        ws = workspace_of(db, workspace)
        with ws.write() as conn:
            (export_id,) = conn.execute(
                "INSERT INTO exports (at, who, origin, what, arguments, rows, masked, target, db) "
                "VALUES (?,?,?,?,?,?,?,?,?) RETURNING export_id",
                (now(), actor.who, actor.origin, what, json.dumps(recorded, sort_keys=True),
                 rows, int(bool(masked)), None if target is None else str(target),
                 None if db is None else str(Path(db).resolve())),
            ).fetchone()
            conn.executemany("INSERT OR IGNORE INTO export_threads (export_id, thread_id) VALUES (?, ?)",
                             [(export_id, t) for t in sorted({t for t in threads if isinstance(t, str)})])
        return export_id
    except (WorkspaceError, sqlite3.Error, OSError) as exc:
        raise ExportRefused(f"export refused: the export log cannot be written ({exc})") from exc


def exports(db: str | os.PathLike | None, *, workspace: Workspace | str | os.PathLike | None = None) -> pd.DataFrame:
    """The export log, oldest first (`COLUMNS`; `arguments` as JSON text). Refused under a tenant
    scope: its rows name every tenant's threads, search texts and files, and a row does not say
    whose scope it was written under, so there is no scoped part of it to give.

    >>> exports("lens.duckdb")[["who", "origin", "what", "rows"]]  # doctest: +SKIP
    """
    from analytics.policy import effective

    if effective().tenants is not None:
        raise BadRequest("the export log spans every tenant (thread ids, search texts, files), so a reader "
                         "scoped to tenants cannot read it")
    ws = workspace_of(db, workspace)
    with ws.read() as conn:
        rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM exports ORDER BY export_id").fetchall()
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["rows"] = frame["rows"].astype("Int64")
    frame["masked"] = frame["masked"].astype(bool)
    return frame


def exports_holding(db: str | os.PathLike, thread_ids: Iterable[str], *,
                    workspace: Workspace | str | os.PathLike | None = None) -> list[tuple[int, str, str, str | None, bool]]:
    """The exports of `db` the log says held one of `thread_ids` (`export_threads`), oldest first:
    (export_id, at, what, target, last), `last` when no later export of `db` was written to the
    same target (the file there is still that export's)."""
    ws = workspace_of(db, workspace)
    ids = sorted(set(thread_ids))
    if not ws.exists() or not ids:
        return []
    with ws.read() as conn:
        temp_ids(conn, "held_ids", ids)
        rows = conn.execute(
            "SELECT e.export_id, e.at, e.what, e.target, e.target IS NOT NULL AND e.export_id = "
            "(SELECT max(f.export_id) FROM exports f WHERE f.db = e.db AND f.target = e.target) FROM exports e "
            "WHERE e.db = ? AND EXISTS (SELECT 1 FROM export_threads x JOIN temp.held_ids h USING (thread_id) "
            "WHERE x.export_id = e.export_id) ORDER BY e.export_id", (str(Path(db).resolve()),)).fetchall()
    return [(i, at, what, target, bool(last)) for i, at, what, target, last in rows]


def written_files(db: str | os.PathLike, *, workspace: Workspace | str | os.PathLike | None = None) -> list[str]:
    """The files the export log says were written from `db` (absolute targets: a CLI `--out`,
    a report; an app download lands in the browser, not here), oldest first, each once."""
    ws = workspace_of(db, workspace)
    if not ws.exists():
        return []
    with ws.read() as conn:
        rows = conn.execute("SELECT target FROM exports WHERE db = ? AND target IS NOT NULL ORDER BY export_id",
                            (str(Path(db).resolve()),)).fetchall()
    return list(dict.fromkeys(t for (t,) in rows if os.path.isabs(t)))


def log_cli_export(args, what: str, rows: int | None, target: str | os.PathLike | None = None,
                   threads: Iterable[str] | None = None) -> int:
    """Log what a CLI command (`transcript`, `search`, `diff`) is about to print or write, from
    its parsed arguments (`--db`, the filters, the format); raises `ExportRefused` first when
    the log cannot be written, so nothing is printed. Masked: the policy its connection had.
    `threads`: the threads it holds (default: the one its `--thread` names)."""
    from analytics.policy import effective

    options = vars(args)
    arguments = arguments_of(options, skip=("db", "out", "command", "redact", "redact_config", "workspace"))
    if threads is None:
        threads = [options["thread"]] if isinstance(options.get("thread"), str) else []
    return record_export(options["db"], what, arguments=arguments, rows=rows, masked=effective().redact,
                         target=None if target is None else Path(target).resolve(),
                         workspace=options.get("workspace"), threads=threads)
