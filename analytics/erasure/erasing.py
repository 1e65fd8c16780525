"""The steps of an erasure and of a lift, in order; the tombstones, the erasure log and `hold_back`,
which every load calls (the package's docstring says what each part removes and why).

>>> erase("lens.duckdb", thread="acme:web:sess-001", reason="GDPR request DSR-12", by="dpo")  # doctest: +SKIP
Erasure(kind='thread', value='acme:web:sess-001', threads=1, rows={'messages': 6, …})
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from analytics import _pandas as pd
from analytics.dblock import database_lock
from analytics.erasure.covered import COUNT, record, recorded
from analytics.erasure.db import KINDS, covered_threads, delete_threads, rewrite_dataset, rewrite_without
from analytics.erasure.digests import keep, recovered, standing, unsaid
from analytics.erasure.exports import erased_values
from analytics.erasure.free_text import free_texts
from analytics.erasure.names import names_of
from analytics.erasure.old_file import held_open
from analytics.erasure.reason import masked_texts
from analytics.erasure.scan import SHORTEST, Needles, Place, Scan, needles_of, places, scan
from analytics.erasure.tenants import check_erase, refuse_scoped, scope_tenants
from analytics.erasure.workspace import purge_workspace
from analytics.errors import BadRequest, NotFound
from analytics.export_log import exports_holding, written_files
from analytics.source_pin import PinRefused, unlink_unfollowed
from analytics.workspace.authors import check_author, default_author
from analytics.workspace.store import Workspace, now, workspace_of
from loaders.dataset import WORK_DB, is_dataset


@dataclass(frozen=True)
class Tombstone:
    """A standing (or lifted) mark that keeps a thread, a tenant or a session out of the database."""

    tombstone_id: int
    kind: str
    value: str
    reason: str
    by: str
    at: str
    lifted_at: str | None = None
    lifted_by: str | None = None
    threads: int = 0  # thread ids recorded as covered (`analytics.erasure.covered`)

    @property
    def standing(self) -> bool:
        return self.lifted_at is None


@dataclass(frozen=True)
class Erasure:
    """What one `erase` removed: the threads it covered and the rows per table."""

    kind: str
    value: str
    threads: int
    rows: dict[str, int] = field(default_factory=dict)
    tombstone_id: int = 0
    elsewhere: dict[str, int] = field(default_factory=dict)  # {place: rows or files removed} outside the database
    scan: Scan | None = None  # the proof: every file still holding erased text
    #: The exports the export log says held an erased thread: (export_id, at, what, target, last).
    exports: list[tuple[int, str, str, str | None, bool]] = field(default_factory=list)

    @property
    def proven(self) -> bool:
        """True when the scan read every known file, none holds erased text, and the replaced
        database file has no name left (`Scan.other_links`)."""
        return self.scan is not None and not self.scan.holding and not self.scan.other_links

    def line(self) -> str:
        """One line for the CLI.

        >>> Erasure("thread", "t1", 1, {"messages": 3, "threads": 1}).line()
        'erased thread t1: 1 thread, 4 rows (messages 3, threads 1); tombstone 0 keeps it out of later loads'
        """
        rows = sum(self.rows.values())
        detail = ", ".join(f"{t} {n}" for t, n in sorted(self.rows.items()))
        return (f"erased {self.kind} {self.value}: {self.threads} thread{'s' if self.threads != 1 else ''}, "
                f"{rows} rows" + (f" ({detail})" if detail else "")
                + f"; tombstone {self.tombstone_id} keeps it out of later loads")


def _mark(thread: str | None, tenant: str | None, session: str | None) -> tuple[str, str]:
    given = [(k, v) for k, v in zip(KINDS, (thread, tenant, session)) if v is not None]
    if len(given) != 1 or not str(given[0][1]).strip():
        raise BadRequest("name exactly one of thread=, tenant=, session= (a non-empty id)")
    return given[0][0], str(given[0][1])


def _reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise BadRequest("give the reason (the erasure request, a ticket): it goes in the erasure log")
    return reason.strip()


def _log(conn: sqlite3.Connection, action: str, kind: str, value: str, reason: str | None, by: str,
         db: str | os.PathLike | None, threads: int, rows: dict[str, int]) -> None:
    conn.execute(
        "INSERT INTO erasure_log (at, action, kind, value, reason, by, db, threads, rows) VALUES (?,?,?,?,?,?,?,?,?)",
        (now(), action, kind, value, reason, by, None if db is None else str(Path(db).resolve()), threads,
         json.dumps(rows, sort_keys=True)),
    )


def erase(db: str | os.PathLike, *, thread: str | None = None, tenant: str | None = None,
          session: str | None = None, reason: str, by: str | None = None,
          app_cache: str | os.PathLike | None = None, remove_exports: bool = False) -> Erasure:
    """Erase one thread, tenant or session from the database (a file, or a Parquet dataset's
    folder) at `db` and keep it out of later loads; then from the review workspace
    (`analytics.erasure.workspace`), the app's version links under `app_cache` and, with
    `remove_exports`, the export files of the export log that hold it; then prove it
    (`analytics.erasure.scan`: `Erasure.scan` lists every file still holding erased text). The
    tombstone is recorded before the rewrite: should the rewrite fail, the next load still
    holds the rows back. Its reason and `by`, and the log's, are `reason` and `by` with each
    stretch of the erased threads' text replaced by `<erased>` (`analytics.erasure.reason`), and
    so are the names and descriptions of the review queues and labels (`analytics.erasure.names`). A database that has none of its rows yet is left as it is. A caller limited to
    some tenants erases only within them (`analytics.erasure.tenants`)."""
    kind, value = _mark(thread, tenant, session)
    reason = _reason(reason)
    by = check_author(by or default_author())
    if not Path(db).exists():  # (a mistyped path: no workspace, no tombstone made beside it)
        raise NotFound(f"{db}: no database there to erase from")
    ws = Workspace.beside(db)  # the one every load of `db` reads (`hold_back`): never another
    with database_lock(db), held_open(db) as names_left:
        tenants = scope_tenants()
        if tenants is not None:  # before anything is written
            check_erase(_rows_file(db), kind, value, tenants)
        source = _rows_file(db)
        threads = _covered(source, kind, value)
        needles = needles_of(source, threads) if source is not None else Needles((), tuple(threads))
        workspaces = [ws, *ws.others()]  # its own, and every other written for it (`--workspace FILE`)
        # What the standing tombstones' erasures looked for, found again where it is still written
        # (`analytics.erasure.digests`): looked for and masked as if read from rows that may be gone.
        needles = replace(needles, texts=tuple(sorted({*needles.texts, *_found_again(db, source, threads, workspaces)})))
        # The reason and `by` are written without the erased text they quote (`analytics.erasure.reason`),
        # and the queues' and labels' names and descriptions rewritten so (`analytics.erasure.names`).
        named: set[str] = set()
        for w in workspaces:
            if w.exists():
                with w.read() as conn:
                    named.update(names_of(conn))
                    named.update(free_texts(conn))
        texts = [reason, by, *sorted(named)]
        quotes: set[str] = set()
        masked = masked_texts(source, threads, texts, needles.texts, quotes)
        # What the workspace quoted of the erased threads is erased text the scan looks for too
        # (everywhere: an export of the notes made before the erasure holds it).
        folded_ids = [t.lower() for t in threads]
        quotes = {q for q in quotes if len(q) >= SHORTEST and not any(q.lower() in i for i in folded_ids)}
        needles = replace(needles, texts=tuple(sorted({*needles.texts, *quotes})))
        (reason, quoted), (by, by_quoted) = masked[0], masked[1]
        names = {t: m for t, (m, n) in zip(texts[2:], masked[2:]) if n}
        with ws.write() as conn:  # before the rewrite: a later load holds these ids back however it parses them
            row = conn.execute("SELECT tombstone_id FROM tombstones WHERE kind = ? AND value = ? AND lifted_at IS NULL",
                               (kind, value)).fetchone()
            if row is None:
                row = conn.execute("INSERT INTO tombstones (kind, value, reason, by, at) VALUES (?,?,?,?,?) "
                                   "RETURNING tombstone_id", (kind, value, reason, by, now())).fetchone()
            record(conn, row[0], threads)
            keep(conn, row[0], needles.texts)  # digests, never the text: what a later erasure finds again
            # Every thread a standing tombstone covers stays out of every place: an earlier erasure's
            # ids are looked for (and purged from the workspaces) again, with this one's.
            earlier = sorted({t for ids in recorded(conn).values() for t in ids} - set(threads))
        needles = replace(needles, ids=(*needles.ids, *earlier))
        if source is not None and threads:
            values: set[str] = set()
            for w in workspaces:
                if w.exists():
                    with w.read() as conn:
                        values.update(erased_values(conn, str(source), threads))
            needles = replace(needles, export_values=tuple(sorted(values)))
        old_inode = os.stat(db).st_ino if Path(db).is_file() else None
        rows: dict[str, int] = {}
        if threads and source is not None:  # (a tenant or session with no thread here: nothing to rewrite)
            rows = rewrite_dataset(db, threads) if source != Path(db) else rewrite_without(db, threads)
        elsewhere: dict[str, int] = {}
        for w in workspaces:
            name = "workspace" if w is ws else f"workspace {w.path}"
            for t, n in purge_workspace(w, list(needles.ids), needles.export_values, needles.texts,
                                           names).items():
                elsewhere[f"{name} {t}"] = n
        if quoted:
            elsewhere["reason quotes"] = quoted
        if by_quoted:
            elsewhere["by quotes"] = by_quoted
        dropped = _drop_app_versions(app_cache, old_inode)
        if dropped:
            elsewhere["app versions"] = dropped
        present = rows.get("threads", 0)
        with ws.write() as conn:
            _log(conn, "erase", kind, value, reason, by, db, present, rows)
        new_inode = os.stat(db).st_ino if Path(db).is_file() else None
        known = places(db, workspaces, app_versions=_app_versions(app_cache, {old_inode, new_inode} - {None}),
                       exports=[f for w in workspaces for f in written_files(db, workspace=w)])
        held = [e for w in workspaces for e in exports_holding(db, threads, workspace=w)]
        found = _logged(scan(known, needles, workspaces), held)
        if remove_exports and any(p.what == "export" for p, _ in found.holding):
            kept: dict[Path, str] = {}  # {path: why it was not removed}
            for place, _ in found.holding:
                if place.what == "export":
                    other = _not_a_file(place.path)
                    if other:  # (a folder or FIFO made at the path since: not the export, not removed)
                        kept[place.path] = other
                        continue
                    try:  # (never through a link swapped in for a folder of its path: `unlink_unfollowed`)
                        unlink_unfollowed(place.path)
                    except (PinRefused, OSError) as exc:
                        kept[place.path] = str(exc).removeprefix(f"{place.path}: ")
                        continue
                    elsewhere["exports removed"] = elsewhere.get("exports removed", 0) + 1
            found = _logged(scan([p for p in known if p.path.exists()], needles, workspaces), held)
            found.holding = [(p, f"{why}; not removed: {kept.pop(p.path)}" if p.path in kept else why)
                             for p, why in found.holding]
            found.holding += [(Place(path, "export"), f"not removed: {why}") for path, why in kept.items()]
        found.other_links = names_left()  # (the app's links under `app_cache` are gone by now)
    return Erasure(kind, value, present, rows, row[0], elsewhere, found, [] if tenants is not None else held)


def _found_again(db: str | os.PathLike, source: Path | None, threads: list[str], workspaces: list[Workspace]) -> set[str]:
    """The texts of the standing tombstones' digests still written in the workspaces (their own
    workspace, `workspaces[0]`, keeps the digests) or the export files, but those a thread kept
    now says (`analytics.erasure.digests`)."""
    if not workspaces[0].exists():
        return set()
    with workspaces[0].read() as conn:
        kept = standing(conn)
    if not kept:
        return set()
    exports = [f for w in workspaces for f in written_files(db, workspace=w)]
    return unsaid(source, recovered(places(db, workspaces, exports=exports), kept), threads)


def _not_a_file(path: Path) -> str | None:
    """Why what stands at an export's recorded path is not removed: None for a file or a link
    (the link itself is removed, never what it names), else what it is (a folder, a FIFO)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file") + " stands there"


