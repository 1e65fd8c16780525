"""Entry point of the second OS process of the ``second_process`` scenario.

    python -m storegen.second_process --store PATH_OR_DSN --thread ID --at ISO [--seed S] [--no-pid]

Prints one JSON line ``{"pid": ..., "end": <simulated time at exit>}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sqlite3
import sys
from collections.abc import Sequence

from storegen import scenarios
from storegen.clock import Clock
from storegen.ids import deterministic


def is_postgres_dsn(location: str) -> bool:
    """A ``postgresql://`` URI or a libpq ``key=value`` conninfo (``host=... dbname=...``).

    Example:
        >>> is_postgres_dsn("user=postgres dbname=x host=127.0.0.1"), is_postgres_dsn("/tmp/a.sqlite")
        (True, False)
    """
    if location.startswith(("postgres://", "postgresql://")):
        return True
    keys = {part.split("=", 1)[0].strip() for part in location.split() if "=" in part}
    return bool(keys & {"host", "hostaddr", "dbname", "user", "port", "service"}) and not os.path.exists(location)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m storegen.second_process")
    p.add_argument("--store", required=True, help="SQLite file path or postgresql:// DSN")
    p.add_argument("--thread", required=True)
    p.add_argument("--at", required=True, help="ISO datetime the restarted worker starts at")
    p.add_argument("--seed", default="0")
    p.add_argument("--no-pid", action="store_true")
    a = p.parse_args(argv)
    scenarios.RECORD_PID = not a.no_pid
    start = dt.datetime.fromisoformat(a.at)
    with deterministic(f"second:{a.seed}"), Clock(start) as clock:
        if is_postgres_dsn(a.store):
            from langgraph.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(a.store) as saver:
                scenarios.continue_restart_thread(saver, a.thread, clock)
        else:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(a.store, check_same_thread=False)
            try:
                scenarios.continue_restart_thread(SqliteSaver(conn), a.thread, clock)
            finally:
                conn.close()
        end = clock.now()
    print(json.dumps({"pid": os.getpid(), "end": end.isoformat()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
