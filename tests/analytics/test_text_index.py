"""The load-time text index (`analytics.text_index`, table `search_text`): a search through it
answers exactly as the scan of every message, in every script, case and accent form; it is kept
so by incremental loads and erasures; and it is used (a doctored signature hides a message)."""

from __future__ import annotations

import datetime as dt
import unicodedata

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analytics
import transcript_lens
from analytics import text_index
from analytics.db import only_threads
from analytics.erasure.db import delete_threads
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.searching import SearchQuery, search, search_sql
from analytics.text_match import register_search_functions
from loaders.catalog import TABLES as LOADER_TABLES
from storegen.build import open_sqlite_saver
from storegen.clock import Clock
from storegen.graphs import build_chat_graph
from storegen.models import Reply, ScriptedChatModel
from storegen.scenarios import say, thread_config

# Words of several scripts, with the characters whose case classes hold more than two
# (ſ/s/S, ς/σ/Σ, ϑ/θ/Θ, K/k/Kelvin sign), ß/ẞ, İ, and accents to store composed or decomposed.
WORDS = ["Rückerstattung", "straße", "STRAẞE", "Σίσυφος", "ΣΊΣΥΦΟΣ", "İstanbul", "ırmak", "返金手続き", "สวัสดีครับ",
         "Привет", "café", "Ærø", "ϑεός", "ſoft", "\u212aelvin", "A-1043", "(1.5)", "50%", "Ö-77", "refund", "e"]
SEPARATORS = [" ", ", ", "-", "\n", "", ". ", " — "]


def _spelled(draw, text: str) -> str:
    case = draw(st.sampled_from(["as", "upper", "lower", "swap"]))
    text = {"as": text, "upper": text.upper(), "lower": text.lower(), "swap": text.swapcase()}[case]
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), text)


@st.composite
def corpora(draw):
    """Threads of messages made of the words above, each word in a drawn case and accent form."""
    threads = []
    for t in range(draw(st.integers(1, 4))):
        messages = []
        for _ in range(draw(st.integers(1, 4))):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=5))
            seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
            messages.append("".join(_spelled(draw, w) + s for w, s in zip(words, seps)) or None)
        threads.append((f"t{t}", messages))
    return threads


def _database(threads) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'").fetchall()
    register_search_functions(con)  # (the search SQL names it, as on every connection analytics opens)
    for table in LOADER_TABLES:  # (empty but for messages: `only_threads` narrows every one)
        if table.name != "threads":
            con.execute(f"CREATE TABLE {table.name} ({', '.join(c.ddl() for c in table.columns)})").fetchall()
    con.execute("CREATE TABLE threads (thread_id VARCHAR NOT NULL)").fetchall()  # (all a text filter reads)
    _insert(con, threads)
    return con


def _insert(con, threads) -> None:
    base = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    for thread, messages in threads:
        con.execute("INSERT INTO threads (thread_id) VALUES (?)", [thread]).fetchall()
        for i, content in enumerate(messages):
            con.execute(
                "INSERT INTO messages (thread_id, ordinal, role, ts, content, content_chars) VALUES (?, ?, ?, ?, ?, ?)",
                [thread, i, "user" if i % 2 == 0 else "assistant", base + dt.timedelta(minutes=i), content,
                 None if content is None else len(content)],
            ).fetchall()


def _answer(con, query: SearchQuery, indexed: bool):
    grams = text_index.grams_where(query.text) if indexed else None
    frame = fetch_frame(con, *search_sql(query, grams))
    rows = frame[frame["thread_id"].notna()]
    total = int(frame["total"].iloc[0])
    threads = int(frame["threads"].iloc[0])
    return total, threads, sorted(zip(rows["thread_id"], rows["ordinal"].astype(int)))


def _filtered(con, text: str, indexed: bool) -> set[str]:
    filters = Filters(text=text)
    where, params = filters.thread_where("t", text_index.grams_where(text) if indexed else None)
    return {r[0] for r in con.execute(f"SELECT t.thread_id FROM threads t WHERE {where}", params).fetchall()}


@st.composite
def queries(draw, threads):
    """A piece of a stored message (across words and punctuation), or a word, in a drawn spelling."""
    texts = [m for _, ms in threads for m in ms if m]
    if texts and draw(st.booleans()):
        text = unicodedata.normalize("NFC", draw(st.sampled_from(texts)))
        start = draw(st.integers(0, max(0, len(text) - 1)))
        piece = text[start: draw(st.integers(start + 1, max(start + 1, min(len(text), start + 14))))]
    else:
        piece = draw(st.sampled_from(WORDS))
    piece = _spelled(draw, piece)
    return piece if piece.strip() else "refund"


