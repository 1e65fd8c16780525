"""`transcript-lens`: the one command line of Transcript Lens, one argparse tree.

    transcript-lens load SOURCE --db lens.duckdb            decode a checkpoint store into DuckDB
    transcript-lens transcript --db lens.duckdb --thread ID  read one thread's transcript
    transcript-lens report conversations --db lens.duckdb --out c.csv
    transcript-lens annotations import labels.jsonl --db lens.duckdb   review annotations (also queues)
    transcript-lens erase --db lens.duckdb --thread ID --reason TEXT    erase a thread for good (also --tenant, --session)
    transcript-lens app [--db lens.duckdb]                  the Streamlit app on 127.0.0.1:8501

The composition root's CLI: `load` goes through `transcript_lens.load`, so the database
gets the query layer's derived tables; `transcript`, `report`, `annotations`, `queues`, `erase` and the others are
the subcommands analytics registers (analytics/cli.py), the same ones `python -m analytics` runs;
`python -m loaders` is `load` under its old name (loaders/__main__.py).

Exit status: 0, 2 with one `error: …` line for a mistake (bad option, unusable source,
unknown thread) or any failed load (`transcript_lens.load` is where every load error is
caught; `load --debug` adds the traceback), 130 when interrupted (a load leaves the
previous database as it was).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import transcript_lens

_OWN = ("load", "app")  # the subcommands defined here; the others are analytics'


# --- load ------------------------------------------------------------------------------

#: Set to print a failed load's full traceback (as `load --debug` does).
DEBUG_ENV = "TRANSCRIPT_LENS_DEBUG"


def configure_load(parser: argparse.ArgumentParser) -> None:
    """`load`'s options (also `python -m loaders`'s)."""
    from loaders import sources
    from loaders.source import option_specs

    parser.description = "Load a LangGraph checkpoint store into a Transcript Lens DuckDB database."
    kinds = sources()
    parser.add_argument("source", help="the store, of a registered kind (detected): " + "; ".join(
        f"{kind}: {source.label}" for kind, source in kinds.items()))
    parser.add_argument("--db", required=True, help=(
        "the DuckDB database to write (replaced atomically), or with --format parquet the dataset folder"))
    parser.add_argument("--format", choices=("duckdb", "parquet"), default="duckdb", help=(
        "duckdb (default): one database file; parquet: a folder of Parquet files, a new version per load "
        "(docs/scale.md)"))
    parser.add_argument("--kind", choices=sorted(kinds), help="source kind (default: detected)")
    parser.add_argument("--thread-key-pattern", help="regex with named groups tenant, sub, session (default tenant:sub:session)")
    parser.add_argument("--incremental", action="store_true", help="re-read only threads changed since the previous load")
    parser.add_argument("--threads", action="append", default=[], metavar="ID", help="load only this thread (repeatable)")
    # Each kind's own options, as its options class declares them (loaders.source.option_specs).
    for option in option_specs(kinds):
        parser.add_argument(f"--{option.name.replace('_', '-')}", dest=f"option_{option.name}", metavar=option.name.upper(),
                            help=f"{option.help} ({', '.join(option.kinds)})")
    parser.add_argument("--aes-key-file", metavar="PATH", help=(
        "a file holding the AES key (16, 24 or 32 bytes; one trailing newline is ignored) of a store written with "
        "LangGraph's EncryptedSerializer; default: the LANGGRAPH_AES_KEY variable, as the saver reads it. Used only "
        "to decrypt; never shown or stored"))
    parser.add_argument("--scheduler", metavar="local:N|tcp://HOST:PORT", help=(
        "decode on a Dask cluster (with --format parquet; the --db folder on storage every worker shares): "
        "local:N starts N local worker processes"))
    parser.add_argument("--watch", type=float, metavar="SECONDS", help=(
        "keep going: reload incrementally every SECONDS (a line per load; a failed load is reported and retried "
        "at the next turn; Ctrl-C stops)"))
    parser.add_argument("--topic-concepts", metavar="FILE", help=(
        "a concept table (TOML or JSON: concept = [words]) added to the built-in one for the topics "
        "(docs/topics.md); the topics record its hash"))
    parser.add_argument("--workers", type=int, help="decoding processes (default: cores, at most 4)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--debug", action="store_true",
                        help=f"on a failure, print the full traceback before the one-line error (also {DEBUG_ENV}=1)")
    parser.epilog = (
        "Exit status: 0 when loaded; 2 with one line `error: <what> (<where>)` when the load failed for any "
        "reason (the previous database is then unchanged); 130 when interrupted."
    )
    parser.set_defaults(run=run_load)


def run_load(args: argparse.Namespace) -> int:
    """Load with a progress bar on stderr and the summary line on stdout; with `--watch`,
    again and again, incrementally, every so many seconds."""
    if args.watch is None:
        return _load_once(args, args.incremental)
    if args.watch < 0:
        print("error: --watch takes a number of seconds >= 0", file=sys.stderr)
        return 2
    try:
        while True:
            # (an incremental load of a database that does not exist yet is a full one)
            code = _load_once(args, True, final=False)
            sys.stdout.flush()
            if code == 130:
                return code
            time.sleep(args.watch)
    except KeyboardInterrupt:
        print("stopped watching: the database holds the last load", file=sys.stderr)
        return 130


def _load_once(args: argparse.Namespace, incremental: bool, final: bool = True) -> int:
    """One load, as `transcript-lens load` reports it: 0, 2 (failed: one `error:` line), 130 (interrupted)."""
    from tqdm import tqdm

    from analytics.terminal import visible  # (what it prints quotes the store: shown, never run)

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

    # Only what was given (None: not given): a kind that does not take a given option fails naming it.
    given = {k.removeprefix("option_"): v for k, v in vars(args).items() if k.startswith("option_")}
    options = {"threads": tuple(args.threads), **given}
    try:
        summary = transcript_lens.load(
            args.source, args.db, kind=args.kind, thread_key_pattern=args.thread_key_pattern,
            options=options, incremental=incremental, progress=progress, workers=args.workers,
            aes_key_file=args.aes_key_file, format=args.format, scheduler=args.scheduler,
            topic_concepts=args.topic_concepts,
        )
    except transcript_lens.LoadFailed as exc:
        bar.close()
        if args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            traceback.print_exception(exc.__cause__ or exc, file=sys.stderr)
        # (it quotes the store: a zip member's name, a CSV header cell — shown, never run by the terminal)
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        bar.close()
        print("interrupted: the previous database is unchanged", file=sys.stderr)
        return 130
    bar.close()
    print(visible(summary.line()))
    if final:  # (the process ends after it)
        # The interpreter's exit runs the cyclic collector over every object of every
        # module loaded (pyarrow, duckdb): ~0.25 s. The load is committed and
        # closed; frozen objects are skipped by that collection.
        gc.freeze()
    return 0


# --- app -------------------------------------------------------------------------------

_APP_EXTRA = "pip install 'transcript-lens[app]'"


def configure_app(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the Streamlit app: `streamlit run app.py -- --db PATH` on the app this package ships. "
        f"Needs Streamlit and plotly ({_APP_EXTRA})."
    )
    parser.epilog = (
        "Any other Streamlit setting can be given in its environment variable, e.g. "
        "STREAMLIT_SERVER_BASE_URL_PATH=lens. Loaded sources and the demo database are kept in "
        "$TRANSCRIPT_LENS_CACHE (default: .cache/ in a checkout, ~/.cache/transcript-lens otherwise). "
        "Reviewers' annotations, queues and saved views are kept in DB.workspace.sqlite beside the database "
        "(or in $TRANSCRIPT_LENS_WORKSPACE), which no load replaces."
    )
    parser.add_argument("--db", metavar="PATH", help="the DuckDB database to open "
                        "(default: $TRANSCRIPT_LENS_DB, else the bundled demo store, loaded on first use)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                        "only; 0.0.0.0 serves every network interface)")
    parser.add_argument("--port", type=int, help="port to listen on (default 8501, or the next free one)")
    parser.add_argument("--headless", action="store_true", help="do not open a browser")
    shared = parser.add_argument_group(
        "serving others (docs/privacy.md)",
        "Each restricts what the app lets its users reach; a flag adds to the --config file, never removes from it.")
    shared.add_argument("--config", metavar="FILE.toml", help="the deployment's [app] table: read_only, redact, tenants, "
                        "source_roots, named sources, users → tenants, identity_header (also TRANSCRIPT_LENS_CONFIG)")
    shared.add_argument("--redact", action="store_true", help="mask personal data on every page and download; "
                        "users cannot switch it off")
    shared.add_argument("--tenants", metavar="A,B", help="only these tenants' threads, on every page, search and download")
    shared.add_argument("--read-only", action="store_true", help="no 'Load a source': only the database given")
    shared.add_argument("--source-root", action="append", default=[], metavar="DIR",
                        help="'Load a source' reads paths only inside DIR (repeatable); typed DSNs are refused "
                             "(name them in --config instead)")
    parser.set_defaults(run=run_app)


def _config_flags(config: Path) -> dict[str, str]:
    """The app's .streamlit/config.toml as `streamlit run` flags: Streamlit reads that file
    from the working directory only, and `transcript-lens app` runs from anywhere."""
    if not config.is_file():
        return {}
    from analytics import tomltable  # (nesting bounded, as every TOML read)

    data = tomltable.loads(config.read_text(encoding="utf-8"))
    return {
        f"{section}.{key}": str(value).lower() if isinstance(value, bool) else str(value)
        for section, options in data.items()
        for key, value in options.items()
    }


def streamlit_command(args: argparse.Namespace, root: Path, db: str | None, read_only: bool = False) -> list[str]:
    """The `streamlit run` command line `app` runs (an interpreter of this environment); a
    read-only server takes no upload larger than an observed JSONL (`analytics.deployment.OBSERVED_UPLOAD_MB`)."""
    from analytics import deployment as access

    flags = _config_flags(root / ".streamlit" / "config.toml")
    if read_only:
        flags["server.maxUploadSize"] = str(access.OBSERVED_UPLOAD_MB)
    flags["server.address"] = args.host
    if args.port is not None:
        flags["server.port"] = str(args.port)
    if args.headless:
        flags["server.headless"] = "true"
    cmd = [sys.executable, "-m", "streamlit", "run", str(root / "app.py")]
    cmd += [f"--{name}={value}" for name, value in flags.items()]
    return cmd + (["--", "--db", db] if db else [])


def _deployment_environment(args: argparse.Namespace, env: dict[str, str]) -> dict[str, str]:
    """The server's environment for the flags of "serving others" (`analytics.deployment` reads it)."""
    from analytics import deployment as access

    config_path = args.config or env.get(access.CONFIG_ENV)
    config = access.load_config(config_path) if config_path else {}
    out = access.server_environment(config, redact=args.redact, tenants=args.tenants, read_only=args.read_only,
                                    source_roots=tuple(args.source_root))
    if config_path:
        out[access.CONFIG_ENV] = str(Path(config_path).resolve())
    if args.host not in ("127.0.0.1", "localhost", "::1") and not (
        args.read_only or config.get("read_only") or args.source_root or config.get("source_roots") or config.get("sources")
    ):
        print(f"warning: serving {args.host} with 'Load a source' unrestricted: anyone who reaches the port can make "
              "the server read any file or database it can reach (see --read-only, --source-root, --config)",
              file=sys.stderr)
    return out


