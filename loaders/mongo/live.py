"""A live MongoDB database written by MongoDBSaver, read through pymongo.

Read-only: `find` only (no write, no index, no `setup` of the saver), of the
threads asked for (`threads`) and the writes of the channels a load reads. Each
collection is streamed in batches (`BATCH` documents) in the order of the
saver's own unique index (`thread_id`, `checkpoint_ns`, `checkpoint_id` -1, …),
so the server walks that index and sorts nothing in memory. Both collections are
read in one snapshot session (`snapshot=True`: read concern "snapshot" at one
cluster time, MongoDB 5.0+ replica sets and sharded clusters) when the server
offers it; a standalone server (or a client without sessions) has none, and the
collections are then read one after the other as they are (`MongoReading.snapshot`
is False and the reader's `describe` says so): a store written meanwhile may load
a write without its checkpoint, which a later load picks up.

`client_factory` is how the client is made (`pymongo.MongoClient` by default):
a seam for the tests, which hand in a `mongomock` client that the real
`MongoDBSaver` wrote, and for callers that need their own client options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

from loaders.dsn import first_line
from loaders.records import SourceError

BATCH = 200  # documents a cursor fetches at a time (a checkpoint document holds a whole message list)
SERVER_TIMEOUT_MS = 10_000
DEFAULT_DB = "checkpointing_db"  # MongoDBSaver's default database

_CHECKPOINT_ORDER = [("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)]
_WRITE_ORDER = [*_CHECKPOINT_ORDER, ("task_id", 1), ("idx", 1)]


def uri_database(uri: str) -> str | None:
    """The database a `mongodb://` URI names (its path), if any.

    >>> uri_database("mongodb://app:pw@h1:27017,h2:27017/agents?replicaSet=rs0"), uri_database("mongodb+srv://c.example.net/")
    ('agents', None)
    """
    try:
        path = urlsplit(uri).path
    except ValueError:
        return None
    return unquote(path[1:]) or None


def default_client(uri: str) -> Any:
    import pymongo  # (the `mongodb` extra: imported only when a server is opened)

    timeout = {} if "serverselectiontimeoutms=" in uri.lower() else {"serverSelectionTimeoutMS": SERVER_TIMEOUT_MS}
    return pymongo.MongoClient(uri, connect=False, appname="transcript-lens", **timeout)  # (the URI's own options win)


class MongoReading:
    """One read of the two collections: `documents(collection)` streams one of them."""

    def __init__(self, uri: str, where: str, db: str, client_factory: Callable[[str], Any] | None) -> None:
        self.uri, self.where = uri, where
        try:
            self.client = (client_factory or default_client)(uri)
            self.db = self.client[db]
        except Exception as exc:  # noqa: BLE001 - pymongo's ConfigurationError, InvalidURI, …
            raise SourceError(f"{where}: cannot connect ({first_line(exc, uri)})") from None
        self.session = None
        self.snapshot = False
        self.session, self.snapshot = self._snapshot_session()

    def _snapshot_session(self) -> tuple[Any, bool]:
        """A snapshot session that answers a first read, else (None, False)."""
        try:
            session = self.client.start_session(snapshot=True)
        except Exception:  # noqa: BLE001 - no sessions (a client without them, ConfigurationError)
            return None, False
        try:
            next(iter(self._find("checkpoints", {"_id": None}, None, session)), None)
        except Exception as exc:  # noqa: BLE001
            session.end_session()
            if _is_connection_failure(exc):
                raise SourceError(f"{self.where}: cannot connect ({first_line(exc, self.uri)})") from None
            return None, False  # "snapshot reads require a replica set", an old server, …
        return session, True

    def _find(self, collection: str, query: dict, sort, session) -> Any:
        kw = {"session": session} if session is not None else {}
        cursor = self.db[collection].find(query, batch_size=BATCH, **kw)
        return cursor.sort(sort) if sort else cursor

    def documents(self, collection: str, query: dict, writes: bool) -> Iterator[tuple[str, Any]]:
        """`(what, document)` of `collection` matching `query`, in index order; `SourceError` when reading fails."""
        try:
            for n, doc in enumerate(self._find(collection, query, _WRITE_ORDER if writes else _CHECKPOINT_ORDER, self.session), 1):
                yield f"{self.where}: {collection} document {doc.get('_id', n) if isinstance(doc, dict) else n}", doc
        except SourceError:
            raise
        except Exception as exc:  # noqa: BLE001 - pymongo's PyMongoError family, InvalidBSON
            raise SourceError(f"{self.where}: reading {collection} failed ({first_line(exc, self.uri)})") from None

    def collections(self) -> set[str] | None:
        """The database's collections; None when this user may not list them."""
        try:
            return set(self.db.list_collection_names())  # (listCollections takes no snapshot read concern)
        except Exception as exc:  # noqa: BLE001
            if _is_connection_failure(exc):
                raise SourceError(f"{self.where}: cannot connect ({first_line(exc, self.uri)})") from None
            return None

    def close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            try:
                session.end_session()
            except Exception:  # noqa: BLE001
                pass
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass


def _is_connection_failure(exc: BaseException) -> bool:
    try:
        from pymongo.errors import ConfigurationError, ConnectionFailure, OperationFailure
    except ImportError:
        return False
    # (ConfigurationError: an SRV name that does not resolve, options the server refuses.)
    return isinstance(exc, (ConnectionFailure, ConfigurationError)) or (isinstance(exc, OperationFailure) and exc.code in (13, 18))