def _same_answers(con, threads, data) -> None:
    for _ in range(3):
        text = data.draw(queries(threads))
        for speaker in ("all", "user"):
            query = SearchQuery(text, speaker=speaker, limit=1000)
            assert _answer(con, query, True) == _answer(con, query, False), (text, speaker)
        assert _filtered(con, text, True) == _filtered(con, text, False), text


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(threads=corpora(), data=st.data())
def test_a_search_through_the_index_answers_as_the_scan(threads, data):
    con = _database(threads)
    try:
        text_index.materialize_text_index(con)
        _same_answers(con, threads, data)
    finally:
        con.close()


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(threads=corpora(), changed=corpora(), data=st.data())
def test_an_incremental_rewrite_and_an_erasure_keep_the_index_equal_to_the_scan(threads, changed, data):
    con = _database(threads)
    try:
        text_index.materialize_text_index(con)
        # Replace some threads (and add new ones), as an incremental load does, and rewrite their rows.
        ids = [t for t, _ in changed]
        for table in ("messages", "threads"):
            con.execute(f"DELETE FROM {table} WHERE thread_id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()
        _insert(con, changed)
        with only_threads(con, ids):
            text_index.materialize_text_index(con, ids)
        kept = {t: ms for t, ms in threads} | {t: ms for t, ms in changed}
        _same_answers(con, list(kept.items()), data)
        whole = con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall()
        text_index.materialize_text_index(con)
        assert con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall() == whole
        # An erasure removes the thread's entries with its messages.
        erased = data.draw(st.sampled_from(sorted(kept)))
        delete_threads(con, [erased])
        assert con.execute("SELECT count(*) FROM search_text WHERE thread_id = ?", [erased]).fetchall() == [(0,)]
        del kept[erased]
        _same_answers(con, list(kept.items()), data)
    finally:
        con.close()


def test_the_index_is_what_the_search_reads():
    """A message whose signature is doctored to hold no bit is not found through the index, and
    is found by the scan: the search does go through `search_text`."""
    con = _database([("t0", ["I want a REFUND please", "refund done"]), ("t1", ["nothing here"])])
    try:
        text_index.materialize_text_index(con)
        query = SearchQuery("refund", limit=10)
        assert _answer(con, query, True)[0] == 2
        con.execute("UPDATE search_text SET grams = 0 WHERE ordinal = 0").fetchall()
        assert _answer(con, query, True)[0] == 1
        assert _answer(con, query, False)[0] == 2
        # and `search` itself takes the index when it is current (and not when it is not).
        con.execute(f"COMMENT ON TABLE search_text IS '{text_index.fingerprint()}'").fetchall()
        assert search(con, query).total == 1
        assert _filtered(con, "refund", True) == {"t0"}
        con.execute("COMMENT ON TABLE search_text IS 'search_text sha256:other'").fetchall()
        assert search(con, query).total == 2
    finally:
        con.close()


def test_a_text_under_three_characters_reads_every_message():
    assert text_index.masks("ab") is None and text_index.masks("é") is None
    assert text_index.grams_where("abc") is not None


def _cased_characters() -> list[str]:
    con = duckdb.connect()
    try:
        chars = [chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000]
        rows = con.execute("SELECT c, lower(c), upper(c) FROM (SELECT unnest(?::VARCHAR[]) AS c) "
                           "WHERE lower(c) <> c OR upper(c) <> c", [chars]).fetchall()
    finally:
        con.close()
    found = {x for row in rows for x in row if len(x) == 1}
    for c in chars:
        for other in (c.lower(), c.upper(), c.casefold(), c.title()):
            if other != c:
                found.add(c)
                found.update(o for o in [other] if len(o) == 1)
    return sorted(found)


def test_the_fold_is_one_character_for_every_class_re2_matches_alike():
    """For every cased character, each character DuckDB's RE2 matches it with under `(?i)` (and
    the `[iIİ]` of `text_match`) folds to the same character: a message holding a text always
    holds the text's trigrams."""
    cased = _cased_characters()
    every = "".join(cased)
    special = set("\\.^$|?*+()[]{}")
    con = duckdb.connect()
    try:
        classes = con.execute(
            "SELECT c, regexp_extract_all(?, '(?i)' || p) FROM (SELECT unnest(?::VARCHAR[]) AS c, unnest(?::VARCHAR[]) AS p)",
            [every, cased, ["\\" + c if c in special else c for c in cased]],
        ).fetchall()
    finally:
        con.close()
    split = {c: sorted(alike) for c, alike in classes if len({text_index.fold(a) for a in alike}) > 1}
    assert not split
    assert {text_index.fold(c) for c in "iIİ"} == {"i"}


# --- the index a real load writes ------------------------------------------------------------

START = dt.datetime(2025, 4, 1, 9, 0, tzinfo=dt.timezone.utc)


def _write(store, chats) -> None:
    saver = open_sqlite_saver(store)
    try:
        for i, (thread, turns) in enumerate(chats.items()):
            model = ScriptedChatModel(replies=[Reply(reply) for _, reply in turns])
            with Clock(START + dt.timedelta(hours=i)) as clock:
                graph = build_chat_graph(model, saver)
                for question, _ in turns:
                    say(graph, thread_config(thread), question, clock, think=30)
    finally:
        saver.conn.close()


def _index_rows(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall()
    finally:
        con.close()


def test_full_and_incremental_loads_write_the_index_and_an_erasure_leaves_none_of_the_thread(tmp_path):
    store = tmp_path / "s.sqlite"
    _write(store, {"de:web:s1": [("Ich möchte eine RÜCKERSTATTUNG.", "Die Rückerstattung ist unterwegs.")],
                   "el:web:s2": [("Ο Σίσυφος ρωτά.", "ΣΊΣΥΦΟΣ!")]})
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(str(store), db)
    assert search(db, "rückerstattung").total == 2
    # New turns and a new thread, loaded incrementally: the index equals a full load's.
    _write(store, {"de:web:s1": [("Noch eine Frage zur Rückerstattung", "Gern.")],
                   "fr:web:s3": [(unicodedata.normalize("NFD", "Le café"), "Le CAFÉ est fermé.")]})
    transcript_lens.load(str(store), db, incremental=True)
    full = tmp_path / "full.duckdb"
    transcript_lens.load(str(store), full)
    assert _index_rows(db) == _index_rows(full)
    con = analytics.connect(db)
    try:
        assert text_index.current(con)
    finally:
        con.close()
    assert search(db, "RÜCKERSTATTUNG").total == 3 and search(db, "café").total == 2
    erased = analytics.erase(db, thread="de:web:s1", reason="test", by="tester")
    assert erased.rows.get("search_text") and erased.proven
    assert not [r for r in _index_rows(db) if r[0] == "de:web:s1"]
    assert search(db, "rückerstattung").total == 0 and search(db, "Σίσυφος").total == 2


def test_signatures_signed_in_windows_and_batches_equal_one_pass(monkeypatch):
    """A store's texts are signed a few at a time and a long text a window at a time, and read a
    batch of characters at a time (a long thread in parts): the rows are those of one pass over
    everything, windows cut inside words and next to characters of two to four bytes."""
    long = "Rückerstattung 返金手続き 𝔘𝔫𝔦 ΣΊΣΥΦΟΣ refund. " * 40
    threads = [("t0", ["I want a REFUND please", None, long, "ok"]), ("t1", [long[3:], "e", "Straße"]),
               ("t2", ["x" * 50, "ab"]), ("t3", [long] * 5)]
    con = _database(threads)
    try:
        text_index.materialize_text_index(con)
        whole = con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall()
        assert len(whole) == sum(1 for _, ms in threads for m in ms if m is not None)
        for sign_bytes, batch_chars in ((4, 3), (7, 40), (33, 5_000)):
            monkeypatch.setattr(text_index, "SIGN_BYTES", sign_bytes)
            monkeypatch.setattr(text_index, "BATCH_CHARS", batch_chars)
            text_index.materialize_text_index(con)
            assert con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall() == whole
            with only_threads(con, ["t3", "t0"]):
                text_index.materialize_text_index(con, ["t3", "t0"])
            assert con.execute("SELECT * FROM search_text ORDER BY thread_id, ordinal").fetchall() == whole
        contents = [m for _, ms in threads for m in ms if m is not None]
        monkeypatch.setattr(text_index, "SIGN_BYTES", 5)
        assert [tuple(map(int, s)) for s in zip(*text_index.signatures(contents))] == [
            tuple(map(int, s)) for s in zip(*text_index._signed(*_one_pass(contents)))]
    finally:
        con.close()


def _one_pass(texts):
    """Every text's characters and lengths, for `_signed` over all of them at once."""
    import numpy as np

    cps = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    return cps, np.array([len(t) for t in texts], np.int64)


def test_a_parquet_dataset_has_no_index_and_searches_it_as_the_file(tmp_path):
    """A dataset (`--format parquet`) writes no `search_text`, neither in its working database nor
    in its version (Parquet has no 128-bit integer), and its searches scan: the same answers."""
    from loaders import dataset

    store = tmp_path / "s.sqlite"
    _write(store, {"de:web:s1": [("Ich möchte eine RÜCKERSTATTUNG.", "Die Rückerstattung ist unterwegs.")],
                   "el:web:s2": [("Ο Σίσυφος ρωτά.", "ΣΊΣΥΦΟΣ!")]})
    folder, db = tmp_path / "lens", tmp_path / "lens.duckdb"
    transcript_lens.load(str(store), folder, format="parquet")
    transcript_lens.load(str(store), db)
    assert "search_text" not in dataset.table_sources(folder)
    work = duckdb.connect(str(folder / dataset.WORK_DB), read_only=True)
    try:
        assert not work.execute("SELECT * FROM duckdb_tables() WHERE table_name = 'search_text'").fetchall()
    finally:
        work.close()
    for text in ("rückerstattung", "Σίσυφος", "unterwegs"):
        on_file, on_dataset = search(db, text), search(folder, text)
        assert on_dataset.total == on_file.total > 0
        assert list(on_dataset.hits["ordinal"]) == list(on_file.hits["ordinal"])
