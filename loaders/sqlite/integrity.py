"""`PRAGMA integrity_check` of a SQLite store, in a thread while its rows are decoded.

It runs on files up to `reader.INTEGRITY_CHECK_MAX_BYTES` (256 MiB: it reads every
page, about 1 GB/s measured, so a larger file would pay a second or more). Not
`quick_check`, which costs about as much (0.19 s against 0.21 s on a 527 MB store)
but does not compare the indexes with their table: the loader reads keys off the
primary-key index, so a damaged index entry loaded a checkpoint under a key the
table does not hold, unreported when all threads are read. It runs once per load
(by the reader of the first thread range); what it finds is one `load_errors` row
without a thread (stage `file`).

>>> check = IntegrityCheck(lambda: sqlite3.connect(":memory:", check_same_thread=False))
>>> check.wait()
[]
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

from loaders.sqlite.errors import why

_FINDINGS = 10  # asked of SQLite; the first three are shown


class IntegrityCheck:
    """`PRAGMA integrity_check` on a connection of its own, in a thread: SQLite releases the
    GIL while it runs, so it costs the load's wall time little next to the decoding."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self.findings: list[str] = []
        self._con: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._thread = threading.Thread(target=self._run, args=(connect,), name="sqlite-integrity-check", daemon=True)
        self._thread.start()

    def _run(self, connect: Callable[[], sqlite3.Connection]) -> None:
        try:
            con = connect()
        except (sqlite3.Error, UnicodeDecodeError, MemoryError) as exc:
            self.findings = [why(exc)]
            return
        with self._lock:
            if self._cancelled:
                con.close()
                return
            self._con = con
        try:
            found = [r[0] for r in con.execute(f"PRAGMA integrity_check({_FINDINGS})")]
            self.findings = [] if found == ["ok"] else [str(f) for f in found]
        except (sqlite3.Error, UnicodeDecodeError, MemoryError) as exc:  # (the check itself stopped at damage)
            if not self._cancelled:
                self.findings = [f"integrity_check stopped: {why(exc)}"]
        finally:
            with self._lock:
                self._con = None
            con.close()

    def wait(self) -> list[str]:
        self._thread.join()
        return self.findings

    def reason(self) -> str:
        shown = [" ".join(f.replace("*** in database main ***", "").split()) for f in self.findings[:3]]
        more = len(self.findings) - len(shown)
        tail = f" (and {more}{' or more' if len(self.findings) >= _FINDINGS else ''} more)" if more else ""
        return f"SQLite reports the file damaged: {'; '.join(shown)}{tail}"

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._con is not None:
                self._con.interrupt()
        self._thread.join()
