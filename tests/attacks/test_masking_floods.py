"""Anyone who can write into a conversation can fill one message with personal values: 4 MB of
distinct addresses, 174,762 of them. Each finding was checked against every one taken before it,
so masking cost the square of their number: 143 s for 1 MB, some 40 minutes for 4 MB, for every
masked view of that conversation. Findings are merged in one pass (`analytics/redact_merge.py`):
the 4 MB message is masked within the memory budget, each address its own placeholder. The
subprocess's timeout is no timing assertion (the run takes seconds): it stops a quadratic."""

from __future__ import annotations

import json
import re
import sqlite3

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.attacks.harness import attack, run_cli

THREAD = "t:flood:1"


def _store(path, text: str) -> None:
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": [HumanMessage(text, id="big"), AIMessage("ok", id="ok")]}
        cp["channel_versions"] = {"messages": 1}
        saver.put({"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}, cp,
                  {"source": "input", "step": 1}, {"messages": 1})
    finally:
        conn.close()


def test_a_message_of_four_megabytes_of_addresses_is_masked(tmp_path):
    count = (4 << 20) // 24
    store, db = tmp_path / "flood.sqlite", tmp_path / "flood.duckdb"
    _store(store, " ".join(f"u{i}@d{i}.example.com" for i in range(count)))
    run_cli(["load", str(store), "--db", str(db), "--quiet"], tmp_path).succeeded()
    out = attack(["transcript", "--db", str(db), "--thread", THREAD, "--redact", "--format", "json"], tmp_path,
                 timeout=600)
    out.succeeded().within_budget(600)
    [first] = [m for m in json.loads(out.stdout) if m["role"] == "user"]
    assert first["content"].split() == [f"<EMAIL_{i + 1}>" for i in range(count)]


def test_a_message_of_spaced_digits_is_read_for_cards_in_linear_time(tmp_path):
    """Digits as dictated or pasted from a table, one per group (`3 7 0 1 9 …`): each group started a
    search for a card over every later group of the run, so 800 digits took 14 s and 2,500 did not end.
    A card holds at most 19 digits, so a search stops there. 20,000 digits: seconds, not hours. The
    card read out at their end is masked (docs/privacy.md, `CARD`)."""
    import random

    rng = random.Random(7)
    store, db = tmp_path / "digits.sqlite", tmp_path / "digits.duckdb"
    _store(store, " ".join(rng.choice("0123456789") for _ in range(20_000)) + " 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 end")
    run_cli(["load", str(store), "--db", str(db), "--quiet"], tmp_path).succeeded()
    out = attack(["transcript", "--db", str(db), "--thread", THREAD, "--redact", "--format", "json"], tmp_path,
                 timeout=600)
    out.succeeded().within_budget(600)
    [first] = [m for m in json.loads(out.stdout) if m["role"] == "user"]
    assert re.search(r" <CARD_[0-9]+> end$", first["content"]), first["content"][-80:]
    # The digits before it as written, but for stretches that open a run and pass the check, or are
    # written as phone numbers (`0 2 0 7 9 4 6 0 9 5 8`).
    assert sum(len(word) == 1 for word in first["content"].split()) >= 0.99 * 20_000
