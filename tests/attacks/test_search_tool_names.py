"""`search TEXT --in tool_calls` finds a tool's name (README: "the tool calls (names and
arguments)"): the searched text was also applied as the `--text` thread filter, which keeps only
threads whose message text holds it, so a name said nowhere in a message was never found."""

from __future__ import annotations

import pytest

from tests.attacks.harness import attack, run_cli
from tests.attacks.stores import store_with_messages


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tool-names")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    store_with_messages(store, [
        {"type": "human", "content": "look it up", "id": "m1"},
        {"type": "ai", "content": "", "id": "m2",
         "tool_calls": [{"name": "vault_lookup", "args": {"key": "walrus"}, "id": "c1", "type": "tool_call"}]},
    ], thread_id="acme:web:s1")
    attack(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


@pytest.mark.parametrize("text", ["vault_lookup", "walrus"], ids=["name", "argument"])
def test_search_in_tool_calls_finds_names_and_arguments(lens, tmp_path, text):
    out = run_cli(["search", text, "--in", "tool_calls", "--db", str(lens), "--format", "csv"], tmp_path)
    out.succeeded()
    assert "# 1 messages in 1 threads" in out.stderr and "vault_lookup(" in out.stdout, out.stderr
