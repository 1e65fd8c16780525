"""The two export source kinds: `postgres-csv` (COPY CSV files) and `pg-dump`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from loaders.pg_export.archive import archive_kind, open_maybe_gzip
from loaders.pg_export.csv_files import looks_like_export
from loaders.pg_export.csv_stage import stage_csv_export
from loaders.pg_export.dump import is_plain_dump, stage_dump
from loaders.pg_export.restore import stage_archive
from loaders.pg_export.stage import Stage
from loaders.pg_export.staged_reader import StagedReader
from loaders.pg_rows import PostgresOptions, SinceOptions
from loaders.records import SourceError
from loaders.source import Source


def staged_reader(where: str, options: SinceOptions, fill: Callable[[Stage], bool]) -> StagedReader:
    """A new stage filled by `fill` (which returns `shallow`), read back; removed if filling fails."""
    stage = Stage()
    try:
        shallow = fill(stage)
        stage.finish()
    except BaseException:
        stage.close()
        raise
    return StagedReader(stage, where, options, shallow)


class PgCsvSource(Source):
    """A folder or .zip of `COPY <table> TO ... WITH (FORMAT csv, HEADER true)` files.

    Detected when the folder or zip holds a `<table>.csv` (or `.csv.gz`) named after a
    checkpoint table, or a CSV whose header is that of one.
    """

    kind = "postgres-csv"
    label = "COPY CSV export of a PostgresSaver database (a folder or .zip)"
    upload_suffixes = ("zip",)
    options_class = SinceOptions

    def detect(self, spec: str) -> bool:
        return looks_like_export(Path(spec))

    def open_reader(self, spec: str, options: SinceOptions) -> StagedReader:
        path = Path(spec)
        where = str(path.resolve())
        return staged_reader(where, options, lambda stage: stage_csv_export(stage, path, where))


class PgDumpSource(Source):
    """A `pg_dump` of a PostgresSaver database.

    Plain SQL (optionally gzip-compressed) is parsed directly: its
    `COPY <schema>.<table> (...) FROM stdin;` blocks in COPY text format.
    Custom (`-Fc`, the `PGDMP` magic), directory and tar archives are turned
    into the same SQL by `pg_restore --data-only -f - FILE`, streamed.
    """

    kind = "pg-dump"
    label = "pg_dump of a PostgresSaver database (plain SQL, maybe gzipped, or -Fc / -Fd / -Ft)"
    upload_suffixes = ("sql", "dump", "pgdump")
    options_class = PostgresOptions

    def detect(self, spec: str) -> bool:
        path = Path(spec)
        return archive_kind(path) is not None or is_plain_dump(path)

    def open_reader(self, spec: str, options: PostgresOptions) -> StagedReader:
        path = Path(spec)
        where = str(path.resolve())
        if not path.exists():
            raise SourceError(f"{where}: no such file (expected a pg_dump file)")
        archive = archive_kind(path)
        if archive is None and not is_plain_dump(path):
            raise SourceError(f"{where}: not a pg_dump file (expected plain SQL with COPY ... FROM stdin blocks, or a pg_dump -Fc archive)")

        def fill(stage: Stage) -> bool:
            if archive is not None:
                return stage_archive(stage, path, archive, where, options.schema)
            with open_maybe_gzip(path) as fh:
                return stage_dump(stage, fh, where, options.schema)

        return staged_reader(where, options, fill)
