"""The loader's fast paths give exactly what the plain paths give.

- `bundles.fast_checkpoint` (the common case in a few checks) against
  `decode_checkpoint_row` (every check, every error message), on a real store;
- `records.Payloads` (common prefix by equality, then a lookup) against plain
  first-seen numbering;
- the transform's renumbering when checkpoint ids and timestamps disagree.
"""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from loaders import bundles
from loaders.sqlite import reader as sqlite_reader
from loaders.catalog import MESSAGE_VERSIONS, MESSAGES
from loaders.decode import decode_typed
from loaders.messages import decode_message
from loaders.records import Payloads, RawCheckpoint, ThreadBundle
from loaders.thread_keys import compile_thread_key
from loaders.transform.events import list_events
from loaders.transform.thread import transform_thread
from loaders.transform.timestamps import ts_micros
from tests.loaders.util import assert_same_tables, edited_store, load_db

def test_fast_checkpoint_path_equals_the_full_path(sqlite_store, tmp_path, monkeypatch):
    # Rows through the sqlite3 cursor, so that each goes through `fast_checkpoint` (the C row
    # source makes the same RawCheckpoints itself: tests/loaders/test_rows.py holds it to this path).
    monkeypatch.setattr(sqlite_reader, "native_rows", None)
    fast_db, full_db = tmp_path / "fast.duckdb", tmp_path / "full.duckdb"
    real = bundles.fast_checkpoint
    taken = []

    def counting(row, payloads, limit=None):
        cp = real(row, payloads, limit)
        taken.append(cp is not None)
        return cp

    monkeypatch.setattr(bundles, "fast_checkpoint", counting)
    load_db(sqlite_store.path, fast_db, workers=1)
    # The test means something only if the fast path carried the real store.
    assert len(taken) > 100 and sum(taken) / len(taken) > 0.95

    monkeypatch.setattr(bundles, "fast_checkpoint", lambda row, payloads, limit=None: None)
    load_db(sqlite_store.path, full_db, workers=1)
    assert_same_tables(fast_db, full_db, with_errors=True)


payload = st.one_of(st.sampled_from([b"a", b"b", b"c", b"d", b"e"]), st.sampled_from([{"role": "user"}, {"role": "x"}]))


@given(st.lists(st.lists(payload, max_size=8), max_size=12))
def test_payload_numbering_is_plain_first_seen_numbering(lists):
    table = Payloads()
    reference: list = []
    for items in lists:
        expected = []
        for item in items:
            if item not in reference:
                reference.append(item)
            expected.append(reference.index(item))
        assert table.versions(items).tolist() == expected
    assert table.items == reference


def _payload(message) -> bytes:
    """A message as a SqliteSaver writes it, up to the raw ext-5 payload the reader keeps."""
    type_, data = JsonPlusSerializer().dumps_typed({"messages": [message]})
    return decode_typed(type_, data)["messages"][0]


def test_versions_follow_timestamps_when_checkpoint_ids_disagree():
    """A later checkpoint id with an earlier ts (a skewed writer): versions, first
    sightings and ts follow the timestamps, not the order the reader met them in."""
    a, b = _payload(HumanMessage("first asked", id="A")), _payload(AIMessage("answer", id="B"))
    table = Payloads()
    ts1, ts2 = "2025-01-01T10:00:00+00:00", "2025-01-01T09:00:00+00:00"
    c1 = RawCheckpoint("t", "", "1", None, ts1, table.versions([a]), metadata="{}")
    c2 = RawCheckpoint("t", "", "2", "1", ts2, table.versions([b, a]), metadata="{}")
    assert c1.messages.tolist() == [0] and c2.messages.tolist() == [1, 0]  # the reader's numbering, by id
    out = transform_thread(ThreadBundle("t", [c1, c2], payloads=table.items), compile_thread_key(None))

    at = MESSAGE_VERSIONS.names.index
    # version → id, first checkpoint, first ts
    versions = {r[1]: (r[2], r[at("first_checkpoint_id")], r[at("first_ts")]) for r in out.message_versions}
    assert versions == {0: ("B", "2", ts_micros(ts2)), 1: ("A", "2", ts_micros(ts2))}
    lists = {r[2]: r[9].tolist() for r in out.checkpoints}
    assert lists == {"1": [1], "2": [0, 1]}
    col = MESSAGES.names.index
    transcript = [(r[col("ordinal")], r[col("message_id")], r[col("ts")], r[col("version")]) for r in out.messages]
    assert transcript == [(0, "B", ts_micros(ts2), 0), (1, "A", ts_micros(ts2), 1)]
    assert ts_micros(ts2) == int(dt.datetime(2025, 1, 1, 9, tzinfo=dt.timezone.utc).timestamp()) * 1_000_000



