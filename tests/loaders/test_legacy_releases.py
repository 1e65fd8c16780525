"""Stores written by LangGraph 0.2, 0.3, 0.6 and the current release, some continued by a
newer one, loaded and held to the ground truth the releases themselves gave
(tests/loaders/legacy/README.md; scripts/legacy_stores.py writes both).

Found loading such stores: a legacy `json` message and its msgpack copy in a later
checkpoint (the same message, re-written by the newer release) counted as an edit
(tool-call keys re-sorted), and an unchanged `operator.add` history without ids as
removed and re-added (payloads told apart by their bytes).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from tests import oracle
from tests.loaders.util import load_db, rows

LEGACY = Path(__file__).parent / "legacy"
STORES = sorted(p.name[: -len(".sqlite.gz")] for p in LEGACY.glob("*.sqlite.gz"))


def test_every_release_and_a_continued_store_are_there():
    releases = {w["release"] for name in STORES for w in json.loads((LEGACY / f"{name}.json").read_text())["written_by"]}
    assert releases >= {"lg02", "lg03", "lg06", "current"}
    continued = [n for n in STORES if len({w["release"] for w in _truth(n)["written_by"]}) > 1]
    assert "lg02-then-current" in continued


def test_the_current_release_is_the_one_the_tests_pin():
    """The `current` turns were written by the LangGraph packages requirements-dev.txt pins (the
    savers every other test writes with): a pin moved without regenerating the stores fails here."""
    lock = (Path(__file__).parents[2] / "requirements-dev.txt").read_text()
    pins = dict(re.findall(r"^([\w.-]+)==(\S+)", lock, flags=re.M))
    packages = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langchain-core")
    current = [w for name in STORES for w in _truth(name)["written_by"] if w["release"] == "current"]
    assert current and all({p: w[p] for p in packages} == {p: pins[p] for p in packages} for w in current), current


def _truth(name: str) -> dict:
    return json.loads((LEGACY / f"{name}.json").read_text())


def _unpack(name: str, folder: Path) -> Path:
    path = folder / f"{name}.sqlite"
    with gzip.open(LEGACY / f"{name}.sqlite.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


@pytest.fixture(scope="module", params=STORES)
def loaded(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    store = _unpack(request.param, folder)
    db = folder / "out.duckdb"
    load_db(store, db, workers=1)
    return request.param, store, db


def test_edit_and_removal_counts_equal_the_releases_own(loaded):
    name, _, db = loaded
    truth = _truth(name)["threads"]
    got = {r["thread_id"]: r for r in rows(db, "SELECT thread_id, edited_message_count, removed_message_count FROM threads")}
    assert set(got) == set(truth)
    for thread_id, want in truth.items():
        assert (got[thread_id]["edited_message_count"], got[thread_id]["removed_message_count"]) == (
            want["edited_message_count"], want["removed_message_count"]), thread_id
    # The stores hold real edits and removals (with and without ids), so a loader that
    # reported none would fail too.
    assert truth["acme:web:agent"]["edited_message_count"] == 2 and truth["acme:web:agent"]["removed_message_count"] == 1
    assert truth["acme:web:overwrite"]["removed_message_count"] == 1


def test_message_events_equal_the_releases_own(loaded):
    name, _, db = loaded
    for thread_id, want in _truth(name)["threads"].items():
        got = rows(db, "SELECT checkpoint_id, event, position FROM message_events WHERE thread_id = ? ORDER BY ALL", [thread_id])
        assert [[r["checkpoint_id"], r["event"], r["position"]] for r in got] == sorted(want["events"]), thread_id


def test_transcripts_equal_the_releases_own(loaded):
    name, _, db = loaded
    for thread_id, want in _truth(name)["threads"].items():
        got = rows(db, "SELECT lc_type, content, message_id FROM messages WHERE thread_id = ? ORDER BY ordinal", [thread_id])
        assert [[r["lc_type"], r["content"], r["message_id"]] for r in got] == want["transcript"], thread_id


def test_the_current_release_agrees(loaded, tmp_path):
    """Where the current langgraph decodes the store (strict serde, tests/oracle.py), its
    transcripts and events are ours too: a second oracle, on today's decoder."""
    name, store, db = loaded
    saver = oracle.open_sqlite(shutil.copy(store, tmp_path / "copy.sqlite"))
    try:
        expected = oracle.expected_messages(saver)
        events = oracle.expected_events(saver, sorted(_truth(name)["threads"]))
    finally:
        saver.conn.close()
    got = rows(db, f"SELECT {', '.join(oracle.MESSAGE_KEYS)} FROM messages ORDER BY thread_id, ordinal")
    assert got == expected
    for thread_id, want in events.items():
        assert want["events"] == sorted(_truth(name)["threads"][thread_id]["events"]), thread_id


def test_versions_are_distinct_values(loaded):
    """A message re-written in other bytes by a newer release is one version, not two."""
    name, _, db = loaded
    dup = rows(db, """
        SELECT thread_id, count(*) AS n FROM message_versions
        GROUP BY thread_id, message_id, role, name, content, tool_calls::VARCHAR, tool_call_id
        HAVING count(*) > 1""")
    assert dup == []
