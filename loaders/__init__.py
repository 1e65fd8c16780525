"""Transcript Lens loaders: checkpoint stores → a DuckDB database of transcripts.

Names are imported on first use (PEP 562), so `import loaders.catalog` (the
query layer reads the column catalogue) does not import the pipeline, the
sources or the C extensions; the built-in sources register on the first
`sources()` / `resolve()` (`loaders.registry`).

>>> import loaders
>>> loaders.load("demo/demo.sqlite", "demo.duckdb")  # doctest: +SKIP
>>> sorted(loaders.sources())[:2]
['mongo-dump', 'mongodb']
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DerivedTables": "loaders.pipeline",
    "LoadSummary": "loaders.pipeline",
    "batches": "loaders.pipeline",
    "load": "loaders.pipeline",
    "MongoOptions": "loaders.mongo",
    "PgCsvSource": "loaders.pg_export",
    "PgDumpSource": "loaders.pg_export",
    "PostgresOptions": "loaders.pg_rows",
    "SinceOptions": "loaders.pg_rows",
    "PostgresSource": "loaders.postgres_source",
    "LoadError": "loaders.records",
    "SourceError": "loaders.records",
    "TargetError": "loaders.records",
    "describe": "loaders.registry",
    "redact": "loaders.registry",
    "register": "loaders.registry",
    "resolve": "loaders.registry",
    "sources": "loaders.registry",
    "Capabilities": "loaders.source",
    "NotSupported": "loaders.source",
    "Source": "loaders.source",
    "SourceOptions": "loaders.source",
    "SourceReader": "loaders.source",
    "SqliteSource": "loaders.sqlite.reader",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loaders' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
