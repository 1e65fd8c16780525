"""Output whose reader has gone (`transcript-lens search … | head`): the write fails with
EPIPE, which printed a Python traceback. The command line now stops quietly, as a Unix tool
stopped by SIGPIPE: exit 141, no traceback or error line. Every entry point that writes to stdout
runs its command through the one mechanism (`analytics.closed_pipe.run`): `transcript-lens` and
`python -m transcript_lens`, `python -m analytics` and `python -m loaders`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.attacks.harness import ROOT, run_cli
from tests.attacks.stores import store_with_messages

COMMANDS = {
    "search csv": ["search", "ok", "--format", "csv"],
    "search masked": ["search", "ok", "--format", "csv", "--redact"],
    "transcript json": ["transcript", "--thread", "pipe", "--format", "json"],
    "transcript masked": ["transcript", "--thread", "pipe", "--format", "json", "--redact"],
    "report transcript": ["report", "transcript"],
}


def _cli(argv: list[str], stdout, module: str = "transcript_lens.cli") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", module, *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=300)


def _closed_pipe_run(argv: list[str], module: str = "transcript_lens.cli") -> subprocess.CompletedProcess:
    """`argv` with its stdout a pipe whose reader is gone before the first byte: every write meets EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return _cli(argv, write_end, module)
    finally:
        os.close(write_end)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pipe")
    store = folder / "pipe.sqlite"
    store_with_messages(store, [{"role": "user" if i % 2 == 0 else "assistant", "content": f"ok {i} dana@example.org",
                                 "id": f"m{i}"} for i in range(40)], thread_id="pipe")
    return store


@pytest.fixture(scope="module")
def db(store):
    db = store.with_name("lens.duckdb")
    loaded = _cli(["load", str(store), "--db", str(db)], subprocess.DEVNULL)
    assert loaded.returncode == 0, loaded.stderr
    return db


@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_output_pipe_stops_the_command_quietly(db, command, tmp_path):
    argv = [*COMMANDS[command], "--db", str(db)]
    whole = run_cli(argv, tmp_path)  # (the command has output to write: read in this process)
    assert whole.returncode == 0 and "ok 39" in whole.stdout, whole.stderr
    cut = _closed_pipe_run(argv)  # (an exit status of a process of its own)
    assert cut.returncode == 141, cut.stderr
    # Nothing but what the command says before its output (search's "# N messages …" line).
    assert [line for line in cut.stderr.splitlines() if not line.startswith("# ")] == [], cut.stderr


ENTRY_POINTS = {  # (module, argv before --db): every way in that prints to stdout
    "python -m analytics search": ("analytics", ["search", "ok", "--format", "csv"]),
    "python -m analytics report": ("analytics", ["report", "transcript"]),
    "python -m transcript_lens search": ("transcript_lens", ["search", "ok", "--format", "csv"]),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_stops_quietly_on_a_closed_pipe(db, entry):
    module, argv = ENTRY_POINTS[entry]
    cut = _closed_pipe_run([*argv, "--db", str(db)], module)
    assert cut.returncode == 141, cut.stderr
    assert [line for line in cut.stderr.splitlines() if not line.startswith("# ")] == [], cut.stderr


@pytest.mark.parametrize("module", ["loaders", "transcript_lens"])
def test_a_load_whose_summary_meets_a_closed_pipe_stops_quietly(store, tmp_path, module):
    """The load is done and committed when its summary line is printed: the database is there."""
    db = tmp_path / "out.duckdb"
    argv = [str(store), "--db", str(db)] if module == "loaders" else ["load", str(store), "--db", str(db)]
    cut = _closed_pipe_run(argv, module)
    assert (cut.returncode, cut.stderr) == (141, "")
    assert db.is_file()
