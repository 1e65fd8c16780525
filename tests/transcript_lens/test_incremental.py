"""`--incremental` through the composition root: the database changed in place, derived
tables re-derived for the changed threads only, and the result equal to a full load row
for row (every table, the derived ones included) — on SQLite and on a live Postgres."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import duckdb
import pytest

import transcript_lens
from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, open_sqlite_saver, run_scenarios, say, thread_config
from tests.loaders.util import sigint_default, table_snapshot

START = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)


def snapshot(db) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return table_snapshot(con)
    finally:
        con.close()


def assert_same(a, b) -> None:
    sa, sb = snapshot(a), snapshot(b)
    assert sorted(sa) == sorted(sb)
    for table in sa:
        assert sa[table] == sb[table], table


def _new_threads(path, prefix: str, n: int = 2) -> None:
    saver = open_sqlite_saver(str(path))
    try:
        run_scenarios(saver, ["simple_chat"], threads={f"{prefix}:new:s{i}": "simple_chat" for i in range(n)}, start=START)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


def _one_more_turn(saver, thread_id: str, day: int) -> None:
    graph = build_chat_graph(ScriptedChatModel(replies=[Reply("Glad it worked out!")]), saver)
    with Clock(START + dt.timedelta(days=day)) as clock:
        say(graph, thread_config(thread_id), "One more question: is it free?", clock)


def _sqlite_turn(path, thread_id: str, day: int) -> None:
    saver = open_sqlite_saver(str(path))
    try:
        _one_more_turn(saver, thread_id, day)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


@pytest.fixture
def small_store(tmp_path):
    """Three plain chats (none waiting on a human), written by a real graph."""
    path = tmp_path / "src.sqlite"
    _new_threads(path, "acme", 3)
    return path


def test_incremental_equals_a_full_load_after_each_kind_of_change(small_store, tmp_path):
    db, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    transcript_lens.load(small_store, db, workers=1)
    inode = os.stat(db).st_ino

    _new_threads(small_store, "zeta")  # new threads
    summary = transcript_lens.load(small_store, db, incremental=True)
    assert (summary.mode, summary.changed) == ("incremental", 2)
    transcript_lens.load(small_store, full, workers=1)
    assert_same(db, full)

    _sqlite_turn(small_store, "acme:new:s1", 3)  # new checkpoints on an existing thread
    summary = transcript_lens.load(small_store, db, incremental=True)
    assert summary.changed == 1
    transcript_lens.load(small_store, full, workers=1)
    assert_same(db, full)
    assert os.stat(db).st_ino == inode  # changed in place, never copied and swapped

    before = os.stat(db).st_mtime_ns
    summary = transcript_lens.load(small_store, db, incremental=True)  # nothing changed
    assert summary.changed == 0 and summary.line().startswith("nothing changed")
    assert os.stat(db).st_mtime_ns == before
    assert_same(db, full)
    con = duckdb.connect(str(db), read_only=True)
    assert [r[0] for r in con.execute("SELECT mode FROM loads ORDER BY load_id").fetchall()] == ["full", "incremental", "incremental"]
    con.close()


def test_the_fixture_store_incremental_equals_full_with_derived_tables(sqlite_store, tmp_path):
    """Every scenario (interrupts, edits, forks, subgraphs, damaged rows): a grown thread and a new one."""
    src = tmp_path / "all.sqlite"
    shutil.copyfile(sqlite_store.path, src)
    db, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    transcript_lens.load(src, db)
    _new_threads(src, "zeta", 1)
    _sqlite_turn(src, sqlite_store.thread("simple_chat"), 30)
    transcript_lens.load(src, db, incremental=True)
    transcript_lens.load(src, full)
    assert_same(db, full)


def test_a_reader_holding_the_database_makes_the_load_edit_a_copy(small_store, tmp_path):
    """DuckDB lets one process write a file only when no other reads it (the app does):
    then the incremental load edits a copy and swaps it in, with the same result."""
    db, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    transcript_lens.load(small_store, db, workers=1)
    inode = os.stat(db).st_ino
    reader = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(db)!r}, read_only=True); print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert reader.stdout.readline().strip() == "open"
        _new_threads(small_store, "zeta", 1)
        assert transcript_lens.load(small_store, db, incremental=True).changed == 1
    finally:
        reader.communicate("")
    assert os.stat(db).st_ino != inode
    transcript_lens.load(small_store, full, workers=1)
    assert_same(db, full)


def test_a_failure_mid_load_leaves_the_previous_state(small_store, tmp_path, monkeypatch):
    db = tmp_path / "inc.duckdb"
    transcript_lens.load(small_store, db, workers=1)
    before = snapshot(db)
    _new_threads(small_store, "zeta", 1)
    import analytics.derived

    def fail(con, threads, *rest):  # after the rows went in, inside the transaction
        assert con.execute("SELECT count(*) FROM threads").fetchone()[0] == 4
        raise RuntimeError("boom mid-load")

    monkeypatch.setattr(analytics.derived, "write_derived_tables", fail)
    with pytest.raises(transcript_lens.LoadFailed, match="boom mid-load"):
        transcript_lens.load(small_store, db, incremental=True)
    assert snapshot(db) == before


_KILLED_LOAD = textwrap.dedent("""
    import os, signal, sys
    import loaders

    class DieMidLoad:
        def prepare(self):
            pass

        def write(self, con, threads):
            # The new rows are in (uncommitted): show it, then die as an OOM kill would.
            print(con.execute("SELECT count(*) FROM threads").fetchone()[0], flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    loaders.load(sys.argv[1], sys.argv[2], incremental=True, workers=1, derived=DieMidLoad())
""")


def test_a_load_killed_mid_transaction_leaves_the_previous_state(small_store, tmp_path):
    db, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    transcript_lens.load(small_store, db, workers=1)
    before = snapshot(db)
    _new_threads(small_store, "zeta", 2)
    proc = subprocess.run([sys.executable, "-c", _KILLED_LOAD, str(small_store), str(db)], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout.strip() == "5"  # it had written the two new threads when it died
    assert snapshot(db) == before
    # The next incremental load picks up from there.
    transcript_lens.load(small_store, db, incremental=True)
    transcript_lens.load(small_store, full, workers=1)
    assert_same(db, full)


def test_postgres_incremental_equals_a_full_load(tmp_path):
    from tests.loaders.pg_util import fresh_database, saver_for

    with fresh_database() as dsn, saver_for(dsn) as saver:
        run_scenarios(saver, ["simple_chat", "tool_calls"], threads={"acme:a:s1": "simple_chat", "acme:a:s2": "tool_calls"},
                      start=START)
        db, full = tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
        transcript_lens.load(dsn, db, workers=1)
        run_scenarios(saver, ["simple_chat"], threads={"zeta:b:s1": "simple_chat"}, start=START)
        _one_more_turn(saver, "acme:a:s1", 5)
        summary = transcript_lens.load(dsn, db, incremental=True)
        assert summary.changed == 2
        transcript_lens.load(dsn, full, workers=1)
        assert_same(db, full)
        assert transcript_lens.load(dsn, db, incremental=True).changed == 0
        assert_same(db, full)


def _watch(store, db, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "transcript_lens", "load", str(store), "--db", str(db), "--watch", str(seconds), "--quiet",
         "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default,
    )


def test_watch_reloads_incrementally_on_a_schedule(small_store, tmp_path):
    """`transcript-lens load --watch SECONDS`: a line per load, new threads picked up by the next turn."""

    db = tmp_path / "watched.duckdb"
    proc = _watch(small_store, db, 0.2)
    try:
        assert proc.stdout.readline().startswith("loaded 3 threads")  # the first turn: a full load
        assert proc.stdout.readline().startswith("nothing changed")
        _new_threads(small_store, "zeta", 1)
        line = proc.stdout.readline()
        while line.startswith("nothing changed"):  # (turns that ran before the new thread was written)
            line = proc.stdout.readline()
        assert line.startswith("loaded 4 threads"), line
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "stopped watching" in err


def test_ctrl_c_stops_watching_whatever_the_load_is_doing(small_store, tmp_path):
    """SIGINT during a DuckDB query comes out of DuckDB as an error ("Query interrupted"), not as
    KeyboardInterrupt: taken for a failed load, it let the watch loop go on (4 of 30 rounds
    hung this way, CI included). Here Ctrl-C comes at random points of back-to-back loads."""
    import random
    import time

    db, rounds = tmp_path / "watched.duckdb", random.Random(7)
    transcript_lens.load(small_store, db, workers=1)
    for _ in range(12):
        proc = _watch(small_store, db, 0)
        try:
            assert proc.stdout.readline().startswith("nothing changed")
            time.sleep(rounds.random() * 0.2)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
                pytest.fail(f"still loading 20 s after Ctrl-C: {err[-300:]}")
        assert proc.returncode == 130, err


def _raising(error: Exception):
    def load(*args, **kwargs):
        raise error

    return load


@pytest.mark.parametrize("error", [RuntimeError("Query interrupted"), duckdb.InterruptException("INTERRUPT Error")])
def test_ctrl_c_as_duckdb_words_it_interrupts_a_load(error, small_store, tmp_path, monkeypatch):
    import loaders

    monkeypatch.setattr(loaders, "load", _raising(error))
    with pytest.raises(KeyboardInterrupt):
        transcript_lens.load(small_store, tmp_path / "lens.duckdb")
    monkeypatch.setattr(loaders, "load", _raising(RuntimeError("disk full")))  # any other error is a failed load
    with pytest.raises(transcript_lens.LoadFailed, match="disk full"):
        transcript_lens.load(small_store, tmp_path / "lens.duckdb")
