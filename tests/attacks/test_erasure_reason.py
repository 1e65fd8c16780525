"""An erasure's reason, and the export log's arguments, quoting the erased thread (docs/privacy.md, step 4).

The reason (`--reason`) is stored in the tombstone and in the erasure log, in the review
workspace. A reason quoting the erased thread — the customer's e-mail its metadata carries, a
phrase of its messages — kept that text on disk: the scan failed on the workspace (a
metadata value is one of its windows), or, for a quote no window covers, said the disk was
clean while the workspace held it. Now each stretch of the reason that is the erased threads'
text is stored as `<erased>`; a reason an earlier erasure stored, quoting a thread erased
later, is rid of that thread's windows; and an export-log value holding a metadata value
with more text around it has that value replaced, the rest kept. The queues' and labels'
names and descriptions, and the erasure's `--by`, are masked by the reason's rule, in the
step that cleans the workspace: the first run leaves none of the text on disk and exits 0.
"""

from __future__ import annotations

import sqlite3

import pytest

import analytics
from storegen import Reply, ScriptedChatModel, build_chat_graph, build_sqlite_store, clock_scope, open_sqlite_saver
from storegen.scenarios import say, thread_config
from tests.attacks.harness import attack, run_cli
from tests.attacks.test_erasure import env  # noqa: F401 (the fixture: the app cache in tmp_path)
from tests.erasure_stores import files_holding

GONE, KEPT, PLAIN = "acme:web:reason-gone", "acme:web:reason-kept", "acme:web:plain"
CUSTOMER, KEPT_CUSTOMER = "frank.reason.only@example.net", "kept.reason@example.org"
# Said in GONE only, in a line longer than the scan's windows: no window is this phrase alone.
PHRASE = "my locker code is QUINCE-48213-PLOVER"
ASK = f"Please help: {PHRASE}, and the spare key sits under the third flowerpot on the left."
SECRETS = (CUSTOMER, "QUINCE-48213-PLOVER")
NAMED = (*SECRETS, SECRETS[1].lower())  # (a name may quote it in any case)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("erasure-reason") / "store.sqlite"
    build_sqlite_store(path, threads={PLAIN: "simple_chat"})
    saver = open_sqlite_saver(path)
    try:
        model = ScriptedChatModel(base_latency=0.0, seconds_per_char=0.0, replies=[Reply("noted, thanks")] * 2)
        with clock_scope() as clock:
            graph = build_chat_graph(model, saver)
            say(graph, thread_config(GONE, customer=CUSTOMER, plan="gold-tier"), ASK, clock)
            say(graph, thread_config(KEPT, customer=KEPT_CUSTOMER, plan="gold-tier"), "please help me", clock)
    finally:
        saver.conn.close()
    return path


def _reasons(db) -> tuple[list[str], list[str]]:
    """(the tombstones' reasons, the erasure log's) in the workspace beside `db`."""
    log = analytics.erasure_log(db)
    return [t.reason for t in analytics.tombstones(db)], [r for r in log["reason"] if r is not None]


def test_a_reason_quoting_the_erased_thread_is_stored_masked(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    reason = f"DSR-7 from {CUSTOMER.upper()}: wrote '{PHRASE}'; plan gold-tier; ticket DSR-7"
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", reason], tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*SECRETS)
    assert "scan: 0 of" in out.stdout and "also removed: reason quotes 2" in out.stdout
    assert files_holding(tmp_path, SECRETS) == []  # (the quote in any case: the e-mail was upper-cased)
    masked = "DSR-7 from <erased>: wrote '<erased>'; plan gold-tier; ticket DSR-7"  # a kept thread's value stays
    assert _reasons(db) == ([masked], [masked])
    listed = run_cli(["erase", "--db", str(db), "--list"], tmp_path).succeeded()
    assert masked in listed.stdout


def test_an_earlier_reason_quoting_a_thread_erased_later_is_scrubbed(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    first = f"mixed up with {KEPT_CUSTOMER}, asked by ops"  # KEPT's value: not the erased thread's text then
    attack(["erase", "--db", str(db), "--thread", PLAIN, "--reason", first], tmp_path, env=env).succeeded()
    assert _reasons(db) == ([first], [first])

    out = attack(["erase", "--db", str(db), "--thread", KEPT, "--reason", "GDPR"], tmp_path, env=env)
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout and "reasons scrubbed 2" in out.stdout
    assert files_holding(tmp_path, (KEPT_CUSTOMER,)) == []
    assert _reasons(db) == (["mixed up with <erased>, asked by ops", "GDPR"],
                            ["mixed up with <erased>, asked by ops", "GDPR"])


def test_an_export_value_holding_a_metadata_value_has_it_replaced(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["report", "conversations", "--db", str(db), "--text", f"ticket for {CUSTOMER} please"],
            tmp_path).succeeded()
    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "GDPR"], tmp_path, env=env)
    out.succeeded().within_budget()
    assert "scan: 0 of" in out.stdout and "exports scrubbed 1" in out.stdout
    assert files_holding(tmp_path, (CUSTOMER,)) == []
    (arguments,) = analytics.exports(db)["arguments"]
    assert "ticket for <erased> please" in arguments


