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
    Python side, which a worker-less parent would otherwise pay after the decode)."""

    def prepare(self) -> None:
        import analytics.derived  # noqa: F401

    def write(self, con) -> None:
        from analytics.derived import write_derived_tables

        write_derived_tables(con)


def load(source: str | os.PathLike, db: str | os.PathLike, **kwargs: Any) -> LoadSummary:
    """`loaders.load` plus the derived tables: what every user-facing load does.

    Takes `loaders.load`'s keyword arguments (kind, thread_key_pattern, options,
    incremental, progress, workers).
    """
    import loaders  # here, not at the top: `transcript-lens transcript` and `app` never pay its ~0.6 s import

    return loaders.load(str(source), db, derived=LoadTimeTables(), **kwargs)


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


__all__ = ["LoadTimeTables", "__version__", "app_dir", "cache_dir", "demo_store", "is_checkout", "load"]
