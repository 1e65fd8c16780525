"""The shipped conformance kit (`loaders.conformance`) under the tests' name for it, and the
exports of a PostgresSaver database the tests hold to it (they need `psql` and `pg_dump`)."""

from __future__ import annotations

from pathlib import Path

from loaders.conformance import *  # noqa: F403  (write_graphs, Case, CHECKS, force_split…)
from tests.loaders.pg_util import export_csv, pg_dump, zip_folder


def postgres_exports(dsn: str, folder: Path) -> dict[str, Path]:
    """A PostgresSaver database exported as an operator would: COPY CSV (folder, zip), pg_dump (plain, -Fc)."""
    csv = export_csv(dsn, folder / "csv")
    return {
        "csv": csv,
        "zip": zip_folder(csv, folder / "export.zip", prefix="export/"),
        "plain": pg_dump(dsn, folder / "data.sql"),
        "custom": pg_dump(dsn, folder / "data.dump", "-Fc"),
    }