_POOL = [_payload(cls(text, id=mid)) for cls, text, mid in [
    (HumanMessage, "hi", "h1"), (AIMessage, "hello", "a1"), (HumanMessage, "more", "h2"),
    (AIMessage, "answer", "a2"), (AIMessage, "answer, edited", "a2"), (HumanMessage, "no id", None),
]]


def _events_from_scratch(lists: dict[str, list[int]], parents: dict[str, str | None], payloads: list) -> list[tuple]:
    """Each checkpoint against its parent, every id set built anew (what the chained sets must give)."""
    decoded = [decode_message(p) for p in payloads]
    ident_of = [m.message_id if m.message_id is not None else ("version", v) for v, m in enumerate(decoded)]
    events = []
    for cid in sorted(lists):
        cur = lists[cid]
        prev = lists[parents[cid]] if parents[cid] is not None else []
        if cur == prev:
            continue
        n = len(prev)
        if len(cur) >= n and cur[:n] == prev and not {ident_of[v] for v in cur[n:]} & {ident_of[v] for v in prev}:
            found = [("added", decoded[v].message_id, i, v, None) for i, v in enumerate(cur[n:], start=n)]
        else:
            found = list_events(prev, cur, decoded, ident_of)
        events += [(cid, parents[cid], *e) for e in found]
    return events


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, len(_POOL) - 1), max_size=6), st.booleans()), min_size=1, max_size=10))
def test_history_events_equal_each_checkpoint_diffed_against_its_parent_from_scratch(steps):
    """Appends, edits, removals, repeated ids and forks in any mix: the events the
    transform derives while carrying one id set along a chain equal a fresh diff of
    every checkpoint against its parent."""
    table = Payloads()
    cps, parents, lists = [], {}, {}
    for i, (back, picks, append) in enumerate(steps):
        cid = f"{i:03d}"
        parent = None if i == 0 else f"{max(0, i - 1 - back):03d}"
        chosen = (lists[parent] if parent is not None and append else []) + picks
        lists[cid], parents[cid] = chosen, parent
        versions = table.versions([_POOL[p] for p in chosen])
        cps.append(RawCheckpoint("t", "", cid, parent, f"2025-01-01T10:{i:02d}:00+00:00", versions, metadata="{}"))
    out = transform_thread(ThreadBundle("t", cps, payloads=table.items), compile_thread_key(None))
    # Timestamps follow ids here, so the transform keeps the reader's numbering.
    numbered = {r[2]: r[9].tolist() for r in out.checkpoints}
    got = [(r[1], r[2], r[4], r[5], r[6], r[7], r[8]) for r in out.message_events]
    assert got == _events_from_scratch(numbered, parents, table.items)
    assert any(e[2] == "added" for e in got) or not any(lists.values())

    # Nor do the rows depend on the order a reader hands the checkpoints over in
    # (the transform skips its sorts when they arrive in id and time order).
    shuffled = transform_thread(ThreadBundle("t", cps[::-1], payloads=table.items), compile_thread_key(None))
    for name in ("checkpoints", "messages", "message_versions", "message_events", "threads"):
        assert _comparable(getattr(shuffled, name)) == _comparable(getattr(out, name)), name


def _comparable(rows: list[tuple]) -> list[tuple]:
    return sorted((tuple(v.tolist() if hasattr(v, "tolist") else v for v in r) for r in rows), key=repr)