def _logged(found: Scan, held: list[tuple[int, str, str, str | None, bool]]) -> Scan:
    """`found`, with each export file the export log says held an erased thread — the last export
    written to that path, which still exists — counted as holding erased text whatever its bytes
    (a masked export may keep no stretch of it long enough to be searched for)."""
    holding = {p.path.resolve() for p, _ in found.holding}
    for export_id, _at, _what, target, last in held:
        path = Path(target) if last and target and os.path.isabs(target) else None
        if path is not None and path.is_file() and path.resolve() not in holding:
            found.holding.append((Place(path, "export"), f"held an erased thread, says export {export_id} of the log"))
            holding.add(path.resolve())
    return found


def _rows_file(db: str | os.PathLike) -> Path | None:
    """The DuckDB file holding `db`'s rows: the file itself, or a dataset's working database;
    None when there is nothing yet. A dataset without its working database is refused (its
    versions could not be rewritten)."""
    db = Path(db)
    if db.is_file():
        return db
    if is_dataset(db) or (db / WORK_DB).is_file():
        if not (db / WORK_DB).is_file():
            raise BadRequest(f"the dataset {db} has no working database {WORK_DB}, so its versions cannot be "
                             "rewritten: load it again with --format parquet, then erase")
        return db / WORK_DB
    return None


