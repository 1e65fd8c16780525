"""Erasure that sticks: remove a thread, a tenant or a session from the database, and keep it out.

`erase` records a tombstone in the review workspace (`tombstones`, beside the database: no
load replaces it) and the ids of the threads it covers (`covered`: held back whatever tenant
or session a later load parses from them), then writes the database — a file, or a Parquet
dataset's working database and a single new version — again without the rows (`db`, with
`scrub` for the tables that name threads in their values), removes the threads'
annotations, queue items and views (`workspace`, with `exports` for the export log) from the
database's workspace and every other recorded as written for it (`Workspace.record_other`), and the
app's version links of the old file, names the exports the export log says held the threads, appends who, when, why and what (rows per table) to the
append-only `erasure_log`, and scans every file it knows of for the erased text (`scan`).
Every later load — full or `--incremental`, from the same source or an older export — calls
`hold_back` on its staged database before the derived tables are built (the composition
root, `transcript_lens.LoadTimeTables`), which drops whatever a standing tombstone covers,
so the rows never come back until the tombstone is `lift`ed. An erasure and a load take the
database's lock (`analytics.dblock`): neither can rename its file over the other's.

The tool never writes to the checkpoint store: the source keeps the thread until
its owner deletes it there (`report retention` lists what to delete).

This package is the public face of `erasing` (the steps, in order); `cli` is
`transcript-lens erase`.

>>> erase("lens.duckdb", thread="acme:web:sess-001", reason="GDPR request DSR-12", by="dpo")  # doctest: +SKIP
Erasure(kind='thread', value='acme:web:sess-001', threads=1, rows={'messages': 6, …})
"""

from __future__ import annotations

from analytics.erasure.erasing import (  # noqa: F401
    LOG_COLUMNS, Erasure, Tombstone, erase, erasure_log, hold_back, lift, tombstones,
    tombstones_for_loads,
)
