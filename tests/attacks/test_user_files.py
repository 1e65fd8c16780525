"""Every file a user names on the command line — a redaction config, a lexicon, a price table, a concept table, an
annotations import, an observed log — is read through one bounded reader
(`analytics.user_files`): a device (`/dev/zero` was read until 5 GB and a MemoryError), a FIFO
(a read that waits forever), a folder, or a file over the reader's limit is refused in one line
naming the file and what is wrong, within the memory budget (docs/security.md, "Upload limits")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analytics.user_files import MAX_CONFIG_BYTES, MAX_JSONL_BYTES
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_jsonl_floods import lens  # noqa: F401 (the fixture: a loaded database)

# Each command with the file it reads, its name's suffix, and the reader's limit.
COMMANDS = {
    "redact-config": (lambda db, f: ["search", "hello", "--db", db, "--redact-config", f, "--redact"], ".toml",
                      MAX_CONFIG_BYTES),
    "lexicon": (lambda db, f: ["report", "outcomes", "--db", db, "--lexicon", f, "--out", "-"], ".json",
                MAX_CONFIG_BYTES),
    "prices": (lambda db, f: ["report", "costs", "--db", db, "--prices", f, "--out", "-"], ".toml", MAX_CONFIG_BYTES),
    "topic-concepts": (lambda db, f: ["report", "topics", "--db", db, "--topic-concepts", f, "--out", "-"], ".toml",
                       MAX_CONFIG_BYTES),
    "annotations": (lambda db, f: ["annotations", "import", f, "--db", db], ".jsonl", MAX_JSONL_BYTES),
    "observed": (lambda db, f: ["report", "resume", "--db", db, "--observed", f, "--out", "-"], ".jsonl",
                 MAX_JSONL_BYTES),
}


def _hostile(kind: str, folder: Path, suffix: str, limit: int) -> tuple[Path, str]:
    """A path of `kind` named like the file the command wants, and the words its refusal must hold."""
    path = folder / f"given{suffix}"
    if kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # over the limit: a sparse file, no disk spent
        with path.open("wb") as fh:
            fh.truncate(limit + 1)
        return path, f"over {limit >> 20} MiB"
    return path, "not a regular file"


# What a separate process alone shows is judged in one (`attack`): the memory a read takes (a
# device never ends) and a read that would wait forever (a FIFO, stopped by the timeout). A folder
# and a file over the limit are refused by their size and kind before a byte is read
# (`analytics.user_files.open_user_file`): judged in this process (`run_cli`), the same one line.
IN_PROCESS = {"folder", "too-big"}


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "too-big"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_user_file_that_is_not_a_bounded_regular_file_is_refused_in_one_line(lens, tmp_path, command, kind):  # noqa: F811
    argv, suffix, limit = COMMANDS[command]
    path, words = _hostile(kind, tmp_path, suffix, limit)
    if kind in IN_PROCESS:
        run_cli(argv(str(lens), str(path)), tmp_path).refused(path.name, words).wrote_only([])
    else:
        out = attack(argv(str(lens), str(path)), tmp_path, timeout=60)
        out.refused(path.name, words).within_budget().wrote_only([])
