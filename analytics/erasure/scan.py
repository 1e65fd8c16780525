"""The proof of an erasure: every file the project keeps a copy of the text in, searched for the erased text.

What is searched for (`Needles`), taken from the database before the rows go:
the erased messages' texts — for the 32 longest and the 256 shortest messages of 8 characters or
more, three 48-character windows of its longest line (start, middle, end: a shorter line is one
window, itself), and three of each of the line's three longest stretches between personal values
(what a masked export keeps verbatim: masking rewrites every window that spans an e-mail or a
phone number); the same windows of the 256 values of the erased threads' checkpoint metadata
(`analytics.erasure.said`: what the caller wrote there, a customer's e-mail, not LangGraph's own
bookkeeping) carried by the most erased threads, then the longest; each window of 8 characters or more, kept only
when no kept thread says it — in a message's text or tool calls, or in its metadata (a shared
system prompt is not erased text) — and it is no part of an erased id (the workspace keeps
those by design); in UTF-8, JSON-escaped and CSV-quoted forms; and the erased thread ids, with those every standing
tombstone covered (an earlier erasure's: `erase` adds them), as words (a byte match must stand
alone: `sess-001` does not match inside `sess-0010`).

Where (`places`): the database and its write-ahead log and leftovers of killed
writes, or every file of a Parquet dataset (its versions and `.lens.duckdb`); the
review workspace and its `-wal`/`-shm`, and every other workspace recorded as written for the
database (`--workspace FILE`: `Workspace.record_other`); the app's version links of this database
(`<cache>/open/`: those of its file, before or after the erasure);
and every file named as the target of an export of this database in the export
log that still exists.

How: every file is read as bytes (`grep -F`: every needle in one pass, bytes
as bytes; each file opened here without blocking and read only when it is a regular
file: a FIFO, a device or a socket at a path is named, not read), and files in a compressed format — DuckDB databases and Parquet files, in
which text is stored compressed and a byte search proves nothing — are also read
through DuckDB: every text column of every table, one RE2 pass per column, and
every `thread_id` against the erased ids. The workspace keeps the erased ids by
design (the tombstone, the erasure and export logs), so there only the texts are
byte-searched and the ids are looked for in annotations, queues and saved views.

>>> scan(places(db, ws), needles)  # doctest: +SKIP
Scan(files=7, holding=[])
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analytics.erasure.exports import values_left
from analytics.erasure.said import METADATA_TABLE, said_sql
from analytics.erasure.workspace import ids_left
from analytics.redact import find_personal_data
from analytics.workspace.store import Workspace

#: How many messages, windows per message and characters per window the texts searched for come from.
MESSAGES, WINDOW = 32, 48
#: The fewest characters a text searched for has (a window, a short message, a stretch between
#: personal values): shorter ones (`ok`, `thanks`) are in too many files to prove anything.
SHORTEST = 8
#: How many of the shortest erased messages (of `SHORTEST` characters or more) are searched for too:
#: the longest messages' windows say nothing of a file holding only a short one.
SHORT_MESSAGES = 256
#: How many of the erased threads' checkpoint-metadata values (`analytics.erasure.said`, of `SHORTEST`
#: characters or more) are searched for too: those carried by the most erased threads, then the longest.
METADATA_VALUES = 256
#: How many stretches between personal values of each such line are searched for too.
STRETCHES = 3
#: At most this many thread ids are byte-searched (all of them are looked up through DuckDB).
BYTE_IDS = 256
_DUCKDB_MAGIC, _PARQUET_MAGIC = b"DUCK", b"PAR1"


def forms(text: str) -> list[tuple[int, bytes]]:
    """The bytes `text` is looked for as, each with its form: 0 UTF-8, 1 JSON-escaped, 2 CSV-quoted.

    >>> [(form, raw.decode()) for form, raw in forms('a "b"')]
    [(0, 'a "b"'), (1, 'a \\\\"b\\\\"'), (2, 'a ""b""')]
    """
    return [(0, text.encode()), (1, json.dumps(text)[1:-1].encode()), (2, text.replace('"', '""').encode())]


@dataclass(frozen=True)
class Needles:
    """The erased text to look for: message windows and thread ids."""

    texts: tuple[str, ...]
    ids: tuple[str, ...]
    #: Export-log argument values that are the erased threads' text (`analytics.erasure.exports`).
    export_values: tuple[str, ...] = ()

    def text_bytes(self) -> list[bytes]:
        return sorted({raw for t in self.texts for _, raw in forms(t)})

    def id_bytes(self) -> list[bytes]:
        ids = [i for i in self.ids if len(i) >= 4 and "\n" not in i][:BYTE_IDS]
        return sorted({form.encode() for i in ids for form in (i, json.dumps(i)[1:-1])})


@dataclass(frozen=True)
class Place:
    """A file the scan reads, and what it is (shown in the report)."""

    path: Path
    what: str
    ids: bool = True  # byte-search the thread ids too (not in the workspace, which keeps them by design)
    #: False for a path the export log recorded as one written file: opened without following a
    #: link, and anything but a regular file there (a folder, a link, a FIFO) is named, not read.
    follow: bool = True


@dataclass
class Scan:
    """What the scan found: how many files it read, and those still holding erased text."""

    files: int = 0
    holding: list[tuple[Place, str]] = field(default_factory=list)
    #: Names the replaced database file still has that the scan cannot find (hard links made
    #: outside the tool, or under another app cache than the erasure's): each holds the old file whole.
    other_links: int = 0

    def lines(self) -> list[str]:
        out = [f"scan: {len(self.holding)} of {self.files} files hold erased text"
               + (f", and {self.other_links} other name{'s' if self.other_links != 1 else ''} of the replaced "
                  "database file (not found, not read) still hold it" if self.other_links else "")]
        out += [f"  still holds erased text ({why}): {p.path} [{p.what}]" for p, why in self.holding]
        if self.other_links:
            out.append(f"  still holds erased text: the pre-erasure database file under {self.other_links} hard "
                       "link(s) the scan does not know (another app cache than --app-cache, a link made by hand): "
                       "find them by its inode (find / -inum) and delete them, or erase with that --app-cache")
        return out


def _ids_table(con: duckdb.DuckDBPyConnection, ids) -> None:
    con.execute("CREATE OR REPLACE TEMP TABLE scan_ids (thread_id VARCHAR)")
    con.execute("INSERT INTO scan_ids SELECT DISTINCT unnest(?::VARCHAR[])", [list(ids)])


def needles_of(db: str | os.PathLike, thread_ids: list[str]) -> Needles:
    """The erased threads' text windows (distinctive: said by no kept thread) and ids, read from
    the DuckDB database at `db` before the erasure: windows of their messages and of their
    checkpoint metadata's values (`analytics.erasure.said`)."""
    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        _ids_table(con, thread_ids)
        said = said_sql(con, "src")
        if said is None:
            return Needles((), tuple(thread_ids))
        has = {t for (t,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src'").fetchall()}
        texts = []
        if "messages" in has:
            chosen = ("SELECT DISTINCT content FROM src.messages SEMI JOIN scan_ids USING (thread_id) "
                      "WHERE length(trim(content)) >= ? ORDER BY length(content) {}, content LIMIT ?")
            texts += [c for (c,) in con.execute(chosen.format("DESC"), [SHORTEST, MESSAGES]).fetchall()]
            texts += [c for (c,) in con.execute(chosen.format("ASC"), [SHORTEST, SHORT_MESSAGES]).fetchall()]
        if METADATA_TABLE in said:  # (it has metadata; a value many erased threads carry first: a tenant's own, say)
            texts += [v for (v,) in con.execute(
                f"SELECT said FROM {METADATA_TABLE} SEMI JOIN scan_ids USING (thread_id) "
                "WHERE length(trim(said)) >= ? GROUP BY said ORDER BY count(*) DESC, length(said) DESC, said LIMIT ?",
                [SHORTEST, METADATA_VALUES]).fetchall()]
        lines = [max(c.splitlines(), key=len) for c in texts if c.strip()]  # a window never spans a line break
        windows = sorted({w for c in lines for piece in (c, *_verbatim_stretches(c)) for w in _windows(piece)})
        # Kept: a window no kept thread says, and no part of an erased id (the workspace keeps those by design).
        distinct = [w for (w,) in con.execute(
            f"WITH said AS ({said}) "
            "SELECT w FROM unnest(?::VARCHAR[]) AS t(w) WHERE NOT EXISTS (SELECT 1 FROM said s "
            "WHERE contains(s.said, w) AND (s.thread_id IS NULL OR s.thread_id NOT IN (SELECT thread_id FROM scan_ids))) "
            "AND NOT EXISTS (SELECT 1 FROM scan_ids i WHERE contains(i.thread_id, w))",
            [windows]).fetchall()] if windows else []
        return Needles(tuple(sorted(distinct)), tuple(thread_ids))
    finally:
        con.close()


def _windows(text: str) -> list[str]:
    """Three windows of `text` (start, middle, end) of `WINDOW` characters, each of `SHORTEST` or more once
    stripped (a text shorter than a window is one window: itself)."""
    return [w.strip() for w in (text[:WINDOW], text[len(text) // 2:][:WINDOW], text[-WINDOW:])
            if len(w.strip()) >= SHORTEST]


def _verbatim_stretches(line: str) -> list[str]:
    """The `STRETCHES` longest stretches of `line` between its personal values: what a masked export
    (`--redact`, `analytics.masking`) keeps verbatim of the line, where every window spanning a value
    is rewritten (`<EMAIL_1>`). None when the line holds no personal value (its windows are verbatim)."""
    found = find_personal_data(line)
    if not found:
        return []
    bounds = [0, *(b for f in found for b in (f.start, f.end)), len(line)]
    stretches = [line[a:b] for a, b in zip(bounds[::2], bounds[1::2])]
    return sorted(stretches, key=len, reverse=True)[:STRETCHES]


def _siblings(path: Path) -> list[Path]:
    return sorted(p for p in path.parent.glob(f"{path.name}*") if p.is_file()) if path.parent.is_dir() else []


_BACKUP = re.compile(r"\.v[0-9]+\.bak")


def places(db: str | os.PathLike, workspaces: Workspace | list[Workspace], *, app_versions: list[Path] = (),
           exports: list[str] = ()) -> list[Place]:
    """Every file the project keeps (or wrote) a copy of `db`'s text in: the database, its
    `workspaces` (its own and every other recorded as written for it), the app's versions, the
    export files."""
    db = Path(db)
    found: list[Place] = []
    if db.is_dir():  # (its own files: a link is not followed out of the folder, nor a FIFO opened)
        found += [Place(p, "dataset") for p in sorted(db.rglob("*")) if p.is_file() and not p.is_symlink()]
    else:  # the file, its .wal, a killed write's .tmp-* (not the lock, nor the workspace: below)
        found += [Place(p, "database") for p in _siblings(db) if p.name == db.name or (
            p.name.startswith(db.name + ".") and not p.name.endswith(".lock") and ".workspace.sqlite" not in p.name)]
    for ws in [workspaces] if isinstance(workspaces, Workspace) else workspaces:
        found += [Place(p, "workspace", ids=False) for p in _siblings(ws.path) if p.name.startswith(ws.path.name)
                  and p.name[len(ws.path.name):] in ("", "-wal", "-shm", "-journal")]
        # The copy a schema upgrade keeps of the workspace as it was (`analytics.workspace.store`):
        # annotations and all, never purged here, so only the scan can say it holds erased text.
        found += [Place(p, "workspace backup") for p in _siblings(ws.path) if p.name.startswith(ws.path.name)
                  and _BACKUP.fullmatch(p.name[len(ws.path.name):])]
    found += [Place(p, "app version") for p in app_versions if p.is_file()]
    # Every export is one file. Whatever else stands at its path now (a folder made there since,
    # a link, a FIFO) is not the tool's: listed to be named, never descended into nor followed.
    found += [Place(t, "export", follow=False) for t in map(Path, exports) if os.path.lexists(t)]
    seen: set[Path] = set()
    return [p for p in found if not (_key(p) in seen or seen.add(_key(p)))]


def _key(place: Place) -> Path:
    """The file `place` reads: a path not followed is its own file, whatever a link there names."""
    return place.path.resolve() if place.follow else place.path.parent.resolve() / place.path.name


#: What a file that is not a regular one is called in the scan's line.
_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def _open_regular(path: Path, follow: bool = True) -> int:
    """A descriptor of the regular file at `path`, opened without blocking: a FIFO swapped in for a
    file since it was listed would hold an open (and a read) until some writer came, a device
    could be read for ever. Anything but a regular file is `NotRegular`, naming what it is.
    `follow=False`: the path names one export file; a link there is not followed (`O_NOFOLLOW`)
    and what stands there instead of a regular file is named as not the export file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotRegular("not the export file: a link") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = _SPECIAL.get(stat.S_IFMT(mode), "not a regular file")
        raise NotRegular(f"not read: {kind}" if follow else f"not the export file: {kind}")
    return fd


class NotRegular(OSError):
    """The file at a scanned path is not a regular file (a FIFO, a device, a socket): not read."""


def _grep(paths: list[Path], needles: list[bytes], whole_word: bool,
          unfollowed: frozenset[Path] = frozenset()) -> tuple[set[Path], dict[Path, str]]:
    """(the files among `paths` whose bytes hold one of `needles`, {file: why it was not read}):
    `grep -F` (many fixed strings in one pass, Aho-Corasick-like, byte semantics under LC_ALL=C);
    Python's own search where there is no grep. `whole_word`: a match must not touch a letter,
    digit or `_` on either side. Each file is opened here (`_open_regular`) and grep reads the
    open file (`/dev/fd/N`), so what it reads is the regular file checked, whatever the path
    names by then. A path in `unfollowed` is opened without following a link (`_open_regular`)."""
    if not paths or not needles:
        return set(), {}
    grep = shutil.which("grep") if os.path.isdir("/dev/fd") else None
    argv = [grep, "-F", "-a", "-l", "-s", *(["-w"] if whole_word else [])]
    for n in needles:
        argv += ["-e", n.decode("utf-8", "surrogateescape")]
    found: set[Path] = set()
    unread: dict[Path, str] = {}
    for start in range(0, len(paths), 200):
        fds: dict[int, Path] = {}
        try:
            for path in paths[start:start + 200]:
                try:
                    fds[_open_regular(path, path not in unfollowed)] = path
                except NotRegular as exc:
                    unread[path] = str(exc)
                except OSError as exc:
                    unread[path] = f"could not be read: {type(exc).__name__}"
            if not fds:
                continue
            if grep is None:
                found |= {p for fd, p in fds.items() if _python_holds(fd, needles, whole_word)}
                continue
            names = {f"/dev/fd/{fd}": p for fd, p in fds.items()}
            proc = subprocess.run([*argv, "--", *names], capture_output=True, pass_fds=tuple(fds),
                                  env={**os.environ, "LC_ALL": "C"})
            found |= {names[n] for n in (line.decode("utf-8", "surrogateescape") for line in proc.stdout.splitlines())
                      if n in names}
            if proc.returncode == 2:  # a file it could not read: say so rather than pass it
                found |= {p for p in fds.values() if not os.access(p, os.R_OK)}
        finally:
            for fd in fds:
                os.close(fd)
    return found, unread


def _python_holds(fd: int, needles: list[bytes], whole_word: bool) -> bool:
    try:
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file
        return False
    with mm:
        for n in needles:
            pattern = re.compile(rb"(?<![\w])" + re.escape(n) + rb"(?![\w])") if whole_word else None
            if (pattern.search(mm) if pattern else mm.find(n) >= 0):
                return True
    return False


def _magic(path: Path, follow: bool = True) -> bytes:
    fd = _open_regular(path, follow)
    try:
        head = os.pread(fd, 12, 0)
    finally:
        os.close(fd)
    if head[:4] == _PARQUET_MAGIC:
        return _PARQUET_MAGIC
    return _DUCKDB_MAGIC if head[8:12] == _DUCKDB_MAGIC else b""


def _re2_literal(text: str) -> str:
    return "".join("\\" + ch if not ch.isalnum() and ch.isascii() and ch not in " _" else ch for ch in text)


def _relation_holds(con: duckdb.DuckDBPyConnection, relation: str, pattern: str | None) -> bool:
    cols = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    terms = []
    for name, kind, *_ in cols:
        quoted = '"' + name.replace('"', '""') + '"'
        if name == "thread_id":
            terms.append(f"{quoted} IN (SELECT thread_id FROM scan_ids)")
        if kind == "VARCHAR" and pattern is not None:
            terms.append(f"regexp_matches({quoted}, $pattern)")
    if not terms:
        return False
    params = {"pattern": pattern} if pattern is not None and any("$pattern" in t for t in terms) else {}
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM {relation} WHERE {' OR '.join(terms)})", params).fetchone()[0]


def _reader_holds(path: Path, magic: bytes, needles: Needles) -> str | None:
    pattern = "|".join(_re2_literal(t) for t in needles.texts) or None
    con = duckdb.connect()
    try:
        _ids_table(con, needles.ids)
        if magic == _PARQUET_MAGIC:
            rel = "read_parquet('" + str(path).replace("'", "''") + "')"
            return "text or id, read as Parquet" if _relation_holds(con, rel, pattern) else None
        con.execute("ATTACH ? AS scanned (READ_ONLY)", [str(path)])
        tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'scanned'").fetchall()
        for schema, table in tables:
            rel = f'scanned."{schema}"."{table}"'
            if _relation_holds(con, rel, pattern):
                return f"text or id in table {table}, read as DuckDB"
        return None
    finally:
        con.close()


def scan(found: list[Place], needles: Needles, workspaces: Workspace | list[Workspace] | None = None) -> Scan:
    """Search every place for the needles; the files still holding any (a file that cannot be
    read counts as holding: the proof is only what was read). In each of `workspaces`, the erased
    ids are looked for where they must not stay (annotations, queues, views, export arguments)."""
    result = Scan(files=len(found))
    unfollowed = frozenset(p.path for p in found if not p.follow)
    by_text, unread = _grep([p.path for p in found], needles.text_bytes(), whole_word=False, unfollowed=unfollowed)
    by_id, unread_ids = _grep([p.path for p in found if p.ids], needles.id_bytes(), whole_word=True, unfollowed=unfollowed)
    unread = {**unread_ids, **unread}
    for place in found:
        why = (unread.get(place.path) or ("message text, as bytes" if place.path in by_text else
               "thread id, as bytes" if place.path in by_id else None))
        try:
            if why is None and not place.follow:  # (the needles may be empty: nothing was opened)
                os.close(_open_regular(place.path, follow=False))
            if why is None and not os.access(place.path, os.R_OK):
                why = "could not be read"
            magic = _magic(place.path, place.follow) if why is None else b""
            if magic:
                why = _reader_holds(place.path, magic, needles)
        except NotRegular as exc:
            why = str(exc)
        except (OSError, duckdb.Error) as exc:
            why = f"could not be read: {type(exc).__name__}"
        if why:
            result.holding.append((place, why))
    for ws in [] if workspaces is None else [workspaces] if isinstance(workspaces, Workspace) else workspaces:
        if not ws.exists():
            continue
        left = ids_left(ws, list(needles.ids))
        if left:
            result.holding.append((Place(ws.path, "workspace"), f"{len(left)} erased thread id(s) in annotations, queues or views"))
        with ws.read() as conn:
            rows = values_left(conn, needles.export_values, needles.ids, needles.texts)
        if rows:
            result.holding.append((Place(ws.path, "workspace"), f"{rows} export-log row(s) whose arguments hold erased text or ids"))
    return result
