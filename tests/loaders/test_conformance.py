"""Every registered source kind passes the conformance kit (tests/loaders/conformance.py)
on the same graphs: the built-ins, and an extension registered the way any would be."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest

import loaders
from tests.loaders import conformance
from tests.loaders.conformance import Case
from tests.loaders.example_source import FORMAT, JsonlDirSource
from tests.loaders.mongo_util import SECRET, serve
from tests.loaders.mysql_util import READER_PASSWORD

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
    "mongodb": ("mongodb", True),
    "mongo-dump-folder": ("mongo-dump", True),
    "mongo-dump-bson-gz": ("mongo-dump", True),
    "mongo-archive": ("mongo-dump", True),
    "mongo-archive-gz": ("mongo-dump", True),
    "mongoexport-relaxed": ("mongo-dump", True),
    "mongoexport-canonical": ("mongo-dump", True),
}


def dump_sqlite_store(store: Path, folder: Path) -> Path:
    """A SqliteSaver file's rows as the example kind's folder of JSON-lines dumps (one file per thread)."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"format": FORMAT}))
    files: dict[str, list[str]] = {}
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        for table, blob in (("checkpoints", "checkpoint"), ("writes", "value")):
            cur = con.execute(f"SELECT * FROM {table}")
            for values in cur:
                row = {"table": table, **dict(zip((d[0] for d in cur.description), values))}
                row[blob] = base64.b64encode(row[blob]).decode()
                if isinstance(row.get("metadata"), bytes):
                    row["metadata"] = row["metadata"].decode()
                files.setdefault(row["thread_id"], []).append(json.dumps(row))
    finally:
        con.close()
    for i, thread_id in enumerate(sorted(files)):
        (folder / f"{i:04d}.jsonl").write_text("\n".join(files[thread_id]) + "\n")
    return folder


def _keyword_dsn(dsn: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(dsn)
    return f"host={parts.hostname} port={parts.port} dbname={parts.path[1:]} user={parts.username} password={KEYWORD_SECRET}"


@pytest.fixture(scope="session")
def cases(graphs_sqlite, graphs_pg, graphs_exports, graphs_mysql, graphs_mongo, tmp_path_factory) -> dict[str, Case]:
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
        "mongodb": (graphs_mongo.uri, (SECRET,)),
        "mongo-dump-folder": (graphs_mongo.dump, ()),
        "mongo-dump-bson-gz": (graphs_mongo.dump_gz, ()),
        "mongo-archive": (graphs_mongo.archive, ()),
        "mongo-archive-gz": (graphs_mongo.archive_gz, ()),
        "mongoexport-relaxed": (graphs_mongo.export_relaxed, ()),
        "mongoexport-canonical": (graphs_mongo.export_canonical, ()),
    }
    return {
        name: Case(name, kind, str(specs[name][0]), specs[name][1], detected)
        for name, (kind, detected) in CASES.items()
    }


def test_every_registered_kind_has_a_case():
    assert set(loaders.sources()) == {kind for kind, _ in CASES.values()}


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("name", CASES)
def test_conformance(name, check, cases, graphs_reference, graphs_mongo, tmp_path, monkeypatch):
    # The Mongo cases' reference holds the same checkpoints put through SqliteSaver (conftest.graphs_mongo).
    serve(monkeypatch, graphs_mongo.client, graphs_mongo.uri)
    reference = graphs_mongo.reference if cases[name].kind.startswith("mongo") else graphs_reference
    check(cases[name], conformance.Context(list(cases.values()), reference, tmp_path, monkeypatch))


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