def run_app(args: argparse.Namespace) -> int:
    missing = [name for name in ("streamlit", "plotly") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"error: the app needs {' and '.join(missing)}: {_APP_EXTRA}", file=sys.stderr)
        return 2
    root = transcript_lens.app_dir()
    env = dict(os.environ)
    try:
        env.update(_deployment_environment(args, env))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    db = args.db or env.get("TRANSCRIPT_LENS_DB") or None
    if db is not None:
        path = Path(db).expanduser()
        if not path.is_file():
            print(f"error: no Transcript Lens database at {db} (make one with `transcript-lens load SOURCE --db {db}`)",
                  file=sys.stderr)
            return 2
        db = str(path.resolve())
    if not transcript_lens.is_checkout():
        # The demo database is built here, before Streamlit starts, so that a first run says
        # so on the terminal; the app finds it through the same `transcript_lens.cache_dir()`.
        env.setdefault("TRANSCRIPT_LENS_CACHE", str(transcript_lens.cache_dir()))
        if db is None:
            from transcript_lens import demo

            target = demo.demo_db()  # the env's cache folder is cache_dir(): the file the app opens
            if demo.demo_is_stale(transcript_lens.demo_store(), target):
                print(f"building the demo database {target} from the bundled store …", file=sys.stderr)
            try:
                db = str(demo.ensure_demo_db(transcript_lens.demo_store(), target))
            except (OSError, transcript_lens.LoadFailed) as exc:
                print(f"error: cannot build the demo database: {exc}", file=sys.stderr)
                return 2
    from analytics import deployment as access

    cmd = streamlit_command(args, root, db, read_only=access.from_environment(env).read_only)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        # This process becomes Streamlit: signals (Ctrl-C, a service manager's SIGTERM) and
        # the exit status are its own, and no server is left behind when we are stopped.
        os.execve(cmd[0], cmd, env)
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached Streamlit too: let it shut down
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait()
        return 130


