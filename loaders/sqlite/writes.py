"""A SQLite store's special writes (`__interrupt__`, `__resume__`, `__error__`), grouped by thread.

The reader reads them in one query beside the checkpoints' and takes each thread's
group as its checkpoints come by (`WriteGroups.take`).

>>> from loaders.sqlite.keys import Order
>>> groups = WriteGroups(Order(None), lambda prev, cur: None, by_key=False)
>>> groups.start([("a", "", "1", "t", 0, "__interrupt__", "json", b"{}", None, None)])
>>> [row[:2] for row in groups.take("a")], groups.finish()
([('a', '')], [])
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable

from loaders.records import LoadError, SourceError, SpecialWritesTail, key_size_problem
from loaders.sqlite.keys import NOTHING, WRITE_KEYS, Order, cut, thread_of


class WriteGroups:
    """Special-write rows grouped by thread id, handed out as the threads come by (in the
    file's order, `Order`); rows with a key over the size cap become errors (`drain`)."""

    def __init__(self, order: Order, out_of_order: Callable[[object, object], SourceError], by_key: bool) -> None:
        self._order = order
        self._out_of_order = out_of_order
        self.by_key = by_key  # how the rows are read (by key, or by a scan of the table)
        self.failed = False  # SQLite raised while they were read
        self._errors: list[LoadError] = []
        self._prev: object = NOTHING

    def start(self, rows) -> None:
        self._groups = itertools.groupby(self._sized(rows), key=thread_of)
        self._pending = self._next()

    def _sized(self, rows):
        try:
            for row in rows:
                if row[8] is None:
                    yield row[:8]
                    continue
                column, size = row[8], row[9]
                shown = [cut(v, c == column) for v, c in zip(row[:3], WRITE_KEYS)]
                self._errors.append(LoadError(*shown, "write", f"{row[5]}: {column} {key_size_problem(size)}; row skipped"))
        except sqlite3.DatabaseError:
            self.failed = True
            raise

    def _next(self):
        group = next(self._groups, None)
        if group is not None:
            if self._prev is not NOTHING and self._order.before(self._prev, group[0]) is False:
                raise self._out_of_order(self._prev, group[0])
            self._prev = group[0]
        return group

    def take(self, thread_id: str) -> list:
        """The rows of `thread_id`, skipping those of threads before it."""
        pending = self._pending
        before = self._order.before
        while pending is not None and (type(pending[0]) is not str or before(pending[0], thread_id)):
            pending = self._next()
        rows: list = []
        if pending is not None and pending[0] == thread_id:
            rows = self._bounded(thread_id, pending[1])
            pending = self._next()
        self._pending = pending
        return rows

    def _bounded(self, thread_id: str, group) -> list:
        """A thread's rows, bounded (`records.SpecialWritesTail`): the earlier ones are one error row."""
        tail = SpecialWritesTail(7)
        for row in group:
            tail.add(row)
        error = tail.error(thread_id)
        if error is not None:
            self._errors.append(error)
        return tail.rows()

    def drain(self) -> list[LoadError]:
        """The errors met so far (each once)."""
        errors, self._errors = self._errors, []
        return errors

    def finish(self) -> list[LoadError]:
        """Read the rest (threads with no checkpoint to load): its errors and those not drained."""
        while self._pending is not None:
            for _ in self._pending[1]:
                pass
            self._pending = self._next()
        return self.drain()
