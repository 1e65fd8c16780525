"""Transcript Lens: the composition root, where the loader meets the query layer.

`loaders` decodes a checkpoint store into DuckDB and knows nothing of
`analytics`; `analytics` reads the database and knows nothing of the loaders.
`load()` here is the one place they are wired together: a load through it also
writes the query layer's derived tables (`analytics.derived`). The CLI
(`transcript-lens`, `transcript_lens.cli`) and the app load through it.

>>> import transcript_lens
>>> transcript_lens.load(transcript_lens.demo_store(), "demo.duckdb").messages  # doctest: +SKIP
176
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loaders import LoadSummary

from loaders.version import __version__  # the package's one version (pyproject.toml reads it there)

_HERE = Path(__file__).resolve().parent


class LoadTimeTables:
    """`loaders.DerivedTables` for the query layer: `analytics.derived`, imported while
    the load's workers decode (its import costs ~0.4 s, mostly pyarrow and duckdb's
    Python side, which a worker-less parent would otherwise pay after the decode).

    Before the derived tables are built, the erased threads are held back
    (`analytics.erasure.hold_back`): whatever a standing tombstone of `db` covers is
    dropped from the staged database, whether the load is full or incremental.
    `held_back` is what it dropped ({table: rows}). `topic_concepts`: the topics' concept
    table (`analytics.topic_mining.concepts.Concepts`; None: the built-in one)."""

    def __init__(self, db: str | os.PathLike | None = None, topic_concepts=None) -> None:
        self.db = db
        self.topic_concepts = topic_concepts
        self.held_back: dict[str, int] = {}

    def prepare(self) -> None:
        import analytics.derived  # noqa: F401

    def context(self) -> str:
        """The tombstones of `db`, lifted or standing (a load holds back what the standing ones
        cover, an erasure deletes rows): after an erasure or a lift, an incremental load of an
        unchanged source still runs; and the hash of a concept table given, so one given another
        table (or none after one) computes the topics again."""
        concepts = "" if self.topic_concepts is None else f"concepts:{self.topic_concepts.fingerprint()};"
        return concepts + self._tombstones()

    def _tombstones(self) -> str:
        if self.db is None:
            return ""
        from analytics.erasure import tombstones_for_loads
        from analytics.workspace.store import Workspace

        if not Workspace.beside(self.db).exists():
            return ""
        return ";".join(f"{t.tombstone_id}:{t.kind}:{t.value}:{t.lifted_at}" for t in tombstones_for_loads(self.db))

    def write(self, con, threads: list[str] | None) -> None:
        from analytics.derived import write_derived_tables

        if self.db is not None:
            from analytics.erasure import hold_back

            self.held_back = hold_back(con, self.db)
        write_derived_tables(con, threads, self.topic_concepts)


class LoadFailed(Exception):
    """A load that did not happen, as one line: `<what> (<where>)`; the database it was to
    replace is as it was. The exception behind it is `__cause__` (the CLI prints its
    traceback with `--debug` or `TRANSCRIPT_LENS_DEBUG=1`).

    >>> load("missing.sqlite", "lens.duckdb")  # doctest: +SKIP
    Traceback (most recent call last):
    transcript_lens.LoadFailed: no such file: missing.sqlite
    """


#: What a load imports only for some sources, and the extra that installs it.
_EXTRAS = {
    "psycopg": ("live Postgres sources", "postgres"),
    "pymysql": ("live MySQL / MariaDB sources", "mysql"),
    "Crypto": ("encrypted values (AES, pycryptodome)", "aes"),
    "distributed": ("loads on a Dask cluster (--scheduler)", "dask"),
}
# A message is cut here: DuckDB quotes the offending key of a failed constraint (any size).
_LINE_MAX = 400


def load(source: str | os.PathLike, db: str | os.PathLike, **kwargs: Any) -> LoadSummary:
    """`loaders.load` plus the derived tables: what every user-facing load does.

    Takes `loaders.load`'s keyword arguments (kind, thread_key_pattern, options,
    incremental, progress, workers, aes_key), `aes_key_file`: a file holding
    the key of an encrypted store (else `LANGGRAPH_AES_KEY` is read), and `topic_concepts`: a
    concept table file for the topics (docs/topics.md; read before anything is loaded, and its
    hash recorded with the topic tables). This is the one place a failed load is caught:
    every error (a damaged source, DuckDB, memory, a dead worker, a bug) becomes a
    `LoadFailed` of one line, and the previous database is left as it was.
    KeyboardInterrupt passes through, and so does Ctrl-C that DuckDB turned into an error (`interrupted`).

    The load holds the database's lock (`analytics.dblock`), so an erasure waits for it
    (and it for an erasure); threads erased from `db` are held back (`LoadTimeTables`),
    and when some were, the new database (a dataset's working database) is written once
    more without their deleted rows' bytes (`analytics.erasure.db.rewrite_without`).
    """
    try:
        import loaders  # here, not at the top: `transcript-lens transcript` and `app` never pay its ~0.6 s import
        from analytics.dblock import database_lock

        concepts = kwargs.pop("topic_concepts", None)
        if concepts is not None:
            from analytics.errors import BadRequest
            from analytics.topic_mining.concepts import concept_table

            try:
                concepts = concept_table(concepts)
            except BadRequest as exc:  # (names the file and the line already)
                raise LoadFailed(str(exc)) from exc
        key_file = kwargs.pop("aes_key_file", None)
        if key_file is not None:
            from loaders.cipher import key_from_file

            kwargs["aes_key"] = key_from_file(key_file)
        from loaders.writer import kind_of, refuse_non_file

        if kind_of(Path(db)) not in (None, "a directory"):  # (a dataset is a folder) refused before its lock is made
            refuse_non_file(Path(db), "--db")
        tables = LoadTimeTables(db, concepts)
        with database_lock(db):
            summary = loaders.load(str(source), db, derived=tables, **kwargs)
            if tables.held_back:
                # The database file, or a dataset's working database (its Parquet versions are
                # exported after the hold-back, so they hold no deleted rows; it does).
                from analytics.erasure.db import rewrite_without
                from loaders.dataset import WORK_DB

                for rows_file in (Path(db), Path(db) / WORK_DB):
                    if rows_file.is_file():
                        rewrite_without(rows_file, [])
        return summary
    except LoadFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - the one catch place (see the docstring)
        if interrupted(exc):
            raise KeyboardInterrupt from exc
        raise LoadFailed(failure_line(exc, str(source), db, kwargs.get("kind"))) from exc


def interrupted(exc: BaseException) -> bool:
    """True when `exc` is Ctrl-C as DuckDB reports it: a query it was running when SIGINT
    came is stopped with `duckdb.InterruptException` or a `RuntimeError("Query interrupted")`
    instead of Python's KeyboardInterrupt (a `--watch` loop took it for a failed load and
    went on loading).

    >>> interrupted(RuntimeError("Query interrupted")), interrupted(RuntimeError("disk full"))
    (True, False)
    """
    seen = 0
    while exc is not None and seen < 10:  # (the chain: a wrapper's cause or context)
        if isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "InterruptException":
            return True
        if type(exc) is RuntimeError and str(exc) == "Query interrupted":
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def is_duckdb_file(path: str | os.PathLike) -> bool:
    """True for a DuckDB database file (`loaders.writer.is_duckdb_file`, the one test of it).

    >>> is_duckdb_file(demo_store())
    False
    """
    from loaders.writer import is_duckdb_file as test

    return test(path)


def failure_line(exc: BaseException, source: str, db: str | os.PathLike, kind: str | None = None) -> str:
    """The one line a failed load is reported with (secrets of `source` masked).

    A `SourceError` already names what and where; anything else is `<what> (<where>)`,
    what being its kind and first line (an OSError's file in it), where the load.

    >>> failure_line(OverflowError("too big"), "s.sqlite", "x.duckdb")
    'OverflowError: too big (loading s.sqlite into x.duckdb)'
    """
    import loaders

    where = None
    if isinstance(exc, loaders.SourceError):
        text = _first_line(exc)
    elif isinstance(exc, ModuleNotFoundError) and exc.name in _EXTRAS:
        what, extra = _EXTRAS[exc.name]
        text = f"{what} need {exc.name}: pip install 'transcript-lens[{extra}]'"
    else:
        text = _what(exc)
        try:
            shown = loaders.describe(source, kind)
        except Exception:  # noqa: BLE001 - describing must not hide the failure
            shown = loaders.redact(source, source)
        where = f"loading {shown} into {db}"
    text = loaders.redact(text, source)  # (before it is cut: a password cut in two would not be found)
    if len(text) > _LINE_MAX:
        text = text[:_LINE_MAX] + "…"
    return text if where is None else f"{text} ({where})"


def _first_line(exc: BaseException) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)


def _what(exc: BaseException) -> str:
    """An unexpected exception as the first half of the line: its kind and first line."""
    import duckdb

    from loaders.jobs import WorkerFailed

    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    if isinstance(exc, duckdb.Error):
        if "has been invalidated" in str(exc):
            return _abandoned(str(exc))
        return f"DuckDB: {_first_line(exc)}"  # its text starts with its kind ("Constraint Error: …")
    if type(exc) is ValueError or isinstance(exc, WorkerFailed):
        return _first_line(exc)  # a bad option's own message; a worker's names its exception
    module = type(exc).__module__.split(".")[0]
    if module == "psycopg":
        return f"Postgres: {_first_line(exc)}"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _abandoned(text: str) -> str:
    """DuckDB's "database has been invalidated" (a fatal error earlier in the load: disk full,
    a failed checkpoint) in the project's words, naming the original error when DuckDB does.

    >>> _abandoned('FATAL Error: Failed: database has been invalidated because … Original error: "disk full"')
    'the database being written failed and was abandoned (disk full); the previous database is unchanged'
    """
    original = text.split("Original error:", 1)[1].strip().strip('"').splitlines()[0] if "Original error:" in text else ""
    cause = f" ({original.strip().strip(chr(34))})" if original else ""
    return f"the database being written failed and was abandoned{cause}; the previous database is unchanged"


def app_dir() -> Path:
    """The folder holding the app (app.py, pages/) and the demo store (demo/demo.sqlite).

    The checkout in a source tree or an editable install; in an installed wheel, the copy
    setup.py put in transcript_lens/_app/ (same layout).
    """
    for root in (_HERE / "_app", _HERE.parent):
        if (root / "app.py").is_file() and (root / "pages").is_dir() and (root / "demo").is_dir():
            return root
    raise FileNotFoundError(f"the app's files (app.py, pages/) are neither in {_HERE / '_app'} nor in {_HERE.parent}")


def is_checkout() -> bool:
    """True when the package runs from its source tree (a checkout or an editable install)."""
    return app_dir() == _HERE.parent


def cache_dir() -> Path:
    """Where the app keeps the demo database, uploads and loaded sources: `$TRANSCRIPT_LENS_CACHE`,
    else `.cache/` in a checkout (gitignored), else the user's cache (`~/.cache/transcript-lens`)."""
    if os.environ.get("TRANSCRIPT_LENS_CACHE"):
        return Path(os.environ["TRANSCRIPT_LENS_CACHE"])
    if is_checkout():
        return _HERE.parent / ".cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "transcript-lens"


def demo_store() -> Path:
    """The bundled demo checkpoint store (conversations written by real LangGraph graphs; demo/README.md)."""
    return app_dir() / "demo" / "demo.sqlite"


__all__ = [
    "LoadFailed", "LoadTimeTables", "__version__", "app_dir", "cache_dir", "demo_store", "failure_line", "is_checkout",
    "is_duckdb_file", "load",
]
