"""The pure-Python pass of `make test` (tests/loaders/twins.py) names every loader test module
once: in TWINS (run again without C) or in OTHERS (with why not)."""

from __future__ import annotations

from tests.loaders.twins import HERE, OTHERS, TWINS, paths


def test_every_loader_test_module_is_either_a_twin_or_another():
    modules = {p.name for p in HERE.glob("test_*.py")}
    assert not set(TWINS) & set(OTHERS)
    assert sorted({*TWINS, *OTHERS}) == sorted(modules), "add the new module to TWINS or OTHERS in twins.py"


def test_the_native_comparisons_and_the_twin_paths_are_in_the_pure_pass():
    # The modules that exercise `_rows`, `_readahead`, `_scan` and the staging with a store's bytes.
    assert {"test_native.py", "test_rows.py", "test_readahead.py", "test_scan.py", "test_parts.py",
            "test_fast_path.py", "test_sqlite_loader.py", "test_conformance.py"} <= set(TWINS)
    assert all((HERE.parents[1] / p).is_file() for p in paths())
