"""The SQLite loader against the saver's own public API (tests/oracle.py)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

import loaders
import loaders.jobs as jobs
from loaders.sqlite.reader import SqliteReader
from tests import oracle
from tests.loaders.conformance import force_split
from tests.loaders.util import assert_same_tables, folder_fingerprint, load_db, reading, rows

MESSAGE_COLS = ", ".join(oracle.MESSAGE_KEYS)


@pytest.fixture(scope="module")
def loaded(sqlite_store, tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "all.duckdb"
    summary = load_db(sqlite_store.path, db)
    return db, summary


def test_messages_equal_the_savers_view(loaded, oracle_rows):
    db, _ = loaded
    got = rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal")
    assert got == oracle_rows


def test_checkpoints_equal_the_savers_view(loaded, oracle_checkpoints):
    db, _ = loaded
    cols = ", ".join(oracle.CHECKPOINT_KEYS)
    got = rows(db, f"SELECT {cols} FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")
    assert got == oracle_checkpoints


def test_every_scenario_is_loaded_without_errors(loaded, sqlite_store):
    db, summary = loaded
    threads = {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    assert threads == set(sqlite_store.manifest)
    assert summary.errors == 0
    assert rows(db, "SELECT count(*) AS n FROM load_errors")[0]["n"] == 0


def test_thread_rows_describe_forks_interrupts_and_subgraphs(loaded, sqlite_store):
    db, _ = loaded
    by_thread = {r["thread_id"]: r for r in rows(db, "SELECT * FROM threads")}
    assert by_thread[sqlite_store.thread("replay_branch")]["fork_count"] >= 1
    assert by_thread[sqlite_store.thread("replay_branch")]["branch_count"] >= 2
    assert by_thread[sqlite_store.thread("interrupt_pending")]["interrupt_pending"] is True
    assert by_thread[sqlite_store.thread("interrupt_resumed")]["interrupt_pending"] is False
    assert by_thread[sqlite_store.thread("subgraph")]["subgraph_checkpoint_count"] > 0
    assert by_thread[sqlite_store.thread("simple_chat")]["fork_count"] == 0
    for r in by_thread.values():
        assert r["message_count"] == len(rows(db, "SELECT 1 FROM messages WHERE thread_id = ?", [r["thread_id"]]))


def test_history_events_show_the_edit_and_the_removal(loaded, sqlite_store):
    db, _ = loaded
    edited = rows(db, "SELECT * FROM message_events WHERE thread_id = ? AND event = 'edited'", [sqlite_store.thread("edit")])
    removed = rows(db, "SELECT * FROM message_events WHERE thread_id = ? AND event = 'removed'", [sqlite_store.thread("remove_message")])
    assert len(edited) == 1 and edited[0]["previous_version"] != edited[0]["version"]
    assert len(removed) >= 1
    # A removed message is gone from the transcript but kept in the history.
    gone = removed[0]["message_id"]
    assert not rows(db, "SELECT 1 FROM messages WHERE message_id = ?", [gone])
    assert rows(db, "SELECT 1 FROM message_versions WHERE message_id = ?", [gone])
    # The edited message shows its new content in the transcript, the old one in the history.
    versions = rows(db, "SELECT version, content FROM message_versions WHERE thread_id = ? AND message_id = ? ORDER BY version",
                    [sqlite_store.thread("edit"), edited[0]["message_id"]])
    current = rows(db, "SELECT content FROM messages WHERE message_id = ?", [edited[0]["message_id"]])
    assert len(versions) == 2 and current[0]["content"] == versions[-1]["content"] != versions[0]["content"]


def test_messages_without_id_have_no_timestamp(loaded, sqlite_store):
    db, _ = loaded
    got = rows(db, "SELECT message_id, ts, checkpoint_id FROM messages WHERE thread_id = ?", [sqlite_store.thread("operator_add")])
    assert got and all(r["message_id"] is None and r["ts"] is None and r["checkpoint_id"] is None for r in got)


def test_checkpoint_message_lists_rebuild_each_root_checkpoint(loaded, oracle_saver):
    """checkpoints.message_versions + message_versions give the list at ANY root checkpoint."""
    db, _ = loaded
    with reading(db) as query:  # one connection for every checkpoint's query
        for tup in oracle_saver.list(None):
            conf = tup.config["configurable"]
            if conf.get("checkpoint_ns", ""):
                continue
            expected = [oracle._field(m, "id") for m in (oracle._messages(tup) or [])]
            got = query(
                "SELECT v.message_id FROM checkpoints c, unnest(c.message_versions) WITH ORDINALITY AS u(version, pos) "
                "JOIN message_versions v ON v.thread_id = c.thread_id AND v.version = u.version "
                "WHERE c.thread_id = ? AND c.checkpoint_id = ? ORDER BY pos",
                [conf["thread_id"], conf["checkpoint_id"]],
            )
            assert [r["message_id"] for r in got] == expected


def test_message_version_lists_are_null_exactly_outside_the_root_namespace(loaded, sqlite_store):
    """Subgraph checkpoints carry no version list (NULL, not []); every root checkpoint carries
    one as long as its message list (staged from one flat array with a validity mask)."""
    db, _ = loaded
    (got,) = rows(
        db,
        "SELECT count(*) FILTER (WHERE checkpoint_ns <> '' AND message_versions IS NOT NULL) AS sub_lists, "
        "count(*) FILTER (WHERE checkpoint_ns <> '') AS subs, "
        "count(*) FILTER (WHERE checkpoint_ns = '' AND message_versions IS NULL) AS roots_without, "
        "count(*) FILTER (WHERE checkpoint_ns = '' AND len(message_versions) <> coalesce(message_count, 0)) AS wrong_len "
        "FROM checkpoints",
    )
    assert got["subs"] > 0 and got["sub_lists"] == 0
    assert got["roots_without"] == 0 and got["wrong_len"] == 0


def test_source_folder_is_byte_identical_after_a_load(sqlite_store, copy_store, tmp_path):
    src = copy_store(sqlite_store.path, tmp_path / "src")
    before = folder_fingerprint(src.parent)
    load_db(src, tmp_path / "out.duckdb")
    assert folder_fingerprint(src.parent) == before


def test_wal_rows_load_and_the_wal_store_is_untouched(wal_store, copy_store, tmp_path):
    src = copy_store(wal_store.path, tmp_path / "src")
    assert Path(f"{src}-wal").stat().st_size > 0
    before = folder_fingerprint(src.parent)
    db = tmp_path / "wal.duckdb"
    load_db(src, db)
    assert folder_fingerprint(src.parent) == before
    threads = {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    assert set(wal_store.extra["wal_threads"]) <= threads
    assert set(wal_store.extra["main_threads"]) <= threads
    # The oracle sees the same rows (on its own copy, since it writes side files).
    saver = oracle.open_sqlite(copy_store(wal_store.path, tmp_path / "oracle"))
    try:
        expected = oracle.expected_messages(saver)
    finally:
        saver.conn.close()
    assert rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal") == expected


def test_a_wal_store_split_across_workers_is_copied_once_and_loads_the_same(wal_store, copy_store, tmp_path, monkeypatch):
    import os
    import pickle

    from loaders.sqlite import opening

    src = copy_store(wal_store.path, tmp_path / "src")
    before = folder_fingerprint(src.parent)
    force_split(monkeypatch, SqliteReader)
    copies = tmp_path / "snapshots.txt"
    real = opening.snapshot_copy

    def recording(*args, **kw):  # a file, not a list: workers are other processes
        with copies.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(*args, **kw)

    monkeypatch.setattr(opening, "snapshot_copy", recording)
    reader = SqliteReader(src, loaders.SourceOptions())
    try:
        assert len(reader.split(2)) == 2  # the forced split really splits
        pickle.dumps(reader.handoff())  # a spawned worker (from the app's server) gets it too
    finally:
        reader.close()
    copies.unlink()
    split_db, one_db = tmp_path / "split.duckdb", tmp_path / "one.duckdb"
    load_db(src, split_db, workers=2)
    assert copies.read_text().split() == [str(os.getpid())]  # copied once, by the load itself
    load_db(src, one_db, workers=1)
    assert_same_tables(split_db, one_db, with_errors=True)
    assert set(wal_store.extra["wal_threads"]) <= {r["thread_id"] for r in rows(split_db, "SELECT thread_id FROM threads")}
    assert folder_fingerprint(src.parent) == before


def test_a_store_read_in_place_has_no_handoff(sqlite_store):
    reader = SqliteReader(sqlite_store.path, loaders.SourceOptions())
    try:
        assert reader.handoff() is None  # workers open it themselves (immutable=1, nothing copied)
    finally:
        reader.close()


def test_old_store_without_task_path_loads(sqlite_store, copy_store, tmp_path, oracle_rows):
    src = copy_store(sqlite_store.path, tmp_path / "old")
    con = sqlite3.connect(src)
    con.execute("ALTER TABLE writes DROP COLUMN task_path")
    con.commit()
    con.close()
    db = tmp_path / "old.duckdb"
    load_db(src, db)
    assert rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal") == oracle_rows


def test_parallel_and_single_process_loads_are_identical(sqlite_store, tmp_path, monkeypatch):
    # The fixture store is small; force a split so the worker path really runs.
    force_split(monkeypatch, SqliteReader)
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    load_db(sqlite_store.path, one, workers=1)
    load_db(sqlite_store.path, two, workers=2)
    assert_same_tables(one, two)


def test_a_load_from_a_process_running_threads_uses_the_fork_server_and_equals_a_forked_one(sqlite_store, tmp_path, monkeypatch):
    # The app's server runs threads, so its loads cannot fork; their workers come
    # from a fork server. Same rows as workers forked from a single-threaded CLI.
    force_split(monkeypatch, SqliteReader, fork=False)
    forked, served = tmp_path / "forked.duckdb", tmp_path / "served.duckdb"
    load_db(sqlite_store.path, forked, workers=2)
    # Under `streamlit run` the main module is the page script; a worker must not
    # run it again (it re-ran the whole app, a load included, in every worker).
    marker = tmp_path / "page-script-ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    methods = []
    real = jobs.mp_context
    monkeypatch.setattr(jobs, "mp_context", lambda: methods.append(real().get_start_method()) or real())
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        load_db(sqlite_store.path, served, workers=2)
    finally:
        stop.set()
        other.join()
    assert methods == ["forkserver"]
    assert_same_tables(forked, served, with_errors=True)
    assert not marker.exists()
    assert sys.modules["__main__"] is fake_main  # put back after the workers started


def test_custom_thread_key_pattern(sqlite_store, tmp_path):
    db = tmp_path / "k.duckdb"
    load_db(sqlite_store.path, db, thread_key_pattern=r"^(?P<tenant>[^:]+):(?P<session>.*)$")
    got = rows(db, "SELECT DISTINCT thread_id, tenant_id, sub_tenant_id, session_id FROM messages")
    for r in got:
        if ":" in r["thread_id"]:
            tenant, session = r["thread_id"].split(":", 1)
            assert (r["tenant_id"], r["sub_tenant_id"], r["session_id"]) == (tenant, None, session)
        else:
            assert (r["tenant_id"], r["session_id"]) == (None, r["thread_id"])


@pytest.mark.parametrize("pattern, why", [
    ("(", "invalid thread-key pattern '\\(': RE2 .*missing \\)"),
    ("^(?P<tenant>.*)$", "named group 'session'"),
    ("^(?P<session>a)(?=b)", "invalid thread-key pattern .*RE2 .*cannot run it"),  # lookahead: not linear
])
def test_a_bad_thread_key_pattern_is_one_line_and_touches_nothing(sqlite_store, tmp_path, pattern, why):
    db = tmp_path / "k.duckdb"
    proc = subprocess.run(
        [sys.executable, "-m", "loaders", str(sqlite_store.path), "--db", str(db), "--thread-key-pattern", pattern, "--quiet"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert re.fullmatch(rf"error: .*{why}.*\n", proc.stderr), proc.stderr
    assert not db.exists()


def test_a_damaged_checkpoint_is_reported_and_the_rest_loads(sqlite_store, copy_store, tmp_path, oracle_rows):
    src = copy_store(sqlite_store.path, tmp_path / "damaged")
    victim_thread = sqlite_store.thread("simple_chat")
    con = sqlite3.connect(src)
    # The oldest root checkpoint of the victim: damage it (truncate the msgpack).
    (cid,) = con.execute(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id LIMIT 1",
        [victim_thread],
    ).fetchone()
    con.execute("UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 7) WHERE thread_id = ? AND checkpoint_id = ?", [victim_thread, cid])
    con.commit()
    con.close()
    db = tmp_path / "d.duckdb"
    summary = load_db(src, db)
    errors = rows(db, "SELECT * FROM load_errors")
    assert summary.errors == 1 and errors[0]["thread_id"] == victim_thread and errors[0]["checkpoint_id"] == cid
    assert errors[0]["stage"] == "checkpoint" and "msgpack" in errors[0]["reason"]
    others = [r for r in oracle_rows if r["thread_id"] != victim_thread]
    got = rows(db, f"SELECT {MESSAGE_COLS} FROM messages WHERE thread_id <> ? ORDER BY thread_id, ordinal", [victim_thread])
    assert got == others
    # The victim's transcript still loads from its latest checkpoint.
    assert rows(db, "SELECT count(*) AS n FROM messages WHERE thread_id = ?", [victim_thread])[0]["n"] == sum(
        1 for r in oracle_rows if r["thread_id"] == victim_thread
    )


def test_a_bad_source_fails_clearly_and_keeps_the_database(sqlite_store, tmp_path):
    db = tmp_path / "keep.duckdb"
    load_db(sqlite_store.path, db)
    before = db.read_bytes()
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    with pytest.raises(loaders.SourceError, match="notes.txt"):
        load_db(bad, db)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE foo (a)").connection.commit()
    with pytest.raises(loaders.SourceError, match="missing table checkpoints"):
        load_db(other, db)
    assert db.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_cli_loads_and_reports_errors_in_one_line(sqlite_store, tmp_path):
    db = tmp_path / "cli.duckdb"
    ok = subprocess.run([sys.executable, "-m", "loaders", str(sqlite_store.path), "--db", str(db)],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("loaded ") and f"{len(sqlite_store.manifest)} threads" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "loaders", str(tmp_path / "missing.sqlite"), "--db", str(db)],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("error: ") and "missing.sqlite" in bad.stderr


_CLI_SPY = """
import sys, threading
import loaders.jobs as jobs
from loaders.__main__ import main
real = jobs.run_parallel
def spy(*args, **kw):
    print("threads when the workers start:", threading.active_count(), file=sys.stderr)
    return real(*args, **kw)
