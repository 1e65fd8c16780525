"""The names on the workspace's kept rows, and an erasure run again (docs/privacy.md, steps 1 and 7).

A reviewer's name on an annotation of a kept thread (`--author`), a queue's maker, who marked an
item done, who saved a view: each can be the erased person's name or mail, a text the erased
thread says. They are masked by the note's rule. And an erasure run again after the rows are gone
still knows what it looked for: each erasure keeps keyed digests of its texts (never the texts),
and every later erasure finds them again in the workspaces and the exports, masks them in the
workspaces and names the files that still hold them: a re-run never says "0 files" while a file
it looked in holds the text.
"""

from __future__ import annotations

import sqlite3

from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.attacks.test_erasure_reason import CUSTOMER, GONE, KEPT, SECRETS, store  # noqa: F401
from tests.erasure_stores import files_holding

WORKSPACE = "lens.duckdb.workspace.sqlite"


def _erase(db, tmp_path, env):  # noqa: F811
    return attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12"], tmp_path, env=env)


def test_an_author_on_a_kept_thread_that_is_the_erased_text_is_masked(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--note", "fine", "--verdict", "pass",
             "--author", CUSTOMER], tmp_path).succeeded()
    assert files_holding(tmp_path, SECRETS) != []

    out = _erase(db, tmp_path, env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout
    assert files_holding(tmp_path, SECRETS) == []
    with sqlite3.connect(tmp_path / WORKSPACE) as conn:
        assert conn.execute("SELECT thread_id, note, author FROM annotations").fetchall() == [
            (KEPT, "fine", "<erased>")]


def test_a_rerun_names_the_export_the_first_run_named(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--note", f"said {SECRETS[1]}",
             "--verdict", "fail", "--author", "ana"], tmp_path).succeeded()
    export = tmp_path / "a.csv"
    run_cli(["report", "annotations", "--db", str(db), "--out", str(export)], tmp_path).succeeded()

    first = _erase(db, tmp_path, env)
    assert first.returncode == 1 and "scan: 1 of" in first.stdout and str(export) in first.stderr
    again = _erase(db, tmp_path, env)
    again.never_prints(*SECRETS)
    assert again.returncode == 1 and "scan: 1 of" in again.stdout and str(export) in again.stderr, again.stdout
    assert files_holding(tmp_path, SECRETS) == [export]

    export.unlink()
    _erase(db, tmp_path, env).succeeded()


def test_text_written_after_the_erasure_is_masked_by_the_next(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    _erase(db, tmp_path, env).succeeded()
    # Copied back from somewhere the tool does not know: a note on a kept thread naming the erased
    # customer (their mail: a text the erasure looked for, whole), by a reviewer so named.
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--note", f"again: {CUSTOMER.upper()}",
             "--verdict", "fail", "--author", CUSTOMER], tmp_path).succeeded()
    assert files_holding(tmp_path, (CUSTOMER, CUSTOMER.upper())) == [tmp_path / WORKSPACE]

    out = _erase(db, tmp_path, env)
    out.succeeded().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and "free text masked 2" in out.stdout
    assert files_holding(tmp_path, (CUSTOMER, CUSTOMER.upper())) == []
    with sqlite3.connect(tmp_path / WORKSPACE) as conn:
        assert conn.execute("SELECT note, author FROM annotations").fetchall() == [("again: <erased>", "<erased>")]
