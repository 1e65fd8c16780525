"""Erasure covers every workspace written for the database: `--workspace FILE` puts annotations
(a message's excerpt, a note quoting it) and export-log rows in a file other than the database's
own `DB.workspace.sqlite`. Writing one records it in the database's own workspace
(`other_workspaces`), so `transcript-lens erase` purges it, scans it and the exports its log names,
and the scan does not call the disk clean while it holds the text (docs/privacy.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import analytics
from analytics.workspace import import_jsonl
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import SECRETS, env, store  # noqa: F401 (fixtures)
from tests.erasure_stores import GONE, SECRET_ASK, files_holding


def _ordinal(db: Path) -> int:
    con = analytics.connect(db)
    try:
        return con.execute("SELECT ordinal FROM messages WHERE thread_id = ? AND content = ?",
                           [GONE, SECRET_ASK]).fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("remove", [False, True], ids=["listed", "removed"])
def test_erase_purges_and_scans_a_workspace_named_by_flag(store, tmp_path, env, remove):  # noqa: F811
    db, team = tmp_path / "lens.duckdb", tmp_path / "team" / "review.sqlite"
    team.parent.mkdir()
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    attack(["annotations", "add", "--db", str(db), "--workspace", str(team), "--thread", GONE,
            "--ordinal", str(_ordinal(db)), "--note", f"quoted: {SECRET_ASK}"], tmp_path, env=env).succeeded()
    exported = tmp_path / "team" / "notes.jsonl"
    run_cli(["annotations", "export", "--db", str(db), "--workspace", str(team), "--out",
             str(exported)], tmp_path).succeeded()
    assert files_holding(team.parent) == sorted([exported, team])

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", *(["--remove-exports"] * remove)],
                 tmp_path, env=env)
    out.no_traceback().within_budget().never_prints(*SECRETS)
    assert f"workspace {team} annotations 1" in out.stdout
    if remove:
        assert out.returncode == 0 and "scan: 0 of" in out.stdout and not exported.exists()
        assert files_holding(tmp_path) == []
    else:  # the export its log names is found, and the erasure is not called complete
        assert out.returncode == 1 and "scan: 1 of" in out.stdout and str(exported) in out.stderr
        assert files_holding(tmp_path) == [exported]


def test_a_workspace_named_by_flag_is_refused_when_it_cannot_be_recorded(store, tmp_path, env):  # noqa: F811
    db, team = tmp_path / "lens.duckdb", tmp_path / "team.sqlite"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    Path(f"{db}.workspace.sqlite").write_bytes(b"not a workspace at all" * 100)  # the database's own: unusable
    out = attack(["annotations", "add", "--db", str(db), "--workspace", str(team), "--thread", GONE,
                  "--note", "a note"], tmp_path, env=env)
    out.no_traceback()
    assert out.returncode == 2 and "cannot record it" in out.stderr and not team.exists()


def test_a_report_logged_in_a_workspace_named_by_flag_is_found(store, tmp_path, env):  # noqa: F811
    """`report annotations --workspace FILE --out F` logs F in that workspace's export log: the
    workspace is recorded, so the erasure finds F through it."""
    db, team = tmp_path / "lens.duckdb", tmp_path / "team.sqlite"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    lines = tmp_path / "notes.jsonl"
    lines.write_text(f'{{"thread_id": "{GONE}", "note": "quoted: {SECRET_ASK}"}}\n')
    import_jsonl(None, lines, workspace=team, author="rev")  # (no database named: not recorded here)
    lines.unlink()
    report = tmp_path / "out" / "annotations.csv"
    report.parent.mkdir()
    run_cli(["report", "annotations", "--db", str(db), "--workspace", str(team), "--out",
             str(report)], tmp_path).succeeded()
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"],
                 tmp_path, env=env)
    out.succeeded().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and not report.exists()
    assert files_holding(tmp_path) == []
