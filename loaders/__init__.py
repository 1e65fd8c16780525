"""Transcript Lens loaders: checkpoint stores → a DuckDB database of transcripts.

>>> import loaders
>>> loaders.load("demo/demo.sqlite", "demo.duckdb")  # doctest: +SKIP
"""

from loaders.pipeline import DerivedTables, LoadSummary, batches, load
from loaders.records import LoadError, SourceError, SourceOptions
from loaders.registry import register, resolve, sources
from loaders.pg_export import PgCsvSource, PgDumpSource
from loaders.postgres_source import PostgresSource
from loaders.sqlite_source import SqliteSource

# Built-ins register exactly the way an extension does.
register(SqliteSource())
register(PostgresSource())
register(PgCsvSource())
register(PgDumpSource())

__all__ = [
    "DerivedTables",
    "LoadError",
    "LoadSummary",
    "SourceError",
    "SourceOptions",
    "batches",
    "load",
    "register",
    "resolve",
    "sources",
]
