"""Erasure against masked exports: an export written under `--redact` rewrites every stretch of
an erased message that spans a personal value (`<EMAIL_1>`) and the thread id too, so the
erasure's scan must look for what masking leaves verbatim — the stretches between the values —
or the export survives `--remove-exports` and the scan calls the disk clean. And an export-log
argument that is a word of the erased thread's tool-call arguments only is that thread's text."""

from __future__ import annotations

from pathlib import Path

import pytest

import analytics
from storegen import Reply, ScriptedChatModel, build_chat_graph, build_sqlite_store, clock_scope, open_sqlite_saver
from storegen.scenarios import say, thread_config
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.erasure_stores import files_holding

#: A thread key holding an e-mail, and a message whose every 48-character window holds one.
DENSE = "acme:web:pii.erase@mail-x.example"
DENSE_TEXT = " ".join(f"ping p{i}.x@mail-x.example DENSESECRET{i}" for i in range(12))
TOOLS = "acme:web:tool-erase"
TOOL_WORD = "crimsonwalrus"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("erasure-masked-store") / "store.sqlite"
    build_sqlite_store(path, threads={"acme:web:keep-1": "simple_chat", "globex:mobile:keep-2": "simple_chat"})
    saver = open_sqlite_saver(path)
    try:
        model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0, replies=[
            Reply("noted"), Reply("", [("vault_lookup", {"secret": f"TOOLARG-{TOOL_WORD}-9"})])])
        with clock_scope() as clock:
            graph = build_chat_graph(model, saver)
            say(graph, thread_config(DENSE), DENSE_TEXT, clock)
            say(graph, thread_config(TOOLS), "look it up please", clock)
    finally:
        saver.conn.close()
    return path


@pytest.mark.parametrize("remove", [False, True], ids=["listed", "removed"])
def test_a_masked_export_of_an_erased_thread_is_found_and_removed(store, tmp_path, env, remove):
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    exports = tmp_path / "exports"
    exports.mkdir()
    masked = sorted([exports / "masked.csv", exports / "masked-search.json"])
    # (a masked session names no thread whose key holds a personal value: `--thread DENSE` matches nothing)
    run_cli(["report", "search", "--db", str(db), "--text", "ping", "--speaker", "user", "--redact", "--out",
             str(masked[0])], tmp_path).succeeded()
    run_cli(["report", "search", "--db", str(db), "--text", "DENSESECRET", "--redact", "--out",
             str(masked[1])], tmp_path).succeeded()
    assert files_holding(exports, ("DENSESECRET",)) == masked
    assert files_holding(exports, ("@mail-x.example",)) == []  # masked: no raw window, no raw id

    out = attack(["erase", "--db", str(db), "--thread", DENSE, "--reason", "GDPR", *(["--remove-exports"] * remove)],
                 tmp_path, env=env)
    out.no_traceback().within_budget()
    if remove:
        assert out.returncode == 0 and "scan: 0 of" in out.stdout
        assert files_holding(tmp_path, ("DENSESECRET",)) == []
    else:
        assert out.returncode == 1 and "scan: 2 of" in out.stdout
        assert all(str(p) in out.stderr for p in masked)


def test_an_export_argument_found_only_in_the_erased_tool_calls_is_erased(store, tmp_path, env):
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["report", "conversations", "--db", str(db), "--text", TOOL_WORD, "--out",
             str(tmp_path / "c.csv")], tmp_path).succeeded()
    assert analytics.exports(db)["arguments"].str.contains(TOOL_WORD).sum() == 1

    run_cli(["erase", "--db", str(db), "--thread", TOOLS, "--reason", "GDPR", "--remove-exports"], tmp_path).succeeded()
    after = analytics.exports(db)["arguments"]
    assert not after.str.contains(TOOL_WORD).any() and after.str.contains("<erased>").sum() == 1
