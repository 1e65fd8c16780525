"""Source: a SQLite checkpoint file written by `SqliteSaver` / `AsyncSqliteSaver`.

The reader opens the store without changing it (`loaders.sqlite.opening`), measures
and orders its keys in SQL (`loaders.sqlite.keys`), hands each thread's rows to the
shared row decoding (`loaders.bundles`) and its special writes beside them
(`loaders.sqlite.writes`). File damage is read under one rule:
`PRAGMA integrity_check` runs in a thread of its own while the rows are decoded
(`loaders.sqlite.integrity`). An
error SQLite raises while reading a thread makes that thread one `load_errors`
row, and the read goes on after it (`loaders.sqlite.damage`). Each thread is read
by one reader, so a split load and a single-process one report the same rows. A
damaged key index makes `thread_count` unknown and incremental loads fail with one
line (`key_digests`); a damaged or disordered one makes the load single-process (`split`).

>>> SqliteSource().kind, "sqlite" in SqliteSource.upload_suffixes
('sqlite', True)
"""

from __future__ import annotations

import functools
import itertools
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from loaders import _native, delta
from loaders.bundles import BadText, bundle_thread, key_problem, shown
from loaders.delta import read as delta_read
from loaders.elements import max_elements
from loaders.records import (
    SPECIAL_CHANNELS, LoadError, Payloads, RawCheckpoint, SourceError, ThreadBundle, max_blob_bytes,
    max_thread_checkpoints, oversized_tag_sql, weighted_ranges,
)
from loaders.scratch import scratch_dir
from loaders.source import SPLIT_MIN_BYTES, Capabilities, Source, SourceOptions, SourceReader
from loaders.sqlite import opening
from loaders.sqlite.damage import AFTER_NULL, DamagedFileReads
from loaders.sqlite.errors import sqlite_error, why
from loaders.sqlite.integrity import IntegrityCheck
from loaders.sqlite.keys import (
    CHECKPOINT_KEYS, CODECS, KEY_ORDER, NOTHING, SHOWN_CHARS, THREAD, WRITE_KEYS, KeySql, Order, capped_value,
    decode_text, one_step_digests, thread_of, utf8_size, value_size,
)
from loaders.sqlite.writes import WriteGroups

# The compiled row source (None: the sqlite3 module's cursor; tests switch it off).
native_rows = _native.rows

FAST_TEXT = True  # read TEXT with sqlite3's own decoder until a value is not UTF-8 (`_threads_decoded`); tests turn it off
INTEGRITY_CHECK_MAX_BYTES = 256 << 20  # the largest file checked (`loaders.sqlite.integrity`)
_CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
_WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
_SQLITE_MAGIC = b"SQLite format 3\x00"


