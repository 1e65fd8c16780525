"""Source integrity (contract §2 "opened read-only; never modified") and consistent snapshots of a live store.

- A load never writes the source: file, `-wal`, `-shm` and folder stay
  byte-identical, also when the folder and files are read-only, and for
  incremental loads (plain and WAL stores: test_sqlite_loader.py; hostile
  stores: test_hostile.py; Postgres exports: test_hostile_postgres.py).
- A load while a live agent keeps writing (another OS process running a graph
  in a loop through `SqliteSaver`, its WAL checkpointing and restarting often)
  sees ONE committed state: the loaded checkpoints are a prefix of the writer's
  commit order, and every loaded transcript is the message list of a checkpoint
  the writer committed, as the saver's own API reads it after the writer stopped.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests import oracle
from tests.loaders.hostile_util import tree_fingerprint
from tests.loaders.util import load_db, rows

ROOT = Path(__file__).resolve().parents[2]


def _make_read_only(folder: Path) -> None:
    for p in folder.iterdir():
        p.chmod(stat.S_IRUSR | stat.S_IRGRP)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)


def test_a_read_only_wal_store_loads_and_stays_identical(wal_store, copy_store, tmp_path):
    src = copy_store(wal_store.path, tmp_path / "ro")
    assert Path(f"{src}-wal").stat().st_size > 0
    _make_read_only(src.parent)
    before = tree_fingerprint(src.parent)
    try:
        db = tmp_path / "ro.duckdb"
        load_db(src, db, workers=1)
        load_db(src, db, workers=1, incremental=True)
        assert tree_fingerprint(src.parent) == before
        assert set(wal_store.extra["wal_threads"]) <= {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    finally:
        src.parent.chmod(0o755)


def test_a_load_while_a_live_agent_writes_sees_one_committed_state(sqlite_store, copy_store, tmp_path):
    src = copy_store(sqlite_store.path, tmp_path / "live", "live.sqlite")
    stop, progress = tmp_path / "stop", tmp_path / "progress"
    code = (f"from tests.loaders.hostile_util import live_writer; "
            f"live_writer({str(src)!r}, {str(stop)!r}, {str(progress)!r})")
    writer = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dbs: list[Path] = []
    try:
        deadline = time.monotonic() + 120
        while not (progress.exists() and int(progress.read_text()) >= 6):
            assert writer.poll() is None, writer.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for k in range(4):
            db = tmp_path / f"snapshot-{k}.duckdb"
            load_db(src, db, workers=1)
            dbs.append(db)
    finally:
        stop.write_text("stop")
        try:
            writer.wait(timeout=60)
        finally:
            if writer.poll() is None:
                writer.kill()
    assert writer.returncode == 0, writer.communicate()[1]

    # What the writer committed, read back through the saver's public API (on a copy: setup() writes).
    final = copy_store(src, tmp_path / "final")
    saver = oracle.open_sqlite(final)
    try:
        committed: dict[tuple[str, str], list[tuple]] = {}
        for tup in saver.list(None):
            conf = tup.config["configurable"]
            committed[(conf["thread_id"], conf["checkpoint_id"])] = [
                (oracle.role_of(oracle._field(m, "type")), oracle.content_text(oracle._field(m, "content")), oracle._field(m, "id"))
                for m in oracle._messages(tup) or []
            ]
    finally:
        saver.conn.close()
    con = sqlite3.connect(f"file:{final}?immutable=1", uri=True)
    commit_order = con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints ORDER BY rowid").fetchall()
    con.close()

    sizes = []
    for db in dbs:
        loaded = {tuple(r.values()) for r in rows(db, "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints")}
        # One snapshot: exactly the first N checkpoints the writer committed, nothing torn, nothing skipped.
        assert loaded == set(commit_order[: len(loaded)]), db.name
        sizes.append(len(loaded))
        assert rows(db, "SELECT count(*) AS n FROM load_errors")[0]["n"] == 0
        for t in rows(db, "SELECT thread_id, latest_checkpoint_id FROM threads WHERE thread_id LIKE 'live:%'"):
            got = [(r["role"], r["content"], r["message_id"]) for r in rows(
                db, "SELECT role, content, message_id FROM messages WHERE thread_id = ? ORDER BY ordinal", [t["thread_id"]])]
            assert got == committed[(t["thread_id"], t["latest_checkpoint_id"])], (db.name, t["thread_id"])
    assert sizes == sorted(sizes) and sizes[0] < len(commit_order), sizes  # the loads really raced a live writer


def test_a_wal_restart_between_copying_the_file_and_its_wal_is_not_a_torn_snapshot(sqlite_store, copy_store, tmp_path, monkeypatch):
    """The race the live-writer test hits about once in a hundred loads, made deterministic.

    A writer checkpoints and restarts its WAL right after the reader copied the
    main file and before it copies the `-wal`: the old main file plus the new
    WAL's frames is no state the writer ever committed (SQLite calls it
    "malformed", or silently misses rows). The reader must notice and copy again.
    """
    from loaders.sqlite import opening

    src = copy_store(sqlite_store.path, tmp_path / "src")
    base = sorted(sqlite_store.manifest)
    writer = sqlite3.connect(src, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")

    def clone(k: int) -> None:
        writer.execute("BEGIN")
        for t in base:
            writer.execute("INSERT INTO checkpoints SELECT ? || thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                           "type, checkpoint, metadata FROM checkpoints WHERE thread_id = ?", [f"w{k}:", t])
        writer.execute("COMMIT")

    clone(1)  # in the WAL only
    assert Path(f"{src}-wal").stat().st_size > 0
    real_copy = opening.shutil.copyfile
    raced = []

    def copyfile(a, b, *args, **kw):
        out = real_copy(a, b, *args, **kw)
        if Path(a) == src and not raced:
            raced.append(True)
            assert writer.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[0] == 0  # w1 backfilled into the file
            clone(2)  # written from the start of the restarted WAL
        return out

    monkeypatch.setattr(opening.shutil, "copyfile", copyfile)
    real_snapshot = opening.snapshot_copy
    checks = []

    def snapshot(*a, **kw):
        copy = real_snapshot(*a, **kw)
        con = sqlite3.connect(copy)  # the private copy, in the reader's temporary folder
        checks.append(con.execute("PRAGMA integrity_check").fetchall())
        con.close()
        return copy

    monkeypatch.setattr(opening, "snapshot_copy", snapshot)
    db = tmp_path / "raced.duckdb"
    try:
        load_db(src, db, workers=1)
    finally:
        writer.close()
    assert raced and checks and all(c == [("ok",)] for c in checks)  # every snapshot read is a sound database
    loaded = {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    assert loaded == {*base, *(f"w1:{t}" for t in base), *(f"w2:{t}" for t in base)}
    assert rows(db, "SELECT count(*) AS n FROM load_errors")[0]["n"] == 0
    # ... holding the committed rows: every clone's transcript is its original's.
    got = rows(db, "SELECT thread_id, ordinal, content, message_id FROM messages ORDER BY ALL")
    by_thread: dict[str, list] = {}
    for r in got:
        by_thread.setdefault(r["thread_id"], []).append((r["ordinal"], r["content"], r["message_id"]))
    for t in base:
        assert by_thread.get(f"w1:{t}") == by_thread.get(t) == by_thread.get(f"w2:{t}"), t