def _covered(source: Path | None, kind: str, value: str) -> list[str]:
    if source is None:
        return [value] if kind == "thread" else []
    from loaders.writer import connect_read_only

    con = connect_read_only(source)
    try:
        return covered_threads(con, [(kind, value)])
    finally:
        con.close()


def _app_versions(app_cache: str | os.PathLike | None, inodes: set[int]) -> list[Path]:
    """The app's links (`<cache>/open/<inode>-<mtime>-<size>.duckdb`) to the database's files."""
    folder = None if app_cache is None else Path(app_cache) / "open"
    if folder is None or not folder.is_dir():
        return []
    found = []
    for link in sorted(folder.iterdir()):
        try:
            if link.stat().st_ino in inodes or link.name.split("-", 1)[0] in {str(i) for i in inodes}:
                found.append(link)
        except FileNotFoundError:
            continue
    return found


def _drop_app_versions(app_cache: str | os.PathLike | None, inode: int | None) -> int:
    """Remove the app's links to versions of the database (`ui.database.version_path`,
    `<cache>/open/`): the one that pins the pre-erasure file (`inode`), its copies (named
    after its inode: a database a visitor named, where it could not be linked) and any other
    that no longer has a database (its only link). How many were removed.

    A page of the app may hold the pre-erasure file open: unlinked, its blocks would stay
    on disk (the text with them) until that process lets go. So when the app's links are
    its only names (the database was replaced by the rewrite), its bytes are overwritten
    with zeros first; a read in flight on it fails, and the app's next view opens the
    current file."""
    folder = None if app_cache is None else Path(app_cache) / "open"
    if folder is None or not folder.is_dir():
        return 0
    links = []
    for link in folder.iterdir():
        try:
            links.append((link, link.stat()))
        except FileNotFoundError:
            continue
    pinning = [link for link, st in links if st.st_ino == inode]
    if pinning and os.stat(pinning[0]).st_nlink == len(pinning):
        _zero_fill(pinning[0])
    for link, st in links:  # copies of that file (`ui.database.version_path` where it could not link)
        if st.st_ino != inode and st.st_nlink == 1 and link.name.split("-", 1)[0] == str(inode) and link.is_file():
            _zero_fill(link)
    removed = 0
    for link, st in links:
        if link.is_file() and (st.st_ino == inode or st.st_nlink == 1):
            link.unlink(missing_ok=True)
            removed += 1
    return removed