jobs.run_parallel = spy
from loaders.sqlite.reader import SqliteReader
split = SqliteReader.split
SqliteReader.split = lambda self, n: split(self, n, min_bytes=0)
sys.exit(main(sys.argv[1:]))
"""


def test_the_cli_starts_no_thread_so_its_workers_are_forked(sqlite_store, tmp_path):
    # A forked worker starts at once; a spawned one pays an interpreter and the
    # imports (~0.3 s each). load() may only fork when the main thread is alone,
    # and tqdm's monitor thread was a second one.
    out = subprocess.run([sys.executable, "-c", _CLI_SPY, str(sqlite_store.path), "--db", str(tmp_path / "cli.duckdb"), "--workers", "2"],
                         capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert "threads when the workers start: 1" in out.stderr


def test_reload_keeps_the_load_history(sqlite_store, tmp_path):
    db = tmp_path / "h.duckdb"
    load_db(sqlite_store.path, db)
    load_db(sqlite_store.path, db)
    assert [r["load_id"] for r in rows(db, "SELECT load_id FROM loads ORDER BY load_id")] == [1, 2]


def test_plain_dict_messages_load_as_the_saver_returns_them(tmp_path):
    """`operator.add` state keeps an API-style dict input verbatim: no type, no id → role `other`."""
    import datetime as dt

    from storegen import Clock, Reply, ScriptedChatModel, build_operator_add_graph, open_sqlite_saver, say, thread_config

    src = tmp_path / "dicts.sqlite"
    saver = open_sqlite_saver(src)
    graph = build_operator_add_graph(ScriptedChatModel(replies=[Reply("We open at nine.")]), saver)
    with Clock(dt.datetime(2025, 5, 1, 9, tzinfo=dt.timezone.utc)) as clock:
        say(graph, thread_config("kiosk:lobby:s1"), "When do you open?", clock, as_dict=True)
    saver.conn.close()
    db = tmp_path / "dicts.duckdb"
    summary = load_db(src, db)
    oracle_saver = oracle.open_sqlite(tmp_path / "dicts.sqlite")
    try:
        expected = oracle.expected_messages(oracle_saver)
    finally:
        oracle_saver.conn.close()
    assert summary.errors == 0
    got = rows(db, f"SELECT {MESSAGE_COLS} FROM messages ORDER BY thread_id, ordinal")
    assert got == expected
    user = rows(db, "SELECT role, chat_role, content FROM messages WHERE ordinal = 0")[0]
    assert user == {"role": "other", "chat_role": "user", "content": "When do you open?"}
