"""Session fixtures of the loader tests: the conformance graphs written through every saver.

`tests/loaders/conformance.py` writes them; the fixtures build each store once per
session (per xdist worker): a SqliteSaver file, a PostgresSaver database and its
exports, and the reference database (the SqliteSaver file, loaded).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import loaders
from loaders import _native
from tests.loaders import conformance
from tests.loaders.twins import pure_skip
from tests.loaders.mysql_util import fresh_mysql_database, mysql_saver, mysqldump
from tests.loaders.pg_util import fresh_database, saver_for
from tests.loaders.redis_util import RedisStack, redis_stack_server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The pure-Python pass of `make test` skips the tests of its modules that reach no twin
    # (tests/loaders/twins.py PURE_SKIPS, each with why).
    if _native.PURE_PYTHON:
        for item in items:
            if why := pure_skip(item.nodeid):
                item.add_marker(pytest.mark.skip(reason=f"{_native.ENV}=1: {why}"))


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
def redis_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisStack]:
    """A private Redis Stack server for this session (per xdist worker; tests/loaders/redis_util.py)."""
    with redis_stack_server(tmp_path_factory.mktemp("redis_stack")) as server:
        yield server


@pytest.fixture(scope="session")
def graphs_redis(redis_stack: RedisStack) -> SimpleNamespace:
    """The conformance graphs written by langgraph-checkpoint-redis's `RedisSaver` (default key
    prefixes, database 0): `url` (to write) and `reader_url` (a user that may only read)."""
    from langgraph.checkpoint.redis import RedisSaver

    with RedisSaver.from_conn_string(redis_stack.url) as saver:
        saver.setup()
        conformance.write_graphs(saver)
    return SimpleNamespace(url=redis_stack.url, reader_url=redis_stack.reader_url)


@pytest.fixture(scope="session")
def graphs_redis_reference(graphs_reference: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`graphs_reference` as the Redis savers store the graphs. They keep a checkpoint's metadata
    as LangGraph hands it over, without the config's keys (they do not call
    `get_checkpoint_metadata`: the awkward threads' `user_id`), and an Interrupt as its value and
    id only (no `response_schema`); every other row is the SqliteSaver store's."""
    import duckdb

    db = tmp_path_factory.mktemp("graphs_redis_reference") / "reference.duckdb"
    shutil.copyfile(graphs_reference, db)
    con = duckdb.connect(str(db))
    try:
        con.execute("""UPDATE checkpoints SET metadata = json_merge_patch(metadata, '{"user_id": null}')""")
        con.execute("""UPDATE threads SET interrupt_value = replace(interrupt_value, ',"response_schema":null', '')""")
    finally:
        con.close()
    return db


@pytest.fixture(scope="session")
def graphs_reference(graphs_sqlite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference database: `graphs_sqlite` loaded in one process."""
    db = tmp_path_factory.mktemp("graphs_reference") / "reference.duckdb"
    loaders.load(str(graphs_sqlite), db, workers=1)
    return db


@pytest.fixture(scope="session")
def graphs_mongo(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The conformance graphs written by the real MongoDBSaver into a mongomock client, laid out as
    MongoDB's tools lay them out (tests/loaders/mongo_util.py): `client`, `saver`, `uri` (the live
    kind reads `client` for it where a test serves it: `mongo_util.serve`), `dump`
    (mongodump folder), `dump_gz` (a `--gzip` `.bson.gz`), `archive`, `archive_gz`,
    `export_relaxed` and `export_canonical` (mongoexport folders), and `reference`: the same
    checkpoints put through SqliteSaver, loaded (a SqliteSaver writing the graphs itself draws
    other checkpoint ids)."""
    from langgraph.checkpoint.mongodb import MongoDBSaver

    from tests.loaders import mongo_util

    folder = tmp_path_factory.mktemp("graphs_mongo")
    client = mongo_util.mongomock_client()
    saver = MongoDBSaver(client)
    written = conformance.write_graphs(saver)
    reference = folder / "reference.duckdb"
    loaders.load(str(mongo_util.sqlite_copy(saver, folder / "copy.sqlite")), reference, workers=1)
    return SimpleNamespace(
        client=client, saver=saver, manifest=written, reference=reference,
        uri=f"mongodb://reader:{mongo_util.SECRET}@mongo-a.invalid:27017,mongo-b.invalid:27017/{mongo_util.DB}?replicaSet=rs0",
        dump=mongo_util.write_dump(client, folder / "dump"),
        dump_gz=mongo_util.write_dump(client, folder / "dump_gz", gzipped=True) / mongo_util.DB / "checkpoints.bson.gz",
        archive=mongo_util.write_archive(client, folder / "store.archive", extra={"admin.system.version": [{"_id": "x"}]}),
        archive_gz=mongo_util.write_archive(client, folder / "store.gz", gzipped=True),
        export_relaxed=mongo_util.write_export(client, folder / "export_relaxed"),
        export_canonical=mongo_util.write_export(client, folder / "export_canonical", "canonical"),
    )
