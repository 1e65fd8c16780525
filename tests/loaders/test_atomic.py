"""Atomic loads (contract §10): a load killed or interrupted at any point leaves the previous database.

The CLI is run as a real subprocess (`python -m loaders STORE --db EXISTING`)
and killed with SIGKILL (no cleanup can run) or interrupted with SIGINT (Ctrl-C)
while it writes the new database. To hit "while it writes" deterministically, a
`sitecustomize` on the subprocess's PYTHONPATH wraps `DatabaseWriter.ingest`:
after each table it writes its name to a marker file and holds until the test
creates a "go" file (or a timeout), so the test kills between two real DuckDB
writes whatever the machine's speed (tables are ingested two at a time, on
threads: a fixed sleep left too short a window on a busy machine). A second SIGKILL test uses no slow-down at all, on a
larger store, killing at the first sight of the temporary database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pytest

import loaders
import loaders.jobs
import loaders.writer
from loaders.__main__ import main
from loaders.catalog import DATA_TABLES
from tests.loaders.hostile_util import StoreEditor, sha256
from tests.loaders.util import load_db, rows, sigint_default

ROOT = Path(__file__).resolve().parents[2]
TABLES = DATA_TABLES

SITECUSTOMIZE = '''
import os
if os.environ.get("TL_SLOW_INGEST"):
    import time
    from pathlib import Path
    import loaders.writer as _w
    _ingest = _w.DatabaseWriter.ingest
    def ingest(self, table, files, load_id):
        _ingest(self, table, files, load_id)
        with open(os.environ["TL_SLOW_INGEST"], "a") as fh:
            fh.write(table + "\\n")
        go = os.environ["TL_SLOW_INGEST"] + ".go"
        deadline = time.monotonic() + float(os.environ.get("TL_SLOW_SECONDS", "30"))
        while time.monotonic() < deadline and not os.path.exists(go):
            time.sleep(0.01)
    _w.DatabaseWriter.ingest = ingest
    # Python's own Ctrl-C handler, which first says (a file) that the main thread took the signal.
    import signal
    def interrupted(signum, frame):
        open(os.environ["TL_SLOW_INGEST"] + ".interrupted", "w").close()
        signal.default_int_handler(signum, frame)
    signal.signal(signal.SIGINT, interrupted)
'''


@pytest.fixture(scope="module")
def slow_env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sitecustomize")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}


@pytest.fixture()
def existing(sqlite_store, tmp_path):
    """A database from an earlier load, in its own folder."""
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "existing.duckdb"
    load_db(sqlite_store.path, db, workers=1)
    return db


def _snapshot(db: Path) -> tuple:
    return sha256(db), {t: rows(db, f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in TABLES}


def _bigger_store(sqlite_store, copy_store, folder: Path, copies: int) -> Path:
    """The session store with every thread cloned `copies` times (plain SQL: seconds, not a graph run)."""
    path = copy_store(sqlite_store.path, folder, "big.sqlite")
    ed = StoreEditor(path)
    try:
        for k in range(copies):
            for t in sqlite_store.manifest:
                ed.clone_thread(t, f"{t}#{k:02d}")
    finally:
        ed.close()
    return path


def _start(source: Path, db: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loaders", str(source), "--db", str(db), "--quiet"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_default)


def _wait_for(pred, proc: subprocess.Popen, timeout: float = 120) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        if proc.poll() is not None:
            return pred()
        time.sleep(0.002)
    raise AssertionError("timed out")


def _strays(db: Path) -> list[Path]:
    # The database's lock file (`analytics.dblock`) stays by design: every load through the
    # composition root leaves it, and removing it would let two waiters lock two files.
    return [p for p in db.parent.iterdir() if p.name not in (db.name, db.name + ".lock")]


def test_sigkill_while_writing_keeps_the_previous_database_and_the_next_load_succeeds(
        sqlite_store, copy_store, existing, slow_env, tmp_path, monkeypatch):
    store = _bigger_store(sqlite_store, copy_store, tmp_path / "src", 1)
    before = _snapshot(existing)
    progress = tmp_path / "ingested.txt"
    scratch = tmp_path / "tmp"  # the system temp folder of both loads
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    proc = _start(store, existing, {**slow_env, "TL_SLOW_INGEST": str(progress), "TMPDIR": str(scratch)})
    try:
        _wait_for(lambda: progress.exists() and len(progress.read_text().split()) >= 2, proc)
        assert proc.poll() is None, proc.stderr.read()
        assert _strays(existing), "the new database is being written beside the old one"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _snapshot(existing) == before  # byte-identical, and it opens
    # The killed load's staged parts are still in the temp folder, named after it ...
    left = [p.name for p in scratch.iterdir()]
    assert [n for n in left if n.startswith(f"transcript-lens-parts-{proc.pid}-")], left
    # ... and so is its temporary database: the next load must not trip over it ...
    load_db(store, existing, workers=1)
    assert list(scratch.iterdir()) == []  # ... and removes both (the parts here, the database below)
    n_threads = rows(existing, "SELECT count(*) AS n FROM threads")[0]["n"]
    assert n_threads == 2 * len(sqlite_store.manifest)
    assert [r["load_id"] for r in rows(existing, "SELECT load_id FROM loads ORDER BY 1")] == [1, 2]
    # ... and it removes it: a temporary database of a process that no longer runs is garbage.
    assert _strays(existing) == []


def test_only_scratch_folders_of_processes_that_are_gone_are_removed(sqlite_store, tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "gone": f"transcript-lens-parts-{int(done.stdout)}-abc",
            "running": f"transcript-lens-snapshot-{running.pid}-def",
            "not ours": "transcript-lens-notes",
            "no pid": "transcript-lens-parts-xyz",
        }
        for name in names.values():
            (scratch / name).mkdir()
            (scratch / name / "part.arrow").write_bytes(b"x")
        load_db(sqlite_store.path, tmp_path / "db.duckdb", workers=1)
        assert sorted(p.name for p in scratch.iterdir()) == sorted(v for k, v in names.items() if k != "gone")
    finally:
        running.kill()
        running.wait()


def test_sigkill_at_the_first_sight_of_the_temporary_database(sqlite_store, copy_store, existing, tmp_path):
    """No slow-down: whatever the timing, the target is either the old database or the complete new one."""
    store = _bigger_store(sqlite_store, copy_store, tmp_path / "src", 4)
    before = _snapshot(existing)
    proc = _start(store, existing, {**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        _wait_for(lambda: bool(_strays(existing)), proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    after = _snapshot(existing)
    if proc.returncode == -signal.SIGKILL:
        assert after == before
    else:  # it finished before the signal landed: then the new database is complete
        assert proc.returncode == 0 and after[1]["threads"] == 5 * len(sqlite_store.manifest)
    load_db(store, existing, workers=1)
    assert rows(existing, "SELECT count(*) AS n FROM threads")[0]["n"] == 5 * len(sqlite_store.manifest)


def test_ctrl_c_while_writing_exits_130_and_leaves_nothing_behind(sqlite_store, existing, slow_env, tmp_path):
    before = _snapshot(existing)
    progress = tmp_path / "ingested.txt"
    proc = _start(sqlite_store.path, existing, {**slow_env, "TL_SLOW_INGEST": str(progress)})
    try:
        _wait_for(lambda: progress.exists(), proc)
        assert proc.poll() is None, proc.stderr.read()  # held after its first table
        proc.send_signal(signal.SIGINT)
        _wait_for(lambda: Path(f"{progress}.interrupted").exists(), proc)  # the main thread took the
        Path(f"{progress}.go").touch()  # KeyboardInterrupt while the tables are held; then they finish, and it unwinds
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err, progress.read_text())
    assert err.strip().splitlines() == ["interrupted: the previous database is unchanged"]
    assert _snapshot(existing) == before
    assert _strays(existing) == []  # the half-written database was removed


@pytest.mark.parametrize("phase", ["reading", "writing"])
def test_keyboard_interrupt_in_process_keeps_the_database(phase, sqlite_store, existing, monkeypatch, capsys, tmp_path):
    before = _snapshot(existing)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))  # where the load stages its parts
    calls = {"n": 0}
    if phase == "reading":
        real = loaders.jobs.batches

        def interrupted(*a, **k):
            # Ctrl-C at the fifth thread's rows, whichever path makes them.
            for table, rows in real(*a, **k):
                if table == "load_errors":
                    calls["n"] += 1
                    if calls["n"] == 5:
                        raise KeyboardInterrupt
                yield table, rows

        monkeypatch.setattr(loaders.jobs, "batches", interrupted)
    else:
        real = loaders.writer.DatabaseWriter.ingest

        def interrupted(self, table, files, load_id):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
            return real(self, table, files, load_id)

        monkeypatch.setattr(loaders.writer.DatabaseWriter, "ingest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_db(sqlite_store.path, existing, workers=1)
    assert calls["n"] >= 3
    assert _snapshot(existing) == before and _strays(existing) == []
    assert list(private_tmp.iterdir()) == []  # staged parts removed
    # The CLI turns it into exit code 130 and one line.
    calls["n"] = 0
    assert main([str(sqlite_store.path), "--db", str(existing), "--quiet"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["interrupted: the previous database is unchanged"]
    assert _snapshot(existing) == before and _strays(existing) == []


def test_a_failed_load_never_leaves_a_half_database_that_opens(sqlite_store, existing):
    """Sanity for the tests above: the previous database opens read-only and answers."""
    con = duckdb.connect(str(existing), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM messages").fetchone()[0] > 0
    finally:
        con.close()


def test_the_api_refuses_to_replace_a_file_that_is_not_a_duckdb_database(sqlite_store, copy_store, tmp_path):
    """`loaders.load(store, db=<the store itself>)` from a notebook: before, only the CLI and
    the app refused, and the API replaced the checkpoint store with a DuckDB database."""
    src = copy_store(sqlite_store.path, tmp_path / "src")
    before = sha256(src)
    with pytest.raises(loaders.TargetError, match=f"not a DuckDB database, so not replaced: {src}"):
        loaders.load(str(src), src)
    assert sha256(src) == before
    (tmp_path / "empty.duckdb").touch()  # an empty file holds nothing: replaced
    assert loaders.load(str(src), tmp_path / "empty.duckdb").threads > 0
