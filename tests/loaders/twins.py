"""Which loader tests run a second time without the C extensions (`TRANSCRIPT_LENS_PUREPYTHON=1`).

The C code and its Python twins (loaders/_native.py) sit at three places: the SQLite
reader's rows and read-ahead (`_rows`, `_readahead`), the checkpoint scan and payload
numbering (`_scan.row`, `_scan.ts_list`), and the Arrow staging of every table
(`_scan.stage`, which every source kind goes through after its reader). `TWINS` are the
modules whose tests pass through those places with a store's bytes: SQLite stores
(Python and LangGraph.js), hostile and damaged payloads, incremental and delta loads, and
the conformance graphs of every source kind. `OTHERS` are the rest, each with why the pure
pass adds nothing there. tests/loaders/test_twins_list.py keeps the two complete.

    .venv/bin/python -m tests.loaders.twins      # the paths, as `make test` passes them to pytest
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

TWINS = (
    "test_budget.py",
    "test_conformance.py",  # every source kind, staged: the staging twin for Postgres, MySQL, MongoDB, Redis
    "test_delta.py",
    "test_elements.py",  # the values counter: `_scan.elements` or its twin under every decode
    "test_encrypted.py",
    "test_fast_path.py",
    "test_fuzz.py",
    "test_hostile.py",
    "test_hostile_sources.py",
    "test_incremental.py",
    "test_js_decode.py",
    "test_js_stores.py",
    "test_key_digests.py",
    "test_legacy_releases.py",
    "test_native.py",
    "test_parts.py",
    "test_pipeline.py",
    "test_readahead.py",
    "test_rows.py",
    "test_scan.py",
    "test_sqlite_damage.py",
    "test_sqlite_loader.py",
    "test_subgraphs.py",
    "test_vacuum.py",
)

OTHERS = {
    "test_atomic.py": "kills and interrupts the load process: the file handling, not the decoding",
    "test_catalog.py": "the catalogue's DDL and docs",
    "test_conformance_kit.py": "the kit's own API (test_conformance runs its loads)",
    "test_derived_hook.py": "the hook's calls around the write",
    "test_distributed.py": "Dask scheduling of the same reader (test_sqlite_loader decodes the ranges)",
    "test_events.py": "progress events",
    "test_grams.py": "the trigram signatures' C loop and its twin, compared in one process",
    "test_hostile_postgres.py": "Postgres server behaviour; its rows stage as in test_conformance",
    "test_hostile_source_integrity.py": "the integrity-check thread and source errors",
    "test_mongo_source.py": "the MongoDB reader (Python only); staged as in test_conformance",
    "test_pg_damage.py": "Postgres damage answers (Python only); staged as in test_conformance",
    "test_postgres.py": "the Postgres reader (Python only); staged as in test_conformance",
    "test_postgres_compat.py": "Postgres server versions (Python only)",
    "test_postgres_errors.py": "Postgres error mapping (Python only)",
    "test_redis_source.py": "the Redis reader (Python only); staged as in test_conformance",
    "test_schema_golden.py": "the written schema",
    "test_stale.py": "staleness rules over loaded tables",
    "test_twins_list.py": "this list's own check",
}


def paths() -> list[str]:
    """The TWINS modules as paths from the repository root.

    >>> paths()[0]
    'tests/loaders/test_budget.py'
    """
    return [f"tests/loaders/{name}" for name in TWINS]


if __name__ == "__main__":
    print(" ".join(paths()))
