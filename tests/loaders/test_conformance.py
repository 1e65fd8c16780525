"""Every registered source kind passes the shipped conformance kit (loaders.conformance) on the
same graphs: the built-ins, and an extension registered the way any would be."""

from __future__ import annotations

import pytest

import loaders
from loaders import conformance
from loaders.conformance import Case
from tests.loaders.example_source import JsonlDirSource, dump_sqlite_store
from tests.loaders.mongo_util import SECRET, serve
from tests.loaders.mysql_util import READER_PASSWORD
from tests.loaders.redis_util import READER_PASSWORD as REDIS_READER_PASSWORD

loaders.register(JsonlDirSource())  # the one registration the example kind needs

URL_SECRETS = ("S3cret-url", "S3cret-query")
KEYWORD_SECRET = "S3cret-kw"

# Every case of every kind, by test id: (kind, detected).
CASES = {
    "sqlite": ("sqlite", True),
    "postgres": ("postgres", True),
    "postgres-keyword-dsn": ("postgres", True),
    "postgres-csv-folder": ("postgres-csv", True),
    "postgres-csv-zip": ("postgres-csv", True),
    "pg-dump-plain": ("pg-dump", True),
    "pg-dump-custom": ("pg-dump", True),
    "jsonl-dir": ("jsonl-dir", True),
    "mysql": ("mysql", True),
    "mysql-dump": ("mysql-dump", True),
    "redis": ("redis", True),
    "mongodb": ("mongodb", True),
    "mongo-dump-folder": ("mongo-dump", True),
    "mongo-dump-bson-gz": ("mongo-dump", True),
    "mongo-archive": ("mongo-dump", True),
    "mongo-archive-gz": ("mongo-dump", True),
    "mongoexport-relaxed": ("mongo-dump", True),
    "mongoexport-canonical": ("mongo-dump", True),
}


def _keyword_dsn(dsn: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(dsn)
    return f"host={parts.hostname} port={parts.port} dbname={parts.path[1:]} user={parts.username} password={KEYWORD_SECRET}"


@pytest.fixture(scope="session")
def cases(graphs_sqlite, graphs_pg, graphs_exports, graphs_mysql, graphs_redis, graphs_redis_reference, graphs_mongo, tmp_path_factory) -> dict[str, Case]:
    url = graphs_pg.dsn.replace("postgresql://postgres@", f"postgresql://postgres:{URL_SECRETS[0]}@")
    specs = {
        "sqlite": (graphs_sqlite, ()),
        "postgres": (f"{url}?password={URL_SECRETS[1]}&application_name=tl", URL_SECRETS),
        "postgres-keyword-dsn": (_keyword_dsn(graphs_pg.dsn), (KEYWORD_SECRET,)),
        "postgres-csv-folder": (graphs_exports["csv"], ()),
        "postgres-csv-zip": (graphs_exports["zip"], ()),
        "pg-dump-plain": (graphs_exports["plain"], ()),
        "pg-dump-custom": (graphs_exports["custom"], ()),
        "jsonl-dir": (dump_sqlite_store(graphs_sqlite, tmp_path_factory.mktemp("jsonl") / "dumps"), ()),
        "mysql": (graphs_mysql.reader_dsn, (READER_PASSWORD,)),
        "mysql-dump": (graphs_mysql.dump, ()),
        "redis": (graphs_redis.reader_url, (REDIS_READER_PASSWORD,)),
        "mongodb": (graphs_mongo.uri, (SECRET,)),
        "mongo-dump-folder": (graphs_mongo.dump, ()),
        "mongo-dump-bson-gz": (graphs_mongo.dump_gz, ()),
        "mongo-archive": (graphs_mongo.archive, ()),
        "mongo-archive-gz": (graphs_mongo.archive_gz, ()),
        "mongoexport-relaxed": (graphs_mongo.export_relaxed, ()),
        "mongoexport-canonical": (graphs_mongo.export_canonical, ()),
    }
    # The Redis savers store other metadata (see the fixture); MongoDBSaver draws other checkpoint
    # ids, so its reference holds the same checkpoints put through SqliteSaver (conftest.graphs_mongo).
    references = {"redis": graphs_redis_reference}
    references.update((name, graphs_mongo.reference) for name, (kind, _) in CASES.items() if kind.startswith("mongo"))
    return {
        name: Case(name, kind, str(specs[name][0]), specs[name][1], detected, references.get(name))
        for name, (kind, detected) in CASES.items()
    }


def test_every_registered_kind_has_a_case():
    assert set(loaders.sources()) == {kind for kind, _ in CASES.values()}


@pytest.mark.parametrize("check", conformance.CHECKS, ids=conformance.check_name)
@pytest.mark.parametrize("name", CASES)
def test_conformance(name, check, cases, graphs_reference, graphs_mongo, tmp_path, monkeypatch):
    serve(monkeypatch, graphs_mongo.client, graphs_mongo.uri)  # the live Mongo case reads the mongomock client
    check(cases[name], conformance.Context(list(cases.values()), graphs_reference, tmp_path, monkeypatch))


def test_the_contract_is_enforced_where_it_is_declared():
    with pytest.raises(TypeError, match="not a loaders.source.Source"):
        loaders.register(object())

    class Unlabelled(JsonlDirSource):
        label = ""

    with pytest.raises(TypeError, match="label must be a non-empty string"):
        loaders.register(Unlabelled())
    with pytest.raises(TypeError, match="declares key_digests\\(\\) but does not implement it"):
        type("Boasting", (loaders.SourceReader,), {"capabilities": loaders.Capabilities(key_digests=True)})
    with pytest.raises(TypeError, match="implements handoff\\(\\) but does not declare it"):
        type("Shy", (loaders.SourceReader,), {"handoff": lambda self: None})


def test_an_entry_point_may_name_a_source_or_its_class(monkeypatch):
    from loaders import registry

    class Renamed(JsonlDirSource):
        kind = "jsonl-dir-again"

    eps = [type("EP", (), {"load": staticmethod(lambda: Renamed)})(), type("EP", (), {"load": staticmethod(JsonlDirSource)})()]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps if group == "transcript_lens.sources" else [])
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_SOURCES", dict(registry._SOURCES))
    known = loaders.sources()
    assert isinstance(known["jsonl-dir-again"], Renamed) and isinstance(known["jsonl-dir"], JsonlDirSource)
