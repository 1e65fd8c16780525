"""Which loader tests run a second time without the C extensions (`TRANSCRIPT_LENS_PUREPYTHON=1`).

The C code and its Python twins (loaders/_native.py) sit at three places: the SQLite
reader's rows and read-ahead (`_rows`, `_readahead`), the checkpoint scan and payload
numbering (`_scan.row`, `_scan.ts_list`), and the Arrow staging of every table
(`_scan.stage`, which every source kind goes through after its reader). `TWINS` are the
modules whose tests pass through those places with a store's bytes: SQLite stores
(Python and LangGraph.js), hostile and damaged payloads, incremental and delta loads, and
the conformance graphs of every source kind. `OTHERS` are the rest, each with why the pure
pass adds nothing there. `PURE_SKIPS` are the tests of TWINS modules that the pure pass skips
(tests/loaders/conftest.py): they never reach a twin, or reach it only with the same store's
bytes as a test beside them that stays. tests/loaders/test_twins_list.py keeps all three true
to the modules.

    .venv/bin/python -m tests.loaders.twins      # the paths, as `make test` passes them to pytest
"""

from __future__ import annotations

import re
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


# Node ids under tests/loaders/, `*` for any text (a parameter), and why the pure pass skips them.
PURE_SKIPS = {
    # The conformance kit's checks that open no row: a kind's declarations, its detection and
    # redaction of specs, its options (refused before a read). `reader`, `split`, `load` and
    # `split_load` stay: they read and stage every kind's rows.
    "test_conformance.py::test_conformance[*-declarations]": "the kind's classes and capabilities",
    "test_conformance.py::test_conformance[*-detect]": "which kind claims which spec",
    "test_conformance.py::test_conformance[*-describe]": "redaction of the spec's secrets",
    "test_conformance.py::test_conformance[*-options]": "option checks, refused before a read",
    # How worker processes start and what the command line prints; the loads they run are the
    # fixture store's, which test_parallel_and_single_process_loads_are_identical and the
    # `loaded` tests put through the twins.
    "test_sqlite_loader.py::test_a_load_from_a_process_running_threads_uses_the_fork_server_and_equals_a_forked_one":
        "the start method of the workers",
    "test_sqlite_loader.py::test_the_cli_starts_no_thread_so_its_workers_are_forked": "the CLI's threads",
    "test_sqlite_loader.py::test_cli_loads_and_reports_errors_in_one_line": "the CLI's output and exit code",
    "test_sqlite_loader.py::test_a_bad_thread_key_pattern_is_one_line_and_touches_nothing[*]":
        "the pattern is refused before a read",
}


def pure_skip(nodeid: str) -> str | None:
    """Why the pure pass skips the test `nodeid` (as pytest gives it), or None: it runs.

    >>> pure_skip("tests/loaders/test_conformance.py::test_conformance[postgres-detect]")
    'which kind claims which spec'
    >>> pure_skip("tests/loaders/test_conformance.py::test_conformance[postgres-load]") is None
    True
    """
    prefix = "tests/loaders/"
    if not nodeid.startswith(prefix):
        return None
    for pattern, why in PURE_SKIPS.items():
        if re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), nodeid[len(prefix):]):
            return why
    return None


def paths() -> list[str]:
    """The TWINS modules as paths from the repository root.

    >>> paths()[0]
    'tests/loaders/test_budget.py'
    """
    return [f"tests/loaders/{name}" for name in TWINS]


if __name__ == "__main__":
    print(" ".join(paths()))
