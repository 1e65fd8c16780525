"""Hostile inputs at sizes the test suite does not afford: peak memory and time per input.

Each input is crafted here (tests/attacks/bombs.py, tests/attacks/stores.py), loaded by
`transcript-lens load` in a measured subprocess (tests/attacks/harness.py), and printed
as one line: the input, its size on disk, exit status, peak memory (MB), seconds, and
the first words of the error. A peak over the budget (1024 MB) is marked `OVER`.

    .venv/bin/python bench/attack_sweep.py              # the default sizes (a few minutes)
    .venv/bin/python bench/attack_sweep.py --scale 0.05 # a smoke run on tiny sizes

Inputs: bzip2 and deflate zip bombs of a COPY CSV export; a gzipped pg_dump and a
gzipped mysqldump with an endless line, and one of short lines past the decompressed
cap; a list of millions of non-message entries; a DeltaChannel chain of many writes
through a real graph (the store's write time is printed too); a catastrophic thread-key
pattern on a long thread id; one thread of 1.5M tiny checkpoints, as a SQLite store and as
a mysqldump (cut at the per-thread checkpoint limit, `records.MAX_THREAD_CHECKPOINTS`).
A measurement, not a test (tests/attacks/ holds the checks).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ormsgpack  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.channels.delta import DeltaChannel  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import _messages_delta_reducer  # noqa: E402

from tests.attacks.bombs import MB, gzip_bomb, zip_with  # noqa: E402
from tests.attacks.harness import MEMORY_BUDGET_MB, attack  # noqa: E402
from tests.attacks.stores import store_with_messages  # noqa: E402

_CSV = {
    "checkpoints": b"thread_id,checkpoint_ns,checkpoint_id,parent_checkpoint_id,type,checkpoint,metadata\n",
    "checkpoint_blobs": b"thread_id,checkpoint_ns,channel,version,type,blob\n",
    "checkpoint_writes": b"thread_id,checkpoint_ns,checkpoint_id,task_id,idx,channel,type,blob,task_path\n",
}
_PG_HEAD = (b"-- PostgreSQL database dump\nCOPY public.checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
            b"parent_checkpoint_id, type, checkpoint, metadata) FROM stdin;\n")
_MYSQL_HEAD = b"-- MySQL dump 10.13\nINSERT INTO `checkpoints` VALUES ('"


def tiny_checkpoints(path: Path, n: int) -> None:
    """One thread of `n` checkpoints of a few bytes each in a chain, in SqliteSaver's schema."""
    store_with_messages(path, [], thread_id="t")
    blob = ormsgpack.packb({"ts": "2024-01-01T00:00:00+00:00", "channel_values": {}})
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("DELETE FROM checkpoints")
            conn.execute(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) "
                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) "
                "SELECT 't', '', printf('%07d', i), CASE WHEN i > 1 THEN printf('%07d', i - 1) END, 'msgpack', ?, '{}' FROM k",
                [n, blob])
        conn.execute("VACUUM")
    finally:
        conn.close()


def tiny_checkpoints_dump(path: Path, n: int) -> None:
    """The same thread as a mysqldump (langgraph-checkpoint-mysql's JSON checkpoints), 10,000 rows an INSERT."""
    cp = '{"v":1,"ts":"2024-01-01T00:00:00+00:00","channel_values":{},"channel_versions":{}}'
    with open(path, "w") as fh:
        fh.write("-- MySQL dump 10.13  Distrib 8.0\n")
        for start in range(1, n + 1, 10_000):
            fh.write("INSERT INTO `checkpoints` (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `parent_checkpoint_id`, "
                     "`type`, `checkpoint`, `metadata`) VALUES ")
            fh.write(",".join(f"('t','','{i:07d}',{'NULL' if i == 1 else repr(f'{i - 1:07d}')},NULL,'{cp}','{{}}')"
                              for i in range(start, min(start + 10_000, n + 1))))
            fh.write(";\n")


