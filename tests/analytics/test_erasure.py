"""Erasure that sticks (analytics.erasure): erased threads stay out of full and incremental
reloads of a store written by real LangGraph graphs, until their tombstone is lifted."""

from __future__ import annotations

import shutil
import sqlite3
import threading

import duckdb
import pytest

import analytics
import transcript_lens
from analytics import erasure
from analytics.erasure import erasing
from analytics.dblock import database_lock
from analytics.erasure.db import thread_tables
from analytics.errors import BadRequest, NotFound
from analytics.workspace.store import Workspace
from storegen import build_sqlite_store
from tests.erasure_stores import GONE, THREADS, build_erasure_store, files_holding
from transcript_lens.cli import main as cli


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("erasure-source") / "store.sqlite"
    build_sqlite_store(path, threads=THREADS)
    return path


@pytest.fixture(scope="module")
def loaded_source(source, tmp_path_factory):
    """`source` loaded once for the module; each test erases from its own byte-for-byte copy (`db`)."""
    target = tmp_path_factory.mktemp("erasure-loaded") / "lens.duckdb"
    transcript_lens.load(source, target)
    return target


@pytest.fixture()
def db(loaded_source, tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))  # the CLI's erase sweeps the app's cache
    target = tmp_path / "lens.duckdb"
    shutil.copyfile(loaded_source, target)
    return target


