"""The free text on the workspace's kept rows quoting an erased thread (docs/privacy.md, step 4).

A review note on a kept thread quoting the erased one ("customer said QUINCE-…, mail …") stayed
in the workspace, and the scan, which byte-searches it for 48-character windows, said "0 files
hold erased text". Now each free text of the workspace (notes, excerpts, saved-view names, …:
`analytics.erasure.free_text`) is masked by the reason's rule, and what it quoted is searched for
too. A reason hiding a quote behind zero-width characters every few letters is read as a
reader sees it; an erasure on a path with no database refuses and writes nothing."""

from __future__ import annotations

import sqlite3

from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.attacks.test_erasure_reason import CUSTOMER, GONE, KEPT, SECRETS, store  # noqa: F401
from tests.erasure_stores import files_holding


def test_a_note_on_a_kept_thread_quoting_the_erased_one_is_masked(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    note = f"customer said {SECRETS[1]}, mail {CUSTOMER}"
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--note", note, "--verdict", "fail",
             "--author", "ana"], tmp_path).succeeded()
    assert files_holding(tmp_path, SECRETS) != []

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and "free text masked 1" in out.stdout
    assert files_holding(tmp_path, SECRETS) == []
    with sqlite3.connect(tmp_path / "lens.duckdb.workspace.sqlite") as conn:
        assert conn.execute("SELECT thread_id, note FROM annotations").fetchall() == [
            (KEPT, "customer said <erased>, mail <erased>")]


def test_an_export_of_the_note_made_before_the_erasure_is_named(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--note", f"said {SECRETS[1]}",
             "--verdict", "fail", "--author", "ana"], tmp_path).succeeded()
    run_cli(["report", "annotations", "--db", str(db), "--out", str(tmp_path / "a.csv")], tmp_path).succeeded()

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    assert "scan: 1 of" in out.stdout and str(tmp_path / "a.csv") in out.stdout + out.stderr, out.stderr


def test_zero_width_characters_in_a_reason_hide_no_quote(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    hidden = "\u200b".join(SECRETS[1][i:i + 5] for i in range(0, len(SECRETS[1]), 5))
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", f"quoted {hidden} here"], tmp_path, env=env)
    out.succeeded()
    with sqlite3.connect(tmp_path / "lens.duckdb.workspace.sqlite") as conn:
        [(reason,)] = conn.execute("SELECT reason FROM tombstones").fetchall()
    assert reason == "quoted <erased> here"


def test_an_erasure_on_a_path_with_no_database_refuses_and_writes_nothing(tmp_path, env):  # noqa: F811
    db = tmp_path / "typo.duckdb"
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    out.refused(str(db)).wrote_only([])
    assert not any(p.name.startswith("typo") for p in tmp_path.iterdir())


def test_a_saved_view_filtering_on_the_erased_threads_text_is_masked(store, tmp_path, env):  # noqa: F811
    from analytics.workspace.store import Workspace
    from analytics.workspace.views import save_view

    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    save_view(Workspace.beside(db), f"{SECRETS[1]} cases", "conversations", {"text": [f"code {SECRETS[1]}"]},
              author="ana")
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)
    out.succeeded()
    assert "scan: 0 of" in out.stdout and files_holding(tmp_path, SECRETS) == []
    with sqlite3.connect(tmp_path / "lens.duckdb.workspace.sqlite") as conn:
        assert conn.execute("SELECT name, params FROM saved_views").fetchall() == [
            ("<erased> cases", '{"text": ["code <erased>"]}')]
