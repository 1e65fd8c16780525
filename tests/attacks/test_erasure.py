"""Erasure under attack, through the real command line: after `transcript-lens erase`, the erased
thread's text is found nowhere under the work folder (every byte of every file: the database, its
Parquet versions and working database, the review workspace, the app's cache, exports the log
lists), the command's own scan says so, and a copy it cannot remove makes it fail.

The erasures a test checks run as their own process, measured (`attack`: peak memory, no traceback);
the loads, commands and erasures that set a test up run the same command line in this process
(`run_cli`): no interpreter start and imports for each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import analytics
from tests.attacks.harness import ROOT, attack, run_cli
from tests.erasure_stores import GONE, SECRET_ASK, build_erasure_store, files_holding

SECRETS = ("QUINCE-48213-PLOVER", "zed.okonkwo@larkspur")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_erasure_store(tmp_path_factory.mktemp("erasure-attack-store") / "store.sqlite")


@pytest.fixture()
def env(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRANSCRIPT_LENS_CACHE", str(cache))
    monkeypatch.delenv("TRANSCRIPT_LENS_WORKSPACE", raising=False)
    return {"TRANSCRIPT_LENS_CACHE": str(cache)}


def _annotate(db: Path) -> None:
    con = analytics.connect(db)
    try:
        (ordinal,) = con.execute("SELECT ordinal FROM messages WHERE thread_id = ? AND content = ?",
                                 [GONE, SECRET_ASK]).fetchone()
    finally:
        con.close()
    analytics.annotate(db, GONE, ordinal=ordinal, label="wrong answer", note=f"quoted: {SECRET_ASK}", author="rev")


def test_erase_on_a_dataset_leaves_the_text_nowhere(store, tmp_path, env):
    ds = tmp_path / "lens"
    for _ in range(2):
        run_cli(["load", str(store), "--db", str(ds), "--format", "parquet"], tmp_path).succeeded()
    _annotate(ds)
    assert len(files_holding(tmp_path)) >= 4  # two versions' parts, the working database, the workspace

    out = attack(["erase", "--db", str(ds), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    out.wrote_only([ds, Path(f"{ds}.workspace.sqlite"), Path(f"{ds}.lock")])
    assert "scan: 0 of" in out.stdout
    assert files_holding(tmp_path) == []
    assert store in files_holding(store.parent)  # the checkpoint store is its owner's: never written


# Every command that writes the annotations (their notes and excerpts quote message text) to a file.
@pytest.mark.parametrize("command, name", [(["report", "annotations"], "annotations.csv"),
                                           (["annotations", "export"], "annotations.jsonl")], ids=["report", "export"])
def test_erase_on_a_database_with_a_workspace_and_an_export(store, tmp_path, env, command, name):
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    _annotate(db)
    report = tmp_path / "exports" / name
    report.parent.mkdir()
    run_cli([*command, "--db", str(db), "--out", str(report)], tmp_path).succeeded()
    assert report in files_holding(tmp_path)

    # The export the log lists still holds the text: listed, and the erasure is not proven.
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
    out.no_traceback().within_budget().never_prints(*SECRETS)
    assert out.returncode == 1 and "scan: 1 of" in out.stdout and str(report) in out.stderr
    assert files_holding(tmp_path) == [report]

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request", "--remove-exports"],
                 tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and not report.exists()
    assert files_holding(tmp_path) == []



def test_erase_takes_the_erased_text_and_id_out_of_the_export_log(store, tmp_path, env):
    """A search or report run with the erased thread's text (or its id) logs it among its
    arguments; after the erasure no row of the log holds it (the row stays, the value is
    `<erased>`), nor any byte of the workspace, and a word every thread uses is kept."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    marker = SECRETS[0]
    run_cli(["search", marker, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
    run_cli(["report", "conversations", "--db", str(db), "--text", marker.lower(), "--out", str(tmp_path / "c.csv")],
            tmp_path).succeeded()
    run_cli(["transcript", "--thread", GONE, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
    run_cli(["search", "the", "--db", str(db), "--format", "csv"], tmp_path).succeeded()
    before = analytics.exports(db)
    assert before["arguments"].str.contains(marker, case=False).sum() == 2
    assert Path(f"{db}.workspace.sqlite") in files_holding(tmp_path)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request", "--remove-exports"],
                 tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout
    assert files_holding(tmp_path) == []  # (the tombstone and the erasure log keep the id, by design)
    after = analytics.exports(db)
    assert len(after) == len(before) and after["arguments"].str.contains("<erased>").sum() == 3
    assert not after["arguments"].str.contains(GONE).any()
    assert after["arguments"].str.contains('"the"').sum() == 1  # not the erased thread's text

# A page of the app reading a version of the database: `ui.database.version_path` (a hard link
# under the cache's open/ folder) opened by DuckDB, held until told to go.
_HOLD = """
import sys, duckdb
from ui.database import ref, version_path
con = duckdb.connect(str(version_path(ref(sys.argv[1]))), read_only=True)
con.execute("SELECT count(*) FROM messages").fetchone()
print("reading", flush=True)
sys.stdin.read()
"""


def _open_files_holding(pid: int, needles: tuple[str, ...] = SECRETS) -> list[str]:
    """The files process `pid` holds open (named or unlinked) whose bytes hold a needle."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
            data = fd.read_bytes() if target.startswith("/") else b""
        except OSError:
            continue
        if any(n.encode() in data for n in needles):
            found.append(target)
    return found


def test_erase_while_the_app_reads_a_version_leaves_the_text_nowhere_on_disk(store, tmp_path, env):
    """The app's version link pins the pre-erasure file; erase removes the link, and the file the
    app still holds open (no name left, its blocks still on disk) is emptied of the text too."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=ROOT, env={**os.environ, **env, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "reading"
        assert _open_files_holding(holder.pid)  # the version it reads holds the text
        out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
        out.succeeded().within_budget().never_prints(*SECRETS)
        assert "scan: 0 of" in out.stdout and "app versions 1" in out.stdout
        assert files_holding(tmp_path) == []
        assert _open_files_holding(holder.pid) == []
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def _as_first_schema(workspace: Path) -> None:
    """Turn a workspace back into the first schema's (what an older Transcript Lens made): the
    next open migrates it."""
    import sqlite3

    from analytics.workspace.migrations import MIGRATIONS, statements

    conn = sqlite3.connect(workspace, isolation_level=None)
    try:
        for migration in reversed(MIGRATIONS[1:]):
            for sql in statements(migration.sql):
                if sql.startswith("CREATE TABLE "):
                    conn.execute(f"DROP TABLE {sql.split()[2]}")
        conn.execute("DELETE FROM migrations WHERE version > 1")
    finally:
        conn.close()


def test_an_erasure_that_upgrades_the_workspace_leaves_no_copy_of_it(store, tmp_path, env):
    """The erasure opens a workspace an older version made and migrates it: the migrations it
    applies only add empty tables, so no copy of the file (annotation notes and all) is kept
    beside it, and the scan finds the text nowhere."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    _annotate(db)
    workspace = Path(f"{db}.workspace.sqlite")
    _as_first_schema(workspace)
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and not list(tmp_path.glob("*.bak"))
    assert files_holding(tmp_path) == []


def test_a_workspace_backup_of_an_upgrade_is_scanned_and_named(store, tmp_path, env):
    """A copy of the workspace an earlier upgrade kept (`…workspace.sqlite.v1.bak`: made before a
    migration that changes rows, or by an older Transcript Lens before any), annotation notes and
    all: the erasure's scan reads it, and the command fails naming it."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    _annotate(db)
    workspace = Path(f"{db}.workspace.sqlite")
    backup = Path(f"{workspace}.v1.bak")
    backup.write_bytes(workspace.read_bytes())
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
    assert files_holding(tmp_path) == [backup]
    out.no_traceback().within_budget().never_prints(*SECRETS)
    assert out.returncode == 1 and "scan: 1 of" in out.stdout and str(backup) in out.stderr, out.stdout + out.stderr


# Another split of the same thread ids: under the default one `acme:web:sess-001` is tenant `acme`,
# session `sess-001`; under these, the session is `web:sess-001`, the tenant `web`.
_OTHER_SPLIT = {"session": ("sess-001", r"^(?P<tenant>[^:]+):(?P<session>.+)$", "1 thread"),
                "tenant": ("acme", r"^(?P<sub>[^:]+):(?P<tenant>[^:]+):(?P<session>.+)$", "2 threads")}


@pytest.mark.parametrize("kind", sorted(_OTHER_SPLIT))
def test_an_erased_session_or_tenant_stays_erased_under_another_thread_key_pattern(store, tmp_path, env, kind):
    """A tenant or session tombstone records the thread ids it covered: a reload that parses the
    ids another way (`--thread-key-pattern`) no longer finds them by tenant or session, and holds
    them back all the same — full, incremental, into a Parquet dataset — and `erase --list` says
    the tombstone stands over them."""
    value, pattern, covers = _OTHER_SPLIT[kind]
    db, ds = tmp_path / "lens.duckdb", tmp_path / "lens"
    for target, extra in ((db, []), (ds, ["--format", "parquet"])):
        run_cli(["load", str(store), "--db", str(target), *extra], tmp_path).succeeded()
        run_cli(["erase", "--db", str(target), f"--{kind}", value, "--reason", "GDPR request"],
                tmp_path).succeeded()
    assert files_holding(tmp_path) == []

    for target, extra in ((db, []), (db, ["--incremental"]), (ds, ["--format", "parquet"]),
                          (ds, ["--format", "parquet", "--incremental"])):
        run_cli(["load", str(store), "--db", str(target), "--thread-key-pattern", pattern, *extra],
                tmp_path).succeeded()
        # (a word of the erased messages: the export log keeps a search's query, and the scan below
        # would find the secret itself there)
        found = run_cli(["search", "locker", "--db", str(target), "--format", "csv"], tmp_path)
        found.succeeded().never_prints(*SECRETS)
        assert GONE not in found.stdout, (target, extra)
        assert files_holding(tmp_path) == [], (target, extra)
        listed = run_cli(["erase", "--db", str(target), "--list"], tmp_path).succeeded()
        assert f"{kind}\t{value}\t" in listed.stdout and "\tstanding\t" in listed.stdout
        assert f"\tcovers {covers}\t" in listed.stdout, listed.stdout


def test_erase_on_a_database_loaded_with_threads_takes_the_id_out_of_the_load_records(store, tmp_path, env):
    """`--threads ID` is recorded in `loads.options` and in `meta.source_token`, tables without a
    thread_id column: the erasure scrubs the option, drops the token, and its scan comes back clean;
    an incremental load then compares the source thread by thread and keeps the thread out."""
    import duckdb

    db = tmp_path / "lens.duckdb"
    load = ["load", str(store), "--db", str(db), "--threads", GONE, "--threads", "acme:web:sess-002"]
    run_cli(load, tmp_path).succeeded()
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR request"], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT options FROM loads").fetchall() == [
            ('{"threads": ["<erased>", "acme:web:sess-002"]}',)]
        assert con.execute("SELECT count(*) FROM meta WHERE key = 'source_token'").fetchall() == [(0,)]
    finally:
        con.close()
    assert GONE.encode() not in db.read_bytes()

    out = run_cli([*load, "--incremental"], tmp_path).succeeded()
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT thread_id FROM threads").fetchall() == [("acme:web:sess-002",)]
        assert con.execute("SELECT count(*) FROM meta WHERE key = 'source_token'").fetchall() == [(1,)]
    finally:
        con.close()
    assert files_holding(tmp_path) == []