def _rows_of(db, thread_id: str) -> dict[str, int]:
    """Rows of the thread in every table of the database that holds thread rows."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        present = {n for (n,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE thread_id = ?", [thread_id]).fetchone()[0]
                for t in thread_tables() if t in present}
    finally:
        con.close()


def _threads(db) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t for (t,) in con.execute("SELECT thread_id FROM threads").fetchall()}
    finally:
        con.close()


def test_every_thread_table_is_in_the_catalogue(db):
    # A table of the database with thread rows that the catalogue does not name would keep erased rows.
    con = duckdb.connect(str(db), read_only=True)
    try:
        with_thread = {t for (t,) in con.execute(
            "SELECT table_name FROM duckdb_columns() WHERE column_name = 'thread_id' AND NOT internal "
            "AND database_name = current_database()").fetchall()}
    finally:
        con.close()
    assert with_thread == set(thread_tables())


def test_an_erased_thread_stays_gone_after_full_and_incremental_reloads(db, source):
    before = _rows_of(db, GONE)
    assert before["messages"] > 0 and before["conversation_metrics"] == 1
    done = analytics.erase(db, thread=GONE, reason="GDPR request 12", by="dpo")
    assert done.threads == 1 and done.rows["messages"] == before["messages"]
    assert set(_rows_of(db, GONE).values()) == {0}
    assert _threads(db) == set(THREADS) - {GONE}  # the others stay

    transcript_lens.load(source, db, incremental=True)  # the erased database: the thread looks new
    assert set(_rows_of(db, GONE).values()) == {0}
    transcript_lens.load(source, db)
    assert set(_rows_of(db, GONE).values()) == {0}
    summary = transcript_lens.load(source, db, incremental=True)
    assert set(_rows_of(db, GONE).values()) == {0}
    assert summary.threads == len(THREADS) - 1

    log = analytics.erasure_log(db)
    # (the last incremental load found the source and the tombstones as the full load left
    # them: it read nothing, so held nothing back)
    assert list(log.action) == ["erase", "held_back", "held_back"]
    first = log.iloc[0]
    assert (first.kind, first.value, first.by, first.reason) == ("thread", GONE, "dpo", "GDPR request 12")
    assert '"messages": %d' % before["messages"] in first.rows


def test_tenant_and_session_tombstones_cover_their_threads(db, source):
    erasure.erase(db, tenant="acme", reason="contract ended", by="ops")
    assert _threads(db) == {"globex:mobile:sess-010", "initech:support:sess-020"}
    erasure.erase(db, session="sess-010", reason="user request", by="ops")
    assert _threads(db) == {"initech:support:sess-020"}
    transcript_lens.load(source, db)
    assert _threads(db) == {"initech:support:sess-020"}
    assert [(t.kind, t.value) for t in erasure.tombstones(db)] == [("tenant", "acme"), ("session", "sess-010")]


# Splits the default pattern's `acme:web:sess-001` into tenant `web`, session `sess-001`: the same
# session values, another tenant for every thread.
_TENANT_IS_SUB = r"^(?P<sub>[^:]+):(?P<tenant>[^:]+):(?P<session>.+)$"


def test_a_tenant_tombstone_holds_its_recorded_threads_back_under_another_split_until_lifted(db, source):
    done = erasure.erase(db, tenant="acme", reason="contract ended", by="ops")
    acme = {t for t in THREADS if t.startswith("acme:")}
    assert done.threads == 2 and [t.threads for t in erasure.tombstones(db)] == [2]
    transcript_lens.load(source, db, thread_key_pattern=_TENANT_IS_SUB)  # no thread's tenant is `acme` now
    assert _threads(db) == set(THREADS) - acme
    transcript_lens.load(source, db, thread_key_pattern=_TENANT_IS_SUB, incremental=True)
    assert _threads(db) == set(THREADS) - acme
    erasure.lift(db, tenant="acme", reason="erased by mistake", by="ops")
    transcript_lens.load(source, db, thread_key_pattern=_TENANT_IS_SUB)
    assert _threads(db) == set(THREADS)  # lifting releases the recorded ids with it


def test_a_tombstone_without_recorded_threads_records_them_at_the_next_load_that_holds_them(db, source):
    # As a tombstone made before the ids were recorded (an older workspace, migrated) stands.
    ws = Workspace.beside(db)
    with ws.write() as conn:
        conn.execute("INSERT INTO tombstones (kind, value, reason, by, at) VALUES ('session', 'sess-010', 'r', "
                     "'ops', 'x')")
    assert [t.threads for t in erasure.tombstones(db)] == [0]
    transcript_lens.load(source, db)  # the default split: matched by session, then recorded
    assert "globex:mobile:sess-010" not in _threads(db)
    assert [t.threads for t in erasure.tombstones(db)] == [1]
    transcript_lens.load(source, db, thread_key_pattern=r"^(?P<session>.+)$")  # session `globex:mobile:sess-010`
    assert _threads(db) == set(THREADS) - {"globex:mobile:sess-010"}
    conn = sqlite3.connect(ws.path)
    try:
        for sql in ("DELETE FROM tombstone_threads", "UPDATE tombstone_threads SET thread_id = 'other'"):
            with pytest.raises(sqlite3.IntegrityError, match="only ever added"):
                conn.execute(sql)
    finally:
        conn.close()


def test_lifting_a_tombstone_brings_the_thread_back_on_the_next_load(db, source):
    erasure.erase(db, thread=GONE, reason="request", by="dpo")
    lifted = erasure.lift(db, thread=GONE, reason="erased by mistake", by="dpo")
    assert lifted.lifted_by == "dpo" and not lifted.standing
    assert GONE not in _threads(db)  # lifting changes the workspace only
    transcript_lens.load(source, db, incremental=True)
    assert GONE in _threads(db)
    assert list(analytics.erasure_log(db).action) == ["erase", "lift"]
    with pytest.raises(NotFound):
        erasure.lift(db, thread=GONE, reason="again", by="dpo")


def test_an_erasure_needs_a_reason_and_one_target(db):
    with pytest.raises(BadRequest, match="reason"):
        erasure.erase(db, thread=GONE, reason=" ")
    with pytest.raises(BadRequest, match="exactly one"):
        erasure.erase(db, thread=GONE, tenant="acme", reason="x")
    assert GONE in _threads(db)


def test_the_logs_refuse_updates_and_deletes_and_tombstones_are_never_removed(db):
    erasure.erase(db, thread=GONE, reason="request", by="dpo")
    ws = Workspace.beside(db)
    with ws.write() as conn:
        conn.execute("INSERT INTO exports (at, who, origin, what, arguments, masked) "
                     "VALUES ('t', 'me', 'cli', 'daily', '{}', 0)")
    conn = sqlite3.connect(ws.path)
    try:
        for sql in ("UPDATE erasure_log SET by = 'someone else'", "DELETE FROM erasure_log",
                    "UPDATE exports SET who = 'someone else'", "DELETE FROM exports",
                    "DELETE FROM tombstones", "UPDATE tombstones SET value = 'other'"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only|never deleted|only be lifted"):
                conn.execute(sql)
        assert conn.execute("SELECT count(*) FROM erasure_log").fetchone()[0] == 1
    finally:
        conn.close()


def test_an_erasure_waits_for_a_load_holding_the_lock(db, monkeypatch):
    waiting = threading.Event()

    def observed(path, on_wait=None):
        return database_lock(path, on_wait=waiting.set)

    monkeypatch.setattr(erasing, "database_lock", observed)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            erasure.erase(db, thread=GONE, reason="request", by="dpo")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    with database_lock(db):  # as transcript_lens.load holds it for a load's whole run
        worker = threading.Thread(target=run)
        worker.start()
        assert waiting.wait(30), "the erasure did not wait for the lock"
        assert GONE in _threads(db)  # nothing was done while the lock was held
    worker.join(60)
    assert not worker.is_alive() and not failures
    assert GONE not in _threads(db)


def test_the_cli_erases_lists_and_logs(db, capsys):
    assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "ticket 7", "--by", "dpo"]) == 0
    assert f"erased thread {GONE}: 1 thread" in capsys.readouterr().out
    assert cli(["erase", "--db", str(db), "--list"]) == 0
    assert f"thread\t{GONE}" in capsys.readouterr().out
    assert cli(["erase", "--db", str(db), "--log"]) == 0
    assert "ticket 7" in capsys.readouterr().out
    assert cli(["erase", "--db", str(db), "--thread", GONE]) == 2
    assert "reason" in capsys.readouterr().err
    assert cli(["erase", "--db", str(db), "--thread", GONE, "--lift", "--reason", "mistake"]) == 0
    assert erasure.tombstones(db, standing=True) == []


def test_an_older_copy_of_the_store_does_not_bring_it_back(db, source, tmp_path):
    older = tmp_path / "backup-of-last-month.sqlite"
    older.write_bytes(source.read_bytes())  # a copy taken before the erasure, still holding the thread
    erasure.erase(db, thread=GONE, reason="request", by="dpo")
    transcript_lens.load(older, db, incremental=True)
    assert GONE not in _threads(db)
    transcript_lens.load(older, db)
    assert GONE not in _threads(db) and _threads(db) == set(THREADS) - {GONE}


# --- erasure everywhere: every copy the project keeps, and the scan that proves it ----------------

@pytest.fixture(scope="module")
def secret_source(tmp_path_factory):
    return build_erasure_store(tmp_path_factory.mktemp("erasure-secret") / "store.sqlite")


def _annotate_secret(db, note: str = "she repeated QUINCE-48213-PLOVER twice") -> None:
    con = analytics.connect(db)
    try:
        (ordinal,) = con.execute("SELECT ordinal FROM messages WHERE thread_id = ? AND contains(content, 'QUINCE') "
                                 "ORDER BY ordinal LIMIT 1", [GONE]).fetchone()
    finally:
        con.close()
    analytics.annotate(db, GONE, ordinal=ordinal, label="wrong answer", note=note, author="rev")
    analytics.annotate(db, "globex:mobile:sess-010", label="good answer", author="rev")  # another thread's: kept
    analytics.create_queue(db, "to review", author="rev")


def _holding(root, *skip):
    return [p for p in files_holding(root) if p not in skip]


def test_erasing_from_a_parquet_dataset_removes_it_from_every_version_and_the_working_database(
        secret_source, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    ds = tmp_path / "lens"
    for _ in range(2):  # two versions: the current one and the one kept for readers still on it
        transcript_lens.load(secret_source, ds, format="parquet")
    assert len(list(ds.glob("v-*"))) == 2 and (ds / ".lens.duckdb").is_file()
    assert {p.name for p in _holding(ds)} >= {".lens.duckdb", "r0_0.parquet"}  # the scan below is not vacuous

    assert cli(["erase", "--db", str(ds), "--thread", GONE, "--reason", "GDPR request 12"]) == 0
    out = capsys.readouterr().out
    assert f"erased thread {GONE}: 1 thread" in out and "scan: 0 of" in out
    assert _holding(tmp_path, secret_source) == []
    assert len(list(ds.glob("v-*"))) == 1
    con = analytics.connect(ds)
    try:
        kept = {t for (t,) in con.execute("SELECT thread_id FROM threads").fetchall()}
        (left,) = con.execute("SELECT count(*) FROM messages WHERE thread_id = ?", [GONE]).fetchone()
    finally:
        con.close()
    assert kept == set(THREADS) - {GONE} and left == 0
    transcript_lens.load(secret_source, ds, format="parquet", incremental=True)  # and it stays out
    assert _holding(tmp_path, secret_source) == []


def test_annotations_queues_and_notes_of_an_erased_thread_go_with_it(secret_source, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    _annotate_secret(db)
    ws = Workspace.beside(db)
    assert ws.path in _holding(tmp_path)

    assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "request"]) == 0
    capsys.readouterr()
    # Every byte of every file: the database, the workspace (its free pages and WAL too).
    assert _holding(tmp_path, secret_source) == []
    assert list(analytics.annotations(db).thread_id) == ["globex:mobile:sess-010"]
    assert GONE not in set(analytics.queue_items(Workspace.beside(db), "to review").thread_id)
    assert cli(["report", "annotations", "--db", str(db), "--out", str(tmp_path / "ann.csv")]) == 0
    assert "QUINCE" not in (tmp_path / "ann.csv").read_text() and GONE not in (tmp_path / "ann.csv").read_text()


def test_the_apps_versions_of_the_database_are_removed(secret_source, tmp_path, monkeypatch, capsys):
    from ui.database import ref, version_path

    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    link = version_path(ref(db))  # what the app opens while a page reads this version
    assert link != db and link in _holding(tmp_path)

    assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "request"]) == 0
    assert "app versions 1" in capsys.readouterr().out
    assert not link.exists() and _holding(tmp_path, secret_source) == []


def test_the_proof_scan_finds_a_copy_left_behind_and_fails(secret_source, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    exported = tmp_path / "out" / "conversations.csv"  # written by the project: in the export log
    exported.parent.mkdir()
    assert cli(["transcript", "--db", str(db), "--thread", GONE, "--format", "csv"]) == 0
    exported.write_text(capsys.readouterr().out)
    analytics.record_export(db, "transcript", arguments={}, rows=1, masked=False, target=exported.resolve())
    assert exported in _holding(tmp_path)

    assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "request"]) == 1
    out, err = capsys.readouterr()
    assert "scan: 1 of" in out and str(exported.resolve()) in err and "[export]" in err
    assert exported.exists()  # listed, not removed, unless asked

    assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "request", "--remove-exports"]) == 0
    assert "scan: 0 of" in capsys.readouterr().out
    assert not exported.exists() and _holding(tmp_path, secret_source) == []


def test_the_scan_reads_compressed_files_through_their_reader(secret_source, tmp_path):
    # A copy of the erased rows in a Parquet file with compressed pages: no byte of it matches.
    from analytics.erasure.scan import Place, needles_of, scan

    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    needles = needles_of(db, [GONE])
    assert needles.texts and needles.ids == (GONE,)
    planted = tmp_path / "copy.parquet"
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute(f"COPY (SELECT upper(content) AS shout, content FROM messages) TO '{planted}' "
                    "(FORMAT parquet, COMPRESSION zstd)")
    finally:
        con.close()
    found = scan([Place(planted, "planted")], needles)
    assert [(p.path, why) for p, why in found.holding] == [(planted, "text or id, read as Parquet")]
    assert found.lines()[0] == "scan: 1 of 1 files hold erased text"


def test_a_tenant_erasure_removes_only_its_threads_rows(db):
    # The rewrite joins against a table of the erased ids: thread ids that merely start alike stay.
    before = {t: sum(_rows_of(db, t).values()) for t in THREADS}
    done = erasure.erase(db, tenant="acme", reason="contract ended", by="ops")
    assert done.threads == 2 and sum(done.rows.values()) == before["acme:web:sess-001"] + before["acme:web:sess-002"]
    assert {t: sum(_rows_of(db, t).values()) for t in THREADS if not t.startswith("acme")} == {
        t: n for t, n in before.items() if not t.startswith("acme")}


def test_the_scan_matches_an_erased_id_only_where_it_stands_alone(tmp_path):
    from analytics.erasure.scan import Needles, Place, scan

    alike = tmp_path / "alike.csv"
    alike.write_text("thread_id\nacme:web:sess-0010\n")  # another thread whose id starts alike
    copy = tmp_path / "copy.json"
    copy.write_text('{"thread_id": "acme:web:sess-001", "n": 3}')
    found = scan([Place(alike, "export"), Place(copy, "export")], Needles((), (GONE,)))
    assert [(p.path, why) for p, why in found.holding] == [(copy, "thread id, as bytes")]


def test_a_killed_writes_leftover_copy_goes_too(secret_source, tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    leftover = tmp_path / "lens.duckdb.tmp-999999999-1"  # what a load killed mid-rename leaves (its pid is gone)
    leftover.write_bytes(db.read_bytes())
    done = erasure.erase(db, thread=GONE, reason="request", by="dpo")
    assert done.proven and not leftover.exists() and _holding(tmp_path, secret_source) == []


def test_the_rewrite_keeps_rows_through_one_hash_anti_join(db):
    # Set-based: DuckDB plans the kept rows as a hash join against the ids' table (linear in rows
    # plus ids), not a filter testing an id list on every row (rows x ids: erasing a tenant of
    # 20,000 threads took 2.8 x the time of 10,000).
    from analytics.erasure.db import load_ids, kept_rows

    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(db)])
        ids = load_ids(con, [f"t-{i}" for i in range(5000)] + [GONE])
        plan = "\n".join(row[1] for row in con.execute("EXPLAIN " + kept_rows("src.main.messages", ids)).fetchall())
        kept = con.execute("SELECT count(*) FROM (" + kept_rows("src.main.messages", ids) + ")").fetchone()[0]
        (expected,) = con.execute("SELECT count(*) FROM src.main.messages WHERE thread_id <> ?", [GONE]).fetchone()
    finally:
        con.close()
    assert "Hash Join" in plan and "ANTI" in plan and "list_contains" not in plan
    assert kept == expected


def test_an_apps_copy_of_the_database_is_zeroed_before_it_is_removed(secret_source, tmp_path, monkeypatch, capsys):
    """Where the app could not hard-link a version of a database a visitor named (another file
    system, a file the server does not own) it copied it (`ui.database._pin_version`), named after
    the file's inode; a page may hold the copy open, so its bytes are overwritten, not only unlinked."""
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(secret_source, db)
    st = db.stat()
    copy = tmp_path / "cache" / "open" / f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}.duckdb"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(db.read_bytes())
    with open(copy, "rb") as held:  # (a page still reading it)
        assert cli(["erase", "--db", str(db), "--thread", GONE, "--reason", "request"]) == 0
        assert "app versions 1" in capsys.readouterr().out
        assert not copy.exists()
        assert held.read().strip(b"\0") == b""
    assert _holding(tmp_path, secret_source) == []
