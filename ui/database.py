"""Which DuckDB database the app reads, and where loaded sources are kept.

Plain functions (no streamlit) so the bench and the tests resolve the demo
database exactly the way the app does.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import NamedTuple

import transcript_lens
from analytics.policy import Policy
from transcript_lens.demo import demo_db, demo_is_stale, ensure_demo_db  # noqa: F401  (the app's demo)

# The bundled store and the cache: where the package says they are (a checkout, or a wheel's copy).
DEMO_SOURCE = transcript_lens.demo_store()
ENV_DB = "TRANSCRIPT_LENS_DB"


def cache_dir() -> Path:
    """Where the demo database, uploads and loaded sources live (`transcript_lens.cache_dir`)."""
    return transcript_lens.cache_dir()




def loads_dir() -> Path:
    return cache_dir() / "loads"


def uploads_dir() -> Path:
    return cache_dir() / "uploads"


class DbRef(NamedTuple):
    """A database file as of one version, read under one session's policy: cache keys include
    it, so a reload invalidates them and no session is answered from another's reading (a
    masked session from an unmasked one's, a user of one tenant from another's)."""

    path: str
    mtime_ns: int
    size: int
    inode: int
    #: What the session reading it may see (`ui.session.policy()`; the deployment's is on top).
    policy: Policy = Policy()

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def version(self) -> tuple[str, int, int, int]:
        """The file version alone (the same for every session's policy)."""
        return (self.path, self.mtime_ns, self.size, self.inode)


def ref(path: str | os.PathLike) -> DbRef:
    """The current version of the file at `path` (FileNotFoundError when absent, or when a
    database a visitor named is no longer a regular file reached without a link: `_held`)."""
    p = Path(path).resolve()
    with _held(path) as fd:
        st = os.stat(p) if fd is None else os.fstat(fd)
    return DbRef(str(p), st.st_mtime_ns, st.st_size, st.st_ino)


@contextlib.contextmanager
def _held(path: str | os.PathLike) -> Iterator[int | None]:
    """A database a visitor named, under a deployment with source folders: an `O_PATH`
    descriptor of it reached from its folder down, no link followed (`source_pin.held`), so
    what the app reads is the file the check saw, never a link swapped in after it (a
    `FileNotFoundError` saying so). None for the server's own databases (its cache, the one it
    was started on) and without source folders: those are read by name."""
    from analytics import source_pin
    from ui import access

    roots = access.from_environment().source_roots
    p = Path(path).resolve()
    if not roots or p == default_db_path() or p == demo_db().resolve() or cache_dir().resolve() in p.parents:
        yield None
        return
    try:
        with source_pin.held(path, roots) as fd:  # (named as the session names it, not a link's target)
            yield fd
    except source_pin.PinRefused as exc:
        raise FileNotFoundError(str(exc)) from None


def newer(db: DbRef) -> DbRef | None:
    """The file's current version when a load changed or replaced it since `db` was read, else None.

    >>> newer(ref(demo_db())) is None  # doctest: +SKIP
    True
    """
    try:
        now = ref(db.path)
    except FileNotFoundError:
        return None
    return None if now.version == db.version else now  # (the file's version: `db` carries a session's policy too)


@functools.lru_cache(maxsize=64)
def schema_problem(version: tuple[str, int, int, int]) -> str | None:
    """Why the app cannot read this version of a database (`DbRef.version`): written under another
    schema (`analytics.db.schema_problem`); None when it can. Asked once per file version."""
    from analytics.db import connect
    from analytics.errors import NotADatabase, OlderSchema

    try:
        with _held(version[0]) as fd:
            if fd is not None and os.fstat(fd).st_ino != version[3]:
                return f"{version[0]} was replaced since it was opened: open it again"
            connect(version[0] if fd is None else f"/proc/self/fd/{fd}").close()
    except (OlderSchema, NotADatabase) as exc:
        return str(exc)
    except FileNotFoundError as exc:
        return str(exc)
    return None


def version_path(db: DbRef, keep: Collection[str] = ()) -> Path:
    """A path that names exactly this version of the file (a hard link in the cache folder);
    links of replaced versions are removed on the way, but for those in `keep` (still read).

    DuckDB gives every connect() of a file the database instance already open for
    it (symlinks resolved), so while anything still reads the old version of a
    replaced file, opening the same path again answers from the old one. A hard
    link per version has its own path and pins its own inode, so a connection
    opened on it always reads the version its cache key names. Falls back to the
    path itself where a hard link cannot be made (another filesystem).
    """
    link = cache_dir() / "open" / f"{db.inode}-{db.mtime_ns}-{db.size}.duckdb"
    try:
        st = link.stat()
        if st.st_ino == db.inode:
            return link
        link.unlink()
    except FileNotFoundError:
        pass
    _sweep(link.parent, keep)
    with _held(db.path) as fd:
        if fd is not None:
            return _pin_version(fd, db, link)
        try:
            link.parent.mkdir(parents=True, exist_ok=True)
            tmp = link.with_name(f"{link.name}.{os.getpid()}")
            os.link(db.path, tmp)
            if os.stat(tmp).st_ino != db.inode:  # the file was replaced between stat and link
                tmp.unlink()
                return Path(db.path)
            os.replace(tmp, link)
            return link
        except OSError:
            return Path(db.path)


def _pin_version(fd: int, db: DbRef, link: Path) -> Path:
    """`version_path` of a database a visitor named: the file held by `fd` (`_held`) linked as
    `link`, else copied there (another file system, a file the server does not own); never its
    name, which a link may have replaced. A file reloaded since `db` was read is pinned under its
    own version's name (the newer file read, as `version_path` reads it by name elsewhere)."""
    from analytics.source_pin import pin_file

    st = os.fstat(fd)
    if st.st_ino != db.inode:
        link = link.with_name(f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}.duckdb")

    link.parent.mkdir(parents=True, exist_ok=True)
    tmp = link.with_name(f"{link.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    pin_file(fd, tmp)
    os.replace(tmp, link)
    return link


def _sweep(folder: Path, keep: Collection[str] = ()) -> None:
    """Remove links whose file was replaced or deleted everywhere else (only the link holds the inode)."""
    try:
        links = list(folder.glob("*.duckdb"))
    except OSError:
        return
    for link in links:
        if str(link) in keep:
            continue
        try:
            if link.stat().st_nlink == 1:
                link.unlink()
        except OSError:
            pass


def drop_version_path(db: DbRef) -> None:
    """Forget an old version's link (open connections keep reading it; its space is freed after)."""
    link = cache_dir() / "open" / f"{db.inode}-{db.mtime_ns}-{db.size}.duckdb"
    try:
        link.unlink()
    except OSError:
        pass


def configured_db(argv: list[str] | None = None, environ: dict | None = None) -> Path | None:
    """`streamlit run app.py -- --db PATH` wins over env TRANSCRIPT_LENS_DB; None means the demo."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--db")
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    value = args.db or (os.environ if environ is None else environ).get(ENV_DB)
    return Path(value).expanduser() if value else None


def is_duckdb_file(path: str | os.PathLike) -> bool:
    """True for a DuckDB database file (the header magic), which is opened rather than loaded."""
    return transcript_lens.is_duckdb_file(path)


def display_name(name: str) -> str:
    """A database's name as a person reads it: a loaded source's or an opened file's own name,
    without the digest that keeps two of one name apart (`load_target`, `remember_opened`).

    >>> display_name("corpus.sqlite-863e80b7bde5.duckdb"), display_name("lens-1a2b3c4d"), display_name("lens.duckdb")
    ('corpus.sqlite', 'lens', 'lens.duckdb')
    """
    found = _DIGESTED.fullmatch(name)
    return found.group(1) if found else name


_DIGESTED = re.compile(r"(.+)-(?:[0-9a-f]{12}\.duckdb|[0-9a-f]{8})")


def load_target(spec: str, source) -> Path:
    """The database a source (`spec` of the kind `source`, a `loaders.Source`) is loaded
    into: stable per source, so reloading replaces it; named as the kind names its specs
    (`Source.short_name`: never a DSN's password)."""
    digest = hashlib.sha256(spec.encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", source.short_name(spec))[:40].strip("-.") or "source"
    return loads_dir() / f"{slug}-{digest}.duckdb"


# --- databases a URL can name ----------------------------------------------------------
#
# A shared link names the open database by a name this server knows, never by a path:
# the demo ("demo"), the database given on the command line (its file name), every
# database in the loads folder (its file name), and every file opened from the sidebar
# (registered in `opened.json` in the cache folder under its stem and a digest of its
# path). A name is looked up in that list and nothing else; an unknown one opens nothing.

DEMO_NAME = "demo"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:60] or "db"


def _opened_file() -> Path:
    return cache_dir() / "opened.json"


def _opened() -> dict[str, str]:
    try:
        data = json.loads(_opened_file().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def remember_opened(path: str | os.PathLike) -> str:
    """Register a database opened by path (from the sidebar) under a stable name; return the name.

    The name is the file's stem and a digest of its full path, so two files of one name differ.
    """
    p = Path(path).resolve()
    known = name_of(p)
    if known is not None:
        return known
    name = f"{_slug(p.stem)}-{hashlib.sha256(str(p).encode()).hexdigest()[:8]}"
    entries = {**_opened(), name: str(p)}
    target = _opened_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}")
    tmp.write_text(json.dumps(entries, indent=1, sort_keys=True))
    os.replace(tmp, target)  # concurrent sessions: the last writer wins, each writes a whole file
    return name


def default_db_path() -> Path:
    """The database a session opens when its URL names none: the configured one, else the demo."""
    configured = configured_db()
    return (configured if configured is not None else demo_db()).resolve()


def known_databases() -> dict[str, Path]:
    """{name: path} of every database a URL may name (see above); the first claim on a name wins."""
    out: dict[str, Path] = {}
    configured = configured_db()
    if configured is not None:
        p = configured.resolve()
        name = _slug(p.stem)
        out[name if name != DEMO_NAME else f"{name}-{hashlib.sha256(str(p).encode()).hexdigest()[:8]}"] = p
    out.setdefault(DEMO_NAME, demo_db().resolve())
    try:
        loaded = sorted(loads_dir().glob("*.duckdb"))
    except OSError:
        loaded = []
    for p in loaded:
        if _NAME.match(p.name):
            out.setdefault(p.name, p.resolve())
    for name, path in _opened().items():
        if _NAME.match(name):
            out.setdefault(name, Path(path))
    return out


def name_of(path: str | os.PathLike) -> str | None:
    """The name a URL uses for the database at `path`; None when the server has no name for it."""
    p = Path(path).resolve()
    return next((name for name, known in known_databases().items() if known == p), None)


def from_linkable_name(name: str) -> Path | None:
    """The database a URL names, if the server knows that name, the file is there and the
    deployment lets users open it (`analytics.deployment`: a read-only app opens only the database it was
    started on; with source folders, only files inside them besides that one); else None.

    >>> from_linkable_name("../../etc/passwd") is None
    True
    """
    if not isinstance(name, str) or not _NAME.match(name):
        return None
    p = known_databases().get(name)
    if p is None or not p.is_file():
        return None
    from ui import access

    deployment = access.from_environment()
    if p == default_db_path():
        return p
    if deployment.read_only or deployment.path_refusal(p) is not None:
        return None
    return p


class WsRef(NamedTuple):
    """The review workspace of a database as of one revision: cache keys include it, so a write
    (here or by another process) invalidates what was read before it."""

    path: str
    beside: str
    revision: int

    @property
    def workspace(self):
        from analytics.workspace import Workspace

        return Workspace(self.path, beside=self.beside)


def workspace_ref(db: DbRef) -> WsRef:
    """The workspace of the open database (beside it, or `$TRANSCRIPT_LENS_WORKSPACE`), now.

    Resolved from the database's own path, never from `version_path`'s links, so every
    version of a reloaded database shares one workspace.
    """
    from analytics.workspace import Workspace

    ws = Workspace.beside(db.path)
    return WsRef(str(ws.path), db.path, ws.revision())
