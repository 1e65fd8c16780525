"""Reading a damaged SQLite store past its damage: the part of `SqliteReader` that names a
thread SQLite cannot read, finds the next one, and fails the load only when no thread can be read.

An error SQLite raises while a thread is read makes that thread one `load_errors` row
(stage `file`) after it was read again alone (`_after_damage`); the next thread is asked
of the key index and of the table, either of which may be the damaged one (`_next_thread`);
special writes are read the other way once one way met damage (`_other_writes_read`); a
table or key index whose root page cannot be read leaves nothing to read (`_check_roots`).
Rows with keys too large to load are named from the key index alone (`_oversized`).

>>> AFTER_NULL is AFTER_NULL, bool(DamagedFileReads.__doc__)
(True, True)
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator

from loaders.bundles import shown
from loaders.records import LoadError, ThreadBundle, key_size_problem
from loaders.sqlite.keys import CHECKPOINT_KEYS, KEY_ORDER, NOTHING, SHOWN_CHARS, THREAD, cut

AFTER_NULL = object()  # a restart position after the threads whose id is NULL


class DamagedFileReads:
    """The damage handling of `loaders.sqlite.reader.SqliteReader` (a mixin: it reads the
    reader's connection, key order and filters)."""

    def _oversized(self, only: frozenset[str] | None) -> Iterator[ThreadBundle]:
        """Checkpoint rows with a key over `KEY_MAX_BYTES`, reported from the key index alone
        (their keys cut short), in bundles of at most 1,000 errors; from the table when the
        index is damaged."""
        where, params, _ = self._thread_filter(only)
        cut_keys = ", ".join(
            f"substr({c}, 1, {SHOWN_CHARS}), length({c}) > {SHOWN_CHARS}, {self._keys.size(c)}" for c in CHECKPOINT_KEYS
        )
        sql = f"SELECT {cut_keys} FROM {{table}} WHERE NOT ({self._fits}){' AND ' + where if where else ''} ORDER BY {KEY_ORDER}"
        errors: list[LoadError] = []
        done = 0  # rows reported (the table gives them again in the same order)
        try:
            try:
                for row in itertools.islice(self.con.execute(sql.format(table="checkpoints"), params), done, None):
                    if errors and (len(errors) >= 1000 or errors[-1].thread_id != cut(row[0], row[1])):
                        yield ThreadBundle(None, [], [], errors)
                        errors = []
                    errors.append(_oversized_error(row))
                    done += 1
            except sqlite3.DatabaseError:  # (the key index is damaged: the table may not be)
                for row in itertools.islice(self.con.execute(sql.format(table="checkpoints NOT INDEXED"), params), done, None):
                    errors.append(_oversized_error(row))
        except sqlite3.DatabaseError as exc:
            reason = f"SQLite reports the file damaged: the keys could not be measured ({exc})"
            errors.append(LoadError(None, None, None, "file", reason))
        if errors:
            yield ThreadBundle(None, [], [], errors)

    def _other_writes_read(self) -> None:
        """Special writes met damage: read them the other way (by key, or by a scan of the
        table: damage in the table or in its index), or by key when both met it (then a
        thread whose writes cannot be read is reported)."""
        failed = self._writes.by_key
        self._writes_failed.add(failed)
        self._writes_by_key = True if (not failed) in self._writes_failed else not failed

    def _check_roots(self) -> None:
        """Fail the source when a table or key index cannot be read from its root page (its
        first and its last row both fail): then no thread can be read, and the file is
        unusable, not damaged in places."""
        for tree, order in (
            ("checkpoints NOT INDEXED", ["rowid"]), ("checkpoints", KEY_ORDER.split(", ")),
            ("writes NOT INDEXED", ["rowid"]), ("writes", [*KEY_ORDER.split(", "), "task_id COLLATE BINARY", "idx"]),
        ):
            failed = []
            for direction in ("ASC", "DESC"):
                try:
                    self.con.execute(
                        f"SELECT thread_id FROM {tree} ORDER BY {', '.join(f'{o} {direction}' for o in order)} LIMIT 1"
                    ).fetchall()
                except sqlite3.OperationalError as exc:
                    if not str(exc).startswith("no such column"):  # (a table WITHOUT ROWID: its key is its order)
                        failed.append(exc)
                except sqlite3.DatabaseError as exc:
                    failed.append(exc)
            if len(failed) == 2:
                raise self._damaged(failed[0]) from None

    def _after_damage(self, only, after, failed, exc: sqlite3.DatabaseError) -> tuple[list[ThreadBundle], object]:
        """The bundles of the thread whose read failed (read again alone, by its key:
        other pages; or an error row naming it) and the position after it; `NOTHING`
        as the position when there is no thread to name (the read ends there)."""
        where, params, wanted = self._thread_filter(only)
        if failed is NOTHING:  # (before a thread's first row: the next one)
            failed, exc = self._next_thread(where, params, after, exc)
        prev = None if after is AFTER_NULL else after
        if failed is NOTHING or (after is not None and self._order.before(prev, failed) is False):
            # (no thread to name, or none past the last: the read cannot go on)
            where_ = "" if after is None else f" after thread {shown(prev)!r:.80}"
            reason = f"SQLite reports the file damaged: reading stopped{where_} ({exc})"
            return [ThreadBundle(None, [], [], [LoadError(None, None, None, "file", reason)])], NOTHING
        clause, args = self._key_sql(failed, "=")
        alone = (" AND ".join(filter(None, [where, clause])), [*params, *args])
        bundles = None
        for _ in range(2):  # (twice when its special writes met damage: the second time read the other way)
            by_key = True if self._writes_by_key is None else self._writes_by_key
            try:
                bundles = [b for _, b in self._bundles(*alone, wanted, NOTHING, by_key)]
                break
            except sqlite3.DatabaseError as again:
                exc = again
                if self._writes is None or not self._writes.failed:
                    break
                self._other_writes_read()
                if self._writes_by_key == by_key:
                    break  # (both ways met damage)
        if bundles == [] and (wanted is None or failed in wanted):
            # Its key finds no row: the key index named a thread that is not where it says
            # (damaged). Reading on after it could skip the threads between, so the next
            # thread is asked of the index and of the table again (`_next_thread`).
            then, _ = self._next_thread(where, params, after, exc)
            if then is not NOTHING and self._order.before(then, failed):
                return self._after_damage(only, after, then, exc)
        if bundles is None:
            name = shown(failed)
            reason = f"SQLite reports the file damaged: the thread could not be read ({exc})"
            bundles = [ThreadBundle(name, [], [], [LoadError(name, None, None, "file", reason)])]
        self._reading = NOTHING
        return bundles, (AFTER_NULL if failed is None else failed)

    def _next_thread(self, where: str, params: list, after, exc: sqlite3.DatabaseError) -> tuple[object, sqlite3.DatabaseError]:
        """The raw id of the first thread after `after` (`NOTHING`: none), asked of the key
        index and of the table (a scan of its rows' first pages: the key index may end early
        or skip ahead where it is damaged). The reads go on the way that found it first: by
        the index (one damaged thread costs one thread), else by the table."""
        clauses, args = [where] if where else [], list(params)
        if after is not None:
            clause, more = self._key_sql(after, ">")
            clauses.append(clause)
            args.extend(more)
        sql = (f"SELECT thread_id FROM {{table}} WHERE {self._fits}{''.join(' AND ' + c for c in clauses)} "
               f"ORDER BY {THREAD} LIMIT 1")
        found = {}
        for table in ("checkpoints", "checkpoints NOT INDEXED"):
            try:
                row = self.con.execute(sql.format(table=table), args).fetchone()
            except sqlite3.DatabaseError as again:
                exc = again
                continue
            if row is not None:
                found[table] = row[0]
        if not found:
            return NOTHING, exc
        by_index, by_table = found.get("checkpoints", NOTHING), found.get("checkpoints NOT INDEXED", NOTHING)
        if by_index is NOTHING or (by_table is not NOTHING and self._order.before(by_table, by_index)):
            self._checkpoints = "checkpoints NOT INDEXED"
            return by_table, exc
        self._checkpoints = "checkpoints"
        return by_index, exc


def _oversized_error(row) -> LoadError:
    """The error of a checkpoint row from `SqliteReader._oversized`: (cut key, was cut, size) x 3."""
    keys_shown = [cut(row[i], row[i + 1]) for i in (0, 3, 6)]
    column, size = next((c, row[i + 2]) for c, i in zip(CHECKPOINT_KEYS, (0, 3, 6)) if key_size_problem(row[i + 2]))
    return LoadError(*keys_shown, "checkpoint", f"{column} {key_size_problem(size)}; row skipped")
