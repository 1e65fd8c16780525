"""A load worker's path on a store's first threads, in one process, for an instruction count.

    valgrind --tool=callgrind python bench/worker_path.py STORE --threads 40 --upto stage
    valgrind --tool=callgrind python bench/worker_path.py STORE --threads 0 --upto stage   # start-up (and one thread)

Reads the first `--threads` threads with `SqliteReader.threads` (`--upto read`), then
transforms them (`transform`) and stages their rows as Arrow parts (`stage`), as a
worker does, without DuckDB. Counting instructions (callgrind) instead of timing
compares two checkouts on a machine whose speed drifts: run it from each tree
(`PYTHONPATH=TREE`) and subtract the start-up run (docs/performance.md).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
from pathlib import Path

from loaders.catalog import staging_schemas
from loaders.parts import PartWriter
from loaders.sqlite.reader import SqliteSource
from loaders.source import SourceOptions
from loaders.thread_keys import compile_thread_key
from loaders.transform.thread import transform_thread


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--threads", type=int, default=40, help="threads to take (0: one, for the start-up count)")
    ap.add_argument("--upto", choices=("read", "transform", "stage"), default="stage")
    a = ap.parse_args(argv)
    reader = SqliteSource().open(a.store, SourceOptions())
    regex = compile_thread_key(None)
    with tempfile.TemporaryDirectory(prefix="worker-path-") as tmp:
        writer = PartWriter(Path(tmp), staging_schemas(), "p0")
        gc.disable()  # (as in a worker)
        for n, bundle in enumerate(reader.threads(None), start=1):
            if a.upto != "read":
                rows = transform_thread(bundle, regex)
                if a.upto == "stage":
                    for table in ("threads", "checkpoints", "messages", "message_versions", "message_events"):
                        writer.append(table, getattr(rows, table))
                    writer.append_errors(rows.errors)
            if n >= a.threads:
                break
        writer.close()
    reader.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