def _zero_fill(path: Path) -> None:
    """Overwrite the file's bytes in place with zeros (same inode, same size) and flush them."""
    with open(path, "r+b") as fh:
        size = os.fstat(fh.fileno()).st_size
        chunk = bytes(1 << 20)
        for start in range(0, size, len(chunk)):
            fh.write(chunk[: min(len(chunk), size - start)])
        fh.flush()
        os.fsync(fh.fileno())


def lift(db: str | os.PathLike, *, thread: str | None = None, tenant: str | None = None,
         session: str | None = None, reason: str, by: str | None = None) -> Tombstone:
    """Lift the standing tombstone of a thread, tenant or session: the next load brings its
    rows back (if the source still has them). Logged like an erasure. Refused to a caller
    limited to some tenants (`analytics.erasure.tenants`)."""
    refuse_scoped("lift a tombstone")
    kind, value = _mark(thread, tenant, session)
    reason = _reason(reason)
    by = check_author(by or default_author())
    ws = Workspace.beside(db)  # the one every load of `db` reads (`hold_back`): never another
    with ws.write() as conn:
        row = conn.execute(
            "UPDATE tombstones SET lifted_at = ?, lifted_by = ? WHERE kind = ? AND value = ? AND lifted_at IS NULL "
            "RETURNING tombstone_id", (now(), by, kind, value)).fetchone()
        if row is None:
            raise NotFound(f"no standing tombstone for {kind} {value} in {ws.path}")
        _log(conn, "lift", kind, value, reason, by, db, 0, {})
        lifted = conn.execute(f"SELECT t.*, {COUNT} FROM tombstones t WHERE tombstone_id = ?", row).fetchone()
    return Tombstone(*lifted)


