"""Fixtures for the page models' tests: the analytics tests' loaded store."""

from tests.analytics.conftest import con, loaded  # noqa: F401  (fixtures)
