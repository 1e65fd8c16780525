"""Fixtures for the page models' tests: the analytics tests' loaded store, one component scan."""

from tests.analytics.conftest import con, loaded, loaded_once  # noqa: F401  (fixtures)
from tests.apptest_scan import components_scanned_once  # noqa: F401  (autouse fixture)
