"""Session fixtures of the loader tests: the conformance graphs written through every saver.

`tests/loaders/conformance.py` writes them; the fixtures build each store once per
session (per xdist worker): a SqliteSaver file, a PostgresSaver database and its
exports, and the reference database (the SqliteSaver file, loaded).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import loaders
from tests.loaders import conformance
from tests.loaders.mysql_util import fresh_mysql_database, mysql_saver, mysqldump
from tests.loaders.pg_util import fresh_database, saver_for


@pytest.fixture(scope="session")
def graphs_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conformance graphs in a SqliteSaver file."""
    path = tmp_path_factory.mktemp("graphs_sqlite") / "graphs.sqlite"
    conformance.sqlite_graphs(path)
    return path


@pytest.fixture(scope="session")
def graphs_pg() -> Iterator[SimpleNamespace]:
    """The conformance graphs in a fresh PostgresSaver database: `dsn`, `manifest`
    (storegen's threads, `{thread_id: scenario}`) and `awkward` (the escape threads' ids)."""
    with fresh_database() as dsn:
        with saver_for(dsn) as saver:
            written = conformance.write_graphs(saver)
        yield SimpleNamespace(
            dsn=dsn,
            manifest={t: s for t, s in written.items() if s != "awkward"},
            awkward=[t for t, s in written.items() if s == "awkward"],
        )


@pytest.fixture(scope="session")
def graphs_exports(graphs_pg: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`graphs_pg` exported: COPY CSV (`csv` folder, `zip`), pg_dump (`plain`, `custom`)."""
    return conformance.postgres_exports(graphs_pg.dsn, tmp_path_factory.mktemp("graphs_exports"))


@pytest.fixture(scope="session")
def graphs_mysql(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The conformance graphs written by langgraph-checkpoint-mysql's saver into a fresh MariaDB
    database: `reader_dsn` (a SELECT-only user with a password) and `dump` (its mysqldump --hex-blob)."""
    with fresh_mysql_database() as db:
        with mysql_saver(db.admin_dsn) as saver:
            conformance.write_graphs(saver)
        yield SimpleNamespace(reader_dsn=db.reader_dsn, dump=mysqldump(db.name, tmp_path_factory.mktemp("mysql") / "dump.sql"))


@pytest.fixture(scope="session")
def graphs_reference(graphs_sqlite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference database: `graphs_sqlite` loaded in one process."""
    db = tmp_path_factory.mktemp("graphs_reference") / "reference.duckdb"
    loaders.load(str(graphs_sqlite), db, workers=1)
    return db
