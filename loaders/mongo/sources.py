"""The two MongoDB source kinds, their options, and the reader both open."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.dsn import DsnSpec, mask_dsn
from loaders.mongo import files
from loaders.mongo.live import DEFAULT_DB, MongoReading, uri_database
from loaders.mongo.stage import KEPT_CHANNELS, Stage
from loaders.records import LoadError, SourceError, ThreadBundle
from loaders.source import SPLIT_MIN_BYTES, Capabilities, Source, SourceOptions, SourceReader
from loaders.sqlite.reader import SqliteReader

MONGO_PREFIXES = ("mongodb://", "mongodb+srv://")


@dataclass(frozen=True, slots=True)
class MongoOptions(SourceOptions):
    """Where MongoDBSaver's collections are: the database, and the two collections' names
    (`MongoDBSaver(client, db_name, checkpoint_collection_name, writes_collection_name)`).

    >>> MongoOptions().names()
    ('threads', 'database', 'checkpoint_collection', 'writes_collection')
    """

    database: str | None = field(default=None, metadata={
        "label": "MongoDB database", "placeholder": DEFAULT_DB,
        "help": f"the database holding MongoDBSaver's collections (default: the URI's, else {DEFAULT_DB}; "
                "of a dump or archive, the one that holds them)"})
    checkpoint_collection: str = field(default="checkpoints", metadata={
        "label": "Checkpoint collection", "placeholder": "checkpoints",
        "help": "MongoDBSaver's checkpoint_collection_name"})
    writes_collection: str = field(default="checkpoint_writes", metadata={
        "label": "Writes collection", "placeholder": "checkpoint_writes",
        "help": "MongoDBSaver's writes_collection_name"})

    def __post_init__(self) -> None:
        SourceOptions.__post_init__(self)
        for name in ("database", "checkpoint_collection", "writes_collection"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value or "\x00" in value):
                raise SourceError(f"{name} must be a non-empty name, not {value!r}")


class MongoReader(SourceReader):
    """A MongoDBSaver store staged in SqliteSaver's layout (`loaders.mongo.stage`), read
    by `SqliteReader`; the stage's errors (damaged documents) come with the first range."""

    capabilities = Capabilities(split=True, handoff=True, key_digests=True)
    snapshot: bool | None = None  # live: whether both collections were read in one snapshot session

    def __init__(self, shown: str, stage_path: Path, errors: list[LoadError], options: SourceOptions,
                 token: str | None = None, stage: Stage | None = None) -> None:
        self.shown, self.errors, self.options, self._token, self._stage = shown, errors, options, token, stage
        self._stage_path = stage_path
        try:
            self.inner = SqliteReader(stage_path, options, snapshot=stage_path)
        except BaseException:
            if stage is not None:
                stage.close()
            raise

    def describe(self) -> str:
        return self.shown

    def thread_count(self) -> int | None:
        return self.inner.thread_count()

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        return self.inner.checkpoint_keys()

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        yield from self.inner.threads(only)
        if self.errors and self.thread_range.lo is None and self.options.wanted(only) is None:
            yield ThreadBundle(None, [], [], list(self.errors))

    def narrow(self, thread_range: tuple[str | None, str | None]) -> None:
        super().narrow(thread_range)
        self.inner.narrow(thread_range)

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        return self.inner.split(n, min_bytes)

    def key_digests(self) -> Iterator[tuple[str, str]]:
        return self.inner.key_digests()

    def handoff(self) -> Callable[[SourceOptions], MongoReader]:
        """A worker reads this reader's stage (the same documents, staged once)."""
        return functools.partial(MongoReader, self.shown, self._stage_path, self.errors)

    def change_token(self) -> str | None:
        return self._token

    def close(self) -> None:
        inner = getattr(self, "inner", None)
        if inner is not None:
            inner.close()
        stage, self._stage = self._stage, None
        if stage is not None:
            stage.close()


def _staged(shown: str, options: SourceOptions, fill: Callable[[Stage], None], token: str | None = None) -> MongoReader:
    stage = Stage(shown)
    try:
        fill(stage)
        errors = stage.finish()
    except BaseException:
        stage.close()
        raise
    return MongoReader(shown, stage.path, errors, options, token, stage)