def test_queue_and_label_texts_and_by_are_masked_on_the_first_run(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    run_cli(["queues", "create", f"{SECRETS[1]} queue", "--db", str(db), "--thread", GONE, "--thread", KEPT,
             "--description", f"follow-up for {CUSTOMER}", "--author", "ana"], tmp_path).succeeded()
    # A second name that masks to the same: the names stay unique.
    run_cli(["queues", "create", f"{SECRETS[1].lower()} queue", "--db", str(db), "--thread", KEPT,
             "--author", "ana"], tmp_path).succeeded()
    label = f"{CUSTOMER} complaint"
    run_cli(["annotations", "labels", "--db", str(db), "--add", label, "--color", "#ff0000",
             "--description", f"for {SECRETS[1]} cases"], tmp_path).succeeded()
    run_cli(["annotations", "add", "--db", str(db), "--thread", KEPT, "--label", label, "--author", "ana"],
            tmp_path).succeeded()
    assert files_holding(tmp_path, NAMED) != []

    out = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12", "--by", CUSTOMER],
                 tmp_path, env=env)
    out.succeeded().within_budget().never_prints(*NAMED)
    assert "scan: 0 of" in out.stdout
    assert files_holding(tmp_path, NAMED) == []

    with sqlite3.connect(tmp_path / "lens.duckdb.workspace.sqlite") as conn:
        queues = conn.execute("SELECT name, description FROM queues ORDER BY queue_id").fetchall()
        labels = dict(conn.execute("SELECT name, description FROM labels").fetchall())
        kept = conn.execute("SELECT thread_id, label FROM annotations").fetchall()
    assert queues == [("<erased> queue", "follow-up for <erased>"), ("<erased> queue 2", None)]
    # (the space before the code is the thread's text too, "is QUINCE-…": the words keep their spaces)
    assert labels["<erased> complaint"] == "for <erased> cases"
    assert kept == [(KEPT, "<erased> complaint")]  # the kept thread's annotation follows its label
    assert [t.by for t in analytics.tombstones(db)] == ["<erased>"]
    assert list(analytics.erasure_log(db)["by"]) == ["<erased>"]

    again = attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 12 again"], tmp_path, env=env)
    again.succeeded()
    assert files_holding(tmp_path, NAMED) == []


def test_a_reason_keeps_the_spaces_and_punctuation_around_what_it_erases(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    # The erased thread says "help: my locker code is …, and": the stretch erased starts at the colon.
    reason = f"the customer said: {PHRASE}, so erase it"
    attack(["erase", "--db", str(db), "--thread", GONE, "--reason", reason], tmp_path, env=env).succeeded()
    masked = "the customer said: <erased>, so erase it"
    assert _reasons(db) == ([masked], [masked])


def test_the_log_prints_no_nan_for_a_held_back_entry(store, tmp_path, env):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()
    attack(["erase", "--db", str(db), "--thread", GONE, "--reason", "DSR 9"], tmp_path, env=env).succeeded()
    run_cli(["load", str(store), "--db", str(db)], tmp_path).succeeded()  # holds GONE back: a `held_back` entry
    log = run_cli(["erase", "--db", str(db), "--log"], tmp_path).succeeded()
    assert "held_back" in log.stdout
    assert not {"NaN", "None", "nan", "<NA>"} & set(log.stdout.split())