# --- the tree --------------------------------------------------------------------------


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `transcript-lens` tree; with `command`, only that subcommand is configured.

    `main` passes the subcommand it was given, so `transcript-lens transcript` does not pay
    for importing the loader, nor `load` for the query layer (a load imports it while its
    workers decode). Every other argv (`--help`, a typo) gets the whole tree.
    """
    parser = argparse.ArgumentParser(
        prog="transcript-lens",
        description="Explore the conversations LangGraph agents keep in their checkpoint stores.",
        epilog="`transcript-lens COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {transcript_lens.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in (None, "load"):
        configure_load(sub.add_parser("load", help="load a checkpoint store into a DuckDB database"))
    if command not in _OWN:
        from analytics.cli import add_commands

        add_commands(sub, only=None if command is None else [command])
        if "erase" in sub.choices and not os.environ.get("TRANSCRIPT_LENS_CACHE"):
            # The app's version links of a database live in its cache: an erasure removes them too.
            sub.choices["erase"].set_defaults(app_cache=str(transcript_lens.cache_dir()))
    if command in (None, "app"):
        configure_app(sub.add_parser("app", help="run the Streamlit app (on 127.0.0.1 unless --host says otherwise)"))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv else None
    if first not in _OWN:
        from analytics.cli import names

        first = first if first in names() else None
    try:
        from analytics.cli import masked_parsing

        with masked_parsing(argv):  # argparse's own errors quote typed values: masked under --redact
            args = build_parser(first).parse_args(argv)
        return run_quietly(lambda: args.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def run_quietly(command):
    """`command()` as every entry point runs it: output whose reader went away (`| head`)
    stops it quietly, exit 141 (`analytics.closed_pipe`)."""
    from analytics import closed_pipe

    return closed_pipe.run(command)


if __name__ == "__main__":
    sys.exit(main())