class State(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=1_000_000)]


def delta_chain(path: Path, n: int) -> None:
    """A real graph whose DeltaChannel messages grow by one per step, `n` steps in one thread."""
    def step(state: State) -> dict:
        k = len(state["messages"])
        return {"messages": [AIMessage(content=f"step {k}", id=f"m{k}")]}

    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        graph = (StateGraph(State).add_node("step", step).add_edge(START, "step")
                 .add_conditional_edges("step", lambda s: "step" if len(s["messages"]) < n else END, ["step", END])
                 .compile(checkpointer=SqliteSaver(conn)))
        graph.invoke({"messages": [HumanMessage(content="go", id="h")]},
                     {"configurable": {"thread_id": "chain"}, "recursion_limit": n + 10})
    finally:
        conn.close()


def inputs(work: Path, scale: float):
    """(name, path, extra CLI arguments) of each hostile input, built in `work`."""
    size = max(int(1200 * MB * scale), 2 * MB)
    for method, name in ((zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_DEFLATED, "deflate")):
        path = work / f"csv-{name}.zip"
        zip_with(path, {f"{t}.csv": h for t, h in _CSV.items() if t != "checkpoints"}, "checkpoints.csv", method,
                 size, _CSV["checkpoints"])
        yield f"COPY CSV zip, {name} bomb", path, []
    for head, name in ((_PG_HEAD, "pg_dump"), (_MYSQL_HEAD, "mysqldump")):
        path = work / f"{name}.sql.gz"
        path.write_bytes(gzip_bomb(head, size))
        yield f"gzipped {name}, endless line", path, []
    path = work / "short-lines.sql.gz"
    path.write_bytes(gzip_bomb(_PG_HEAD.split(b"COPY")[0], size, b"-" * 1023 + b"\n"))
    yield "gzipped pg_dump, short lines", path, []
    path = work / "flood.sqlite"
    store_with_messages(path, [[]] * max(int(4_000_000 * scale), 1000))
    yield "non-message flood", path, []
    path = work / "chain.sqlite"
    started = time.monotonic()
    delta_chain(path, max(int(4000 * scale), 20))
    print(f"(DeltaChannel chain written in {time.monotonic() - started:.1f} s)", flush=True)
    yield "DeltaChannel chain", path, []
    path = work / "regex.sqlite"
    store_with_messages(path, [{"role": "user", "content": "hi", "id": "m1"}], thread_id="acme:web:" + "s" * 60)
    yield "regex bomb thread-key pattern", path, ["--thread-key-pattern", r"^(?P<session>(\w|\W|.)*)XYZ$"]
    path = work / "tiny-checkpoints.sqlite"
    tiny_checkpoints(path, max(int(1_500_000 * scale), 1000))
    yield "one thread, tiny checkpoints", path, []
    path = work / "tiny-checkpoints.sql"
    tiny_checkpoints_dump(path, max(int(1_500_000 * scale), 1000))
    yield "mysqldump, one thread, tiny cps", path, []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input sizes relative to the defaults")
    args = parser.parse_args(argv)
    over = 0
    with tempfile.TemporaryDirectory(prefix="attack-sweep-") as tmp:
        work = Path(tmp)
        for i, (name, path, extra) in enumerate(inputs(work, args.scale)):
            run = work / f"run{i}"
            run.mkdir()
            started = time.monotonic()
            out = attack(["load", str(path), "--db", str(run / "out.duckdb"), *extra], run)
            seconds = time.monotonic() - started
            disk = path.stat().st_size
            error = (out.stderr.strip().splitlines() or [""])[-1][:110]
            flag = " OVER" if out.peak_mb > MEMORY_BUDGET_MB else ""
            over += bool(flag)
            print(f"{name:32} {disk / MB:8.2f} MB  exit {out.returncode}  peak {out.peak_mb:7.0f} MB{flag}  "
                  f"{seconds:6.1f} s  {error}", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
