"""The labelled outcome set's labels are true to the store it wrote, read back through LangGraph's own API.

Each structural label is recomputed here from the saved checkpoints (tests/oracle.py: a strict
`SqliteSaver` on a copy) for every thread, independently of the generator's plans and of any
signal code: tool-error cascades, loops within a user turn, who spoke last and how long ago,
pending interrupts and their waits, the app version in metadata, the first question's topic.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import unicodedata
from collections import Counter

import pytest

from storegen import labelled_text as T
from storegen.__main__ import main as storegen_main
from storegen.labelled import ACTION, REBUILT_WINDOW, RESTART_GAP, build_labelled_store, composition, labels_path
from tests import oracle


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labelled")
    assert storegen_main(["labelled", str(folder / "set.sqlite"), "--seed", "3", "--scale", "0.05"]) == 0
    labels = json.loads(labels_path(folder / "set.sqlite").read_text(encoding="utf-8"))
    shutil.copy(folder / "set.sqlite", folder / "copy.sqlite")
    saver = oracle.open_sqlite(folder / "copy.sqlite")
    rows: dict[str, list[dict]] = {}
    for r in oracle.expected_messages(saver):
        rows.setdefault(r["thread_id"], []).append(r)
    latest = {t: saver.get_tuple({"configurable": {"thread_id": t}})
              for t in labels["threads"]}
    yield folder, labels, rows, latest
    saver.conn.close()


def _messages(tup) -> list:
    return list(tup.checkpoint["channel_values"].get("messages", []))


def _status(m) -> str | None:
    return oracle._field(m, "status")


def _calls(m) -> list[dict]:
    return list(oracle._field(m, "tool_calls") or [])


def test_every_thread_is_labelled_in_each_language_and_version(labelled):
    _, labels, rows, _ = labelled
    assert set(rows) == set(labels["threads"])
    counts = composition(labels)
    assert set(counts["lang"]) == set(T.LANGS) and set(counts["app_version"]) == {"1.0", "1.1"}
    assert all(counts["signal"][s] for s in labels["signals"]), counts["signal"]
    assert set(counts["outcome"]) == set(labels["outcomes"]), counts["outcome"]


def test_cascades_and_loops_are_what_the_store_holds(labelled):
    _, labels, _, latest = labelled
    for thread_id, want in labels["threads"].items():
        msgs = _messages(latest[thread_id])
        statuses = [_status(m) for m in msgs if oracle._field(m, "type") == "tool"]
        cascade = any(a == b == "error" for a, b in zip(statuses, statuses[1:]))
        assert cascade == want["tool_error_cascade"], thread_id
        calls, turn = Counter(), 0
        for m in msgs:
            turn += oracle._field(m, "type") == "human"
            for c in _calls(m):
                calls[(turn, c["name"], json.dumps(c["args"], sort_keys=True))] += 1
        assert (max(calls.values(), default=0) >= 3) == want["agent_loop"], thread_id


def test_who_spoke_last_and_when_matches_the_ending_labels(labelled):
    _, labels, rows, latest = labelled
    store_end = max(tup.checkpoint["ts"] for tup in latest.values())
    store_end = dt.datetime.fromisoformat(store_end)
    assert store_end.isoformat() == labels["store_end"]
    closings = {_nfc(c) for lang in T.CLOSINGS.values() for c in lang}
    for thread_id, want in labels["threads"].items():
        last = rows[thread_id][-1]
        pending = any(w[1] == "__interrupt__" for w in latest[thread_id].pending_writes or [])
        idle = store_end - dt.datetime.fromisoformat(str(last["ts"]))
        user_last_open = last["role"] == "user" and _nfc(last["content"]) not in closings and not pending
        assert want["abandoned"] == (user_last_open and idle > dt.timedelta(minutes=30)), thread_id
        assert (want["outcome"] == "waiting") == pending, thread_id
        if want["resolved_closing"]:
            closing = rows[thread_id][want["ordinals"]["resolved_closing"][0]]
            assert closing["role"] == "user" and _nfc(closing["content"]) in closings, thread_id
        tail = _messages(latest[thread_id])[-1]
        gave_up = last["role"] == "assistant" and _nfc(last["content"]) in {_nfc(g) for lang in T.GIVE_UPS.values() for g in lang}
        assert want["dropped_after_failure"] == (_status(tail) == "error" or gave_up), thread_id
        user_closings = [m for m in rows[thread_id] if m["role"] == "user" and _nfc(m["content"]) in closings]
        assert want["resolved_closing"] == bool(user_closings), thread_id


def test_human_waits_match_the_slow_hitl_labels(labelled):
    _, labels, rows, latest = labelled
    store_end = dt.datetime.fromisoformat(labels["store_end"])
    for thread_id, want in labels["threads"].items():
        r = rows[thread_id]
        asks = [i for i, m in enumerate(_messages(latest[thread_id])) if any(c["name"] in ACTION.values() for c in _calls(m))]
        slow = False
        for i in asks:
            answered = dt.datetime.fromisoformat(str(r[i + 1]["ts"])) if i + 1 < len(r) else store_end
            slow |= answered - dt.datetime.fromisoformat(str(r[i]["ts"])) > dt.timedelta(hours=4)
        assert slow == want["slow_hitl"], thread_id
        if slow:
            assert want["ordinals"]["slow_hitl"] == asks


def test_text_signals_and_their_ordinals_are_what_the_store_says(labelled):
    _, labels, rows, latest = labelled
    frustration = {_nfc(p) for book in (T.ASK_HUMAN, T.SAYS_WRONG) for lang in book.values() for p in lang}
    greetings = {_nfc(g) for g in T.GREETINGS.values()}
    for thread_id, want in labels["threads"].items():
        r, msgs = rows[thread_id], _messages(latest[thread_id])
        for i in want["ordinals"].get("tool_error_cascade", []):
            assert _status(msgs[i]) == "error"
        for i in want["ordinals"].get("agent_loop", []):
            assert r[i]["role"] == "assistant" and _calls(msgs[i])
        for i in want["ordinals"].get("user_frustration", []):
            text = _nfc(r[i]["content"])
            previous = [_nfc(m["content"]) for m in r[:i] if m["role"] == "user"]
            repeated = bool(previous) and text.rstrip(" ?") == previous[-1].rstrip(" ?!.")
            assert r[i]["role"] == "user" and (text in frustration or repeated), (thread_id, text)
        said = [_nfc(m["content"]) for m in r if m["role"] == "assistant" and m["content"]]
        assert want["repetition"] == (len(set(said)) < len(said)), thread_id
        users = [_nfc(m["content"]) for m in r if m["role"] == "user"]
        phrased = any(u in frustration for u in users)
        repeated = any(b.rstrip(" ?") == a.rstrip(" ?!.") for a, b in zip(users, users[1:]) if a not in greetings)
        assert want["user_frustration"] == (phrased or repeated), thread_id
        texts = [r[i]["content"] for i in want["ordinals"].get("repetition", [])]
        assert not want["repetition"] or (len(texts) == 2 and texts[0] == texts[1] and r[want["ordinals"]["repetition"][0]]["role"] == "assistant")


def test_restarts_that_left_older_turns_out_are_the_lost_context_labels(labelled):
    """A restart is a gap of over 30 minutes between a checkpoint and its child; it rebuilds the
    last 50 user/assistant messages of the parent's list: lost context when that list held more."""
    folder, labels, _, _ = labelled
    saver = oracle.open_sqlite(folder / "copy.sqlite")
    try:
        for thread_id, want in labels["threads"].items():
            tuples = list(saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}))
            by_id = {t.config["configurable"]["checkpoint_id"]: t for t in tuples}
            first_kept = []
            for child in tuples:
                parent = by_id.get((child.parent_config or {}).get("configurable", {}).get("checkpoint_id"))
                if parent is None:
                    continue
                gap = dt.datetime.fromisoformat(child.checkpoint["ts"]) - dt.datetime.fromisoformat(parent.checkpoint["ts"])
                kept = [i for i, m in enumerate(_messages(parent)) if oracle._field(m, "type") in ("human", "ai")]
                if gap > RESTART_GAP and len(kept) > REBUILT_WINDOW:
                    first_kept.append(kept[-REBUILT_WINDOW])
            assert want["lost_context"] == bool(first_kept), thread_id
            assert want["ordinals"].get("lost_context", []) == sorted(first_kept), thread_id
    finally:
        saver.conn.close()


def test_versions_and_topics_are_in_the_store(labelled):
    _, labels, rows, latest = labelled
    for thread_id, want in labels["threads"].items():
        assert latest[thread_id].metadata["app_version"] == want["app_version"]
        question = unicodedata.normalize("NFC", rows[thread_id][want["first_question_ordinal"]]["content"])
        templates = T.TOPIC_QUESTIONS[want["topic"]][want["lang"]]
        assert any(question.startswith(t.split("{ref}")[0]) and question.endswith(t.split("{ref}")[-1]) for t in templates), question


def test_the_same_seed_writes_the_same_labels(labelled, tmp_path):
    _, labels, _, _ = labelled
    assert build_labelled_store(tmp_path / "again.sqlite", seed=3, scale=0.05)["threads"] == labels["threads"]
