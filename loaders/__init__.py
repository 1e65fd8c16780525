"""Transcript Lens loaders: checkpoint stores → a DuckDB database of transcripts.

>>> import loaders
>>> loaders.load("demo/demo.sqlite", "demo.duckdb")  # doctest: +SKIP
"""

from loaders.pipeline import DerivedTables, LoadSummary, batches, load
from loaders.pg_export import PgCsvSource, PgDumpSource
from loaders.pg_rows import PostgresOptions
from loaders.postgres_source import PostgresSource
from loaders.records import LoadError, SourceError
from loaders.registry import describe, redact, register, resolve, sources
from loaders.source import Capabilities, NotSupported, Source, SourceOptions, SourceReader
from loaders.sqlite_source import SqliteSource

# Built-ins register exactly the way an extension does.
register(SqliteSource())
register(PostgresSource())
register(PgCsvSource())
register(PgDumpSource())

__all__ = [
    "Capabilities",
    "DerivedTables",
    "LoadError",
    "LoadSummary",
    "NotSupported",
    "PostgresOptions",
    "Source",
    "SourceError",
    "SourceOptions",
    "SourceReader",
    "batches",
    "describe",
    "load",
    "redact",
    "register",
    "resolve",
    "sources",
]
