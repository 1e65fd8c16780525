"""Sources: a MongoDB database written by `MongoDBSaver` (langgraph-checkpoint-mongodb), live or as files.

- `mongodb`: a live database, `mongodb://` or `mongodb+srv://` (`loaders.mongo.live`);
- `mongo-dump`: a `mongodump` folder or its `.bson` files (plain or `--gzip`), a
  `mongodump --archive` file (plain or gzipped), or `mongoexport` JSON lines
  (`loaders.mongo.files`).

Either way the two collections are streamed once into a private SQLite file in
SqliteSaver's layout (`loaders.mongo.stage`: one document at a time, the
saver's `[type, binary]` metadata leaves decoded to its JSON text) and read
back by `SqliteReader`, so the rows decode, fail and split exactly as a
SqliteSaver file's. Needs pymongo (the `mongodb` extra) for its `bson` module.

One module per concern: `sources` (the kinds, options and reader), `stage`,
`files`, `live`.
"""

from loaders.mongo.sources import MongoDumpSource, MongoOptions, MongoSource

__all__ = ["MongoDumpSource", "MongoOptions", "MongoSource"]
