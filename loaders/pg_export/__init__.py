"""Sources: exports of a `PostgresSaver` database — COPY CSV files and pg_dump files.

Neither export is ordered by thread, and either may be far larger than memory.
Both are therefore streamed once into a private staging file (SQLite, in a
temporary folder removed on `close()`), indexed by thread id, and read back
through the same `pg_rows.assemble()` as the live database. Staging happens in
`open()`, so a damaged export fails before any DuckDB database is touched.

What is an error of the whole source and what is a row error:

- `SourceError` (naming the file, and the row or line): a missing table, a CSV
  of another table, a truncated file, a row with the wrong number of fields,
  malformed bytea or JSON text, a NULL in a NOT NULL key column. COPY and
  pg_dump never write these, so the file itself is damaged and loading the
  rest would silently lose data.
- `LoadError` (reported, row skipped, exactly as the live source does): data
  that a database can hold — an undecodable msgpack blob, a checkpoint JSON
  that is not an object, metadata that is not an object.

A file cut exactly at a row boundary inside a CSV cannot be told from a
shorter export; pg_dump blocks end with `\\.`, so dumps do not have that gap.

One module per concern:

- `sources`: the two source kinds (`postgres-csv`, `pg-dump`): detection and opening;
- `rows`: one exported row (COPY text values) → a staged row, or why it cannot be;
- `stage`: the staging file, and batches of rows into it;
- `staged_reader`: reading a finished stage back, thread by thread;
- `archive`: gzip, zip and pg_dump archive formats;
- `csv_files`: which CSV files of a folder or zip are the export;
- `csv_pieces`: cutting a CSV file at row ends for DuckDB's reader;
- `csv_stage`: staging the CSV files through DuckDB's CSV reader;
- `copy_text`: COPY text format fields and identifiers;
- `dump`: staging a plain dump's COPY blocks;
- `restore`: `pg_restore` for the archive formats.
"""

from loaders.pg_export.sources import PgCsvSource, PgDumpSource

__all__ = ["PgCsvSource", "PgDumpSource"]
