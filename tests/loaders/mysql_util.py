"""Helpers for the MySQL / MariaDB source tests: throwaway databases on the local server,
written by the real `langgraph-checkpoint-mysql` saver, and their `mysqldump`.

Every database is created fresh (`tl_<random>`) on the server of `TL_MYSQL_ADMIN`
(default: root without a password on 127.0.0.1:3306, which scripts/test-services.sh
starts) and dropped afterwards, with a user that may only SELECT from it: the
loader needs no more.

    with fresh_mysql_database() as db:
        with mysql_saver(db.admin_dsn) as saver:
            run_scenarios(saver, ["simple_chat"])
        mysqldump(db.name, tmp_path / "dump.sql")
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

HOST, PORT = "127.0.0.1", int(os.environ.get("TL_MYSQL_PORT", "3306"))
ADMIN = os.environ.get("TL_MYSQL_ADMIN", "root")
READER_PASSWORD = "S3cret-my"


def _admin(sql: str) -> None:
    subprocess.run(["mysql", "-u", ADMIN, "-h", HOST, "-P", str(PORT), "-e", sql], check=True, capture_output=True)


def require_server() -> None:
    """Fail (not skip) when the test server is down: these tests are part of the suite."""
    done = subprocess.run(["mysqladmin", "-u", ADMIN, "-h", HOST, "-P", str(PORT), "ping"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"MariaDB not reachable at {HOST}:{PORT} ({done.stderr.strip()}); run scripts/test-services.sh")


@contextmanager
def fresh_mysql_database() -> Iterator[SimpleNamespace]:
    """An empty utf8mb4 database and a SELECT-only user on it: `name`, `admin_dsn` (to write),
    `reader_dsn` (the user and its password, to load), dropped afterwards."""
    require_server()
    name = f"tl_{secrets.token_hex(5)}"
    _admin(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4; CREATE USER '{name}'@'%' IDENTIFIED BY '{READER_PASSWORD}'; "
           f"GRANT SELECT ON `{name}`.* TO '{name}'@'%'")
    try:
        yield SimpleNamespace(
            name=name,
            admin_dsn=f"mysql://{ADMIN}@{HOST}:{PORT}/{name}",
            reader_dsn=f"mysql://{name}:{READER_PASSWORD}@{HOST}:{PORT}/{name}",
        )
    finally:
        _admin(f"DROP DATABASE IF EXISTS `{name}`; DROP USER IF EXISTS '{name}'@'%'")


@contextmanager
def mysql_saver(dsn: str, serde=None):
    """The package's own saver (tables set up), as an application opens it."""
    from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

    with PyMySQLSaver.from_conn_string(dsn) as saver:
        if serde is not None:
            saver.serde = serde
        saver.setup()
        yield saver


def mysqldump(database: str, target: Path, *args: str) -> Path:
    """`mysqldump --hex-blob` of a database, as an operator takes one."""
    with target.open("wb") as out:
        subprocess.run(["mysqldump", "-u", ADMIN, "-h", HOST, "-P", str(PORT), "--hex-blob", *args, database],
                       stdout=out, check=True)
    return target
