"""`subgraph_messages`: what each subgraph run said (contract §3.9), against LangGraph's own reading."""

from __future__ import annotations

from tests import oracle
from tests.loaders.util import load_db, rows

KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "ordinal", "role", "content", "message_id")


def test_each_run_keeps_what_it_said_and_not_its_input(sqlite_store, oracle_saver, tmp_path):
    db = tmp_path / "all.duckdb"
    load_db(sqlite_store.path, db)
    got = rows(db, f"SELECT {', '.join(KEYS)} FROM subgraph_messages ORDER BY thread_id, checkpoint_ns, ordinal")
    expected = oracle.expected_subgraph_messages(oracle_saver)
    assert got == expected
    # Both shapes are there: a node subgraph nested two deep, and a sub-agent run inside a tool.
    nested = sqlite_store.thread("subgraph")
    assert {r["checkpoint_ns"].count("|") for r in got if r["thread_id"] == nested} == {0, 1}
    delegated = [r for r in got if r["thread_id"] == sqlite_store.thread("tool_subgraph")]
    assert [r["role"] for r in delegated] == ["user", "assistant"]
    assert delegated[0]["checkpoint_ns"].startswith("tools:")


def test_subgraph_messages_never_enter_the_transcript(sqlite_store, tmp_path):
    db = tmp_path / "all.duckdb"
    load_db(sqlite_store.path, db)
    thread = sqlite_store.thread("tool_subgraph")
    transcript = [r["content"] for r in rows(db, "SELECT content FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread])]
    question = rows(db, "SELECT content FROM subgraph_messages WHERE thread_id = ? AND role = 'user'", [thread])
    assert question and question[0]["content"] not in transcript
    counts = rows(db, "SELECT message_count, subgraph_checkpoint_count FROM threads WHERE thread_id = ?", [thread])[0]
    assert counts["message_count"] == len(transcript) == 4 and counts["subgraph_checkpoint_count"] > 0


def test_a_thread_without_subgraphs_has_no_rows(sqlite_store, tmp_path):
    db = tmp_path / "all.duckdb"
    load_db(sqlite_store.path, db)
    threads = {r["thread_id"] for r in rows(db, "SELECT DISTINCT thread_id FROM subgraph_messages")}
    assert threads == {sqlite_store.thread("subgraph"), sqlite_store.thread("tool_subgraph")}
