"""Output whose reader has gone (`transcript-lens search … | head`): the write fails with
EPIPE, which printed a Python traceback. The command line now stops quietly, as a Unix tool
stopped by SIGPIPE: exit 141, no traceback or error line, in the one entry point every command runs
through (`transcript_lens.cli.main`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.attacks.harness import ROOT
from tests.attacks.stores import store_with_messages

COMMANDS = {
    "search csv": ["search", "ok", "--format", "csv"],
    "search masked": ["search", "ok", "--format", "csv", "--redact"],
    "transcript json": ["transcript", "--thread", "pipe", "--format", "json"],
    "transcript masked": ["transcript", "--thread", "pipe", "--format", "json", "--redact"],
    "report transcript": ["report", "transcript"],
}


def _cli(argv: list[str], stdout) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "transcript_lens.cli", *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pipe")
    store, db = folder / "pipe.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [{"role": "user" if i % 2 == 0 else "assistant", "content": f"ok {i} dana@example.org",
                                 "id": f"m{i}"} for i in range(40)], thread_id="pipe")
    loaded = _cli(["load", str(store), "--db", str(db)], subprocess.DEVNULL)
    assert loaded.returncode == 0, loaded.stderr
    return db


@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_output_pipe_stops_the_command_quietly(db, command):
    argv = [*COMMANDS[command], "--db", str(db)]
    whole = _cli(argv, subprocess.PIPE)
    assert whole.returncode == 0 and "ok 39" in whole.stdout, whole.stderr  # (the command has output to write)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write meets EPIPE
    try:
        cut = _cli(argv, write_end)
    finally:
        os.close(write_end)
    assert cut.returncode == 141, cut.stderr
    # Nothing but what the command says before its output (search's "# N messages …" line).
    assert [line for line in cut.stderr.splitlines() if not line.startswith("# ")] == [], cut.stderr
