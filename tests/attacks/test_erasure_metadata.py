"""An erased thread's checkpoint metadata (docs/privacy.md, "The scan" and step 4).

What a graph's caller writes into a checkpoint's metadata (`config["metadata"]`, configurable
keys) can be personal — the customer's e-mail, a CRM note — and `--meta KEY=VALUE` filters on
it, so the export log records it. After an erasure, a value only the erased thread's metadata
held was still in the export log, and the scan, looking for message text and ids only, said
the disk was clean. Now the erased threads' metadata values are erased text: the export log's
arguments naming them are `<erased>`, and the scan looks for them.
"""

from __future__ import annotations

import pytest

import analytics
from analytics.erasure.scan import needles_of
from storegen import Reply, ScriptedChatModel, build_chat_graph, build_sqlite_store, clock_scope, open_sqlite_saver
from storegen.scenarios import say, thread_config
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.erasure_stores import files_holding

GONE, KEPT = "acme:web:meta-gone", "acme:web:meta-kept"
CUSTOMER, NOTE = "frank.meta.only@example.net", "PERSONAL_NOTE_hedgehog_marmalade_5555"
SECRETS = (CUSTOMER, NOTE)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("erasure-metadata") / "store.sqlite"
    build_sqlite_store(path, threads={"acme:web:plain": "simple_chat"})
    saver = open_sqlite_saver(path)
    try:
        model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0, replies=[Reply("noted, thanks")] * 2)
        with clock_scope() as clock:
            graph = build_chat_graph(model, saver)
            say(graph, thread_config(GONE, customer=CUSTOMER, crm_note=NOTE, plan="gold-tier"), "please help me", clock)
            say(graph, thread_config(KEPT, customer="kept.person@example.org", plan="gold-tier"), "please help me", clock)
    finally:
        saver.conn.close()
    return path


def test_an_erased_threads_metadata_leaves_the_export_log(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    exported = tmp_path / "exports" / "by_customer.csv"
    exported.parent.mkdir()
    run_cli(["report", "conversations", "--db", str(db), "--meta", f"customer={CUSTOMER}", "--out", str(exported)],
            tmp_path).succeeded()
    run_cli(["search", "please", "--db", str(db), "--meta", f"crm_note={NOTE}"], tmp_path).succeeded()
    run_cli(["report", "conversations", "--db", str(db), "--meta", "plan=gold-tier"], tmp_path).succeeded()
    assert files_holding(tmp_path, SECRETS) == [tmp_path / "lens.duckdb", tmp_path / "lens.duckdb.workspace.sqlite"]
    # The scan looks for the metadata values (what an export of the checkpoints would hold)...
    assert {CUSTOMER, NOTE} <= set(needles_of(db, [GONE]).texts)
    # ...but not for a value a kept thread carries too, nor for LangGraph's own bookkeeping.
    assert not {"gold-tier", "loop", "input"} & set(needles_of(db, [GONE]).texts)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR", "--remove-exports"], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and not exported.exists()
    assert files_holding(tmp_path, SECRETS) == []
    arguments = analytics.exports(db)["arguments"]
    assert arguments.str.contains("<erased>").sum() == 2
    assert arguments.str.contains("plan=gold-tier").sum() == 1  # a value a kept thread carries stays


def test_the_scan_names_a_file_holding_an_erased_metadata_value(store, tmp_path, env):  # noqa: F811
    """An export the log lists that holds only the metadata value (no message text, no id) keeps
    the erasure from being proven."""
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    note = tmp_path / "exports" / "notes.csv"
    note.parent.mkdir()
    run_cli(["report", "conversations", "--db", str(db), "--meta", "customer=kept.person@example.org", "--out", str(note)],
            tmp_path).succeeded()
    assert "meta-gone" not in note.read_text()  # (the export held the kept thread only)
    note.write_text(f"crm note\n{NOTE}\n")  # (what a report of the checkpoints' metadata would hold)

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR"], tmp_path, env=env)
    out.no_traceback().within_budget()
    assert out.returncode == 1 and "scan: 1 of" in out.stdout and str(note) in out.stderr
