"""Transcript Lens: the composition root, where the loader meets the query layer.

`loaders` decodes a checkpoint store into DuckDB and knows nothing of
`analytics`; `analytics` reads the database and knows nothing of the loaders.
`load()` here is the one place they are wired together: a load through it also
writes the query layer's derived tables (`analytics.derived`). The CLI
(`transcript-lens`, `transcript_lens.cli`) and the app load through it.

>>> import transcript_lens
>>> transcript_lens.load("demo/demo.sqlite", "demo.duckdb").messages  # doctest: +SKIP
176
"""

from __future__ import annotations

import os
from typing import Any

import loaders
from loaders import LoadSummary


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
    return loaders.load(str(source), db, derived=LoadTimeTables(), **kwargs)


__all__ = ["LoadTimeTables", "load"]
