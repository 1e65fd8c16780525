"""`python -m loaders SOURCE --db PATH`: a thin shell over `loaders.load`."""

from __future__ import annotations

import argparse
import gc
import sys

from tqdm import tqdm

from loaders import SourceError, load, sources


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loaders",
        description="Load a LangGraph checkpoint store into a Transcript Lens DuckDB database.",
    )
    parser.add_argument("source", help="a SqliteSaver file, a postgresql:// DSN, a COPY CSV export (folder or .zip) or a pg_dump file")
    parser.add_argument("--db", required=True, help="the DuckDB database to write (replaced atomically)")
    parser.add_argument("--kind", choices=sorted(sources()), help="source kind (default: detected)")
    parser.add_argument("--thread-key-pattern", help="regex with named groups tenant, sub, session (default tenant:sub:session)")
    parser.add_argument("--incremental", action="store_true", help="re-read only threads changed since the previous load")
    parser.add_argument("--schema", help="Postgres schema holding the checkpoint tables (default public)")
    parser.add_argument("--threads", action="append", default=[], metavar="ID", help="load only this thread (repeatable)")
    parser.add_argument("--since", help="Postgres: load only threads with a checkpoint at or after this ISO time")
    parser.add_argument("--workers", type=int, help="decoding processes (default: cores, at most 4)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    # No monitor thread: with only the main thread running, load() may fork its
    # workers (they start at once) instead of spawning them (an interpreter and
    # the imports each, ~0.3 s).
    tqdm.monitor_interval = 0
    bar = tqdm(desc="threads", unit="thread", file=sys.stderr, disable=args.quiet or None, dynamic_ncols=True)

    def progress(done: int, total: int | None) -> None:
        if total is not None and bar.total != total:
            bar.total = total
            bar.refresh()
        bar.update(done - bar.n)

    # Only what was given: a kind that does not take an option given fails naming it.
    options = {"threads": tuple(args.threads), "schema": args.schema, "since": args.since}
    try:
        summary = load(
            args.source, args.db, kind=args.kind, thread_key_pattern=args.thread_key_pattern,
            options=options, incremental=args.incremental, progress=progress, workers=args.workers,
        )
    except (SourceError, ValueError, OSError) as exc:
        bar.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        bar.close()
        print("interrupted: the previous database is unchanged", file=sys.stderr)
        return 130
    bar.close()
    print(summary.line())
    # The interpreter's exit runs the cyclic collector over every object of every
    # module loaded (pyarrow, duckdb): ~0.25 s. The load is committed and
    # closed; frozen objects are skipped by that collection.
    gc.freeze()
    return 0


if __name__ == "__main__":
    sys.exit(main())
