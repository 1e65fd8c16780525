"""Source: a live Postgres database written by `PostgresSaver` (a `postgresql://` DSN).

The whole load reads one snapshot: a REPEATABLE READ, READ ONLY transaction,
so `checkpoint_keys()` (incremental loads) and `threads()` agree even while
agents keep writing. Three server-side cursors stream checkpoints, `messages`
blobs and special-channel writes in chunks, each ordered by
`thread_id COLLATE "C"` so the server's order is Python's string order and
`pg_rows.assemble()` can merge-join them holding one thread at a time.

>>> reader = PostgresSource().open("postgresql://app@db/agents", {"schema": "public"})  # doctest: +SKIP
>>> next(reader.threads()).thread_id  # doctest: +SKIP
'acme:web:sess-001'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from loaders.dsn import DSN_PREFIXES, DsnSpec, looks_like_dsn
from loaders.pg_rows import PostgresOptions
from loaders.source import Source

if TYPE_CHECKING:
    from loaders.postgres_reader import PostgresReader

class PostgresSource(DsnSpec, Source):
    """A live database written by `PostgresSaver`; detected by a `postgresql://` or `postgres://` DSN,
    or a keyword DSN (`host=… dbname=…`) that is not the name of a file another kind reads."""

    kind = "postgres"
    label = "Postgres database written by PostgresSaver (a DSN)"
    options_class = PostgresOptions

    def detect(self, spec: str) -> bool:
        # (A file or folder so named is a path: the export kinds after this one may read it.)
        return spec.startswith(DSN_PREFIXES) or (looks_like_dsn(spec) and not os.path.lexists(spec))

    def open_reader(self, spec: str, options: PostgresOptions) -> PostgresReader:
        # psycopg (~70 ms to import) only when a database is opened: a SQLite load,
        # and each of its workers, never pays for it.
        from loaders.postgres_reader import PostgresReader

        return PostgresReader(spec, options)
