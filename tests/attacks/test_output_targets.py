"""What `--db` and `--out` name is written only when it is a regular file (or nothing yet): a
load or a report finishes by renaming its file over the target, which would turn a device node
(`/dev/null`), a FIFO or a symbolic link into a regular file. A FIFO or a character device given
to `--out` is written into instead (`--out /dev/null`, `--out /dev/stdout`), leaving no file."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.attacks.harness import run_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "demo.sqlite"


def _special(tmp_path: Path, what: str) -> Path:
    target = tmp_path / f"target-{what}.duckdb"
    if what == "fifo":
        os.mkfifo(target)
    elif what == "directory":
        target.mkdir()
    else:
        (tmp_path / "real.duckdb").write_bytes(b"")
        target.symlink_to(tmp_path / "real.duckdb")
    return target


@pytest.mark.parametrize("what", ["fifo", "directory", "symlink"])
def test_a_load_refuses_a_db_that_is_not_a_regular_file(tmp_path, what):
    target = _special(tmp_path, what)
    mode = target.lstat().st_mode
    got = run_cli(["load", str(DEMO), "--db", str(target)], tmp_path).no_traceback()
    got.refused("--db", str(target), "not replaced")
    assert target.lstat().st_mode == mode  # still a FIFO, a directory, a link
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(target.name + ".")]
    # No temp file; no lock file beside a link or a FIFO (a folder may be a Parquet dataset, which has one).
    assert left == ([target.name + ".lock"] if what == "directory" else []) or not left, left


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    work = tmp_path_factory.mktemp("out-targets")
    run_cli(["load", str(DEMO), "--db", str(work / "lens.duckdb")], work).succeeded()
    return work / "lens.duckdb"


def test_a_report_refuses_to_replace_a_link_and_writes_into_a_fifo(tmp_path, loaded):
    real = tmp_path / "real.csv"
    real.write_text("keep me\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    run_cli(["report", "conversations", "--db", str(loaded), "--out", str(link)], tmp_path).no_traceback() \
        .refused("--out", "symbolic link")
    assert link.is_symlink() and real.read_text() == "keep me\n"

    fifo = tmp_path / "stream.csv"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)  # (never joined: a FIFO replaced)
    reader.start()
    got = run_cli(["report", "conversations", "--db", str(loaded), "--out", str(fifo)], tmp_path)
    reader.join(60)
    got.no_traceback().succeeded()
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and read  # written into, not replaced
    lines = read[0].decode().splitlines()
    assert lines[0].startswith("thread_id,") and len(lines) > 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
