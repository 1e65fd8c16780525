"""The generated stores really contain each feature, checked with sqlite3 and the saver API only.

Also pins a few answers of the oracle on known threads, so a wrong oracle
cannot silently make every loader test agree with it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import RemoveMessage
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver

from storegen import SCENARIOS, build_sqlite_store
from tests import oracle
from tests.conftest import Store, copy_store_files


@pytest.fixture(scope="module")
def db(sqlite_store: Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(copy_store_files(sqlite_store.path, tmp_path_factory.mktemp("db")))
    yield conn
    conn.close()


def roots(saver: SqliteSaver, thread_id: str) -> list[CheckpointTuple]:
    """Root checkpoints of a thread, oldest id first."""
    tuples = saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    return sorted(tuples, key=lambda t: t.config["configurable"]["checkpoint_id"])


def cid(t: CheckpointTuple) -> str:
    return t.config["configurable"]["checkpoint_id"]


def msgs(t: CheckpointTuple) -> list[Any]:
    return t.checkpoint["channel_values"].get("messages", [])


def rows_of(oracle_rows: list[dict[str, Any]], thread_id: str) -> list[dict[str, Any]]:
    return [r for r in oracle_rows if r["thread_id"] == thread_id]


# --- the store has what it claims -------------------------------------------


def test_manifest_covers_every_scenario_and_thread_key_shape(sqlite_store: Store, db: sqlite3.Connection) -> None:
    assert set(sqlite_store.manifest.values()) == set(SCENARIOS)
    stored = {r[0] for r in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert stored == set(sqlite_store.manifest)
    parts = {t: t.split(":") for t in stored}
    assert any(len(p) == 1 for p in parts.values()), "a thread id without colons"
    assert any(len(p) == 2 for p in parts.values()), "a two-part thread id"
    assert any(len(p) == 3 and p[1] == "" for p in parts.values()), "an empty sub-tenant"
    assert any(len(p) > 3 for p in parts.values()), "a session containing colons"


def test_subgraph_writes_nested_namespaces(sqlite_store: Store, db: sqlite3.Connection, oracle_saver: SqliteSaver) -> None:
    tid = sqlite_store.thread("subgraph")
    nss = [r[0] for r in db.execute("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id=?", (tid,))]
    level1 = [ns for ns in nss if ns.startswith("research:") and "|" not in ns]
    level2 = [ns for ns in nss if "|fetch:" in ns]
    assert len(level1) == 2 and len(level2) == 2  # one namespace per call, two turns
    sub = next(iter(oracle_saver.list({"configurable": {"thread_id": tid, "checkpoint_ns": level2[0]}})))
    assert set(sub.metadata["parents"]) == {"", level1[0]}


def test_replay_branch_has_forks(sqlite_store: Store, db: sqlite3.Connection) -> None:
    tid = sqlite_store.thread("replay_branch")
    forks = db.execute(
        "SELECT parent_checkpoint_id, count(*) FROM checkpoints WHERE thread_id=? AND checkpoint_ns='' "
        "AND parent_checkpoint_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1",
        (tid,),
    ).fetchall()
    assert len(forks) == 2  # the replayed step and the new input from an old checkpoint
    sources = {r[0] for r in db.execute(
        "SELECT json_extract(CAST(metadata AS TEXT), '$.source') FROM checkpoints WHERE thread_id=?", (tid,))}
    assert "fork" in sources


def test_interrupts_pending_and_resumed(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    pending = oracle_saver.get_tuple({"configurable": {"thread_id": sqlite_store.thread("interrupt_pending")}})
    channels = [w[1] for w in pending.pending_writes]
    assert "__interrupt__" in channels and "__resume__" not in channels
    value = next(w[2] for w in pending.pending_writes if w[1] == "__interrupt__")[0].value
    assert value["action"] == "issue_refund" and value["args"]["order_id"] == "B-2211"

    tid = sqlite_store.thread("interrupt_resumed")
    latest = oracle_saver.get_tuple({"configurable": {"thread_id": tid}})
    assert "__interrupt__" not in [w[1] for w in latest.pending_writes]
    resumed = [t for t in roots(oracle_saver, tid) if "__resume__" in [w[1] for w in t.pending_writes]]
    assert len(resumed) == 1 and "__interrupt__" in [w[1] for w in resumed[0].pending_writes]
    assert msgs(latest)[-1].type == "ai"


def test_remove_message_drops_ids_between_checkpoints(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    tid = sqlite_store.thread("remove_message")
    chain = roots(oracle_saver, tid)
    removed = [
        (a, b) for a, b in zip(chain, chain[1:])
        if {m.id for m in msgs(a)} - {m.id for m in msgs(b)}
    ]
    assert removed, "some message id disappears from one root checkpoint to the next"
    writes = [w[2] for t in chain for w in t.pending_writes if w[1] == "messages"]
    assert any(isinstance(m, RemoveMessage) for v in writes for m in (v if isinstance(v, list) else [v]))
    assert msgs(chain[-1])[0].content != "hi"


def test_edit_replaces_content_under_the_same_id(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    tid = sqlite_store.thread("edit")
    chain = roots(oracle_saver, tid)
    update = next(t for t in chain if t.metadata["source"] == "update")
    parent = next(t for t in chain if cid(t) == update.parent_config["configurable"]["checkpoint_id"])
    before = {m.id: m.content for m in msgs(parent)}
    after = {m.id: m.content for m in msgs(update)}
    assert before.keys() == after.keys()
    changed = [i for i in before if before[i] != after[i]]
    assert len(changed) == 1 and after[changed[0]].startswith("Correction:")


def test_operator_add_messages_have_no_ids(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    chain = roots(oracle_saver, sqlite_store.thread("operator_add"))
    all_msgs = [m for t in chain for m in msgs(t)]
    assert len(msgs(chain[-1])) == 4 and all(m.id is None for m in all_msgs)


def test_second_process_continued_after_idle_gap(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    chain = roots(oracle_saver, sqlite_store.thread("second_process"))
    writers = [(t.metadata["writer"], t.metadata["writer_pid"]) for t in chain]
    pids = {pid for _, pid in writers}
    assert len(pids) == 2 and os.getpid() in pids  # the store was built by this test process
    assert [w for w, _ in writers] == sorted(w for w, _ in writers)  # worker-1 then worker-2
    first_child = next(i for i, (w, _) in enumerate(writers) if w == "worker-2")
    gap = dt.datetime.fromisoformat(chain[first_child].checkpoint["ts"]) - dt.datetime.fromisoformat(
        chain[first_child - 1].checkpoint["ts"])
    assert gap >= dt.timedelta(hours=3)
    assert chain[first_child].parent_config["configurable"]["checkpoint_id"] == cid(chain[first_child - 1])


def test_input_and_step0_checkpoints_share_ts(oracle_checkpoints: list[dict[str, Any]]) -> None:
    by_id = {(c["thread_id"], c["checkpoint_ns"], c["checkpoint_id"]): c for c in oracle_checkpoints}
    pairs = [
        (by_id[(c["thread_id"], c["checkpoint_ns"], c["parent_checkpoint_id"])], c)
        for c in oracle_checkpoints
        if c["parent_checkpoint_id"] and by_id[(c["thread_id"], c["checkpoint_ns"], c["parent_checkpoint_id"])]["source"] == "input"
    ]
    assert pairs and all(p["ts"] == c["ts"] for p, c in pairs)  # the frozen clock does not tick inside a step


def test_ts_ties_between_root_checkpoints(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    chain = roots(oracle_saver, sqlite_store.thread("simple_chat"))
    stamps = [t.checkpoint["ts"] for t in chain]
    assert len(set(stamps)) < len(stamps)  # frozen clock, zero model latency
    assert any(s.endswith(":00+00:00") for s in stamps)  # whole seconds are written without .ffffff


def test_list_content_chat_role_and_system(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    latest = oracle_saver.get_tuple({"configurable": {"thread_id": sqlite_store.thread("list_content")}})
    m = msgs(latest)
    assert m[0].type == "system"
    assert isinstance(m[1].content, list) and {b["type"] for b in m[1].content} == {"text", "image_url"}
    assert isinstance(m[2].content, list)
    assert any(x.type == "chat" and x.role == "critic" for x in m)


def test_tool_calls_errors_usage_and_two_models(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    m = msgs(oracle_saver.get_tuple({"configurable": {"thread_id": sqlite_store.thread("tool_calls")}}))
    ai = [x for x in m if x.type == "ai"]
    tools = [x for x in m if x.type == "tool"]
    assert any(len(x.tool_calls) == 2 for x in ai)  # parallel calls
    assert [t.status for t in tools].count("error") == 1
    assert {x.response_metadata["model_name"] for x in ai} == {"gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022"}
    assert all(set(x.usage_metadata) >= {"input_tokens", "output_tokens", "total_tokens"} for x in ai)


def test_same_seed_same_store(tmp_path: Path) -> None:
    threads = {"acme:web:det": "simple_chat", "globex::det": "edit"}
    dumps = []
    for name in ("a.sqlite", "b.sqlite"):
        build_sqlite_store(tmp_path / name, seed=7, threads=threads)
        conn = sqlite3.connect(tmp_path / name)
        dumps.append((conn.execute("SELECT * FROM checkpoints ORDER BY 1, 2, 3").fetchall(),
                      conn.execute("SELECT * FROM writes ORDER BY 1, 2, 3, 4, 5").fetchall()))
        conn.close()
    assert dumps[0] == dumps[1] and len(dumps[0][0]) > 10
    # Not byte for byte: LangGraph writes a step's pending writes from its task threads,
    # and on a busy machine they reach the writes table's index in another order (same
    # rows, another page layout). Identical rows are what a load reads.


def test_wal_store_newest_rows_only_in_wal(wal_store: Store, tmp_path: Path) -> None:
    copy = copy_store_files(wal_store.path, tmp_path)
    assert Path(f"{copy}-wal").stat().st_size > 0
    main_only = sqlite3.connect(f"file:{copy}?immutable=1", uri=True)  # ignores -wal
    seen_main = {r[0] for r in main_only.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    main_only.close()
    assert seen_main == set(wal_store.extra["main_threads"])
    full = sqlite3.connect(copy)
    seen_full = {r[0] for r in full.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    full.close()
    assert seen_full == set(wal_store.manifest)
    assert set(wal_store.extra["wal_threads"]) <= seen_full - seen_main


# --- the oracle answers what contract §3 / §5 say on known threads ----------------


def test_oracle_simple_chat(sqlite_store: Store, oracle_rows: list[dict[str, Any]]) -> None:
    rows = rows_of(oracle_rows, sqlite_store.thread("simple_chat"))
    assert [r["role"] for r in rows] == ["user", "assistant"] * 3
    assert rows[0]["content"] == "Hi! Can you help me reset my password?"
    assert rows[-1]["content"].startswith("Thanks! I've queued a new reset email")
    assert [r["ordinal"] for r in rows] == list(range(6))
    assert (rows[0]["tenant_id"], rows[0]["sub_tenant_id"], rows[0]["session_id"]) == ("acme", "web", "sess-001")
    # tie: the input and step-0 checkpoints share ts; the input one has no messages,
    # so the user message's checkpoint is the step-0 one
    assert rows[0]["ts"] == rows[1]["ts"] == dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.timezone.utc)


def test_oracle_tie_goes_to_smallest_checkpoint_id(sqlite_store: Store, oracle_saver: SqliteSaver,
                                                   oracle_rows: list[dict[str, Any]]) -> None:
    tid = sqlite_store.thread("simple_chat")
    chain = roots(oracle_saver, tid)
    tied = 0
    for r in rows_of(oracle_rows, tid):
        holders = [t for t in chain if r["message_id"] in {m.id for m in msgs(t)}]
        best = min(holders, key=lambda t: (dt.datetime.fromisoformat(t.checkpoint["ts"]), cid(t)))
        assert r["checkpoint_id"] == cid(best)
        tied += sum(t.checkpoint["ts"] == best.checkpoint["ts"] for t in holders) >= 2
    assert tied >= 3  # the user messages (and all but the last reply) tie with later checkpoints


def test_oracle_replay_branch_uses_latest_and_oldest_ts(sqlite_store: Store, oracle_saver: SqliteSaver,
                                                       oracle_rows: list[dict[str, Any]]) -> None:
    tid = sqlite_store.thread("replay_branch")
    rows = rows_of(oracle_rows, tid)
    assert [r["content"] for r in rows][2] == "Actually, what about a day trip to Osaka instead?"
    assert len(rows) == 4
    first_step0 = next(t for t in roots(oracle_saver, tid) if t.metadata["step"] == 0)
    assert rows[0]["checkpoint_id"] == cid(first_step0)
    assert all(r["ts"] is not None for r in rows)


def test_oracle_edit_keeps_original_ts(sqlite_store: Store, oracle_saver: SqliteSaver,
                                       oracle_rows: list[dict[str, Any]]) -> None:
    tid = sqlite_store.thread("edit")
    rows = rows_of(oracle_rows, tid)
    assert rows[1]["content"].startswith("Correction:")
    update = next(t for t in roots(oracle_saver, tid) if t.metadata["source"] == "update")
    assert rows[1]["ts"] < dt.datetime.fromisoformat(update.checkpoint["ts"])


def test_oracle_no_id_thread_key_roles_and_blocks(sqlite_store: Store, oracle_rows: list[dict[str, Any]]) -> None:
    legacy = rows_of(oracle_rows, sqlite_store.thread("operator_add"))
    assert legacy and all(r["message_id"] is None and r["ts"] is None and r["checkpoint_id"] is None for r in legacy)
    assert (legacy[0]["tenant_id"], legacy[0]["sub_tenant_id"], legacy[0]["session_id"]) == (None, None, "support-bot-7")
    rich = rows_of(oracle_rows, sqlite_store.thread("list_content"))
    assert (rich[0]["tenant_id"], rich[0]["sub_tenant_id"], rich[0]["session_id"]) == ("acme", "web", "a:b")
    assert [r["role"] for r in rich] == ["system", "user", "assistant", "other", "user", "assistant", "other"]
    assert rich[1]["content"] == "Is this covered by warranty?"  # the image block is not inlined
    assert rich[2]["content"] == "The photo shows a cracked phone screen.\nThat is covered by the 12-month warranty."
    assert rich[3]["lc_type"] == "chat"
    edit = rows_of(oracle_rows, sqlite_store.thread("edit"))
    assert edit[0]["sub_tenant_id"] is None and edit[0]["tenant_id"] == "globex"


def test_oracle_window(sqlite_store: Store, oracle_saver: SqliteSaver) -> None:
    tid = sqlite_store.thread("tool_calls")
    window = oracle.expected_window(oracle_saver, tid)
    assert window and {role for role, _, _ in window} == {"user", "assistant"}
    assert oracle.expected_window(oracle_saver, tid, cap=3) == window[-3:]
    assert oracle.expected_window(oracle_saver, tid, cap=0) == []
    # at an old checkpoint: the transcript as it stood then
    first_loop = next(t for t in roots(oracle_saver, tid) if t.metadata["step"] == 0)
    assert oracle.expected_window(oracle_saver, tid, cid(first_loop)) == [
        ("user", "Where is my order A-1043?", msgs(first_loop)[0].id)]
    restart = oracle.expected_window(oracle_saver, sqlite_store.thread("list_content"))
    assert [r for r, _, _ in restart] == ["user", "assistant", "user", "assistant"]


def test_oracle_checkpoints_match_the_table(db: sqlite3.Connection, oracle_checkpoints: list[dict[str, Any]]) -> None:
    assert len(oracle_checkpoints) == db.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    inputs = [c for c in oracle_checkpoints if c["source"] == "input" and c["step"] == -1]
    assert inputs and all(c["message_count"] is None and c["parent_checkpoint_id"] is None for c in inputs)
    by_id = {(c["thread_id"], c["checkpoint_ns"], c["checkpoint_id"]): c for c in oracle_checkpoints}
    for thread_id, ns, ck, parent, meta in db.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints"):
        c = by_id[(thread_id, ns, ck)]
        assert c["parent_checkpoint_id"] == parent
        assert c["step"] == json.loads(meta)["step"]
        assert c["ts"].tzinfo is not None