def tombstones(db: str | os.PathLike | None, *, standing: bool = False,
               workspace: Workspace | str | os.PathLike | None = None) -> list[Tombstone]:
    """Every tombstone (`standing=True`: only those not lifted), oldest first.

    >>> [t.value for t in tombstones("lens.duckdb", standing=True)]  # doctest: +SKIP
    ['acme:web:sess-001']

    Refused to a caller limited to some tenants (`analytics.erasure.tenants`).
    """
    refuse_scoped("list the tombstones")
    return tombstones_for_loads(db, standing=standing, workspace=workspace)


def tombstones_for_loads(db: str | os.PathLike | None, *, standing: bool = False,
                         workspace: Workspace | str | os.PathLike | None = None) -> list[Tombstone]:
    """`tombstones` whatever the caller's tenant scope: what a load holds back (it writes every
    tenant's rows, so every mark applies to it), never shown to a reader."""
    ws = workspace_of(db, workspace)
    with ws.read() as conn:
        rows = conn.execute(f"SELECT t.*, {COUNT} FROM tombstones t" + (" WHERE lifted_at IS NULL" if standing else "")
                            + " ORDER BY tombstone_id").fetchall()
    return [Tombstone(*r) for r in rows]


#: Columns of `erasure_log()` (the workspace table's, `rows` as JSON text).
LOG_COLUMNS = ("entry_id", "at", "action", "kind", "value", "reason", "by", "db", "threads", "rows")


def erasure_log(db: str | os.PathLike | None, *, workspace: Workspace | str | os.PathLike | None = None) -> pd.DataFrame:
    """The erasure log, oldest first: one row per erase, lift and load that held rows back.

    >>> erasure_log("lens.duckdb")[["action", "kind", "value", "by"]]  # doctest: +SKIP

    Refused to a caller limited to some tenants (`analytics.erasure.tenants`).
    """
    refuse_scoped("read the erasure log")
    ws = workspace_of(db, workspace)
    with ws.read() as conn:
        rows = conn.execute(f"SELECT {', '.join(LOG_COLUMNS)} FROM erasure_log ORDER BY entry_id").fetchall()
    return pd.DataFrame(rows, columns=list(LOG_COLUMNS))


def hold_back(con, db: str | os.PathLike) -> dict[str, int]:
    """Drop what the standing tombstones of `db`'s workspace cover from the staged database
    on `con` (a load's, before its derived tables are built); {table: rows dropped}. A
    tombstone covers the thread ids recorded under it (`analytics.erasure.covered`) and
    whatever it matches in the staged database now (its tenant or session as this load
    parsed them), which are recorded in turn. Each tombstone that held rows back gets a
    `held_back` entry in the erasure log. A workspace that does not exist yet holds no
    tombstones (nothing is created)."""
    ws = Workspace.beside(db)
    if not ws.exists():
        return {}
    standing = tombstones_for_loads(db, standing=True, workspace=ws)
    if not standing:
        return {}
    with ws.read() as conn:
        covered = recorded(conn)
    dropped: dict[str, int] = {}
    held: list[tuple[Tombstone, dict[str, int], list[str]]] = []
    for t in standing:  # one mark at a time: each log entry counts what it held back
        matched = covered_threads(con, [(t.kind, t.value)])
        rows = delete_threads(con, sorted(set(matched).union(covered.get(t.tombstone_id, ()))))
        if rows:
            held.append((t, rows, matched))
            for table, n in rows.items():
                dropped[table] = dropped.get(table, 0) + n
    if held:
        by = default_author()
        with ws.write() as conn:
            for t, rows, matched in held:
                record(conn, t.tombstone_id, matched)
                _log(conn, "held_back", t.kind, t.value, None, by, db, rows.get("threads", 0), rows)
    return dropped
