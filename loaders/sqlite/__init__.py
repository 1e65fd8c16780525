"""The SQLite source kind (`SqliteSaver` files), one idea a module.

- `reader`: `SqliteSource` and its reader, thread by thread;
- `damage`: the reader's way on past damage: the thread SQLite cannot read named, the next one found;
- `opening`: the store opened without changing it (in place, or a copy of a WAL-mode store);
- `wal`: whether a `-wal` file belongs to the database beside it;
- `keys`: key sizes and key order measured and taken in SQL, as the file has them;
- `writes`: the special writes, grouped by thread beside the checkpoints;
- `integrity`: `PRAGMA integrity_check` in a thread of its own;
- `errors`: SQLite's errors as sqlite3 raises them and as one line.

The row decoding every source shares is `loaders.bundles`.

>>> from loaders.sqlite.reader import SqliteSource
>>> SqliteSource.kind
'sqlite'
"""