def _bundles(path, fast: bool, monkeypatch, c_rows: bool = False) -> tuple[list[ThreadBundle], list]:
    """Every bundle a reader hands over, and the `after` of each `threads_after` pass it made:
    rows through the sqlite3 cursor (whose text decoder `FAST_TEXT` is), or the C row source."""
    passes = []
    real = sqlite_reader.SqliteReader.threads_after

    def recording(self, only, after):
        passes.append(after)
        return real(self, only, after)

    with monkeypatch.context() as m:
        if not c_rows:
            m.setattr(sqlite_reader, "native_rows", None)
        m.setattr(sqlite_reader, "FAST_TEXT", fast)
        m.setattr(sqlite_reader.SqliteReader, "threads_after", recording)
        reader = sqlite_reader.SqliteSource().open(str(path), sqlite_reader.SourceOptions())
        try:
            return list(reader.threads()), passes
        finally:
            reader.close()


def _edited(sqlite_store, copy_store, tmp_path, *statements):
    return edited_store(sqlite_store.path, tmp_path, *statements)


def test_text_not_utf8_mid_store_restarts_after_the_last_thread(sqlite_store, copy_store, tmp_path, monkeypatch):
    # A bad namespace in a thread in the middle, a bad special write's task id in another:
    # the fast decoder stops there, the read goes on with `_text` after the last thread handed over.
    ids = sorted(sqlite_store.manifest)
    bad_ns, bad_write = ids[len(ids) // 2], ids[-2]
    path = _edited(
        sqlite_store, copy_store, tmp_path,
        ("UPDATE checkpoints SET checkpoint_ns = CAST(X'ff' AS TEXT) WHERE thread_id = ? AND checkpoint_id = "
         "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?)", [bad_ns, bad_ns]),
        ("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES (?, '', (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?), "
         "CAST(X'fe41' AS TEXT), 0, '__interrupt__', 'msgpack', X'a178')", [bad_write, bad_write]),
    )
    fast, passes = _bundles(path, True, monkeypatch)
    plain, plain_passes = _bundles(path, False, monkeypatch)
    assert fast == plain
    assert plain_passes == [None]
    assert passes == [None, ids[ids.index(bad_ns) - 1]]  # restarted once, after the thread before the bad one
    if sqlite_reader.native_rows is not None:  # (C reads such text as the reader's text factory does)
        assert _bundles(path, True, monkeypatch, c_rows=True)[0] == plain
    assert any("checkpoint_ns is not valid UTF-8" in e.reason for b in fast for e in b.errors)


def test_text_not_utf8_after_a_blob_thread_id_restarts_after_it(sqlite_store, copy_store, tmp_path, monkeypatch):
    # BLOB ids sort after every text id; the read starts again after the last thread
    # handed over, a BLOB id bound as a BLOB (any SQLite value is a restart position).
    first, second = sorted(sqlite_store.manifest)[:2]
    path = _edited(
        sqlite_store, copy_store, tmp_path,
        ("UPDATE checkpoints SET thread_id = X'01' WHERE thread_id = ?", [first]),
        ("UPDATE checkpoints SET thread_id = X'02' WHERE thread_id = ?", [second]),
        ("UPDATE checkpoints SET thread_id = X'03', checkpoint_ns = CAST(X'ff' AS TEXT) WHERE thread_id = "
         "(SELECT max(thread_id) FROM checkpoints WHERE typeof(thread_id) = 'text')", []),
    )
    fast, passes = _bundles(path, True, monkeypatch)
    plain, _ = _bundles(path, False, monkeypatch)
    assert fast == plain
    # (x'02' is not handed over when the error comes: reading on to find its end met x'03'.)
    assert passes == [None, b"\x01"]
    if sqlite_reader.native_rows is not None:
        assert _bundles(path, True, monkeypatch, c_rows=True)[0] == plain
    assert [b.thread_id for b in fast].count("x'01'") == 1


def test_a_thread_generator_outliving_its_reader_closes_cleanly(sqlite_store):
    # A load that fails mid-read closes the reader first; the generator is closed later (or by GC).
    reader = sqlite_reader.SqliteSource().open(str(sqlite_store.path), sqlite_reader.SourceOptions())
    threads = reader.threads()
    next(threads)
    reader.close()
    threads.close()  # raised AttributeError when resetting the text factory of the closed connection