def _add(stage: Stage, writes: bool, docs: Iterable[tuple[str, Any]]) -> None:
    add = stage.add_write if writes else stage.add_checkpoint
    for what, doc in docs:
        if isinstance(doc, files.Damaged):
            stage.error(None, None, None, "write" if writes else "checkpoint", f"{what}: {doc.reason}")
        else:
            add(doc, what)
        del doc  # (not alive while the next document is read: one flood at a time)


class MongoSource(DsnSpec, Source):
    """A live MongoDB database written by MongoDBSaver (a `mongodb://` or `mongodb+srv://` URI).

    >>> MongoSource().describe("mongodb://app:s3cret@h1:27017,h2:27017/agents?replicaSet=rs0")
    'mongodb://app:***@h1:27017,h2:27017/agents?replicaSet=rs0'
    """

    kind = "mongodb"
    label = "MongoDB database written by MongoDBSaver (a mongodb:// URI)"
    options_class = MongoOptions
    # How the client is made from the URI (None: pymongo.MongoClient); the tests hand in a mongomock client.
    client_factory: Callable[[str], Any] | None = None

    def detect(self, spec: str) -> bool:
        return spec.startswith(MONGO_PREFIXES)

    def open_reader(self, spec: str, options: MongoOptions) -> MongoReader:
        shown = mask_dsn(spec)
        files.needs_pymongo(shown)
        db = options.database or uri_database(spec) or DEFAULT_DB
        reading = MongoReading(spec, shown, db, self.client_factory)
        try:
            present = reading.collections()
            if present is not None and options.checkpoint_collection not in present:
                raise SourceError(f"{shown}: no {options.checkpoint_collection} collection in database {db!r} "
                                  "(expected MongoDBSaver's; name another with the database option)")

            # Only what a load reads crosses the network: the threads asked for, the writes of the
            # channels it keeps (values only: a list of strings, never an operator from the spec).
            only = {"thread_id": {"$in": list(options.threads)}} if options.threads else {}
            channels = {"channel": {"$in": list(KEPT_CHANNELS)}}

            def fill(stage: Stage) -> None:
                _add(stage, False, reading.documents(options.checkpoint_collection, only, False))
                _add(stage, True, reading.documents(options.writes_collection, {**only, **channels}, True))

            reader = _staged(shown, options, fill)
            reader.snapshot = reading.snapshot
            if not reading.snapshot:
                reader.shown = f"{shown} (no snapshot session: collections read one after the other)"
            return reader
        finally:
            reading.close()


class MongoDumpSource(Source):
    """MongoDBSaver's collections as files: a mongodump folder or .bson, an archive, mongoexport JSON."""

    kind = "mongo-dump"
    label = "mongodump folder, .bson(.gz) or --archive, or mongoexport JSON of MongoDBSaver's collections"
    options_class = MongoOptions
    upload_suffixes = ("archive", "gz")  # (the one-file form; a .bson or .json needs its other collection beside it)

    def detect(self, spec: str) -> bool:
        return not spec.startswith(MONGO_PREFIXES) and files.detect(Path(spec))

    def open_reader(self, spec: str, options: MongoOptions) -> MongoReader:
        path = Path(spec)
        shown = str(path.resolve())
        files.needs_pymongo(shown)
        layout = files.locate(path, shown, options.database, options.checkpoint_collection, options.writes_collection)
        if layout.form == "archive":
            token = files.file_token([layout.archive])

            def fill(stage: Stage) -> None:
                wanted = (options.checkpoint_collection, options.writes_collection)
                for coll, what, doc in files.archive_documents(layout.archive, shown, layout.db, wanted):
                    _add(stage, coll == options.writes_collection, [(what, doc)])
        else:
            token = files.file_token([layout.checkpoints, layout.writes])
            read = files.bson_documents if layout.form == "bson" else files.json_documents

            def fill(stage: Stage) -> None:
                for file, writes in ((layout.checkpoints, False), (layout.writes, True)):
                    with files.open_maybe_gzip(file) as fh:
                        _add(stage, writes, read(fh, str(file.resolve())))

        return _staged(shown, options, fill, token)
