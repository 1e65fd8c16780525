"""The workspace file: where it is, WAL mode, migrations, the catalogue, refusals.

Every workspace here is a real SQLite file made by `Workspace` in tmp_path.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from analytics.workspace import catalog, migrations, store
from analytics.workspace.migrations import Migration
from analytics.workspace.store import Workspace, WorkspaceError, workspace_path


def _table_info(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {n: conn.execute(f"PRAGMA table_info({n})").fetchall() for n in names}
    finally:
        conn.close()


def test_the_workspace_sits_beside_the_database_unless_the_environment_names_one(tmp_path, monkeypatch):
    monkeypatch.delenv(store.ENV, raising=False)
    db = tmp_path / "lens.duckdb"
    assert workspace_path(db) == tmp_path / "lens.duckdb.workspace.sqlite"
    assert Workspace.beside(db).path == tmp_path / "lens.duckdb.workspace.sqlite"
    shared = tmp_path / "team.sqlite"
    monkeypatch.setenv(store.ENV, str(shared))
    assert workspace_path(db) == shared
    assert workspace_path(tmp_path / "other.duckdb") == shared


def test_a_migrated_workspace_has_exactly_the_catalogued_tables(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write():
        pass
    info = _table_info(ws.path)
    assert set(info) == {t.name for t in catalog.TABLES}
    for table in catalog.TABLES:
        columns = info[table.name]
        assert [c[1] for c in columns] == list(table.names), table.name
        for (_, name, type_, notnull, _default, pk), declared in zip(columns, table.columns):
            assert type_ == declared.type.ddl, f"{table.name}.{name}"
            # SQLite lets an INTEGER PRIMARY KEY be NULL on paper (it is the rowid); everything else must agree.
            assert bool(notnull) == (not declared.nullable) or (pk and type_ == "INTEGER"), f"{table.name}.{name}"
        keys = [c[1] for c in sorted(columns, key=lambda c: c[5]) if c[5]]
        assert tuple(keys) == table.primary_key, table.name


def test_a_workspace_is_in_wal_mode_and_records_its_migrations_and_identity(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite", beside=tmp_path / "lens.duckdb")
    with ws.write():
        pass
    conn = sqlite3.connect(ws.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = conn.execute("SELECT version, name FROM migrations ORDER BY version").fetchall()
    finally:
        conn.close()
    assert rows == [(m.version, m.name) for m in migrations.MIGRATIONS]
    info = ws.info()
    assert info["version"] == migrations.LATEST
    assert len(info["workspace_id"]) == 32 and info["created_beside"] == str(tmp_path / "lens.duckdb")
    assert int(info["revision"]) == 1  # the one (empty) write


def test_reading_a_workspace_that_does_not_exist_creates_nothing(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.read() as conn:
        labels = conn.execute("SELECT count(*) FROM labels").fetchone()[0]
    assert labels > 0  # a new workspace's default set
    assert not ws.path.exists() and ws.revision() == 0


def test_every_write_moves_the_revision_and_a_failed_one_does_not(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write():
        pass
    first = ws.revision()
    with ws.write() as conn:
        conn.execute("INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at) "
                     "VALUES ('v', 'overview', '{}', 'a', 'x', 'x')")
    assert ws.revision() == first + 1
    with pytest.raises(sqlite3.IntegrityError), ws.write() as conn:
        conn.execute("INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at) "
                     "VALUES ('w', 'overview', '{}', 'a', 'x', 'x')")
        conn.execute("INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at) "
                     "VALUES ('w', 'overview', '{}', 'a', 'x', 'x')")  # the name again: the whole write goes
    assert ws.revision() == first + 1
    with ws.read() as conn:
        assert conn.execute("SELECT name FROM saved_views").fetchall() == [("v",)]


def test_a_new_migration_is_applied_once_after_a_backup(tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write() as conn:
        conn.execute("INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at) "
                     "VALUES ('kept', 'overview', '{}', 'a', 'x', 'x')")
    extra = Migration(migrations.LATEST + 1, "export log", "CREATE TABLE export_log (at TEXT NOT NULL)")
    monkeypatch.setattr(store, "MIGRATIONS", (*migrations.MIGRATIONS, extra))
    monkeypatch.setattr(store, "LATEST", extra.version)
    again = Workspace(ws.path)
    with again.write() as conn:
        conn.execute("INSERT INTO export_log VALUES ('now')")
    assert "export_log" in _table_info(ws.path)
    backup = tmp_path / f"w.sqlite.v{migrations.LATEST}.bak"
    assert backup.is_file() and "export_log" not in _table_info(backup)
    with again.read() as conn:
        assert conn.execute("SELECT name FROM saved_views").fetchall() == [("kept",)]
        assert [r[0] for r in conn.execute("SELECT version FROM migrations")] == [*range(1, extra.version + 1)]
    Workspace(ws.path).info()  # opening once more applies nothing again (a second CREATE TABLE would fail)


def test_a_workspace_from_a_newer_version_is_refused_and_left_alone(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write():
        pass
    conn = sqlite3.connect(ws.path)
    conn.execute("INSERT INTO migrations VALUES (99, 'from the future', 'x', '9.9')")
    conn.commit()
    conn.close()
    before = ws.path.read_bytes()
    with pytest.raises(WorkspaceError, match=r"schema version 99.*upgrade Transcript Lens"):
        with Workspace(ws.path).write():
            pass
    assert ws.path.read_bytes() == before


def test_a_workspace_that_cannot_be_created_says_where_and_what_to_do(tmp_path):
    missing = tmp_path / "no-such-folder" / "w.sqlite"
    with pytest.raises(WorkspaceError, match=r"cannot create the review workspace .*no-such-folder.*TRANSCRIPT_LENS_WORKSPACE"):
        with Workspace(missing).write():
            pass


def test_a_file_that_is_not_sqlite_is_refused_with_its_name(tmp_path):
    bogus = tmp_path / "w.sqlite"
    bogus.write_bytes(b"this is not a database" * 100)
    with pytest.raises(WorkspaceError, match=r"cannot open the review workspace .*w\.sqlite"):
        with Workspace(bogus).write():
            pass
    assert bogus.read_bytes() == b"this is not a database" * 100


def test_the_constraints_of_migration_one_hold(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    base = ("a1", "thread", "t", None, None, None, None, "good answer", None, None, "ana", "x", "x", 1, "api")
    insert = ("INSERT INTO annotations (annotation_id, target, thread_id, message_id, ordinal, checkpoint_ns, "
              "checkpoint_id, label, verdict, note, author, created_at, updated_at, revision, origin) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    bad = {
        "no content": base[:7] + (None, None, None) + base[10:],
        "unknown verdict": base[:8] + ("maybe",) + base[9:],
        "unknown label": base[:7] + ("nope",) + base[8:],
        "thread target with a message": base[:3] + ("m1",) + base[4:],
        "message target without message": base[:1] + ("message",) + base[2:],
        "checkpoint target without id": base[:1] + ("checkpoint",) + base[2:],
        "unknown origin": base[:14] + ("elsewhere",),
    }
    for what, row in bad.items():
        with pytest.raises(sqlite3.IntegrityError), ws.write() as conn:
            conn.execute(insert, row)
        assert what
    with ws.write() as conn:
        conn.execute(insert, base)
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO labels (name, color, position, created_at) VALUES ('x', 'green', 9, 'x')")


def test_a_workspace_in_a_folder_with_an_awkward_name_works(tmp_path):
    folder = tmp_path / "odd name #1 ?ü"
    folder.mkdir()
    ws = Workspace(folder / "w.sqlite")
    with ws.write():
        pass
    with ws.write():
        pass
    assert ws.revision() == 2  # read through a read-only URI: the path is quoted, not pasted


def test_a_workspace_whose_tables_are_not_what_its_migrations_say_is_named_in_the_error(tmp_path):
    ws = Workspace(tmp_path / "w.sqlite")
    with ws.write():
        pass
    conn = sqlite3.connect(ws.path)
    conn.execute("ALTER TABLE saved_views DROP COLUMN scope")  # as a hand edit, or an old build, would leave it
    conn.commit()
    conn.close()
    from analytics.workspace import saved_views

    with pytest.raises(WorkspaceError, match=r"review workspace .*w\.sqlite cannot be used: no such column: scope"):
        saved_views(ws)


def test_a_version_1_workspace_gets_the_privacy_tables_and_keeps_its_rows(tmp_path, monkeypatch):
    # Made by a Transcript Lens that knew only migration 1 (the first review workspace).
    with monkeypatch.context() as m:
        m.setattr(store, "MIGRATIONS", migrations.MIGRATIONS[:1])
        m.setattr(store, "LATEST", 1)
        ws = Workspace(tmp_path / "w.sqlite")
        with ws.write() as conn:
            conn.execute("INSERT INTO saved_views (name, page, params, created_by, created_at, updated_at) "
                         "VALUES ('kept', 'overview', '{}', 'a', 'x', 'x')")
    assert {"tombstones", "erasure_log", "exports"}.isdisjoint(_table_info(ws.path))
    with Workspace(ws.path).write() as conn:
        conn.execute("INSERT INTO tombstones (kind, value, reason, by, at) VALUES ('thread', 't1', 'r', 'dpo', 'x')")
    assert {"tombstones", "tombstone_threads", "erasure_log", "exports"} <= set(_table_info(ws.path))
    assert not list(tmp_path.glob("*.bak"))  # (the migrations only add empty tables: nothing to copy)
    with Workspace(ws.path).read() as conn:
        assert conn.execute("SELECT name FROM saved_views").fetchall() == [("kept",)]
        assert conn.execute("SELECT max(version) FROM migrations").fetchone() == (migrations.LATEST,)


def test_a_migration_marked_adds_only_creates_new_objects_and_nothing_else(tmp_path):
    # Marked so, it is applied without a copy of the file: it must leave every existing row and
    # table as it was (only CREATE TABLE, INDEX and TRIGGER, over tables it creates itself).
    made: set[str] = set()
    for migration in migrations.MIGRATIONS:
        own: set[str] = set()
        for sql in migrations.statements(migration.sql):
            words = sql.split()
            if migration.adds_only:
                assert words[0] == "CREATE" and words[1] in {"TABLE", "INDEX", "UNIQUE", "TRIGGER"}, sql
                if words[1] == "TABLE":
                    assert words[2] not in made, sql
                    own.add(words[2])
                else:
                    on = words[words.index("ON") + 1]
                    assert on in own, sql
            elif words[:2] == ["CREATE", "TABLE"]:
                own.add(words[2])
        made |= own
