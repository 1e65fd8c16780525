"""One scan of the installed packages for Streamlit components per test process, not one per AppTest.

Streamlit's `AppTest` looks for v2 component manifests in every installed distribution on the
first run of each new `AppTest` (`streamlit.components.v2.manifest_scanner`): some 600 package
metadata files parsed, about a second of CPU, for each of the hundreds of AppTests. The packages
installed do not change while the tests run, so the fixture `components_scanned_once` scans once
and hands every later `AppTest` the same answer (a copy of the list). A folder of AppTests
imports it into its conftest.py:

    from tests.apptest_scan import components_scanned_once  # noqa: F401  (autouse fixture)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once() -> Iterator[None]:
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found: list = []

    def scanned_once(max_workers: int | None = None) -> list:
        if not found:
            found.append(scan(max_workers))
        return list(found[0])

    manifest_scanner.scan_component_manifests = scanned_once
    try:
        yield
    finally:
        manifest_scanner.scan_component_manifests = scan