class SqliteSource(Source):
    """A `SqliteSaver` file. Detected by its SQLite header."""

    kind = "sqlite"
    label = "SQLite file written by SqliteSaver"
    upload_suffixes = ("sqlite", "sqlite3", "db")

    def detect(self, spec: str) -> bool:
        p = Path(spec)
        if not p.is_file():
            return False
        with p.open("rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC

    def open_reader(self, spec: str, options: SourceOptions) -> SqliteReader:
        return SqliteReader(Path(spec), options)


class SqliteReader(DamagedFileReads, SourceReader):
    """An opened SQLite store; see the module docstring for how it is opened and how damage is read."""

    capabilities = Capabilities(split=True, handoff=True, key_digests=True)

    def __init__(self, path: Path, options: SourceOptions, *, snapshot: Path | None = None) -> None:
        self.path = path
        self.options = options
        self._tmpdir: str | None = None
        self._snapshot: Path | None = None
        # How special writes are read once damage was met reading them (None: as `threads_after`
        # chooses), and the ways that met damage ({True: by key, False: by a scan}).
        self._writes_by_key: bool | None = None
        self._writes_failed: set[bool] = set()
        self._writes: WriteGroups | None = None  # the special writes being read
        self._checkpoints = "checkpoints"  # "checkpoints NOT INDEXED" where its key index met damage (`_next_thread`)
        self._reading: object = NOTHING  # the raw id of the thread being read
        self._rows_uri: str | None = None  # how `_rows.Store` opens this state (None: the sqlite3 cursor reads rows)
        self._store = None  # that `_rows.Store`, opened at the first read
        if snapshot is not None:
            # A worker reading the loading process's snapshot (`handoff`): same state, no second copy.
            self._open(lambda: sqlite3.connect(str(snapshot), isolation_level=None), snapshot)
            return
        if not path.is_file():
            raise SourceError(f"{path}: no such file (expected a SqliteSaver checkpoint file)")
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                raise SourceError(f"{path}: not a SQLite database (expected a SqliteSaver checkpoint file)")
        wal = path.with_name(path.name + "-wal")
        # Before anything is read: a write from now on changes it (a later load then compares digests).
        self._token = opening.file_token(path, wal)
        if not (wal.is_file() and wal.stat().st_size > 0):
            self._open(lambda: opening.connect_immutable(path), None)
            return

        def connect_snapshot() -> sqlite3.Connection:
            self._tmpdir = scratch_dir("snapshot")
            self._snapshot = opening.snapshot_copy(path, wal, Path(self._tmpdir))
            return sqlite3.connect(str(self._snapshot), isolation_level=None)

        self._open(connect_snapshot, None)

    def _open(self, connect: Callable[[], sqlite3.Connection], copy: Path | None) -> None:
        path = self.path
        try:
            self.con = connect()
            self.con.text_factory = decode_text
            # One read transaction: every query below sees the same snapshot.
            self.con.execute("BEGIN")
            self._check_schema()
            codec = CODECS.get(self.con.execute("PRAGMA encoding").fetchone()[0])
            page_size = self.con.execute("PRAGMA page_size").fetchone()[0]
            self._bytes = page_size * self.con.execute("PRAGMA page_count").fetchone()[0]
        except (sqlite3.DatabaseError, UnicodeDecodeError, MemoryError) as exc:
            # (UnicodeDecodeError: SQLite's own error message quotes schema text that is not
            # UTF-8; MemoryError: SQLITE_NOMEM on a header that claims an absurd size.)
            self.close()
            raise SourceError(f"{path}: unreadable SQLite file ({why(exc)})") from None
        except SourceError:
            self.close()
            raise
        copy = copy if copy is not None else self._snapshot
        # A second connection to the same unchanging state, for `PRAGMA integrity_check` in a thread
        # (SQLite's own VFS: the read-ahead one serves the reading connection).
        if copy is not None:
            self._second = functools.partial(sqlite3.connect, str(copy), isolation_level=None, check_same_thread=False)
        else:
            self._second = functools.partial(
                sqlite3.connect, opening.uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None, check_same_thread=False,
            )
        if codec is None:  # (UTF-16 keys are measured by a Python function of this connection: `KeySql`)
            self._rows_uri = opening.uri(copy, mode="ro") if copy is not None else opening.uri(path, mode="ro", immutable="1")
        self._order = Order(codec)
        self._keys = KeySql(codec)
        if codec is not None:
            self.con.create_function("tl_utf8_size", 1, functools.partial(utf8_size, codec), deterministic=True)
        self._queries()

    def _queries(self) -> None:
        """The reading queries, with the size cap of the file's encoding (`KeySql`).

        Checkpoints: rows whose keys fit (the others are `_oversized`); a parent id
        that does not fit comes as minus its size (`loaders.bundles.parent_problem`). Special writes:
        every row, a key that does not fit cut short, with the column's name and size
        in two more columns (few rows: a Python check each is cheap there).
        """
        keys = self._keys
        self._fits = keys.all_fit(CHECKPOINT_KEYS)
        parent = (f"CASE WHEN {keys.fits('parent_checkpoint_id')} THEN parent_checkpoint_id "
                  f"ELSE -{keys.size('parent_checkpoint_id')} END")
        self._checkpoint_value, self._write_value = capped_value("checkpoint"), capped_value("value")
        self._checkpoints_sql = (
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, {parent}, {self._checkpoint_value}, metadata "
            f"FROM {{table}} WHERE {self._fits}{{where}} ORDER BY {KEY_ORDER}"
        )
        fit = {c: keys.fits(c) for c in WRITE_KEYS}
        cut_keys = ", ".join(f"CASE WHEN {fit[c]} THEN {c} ELSE substr({c}, 1, {SHOWN_CHARS}) END" for c in WRITE_KEYS)
        too_long = " ".join(f"WHEN NOT {fit[c]} THEN '{c}'" for c in WRITE_KEYS)
        size = " ".join(f"WHEN NOT {fit[c]} THEN {keys.size(c)}" for c in WRITE_KEYS)
        self._writes_sql = (
            f"SELECT {cut_keys}, idx, channel, {oversized_tag_sql(value_size('value'), 'type', max_blob_bytes())}, "
            f"CASE WHEN {' AND '.join(fit.values())} AND {value_size('value')} <= {max_blob_bytes()} THEN value END, "
            f"CASE {too_long} END, CASE {size} END "
            f"FROM writes {{indexed}} WHERE channel COLLATE BINARY IN (?, ?, ?){{where}} "
            f"ORDER BY {KEY_ORDER}, task_id COLLATE BINARY, idx"
        )

    def _check_schema(self) -> None:
        tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in ("checkpoints", "writes") if t not in tables]
        if missing:
            raise SourceError(
                f"{self.path}: not a SqliteSaver checkpoint file (missing table {', '.join(missing)}; found {', '.join(sorted(tables)) or 'no tables'})"
            )
        for table, needed in (("checkpoints", _CHECKPOINT_COLUMNS), ("writes", _WRITE_COLUMNS)):
            cols = {r[1] for r in self.con.execute("SELECT * FROM pragma_table_info(?)", (table,))}
            lacking = needed - cols
            if lacking:
                raise SourceError(f"{self.path}: table {table} lacks column(s) {', '.join(sorted(lacking))}")

    def describe(self) -> str:
        return str(self.path.resolve())

    def handoff(self) -> Callable[[SourceOptions], SqliteReader] | None:
        """How a worker process opens this reader's snapshot copy, if it took one
        (a store with a `-wal`): every worker then reads the one committed state
        the load started from, and the store is copied once, not once per worker.
        None for a store read in place (`immutable=1`): workers open it themselves.
        Picklable: a spawned worker gets it too."""
        if self._snapshot is None:
            return None
        return functools.partial(_open_snapshot, str(self.path), str(self._snapshot))

    def _thread_filter(self, only: frozenset[str] | None) -> tuple[str, list, set[str] | None]:
        """SQL predicate for the wanted threads, and a set to filter by in Python
        when the id list is too long to bind (SQLite caps bound parameters)."""
        selected = self.options.wanted(only)
        wanted = set(selected) if selected is not None else None
        clauses, params = self.thread_range.sql(THREAD)
        if wanted is not None and len(wanted) <= 500:
            ids = sorted(wanted)
            clauses.append(f"{THREAD} IN ({','.join('?' * len(ids))})" if ids else "FALSE")
            params.extend(ids)
            wanted = None
        return " AND ".join(clauses), params, wanted

    def _key_index_binary(self) -> bool:
        """Whether an index orders checkpoints by (thread_id, checkpoint_ns, checkpoint_id)
        under BINARY: else every read sorts (a key column declared NOCASE, say)."""
        for (name,) in self.con.execute("SELECT name FROM pragma_index_list('checkpoints')").fetchall():
            cols = self.con.execute(
                "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno", (name,)
            ).fetchall()[:3]
            if [c for c, _ in cols] == list(CHECKPOINT_KEYS) and all(coll == "BINARY" for _, coll in cols):
                return True
        return False

    def split(self, n: int, min_bytes: int = SPLIT_MIN_BYTES) -> list[tuple[str | None, str | None]]:
        """Thread-id ranges holding about equal decoding work, for `n` workers.

        A thread of k checkpoints holds about k²/2 message payloads (each checkpoint
        re-serializes the whole list), so threads are weighed by k², counted from the
        primary-key index alone: summing `length(checkpoint)` instead reads every
        row's pages (seconds on a large file). A file under `min_bytes` is not
        split: starting workers would cost more than it saves; nor is one whose key
        index is not BINARY (each range would sort the whole table), damaged or out
        of order (one process reads on past the damage and reports it, or fails).
        """
        if n <= 1 or self.path.stat().st_size < min_bytes:
            return [(None, None)]
        where, params, _ = self._thread_filter(None)
        try:
            if not self._key_index_binary():
                return [(None, None)]
            rows = self.con.execute(
                f"SELECT thread_id, count(*) FROM checkpoints WHERE {self._keys.fits('thread_id')}"
                f"{' AND ' + where if where else ''} GROUP BY {THREAD} ORDER BY {THREAD}",
                params,
            ).fetchall()
        except sqlite3.DatabaseError:
            return [(None, None)]
        before = self._order.before
        if any(before(a[0], b[0]) is False for a, b in zip(rows, rows[1:])):
            return [(None, None)]  # (an index out of order: the one reader fails in one line, or reads on)
        rows = [r for r in rows if type(r[0]) is str]
        return weighted_ranges([(t, k * k) for t, k in rows], n)

    def _out_of_order(self, prev, cur, table: str = "checkpoints") -> SourceError:
        return SourceError(
            f"{self.path}: the {table} index is out of order (damaged): thread {shown(cur)!r:.80} comes after "
            f"thread {shown(prev)!r:.80}; rebuild it on a copy (sqlite3 copy.sqlite REINDEX) and load the copy"
        )

    def thread_count(self) -> int | None:
        """Distinct thread ids (None when the key index is damaged: the read reports it)."""
        where, params, wanted = self._thread_filter(None)
        if wanted is not None:
            return len(wanted)
        sql = f"SELECT COUNT(DISTINCT {THREAD}) FROM checkpoints {'WHERE ' + where if where else ''}"
        try:
            return self.con.execute(sql, params).fetchone()[0]
        except sqlite3.DatabaseError:
            return None

    def _damaged(self, exc: sqlite3.DatabaseError) -> SourceError:
        # Pages found damaged while reading (the header and schema were fine): the
        # file is damaged, not a row; say so in one line instead of a traceback.
        return SourceError(f"{self.path}: unreadable SQLite file ({exc})")

    def checkpoint_keys(self) -> Iterator[tuple[str, str, str]]:
        # Rows whose thread_id is not clean text, or whose keys are too long, are never loaded (see `threads`).
        try:
            yield from (
                k for k in self.con.execute(f"SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE {self._fits}")
                if type(k[0]) is str
            )
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def change_token(self) -> str | None:
        return getattr(self, "_token", None)  # (None for a worker reading a handed-off snapshot)

    def key_digests(self) -> Iterator[tuple[str, str]]:
        """(thread_id, every checkpoint key of the thread as one text) for incremental loads.

        Built by SQLite from the primary-key index, so an incremental load compares
        one value per thread instead of one Python tuple per checkpoint. The text is
        `loaders.digests`' key text, length-prefixed so that no two key sets share it.
        """
        try:
            if self._order.codec is None:
                yield from one_step_digests(self.con, self._key_text_sql())
                return
            rows = self.con.execute(self._key_text_sql()).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        yield from (r for r in rows if type(r[0]) is str)

    def _key_text_sql(self) -> str:
        """(thread_id, keys): each thread's key text, a row a thread."""
        # (The empty namespace, almost every row, spelled without measuring it.)
        text = ("group_concat(CASE checkpoint_ns WHEN '' THEN '0:' ELSE length(checkpoint_ns) || ':' || checkpoint_ns "
                "END || length(checkpoint_id) || ':' || checkpoint_id, '')")
        if self._key_index_binary():
            # One pass over the key index, in key order, which is the order group_concat
            # takes its rows in: no sort of every key (half the time). Were SQLite ever to
            # feed a group in another order, its text would differ from the stored one and
            # the thread would be read again: slower, never a change missed.
            return f"SELECT thread_id, {text} AS keys FROM checkpoints WHERE {self._fits} GROUP BY {THREAD}"
        return (f"SELECT thread_id, {text} AS keys FROM (SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                f"WHERE {self._fits} ORDER BY {KEY_ORDER}) GROUP BY {THREAD}")

    # --- threads ------------------------------------------------------------------

    def threads(self, only: frozenset[str] | None = None) -> Iterator[ThreadBundle]:
        check = None
        if self.thread_range.lo is None and self.options.wanted(only) is None and self._bytes <= INTEGRITY_CHECK_MAX_BYTES:
            check = IntegrityCheck(self._second)  # once per load: the reader of the first range (or of all)
        try:
            yield from self._oversized(only)
            yield from self._threads_decoded(only)
            if check is not None and check.wait():
                yield ThreadBundle(None, [], [], [LoadError(None, None, None, "file", check.reason())])
        finally:
            if check is not None:
                check.cancel()

    def _threads_decoded(self, only: frozenset[str] | None) -> Iterator[ThreadBundle]:
        """`threads_after` from the start, again after any thread where the read stopped.

        sqlite3's built-in `str` text factory decodes UTF-8 in C (`decode_text`, a Python
        call per TEXT value, five per checkpoint row, costs about 2 % of a load) but
        raises on the first value that is not UTF-8: the read then goes on with
        `decode_text` after the last thread handed over. An error SQLite raises while a
        thread is read (a damaged page) makes that thread one error row
        (`_after_damage`), and the read goes on after it.
        """
        after = None  # where the next read starts: after this raw thread id (None: at the first)
        self.con.text_factory = str if FAST_TEXT else decode_text
        try:
            while True:
                damage, self._reading = None, NOTHING
                try:
                    for raw_id, bundle in self.threads_after(only, after):
                        self._reading = NOTHING
                        yield bundle
                        if raw_id is not NOTHING:
                            after = AFTER_NULL if raw_id is None else raw_id
                    return
                except sqlite3.DatabaseError as exc:
                    if not (self.con.text_factory is str and str(exc).startswith("Could not decode to UTF-8")):
                        damage = exc
                    self.con.text_factory = decode_text
                if damage is not None:
                    self._check_roots()
                    if self._writes is not None and self._writes.failed:
                        self._other_writes_read()
                    failed, self._reading = self._reading, NOTHING
                    bundles, after = self._after_damage(only, after, failed, damage)
                    yield from bundles
                    if after is NOTHING:
                        return
        finally:
            if self.con is not None:  # (None: the reader was closed before this generator was)
                self.con.text_factory = decode_text

    def _key_sql(self, raw_id, op: str) -> tuple[str, list]:
        """`thread_id <op> raw_id` in SQL (`op`: ">" or "="), for any value a thread id can hold."""
        if raw_id is None or raw_id is AFTER_NULL:
            return ("thread_id IS NOT NULL" if op == ">" else "thread_id IS NULL"), []
        if isinstance(raw_id, BadText):
            stored = self._order.stored(raw_id)
            if stored is None:
                raise SourceError(f"{self.path}: cannot read on after the thread id {raw_id!r:.80} (not text of the file's encoding)")
            return f"{THREAD} {op} CAST(? AS TEXT)", [stored]
        return f"{THREAD} {op} ?", [raw_id]

    def threads_after(self, only: frozenset[str] | None, after) -> Iterator[tuple[object, ThreadBundle]]:
        """(raw thread id, bundle) for every thread, or every thread whose raw id sorts after `after`."""
        where, params, wanted = self._thread_filter(only)
        if after is not None:
            clause, args = self._key_sql(after, ">")
            where = " AND ".join(filter(None, [where, clause]))
            params = [*params, *args]
        prev = NOTHING if after is None else (None if after is AFTER_NULL else after)
        by_key = self._writes_by_key
        if by_key is None:
            by_key = (self.options.wanted(only) is not None and wanted is None) or self.thread_range != (None, None)
        return self._bundles(where, params, wanted, prev, by_key)

    def _bundles(self, where: str, params: list, wanted: set[str] | None, prev, by_key: bool) -> Iterator[tuple[object, ThreadBundle]]:
        and_where = f" AND {where}" if where else ""
        cps = self._thread_rows(self._checkpoints_sql.format(table=self._checkpoints, where=and_where), params)
        self._writes = None
        writes = self._special_writes(and_where, params, by_key)
        before = self._order.before
        for thread_id, rows, payloads, fast, skipped in cps:
            # A thread's rows come together, so each thread id sorts after the one before
            # (one comparison per thread); an index that says otherwise is damaged.
            if prev is not NOTHING and before(prev, thread_id) is False:
                raise self._out_of_order(prev, thread_id)
            prev = self._reading = thread_id
            problem = key_problem(thread_id)
            if problem is not None:
                # No id to load these rows under (a hostile or damaged file): report each, load none.
                bad = [LoadError(shown(r[0]), shown(r[1]), shown(r[2]), "checkpoint", f"thread_id {problem}; row skipped") for r in rows]
                yield thread_id, ThreadBundle(shown(thread_id), [], [], bad + writes.drain())
                continue
            thread_writes = writes.take(thread_id)
            if wanted is not None and thread_id not in wanted:
                continue
            bundle = bundle_thread(thread_id, rows, thread_writes, payloads, fast, skipped)
            bundle.errors.extend(writes.drain())
            if delta.marked(bundle):  # a DeltaChannel thread: its messages are rebuilt (loaders.delta)
                bundle = delta_read.sqlite_thread(self.con, bundle, self._fits, self._keys.all_fit(WRITE_KEYS),
                                                self._checkpoint_value, self._write_value)
            yield thread_id, bundle
        errors = writes.finish()
        if errors:
            yield NOTHING, ThreadBundle(None, [], [], errors)

    def _thread_rows(self, sql: str, params: list) -> Iterator[tuple[object, object, Payloads | None, int, int]]:
        """The checkpoints query's rows grouped by thread: (raw id, rows, payloads, fast, skipped), where
        the first `fast` rows are `RawCheckpoint`s numbered into `payloads`, the others are raw rows
        (`bundle_thread`), and `skipped` rows past the thread's limit were only counted (C; the
        cursor's rows are an iterator `bundle_thread` cuts itself). Through `_rows.Store` (`loaders/_rows.c`: SQLite's C API, each blob scanned
        where SQLite holds it) when built, else the sqlite3 cursor (raw rows, grouped lazily). Both
        raise where the other does, with `_reading` naming the same thread."""
        if self._store is None and native_rows is not None and self._rows_uri is not None:
            try:
                self._store = self._open_store()
            except (sqlite3.Error, MemoryError):
                self._rows_uri = None  # (a second connection refused: this one reads on, as without C)
        if self._store is None or native_rows is None or not all(type(p) in (str, bytes, int) for p in params):
            cursor = self.con.execute(sql, params)
            return ((thread_id, rows, None, 0, 0) for thread_id, rows in itertools.groupby(cursor, key=thread_of))
        return self._charged(self._store.rows(sql, params, max_thread_checkpoints(), max_elements()))

    def _charged(self, rows) -> Iterator[tuple[object, list, Payloads, int, int]]:
        """`_rows.Rows`, with the thread an error is charged to (`Rows.reading`) set as `_reading`.

        The cursor path hands a thread over at its first row (`itertools.groupby`), so
        `_bundles` judges its id (order, key problems, the wanted set) before its rows
        fail; `_rows` hands a thread over only whole. A thread whose rows failed before
        it was handed over is therefore handed over here first, its rows raising the
        error when read (or on the next group when skipped), as the cursor's would."""
        last = NOTHING
        while True:
            try:
                group = next(rows)
            except StopIteration:
                return
            except BaseException as exc:
                self._reading = reading = rows.reading
                if reading is not NOTHING and reading is not last:
                    last = reading
                    yield reading, _raising(exc), None, 0, 0
                raise
            last = group[0]
            yield group

    def _open_store(self):
        """`_rows.Store` on this reader's state: through the read-ahead VFS when the file is read in place."""
        hooks = (decode_text, sqlite_error, RawCheckpoint, Payloads, NOTHING)
        if opening.native_readahead is not None and "immutable=1" in self._rows_uri:
            try:
                return native_rows.Store(f"{self._rows_uri}&vfs={opening.native_readahead.VFS_NAME}", *hooks)
            except sqlite3.OperationalError:
                pass  # (no such vfs)
        return native_rows.Store(self._rows_uri, *hooks)

    def _special_writes(self, and_where: str, params: list, by_key: bool) -> WriteGroups:
        """The `__interrupt__` / `__resume__` / `__error__` writes of the selected threads,
        grouped by thread in thread order (`and_where`, `params`: the checkpoints query's)."""
        # Special writes are few among many (every step writes its messages): walking
        # the primary key in order would fetch every row from the table at random to
        # read its channel (2.3 s on a 7 GB store not in the page cache); a scan in
        # table order and a sort of the few that match is sequential. A chosen set of
        # threads bound in the SQL (not filtered afterwards) is looked up by the key,
        # and so is one range of a split load: a worker reads many small ranges, and a
        # whole-table scan for each would cost more than the lookups of its own rows.
        # (After damage, `_other_writes_read` may choose otherwise.)
        indexed = "" if by_key else "NOT INDEXED"
        groups = self._writes = WriteGroups(self._order, functools.partial(self._out_of_order, table="writes"), by_key)
        try:
            rows = self.con.execute(self._writes_sql.format(indexed=indexed, where=and_where), [*SPECIAL_CHANNELS, *params])
        except sqlite3.DatabaseError:
            groups.failed = True
            raise
        groups.start(rows)  # (its first row: a scan sorts them all here)
        return groups

    def close(self) -> None:
        store, self._store = getattr(self, "_store", None), None
        if store is not None:
            store.close()
        con = getattr(self, "con", None)
        if con is not None:
            try:
                con.close()
            except sqlite3.Error:
                pass
            self.con = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _raising(exc: BaseException) -> Iterator[tuple]:
    """The rows of a thread whose read failed: reading them raises `exc` (`SqliteReader._charged`)."""
    raise exc
    yield  # (a generator: nothing is raised until it is read)


def _open_snapshot(path: str, snapshot: str, options: SourceOptions) -> SqliteReader:
    return SqliteReader(Path(path), options, snapshot=Path(snapshot))
