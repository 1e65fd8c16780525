"""The erasure's proof scan (docs/privacy.md, "The scan"): what it looks for and for how long.

- Short text: an erased message of fewer than 16 characters, or a masked export whose every
  stretch between personal values is shorter (the thread id masked too, holding an e-mail), was
  found by no needle, so the scan called the disk clean with the export still holding the text.
  Every erased text of 8 characters or more that no kept thread says is looked for now.
- A second erasure: the threads of every standing tombstone stay gone. An annotation imported
  about a thread erased earlier (an orphan, quoting its text) is purged by the next erasure, whose
  scan looks for the earlier ids too; a reload from the store, which still holds both threads,
  brings neither back.
"""

from __future__ import annotations

import pytest

from storegen import Reply, ScriptedChatModel, build_chat_graph, build_sqlite_store, clock_scope, open_sqlite_saver
from storegen.scenarios import say, thread_config
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.erasure_stores import files_holding

SHORT = "acme:web:short.pii@mail-y.example"
SHORT_ASK, SHORT_REPLY = "KIWI-2291 for bob.s@x-mail.example ok", "PLUM-77 ok"
FIRST, FIRST_TEXT = "acme:web:first-erased", "MANGO-7731-RIVET"
SECOND, SECOND_TEXT = "acme:web:second-erased", "LIME-5520-OTTER"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("erasure-scan-rules") / "store.sqlite"
    build_sqlite_store(path, threads={"acme:web:keep-1": "simple_chat"})
    saver = open_sqlite_saver(path)
    try:
        turns = [(SHORT, SHORT_ASK, SHORT_REPLY), (FIRST, f"first: {FIRST_TEXT} please", f"noted {FIRST_TEXT}"),
                 (SECOND, f"second: {SECOND_TEXT} please", f"noted {SECOND_TEXT}")]
        model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0, replies=[Reply(r) for _, _, r in turns])
        with clock_scope() as clock:
            graph = build_chat_graph(model, saver)
            for thread, ask, _ in turns:
                say(graph, thread_config(thread), ask, clock)
    finally:
        saver.conn.close()
    return path


@pytest.mark.parametrize("remove", [False, True], ids=["listed", "removed"])
def test_a_masked_export_of_short_text_is_found(store, tmp_path, env, remove):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    export = tmp_path / "exports" / "short.csv"
    export.parent.mkdir()
    run_cli(["report", "search", "--db", str(db), "--text", "ok", "--tenant", "acme", "--redact", "--out",
             str(export)], tmp_path).succeeded()
    assert files_holding(export.parent, ("KIWI-2291", "PLUM-77 ok")) == [export]
    assert files_holding(export.parent, ("short.pii", "bob.s@")) == []  # masked: the id and the address

    out = attack(["erase", "--db", str(db), "--thread", SHORT, "--reason", "GDPR", *(["--remove-exports"] * remove)],
                 tmp_path, env=env)
    out.no_traceback().within_budget()
    if remove:
        assert out.returncode == 0 and "scan: 0 of" in out.stdout
        assert files_holding(tmp_path, ("KIWI-2291", "PLUM-77 ok")) == []
    else:
        assert out.returncode == 1 and "scan: 1 of" in out.stdout and str(export) in out.stderr


def test_a_second_erasure_keeps_the_first_gone(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["erase", "--db", str(db), "--thread", FIRST, "--reason", "GDPR 1"], tmp_path).succeeded()
    assert files_holding(tmp_path, (FIRST_TEXT,)) == []
    lines = tmp_path / "notes.jsonl"  # about the erased thread: imported as an orphan, quoting its text
    lines.write_text(f'{{"thread_id": "{FIRST}", "note": "it said {FIRST_TEXT}"}}\n')
    run_cli(["annotations", "import", str(lines), "--db", str(db)], tmp_path).succeeded()
    lines.unlink()
    assert files_holding(tmp_path, (FIRST_TEXT,)) == [tmp_path / "lens.duckdb.workspace.sqlite"]

    out = attack(["erase", "--db", str(db), "--thread", SECOND, "--reason", "GDPR 2"], tmp_path, env=env)
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout
    assert files_holding(tmp_path, (FIRST_TEXT, SECOND_TEXT)) == []

    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()  # the store still has both
    assert files_holding(tmp_path, (FIRST_TEXT, SECOND_TEXT)) == []
    for text in (FIRST_TEXT, SECOND_TEXT):  # (a search logs what it sought: last)
        found = run_cli(["search", text, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
        assert len(found.stdout.splitlines()) == 1


def test_the_erasure_names_every_export_that_held_the_thread(store, tmp_path, env):  # noqa: F811
    """The export log records the threads each export held (`export_threads`): the erasure names
    each export of the erased thread — printed or written, masked or not — and no other, and an
    export file the log says held it is not called clean whatever its bytes."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    masked = tmp_path / "masked.csv"
    runs = [["search", FIRST_TEXT, "--format", "csv"],  # printed: 1
            ["report", "transcript", "--tenant", "acme", "--redact", "--out", str(masked)],  # 2
            ["report", "search", "--text", SECOND_TEXT, "--out", str(tmp_path / "other.csv")]]  # 3: another thread
    for argv in runs:
        run_cli([*argv, "--db", str(db)], tmp_path).succeeded()
    masked.write_text("a file the log says held the thread, none of whose bytes are its text\n")

    out = attack(["erase", "--db", str(db), "--thread", FIRST, "--reason", "GDPR"], tmp_path, env=env)
    out.no_traceback()
    held = [line.strip() for line in out.stdout.splitlines() if line.strip().startswith("held by export")]
    assert [h.split(" (")[0] for h in held] == ["held by export 1", "held by export 2"]
    assert held[0].endswith("printed, no file") and held[1].endswith(str(masked))
    assert out.returncode == 1 and "scan: 1 of" in out.stdout and f"says export 2 of the log): {masked}" in out.stderr
    out = attack(["erase", "--db", str(db), "--thread", FIRST, "--reason", "GDPR", "--remove-exports"],
                 tmp_path, env=env)
    out.succeeded()
    assert not masked.exists() and (tmp_path / "other.csv").exists()
