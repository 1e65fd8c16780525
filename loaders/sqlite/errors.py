"""Errors SQLite raises, as the sqlite3 module raises them and as one line a load shows.

>>> why(MemoryError())
'SQLite ran out of memory reading it (a damaged header or page)'
"""

from __future__ import annotations

import sqlite3

# The sqlite3 module's exception classes by SQLite's primary result code (CPython's
# `get_exception_class`), for the errors `_rows.Store` meets: the same class and message either way.
_SQLITE_ERRORS = {
    **dict.fromkeys((2, 12), sqlite3.InternalError),
    **dict.fromkeys((1, 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 16, 17), sqlite3.OperationalError),
    18: sqlite3.DataError,
    **dict.fromkeys((19, 20), sqlite3.IntegrityError),
    **dict.fromkeys((21, 25), sqlite3.InterfaceError),
}
_SQLITE_NOMEM = 7


def sqlite_error(code: int, message: str) -> BaseException:
    """The exception sqlite3 raises for SQLite's (extended) result `code` and `message`.

    >>> type(sqlite_error(11, "database disk image is malformed")).__name__, type(sqlite_error(7, "")).__name__
    ('DatabaseError', 'MemoryError')
    """
    if code & 0xFF == _SQLITE_NOMEM:
        return MemoryError()
    exc = _SQLITE_ERRORS.get(code & 0xFF, sqlite3.DatabaseError)(message)
    exc.sqlite_errorcode = code
    return exc


def why(exc: BaseException) -> str:
    """An error SQLite raised, as one line: a MemoryError (SQLITE_NOMEM) carries no message,
    and a UnicodeDecodeError is sqlite3 failing to decode SQLite's message about damaged text."""
    if isinstance(exc, MemoryError):
        return "SQLite ran out of memory reading it (a damaged header or page)"
    if isinstance(exc, UnicodeDecodeError):
        return "SQLite's error message quotes text that is not UTF-8 (damaged schema or page)"
    return str(exc)

