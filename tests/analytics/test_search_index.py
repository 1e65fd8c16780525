"""The search index (`analytics.search_index`, `analytics.search_grams`): a search that reads it
finds exactly what a scan of `messages` finds, over random texts of many scripts, cases and
spellings, long texts included; the fold is what RE2 and DuckDB make it; and incremental loads
and erasures keep the index right (the C signatures against their twin: tests/loaders/test_grams.py)."""

from __future__ import annotations

import collections
import datetime as dt
import unicodedata

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analytics
import transcript_lens
from analytics import search_grams, search_index
from analytics.erasure_db import rewrite_without
from analytics.frames import fetch_frame
from analytics.masking import blind_search
from analytics.search import SearchQuery, candidates, index_bits, report_sql, search_sql
from analytics.search import search as run_search
from storegen import Clock, Reply, ScriptedChatModel, build_chat_graph, open_sqlite_saver, run_scenarios, say, thread_config
from tests.analytics.dbutil import Msg, build_db

# Letters whose case pairs are unusual (ſ/s, ς/σ/Σ, K/k, µ/μ, ϑ/θ, ᲁ/д, İ/i/ı, ß/ẞ, ǅ), accents
# composed and decomposed, and scripts without spaces (CJK, Thai), emoji beyond the BMP.
ALPHABET = list("abcsSſkKKiIİıeEéÉ\u0301\u0307ßẞǅǆǄ σΣςµμΜθϑΘдДᲁжЖ日本語返金ไทยภาษา😀.-") + ["\u00a0"]
TS = dt.datetime(2025, 5, 1, tzinfo=dt.timezone.utc)


def _text(draw) -> str:
    text = draw(st.text(alphabet=ALPHABET, max_size=30))
    if draw(st.integers(0, 9)) == 0:  # over the signed length: a candidate of every search
        text = text + "x" * search_index.SIGNED_CHARS + text
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD", "NFC"])), text)


def _query(draw, texts: list[str]) -> str:
    """A piece of a stored text, its case and spelling changed at random, or any text."""
    if texts and draw(st.booleans()):
        source = draw(st.sampled_from(texts))
        lo = draw(st.integers(0, len(source)))
        piece = source[lo: lo + draw(st.integers(3, 12))]
        piece = "".join(c.swapcase() if draw(st.booleans()) and len(c.swapcase()) == 1 else c for c in piece)
        piece = unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), piece)
    else:
        piece = draw(st.text(alphabet=ALPHABET, min_size=1, max_size=8))
    return piece if piece.strip() else "abc"


def _both_ways(con, query: SearchQuery) -> tuple:
    """(indexed answer, scanned answer) of one page, with the index's candidate bits."""
    bits = index_bits(con, query)
    indexed = fetch_frame(con, *search_sql(query, bits))
    scanned = fetch_frame(con, *search_sql(query, None))
    return indexed, scanned, bits


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_indexed_search_finds_exactly_what_the_scan_finds(data):
    threads = {
        f"t{n}:web:s{n}": [Msg(data.draw(st.sampled_from(["user", "assistant"])), _text(data.draw), ts=TS + dt.timedelta(minutes=n * 10 + k))
                           for k in range(data.draw(st.integers(1, 4)))]
        for n in range(data.draw(st.integers(1, 4)))
    }
    con = build_db(None, threads)
    try:
        search_index.materialize_search_index(con)
        texts = [m.content for msgs in threads.values() for m in msgs]
        for _ in range(4):
            query = SearchQuery(_query(data.draw, texts), speaker=data.draw(st.sampled_from(["all", "user"])), limit=100)
            indexed, scanned, bits = _both_ways(con, query)
            if all(len(s) >= 3 for s in {query.text, unicodedata.normalize("NFD", query.text)}):
                assert bits, query.text  # (the index was read)
            assert indexed.equals(scanned), (query.text, indexed, scanned)
            reports = [fetch_frame(con, *report_sql(query, b)) for b in (bits, None)]
            assert reports[0].equals(reports[1]), query.text
    finally:
        con.close()


def test_case_pairs_and_spellings_are_found_through_the_index():
    texts = ["Ο Σίσυφος ρωτά", "STRAẞE und ſtraße", "İSTANBUL mağazası", unicodedata.normalize("NFD", "Le Café fermé"),
             "µ-metal 返金をお願いします", "ไทยภาษาไทย", "kelvin 5 K"]
    threads = {**{f"a:b:s{i}": [Msg("user", t, ts=TS)] for i, t in enumerate(texts)},
               "f:f:f": [Msg("assistant", f"filler line {n}", ts=TS) for n in range(40)]}
    con, plain = build_db(None, threads), build_db(None, threads)
    try:
        search_index.materialize_search_index(con)
        for text, expected in [("ΣΊΣΥΦΟΣ", 1), ("strasse", 0), ("STRASSE", 0), ("straße", 1), ("STRAẞE", 1),
                               ("istanbul", 1), ("café", 1), ("CAFÉ FERMÉ", 1), ("μ-METAL", 1), ("をお願い", 1),
                               ("ภาษา", 1), ("5 k", 1), ("KELVIN 5 k", 1), ("返金", 1), ("金を", 1), ("金返", 0),
                               ("filler", 40)]:
            indexed, scanned, bits = _both_ways(con, SearchQuery(text))
            assert bits, text
            assert indexed["total"].iloc[0] == scanned["total"].iloc[0] == expected, text
            answer, scanning = run_search(con, text), run_search(plain, text)  # (plain: no index)
            assert (answer.total, answer.threads) == (scanning.total, scanning.threads), text
            assert answer.hits.equals(scanning.hits), text
        # the index narrows: a rare text has one candidate, a text nobody wrote almost none
        assert candidates(con, index_bits(con, SearchQuery("Sisyphos-Quokka")))[0] <= 1
        assert candidates(con, index_bits(con, SearchQuery("ΣΊΣΥΦΟΣ"))) == (1, 47)
    finally:
        con.close()
        plain.close()


def test_a_long_text_and_its_neighbours_are_candidates_of_every_search_and_found_past_the_signed_length():
    tail = "x" * search_index.SIGNED_CHARS + " the Quokka-Rückerstattung is here"
    con = build_db(None, {"a:b:s1": [Msg("user", tail, ts=TS)], "a:b:s2": [Msg("user", "short text", ts=TS)]})
    try:
        search_index.materialize_search_index(con)
        rows = con.execute(f"SELECT thread_id, g0, g1, g2, g3 FROM {search_index.TABLE} ORDER BY thread_id").fetchall()
        # (the short text may share the long one's scan vector: it is not read either)
        assert [r[1:] for r in rows] == [((1 << 64) - 1,) * 4] * 2
        indexed, scanned, bits = _both_ways(con, SearchQuery("quokka-RÜCKERSTATTUNG"))
        assert bits and indexed.equals(scanned) and list(indexed["thread_id"]) == ["a:b:s1"]
        assert run_search(con, "zebra crossing").total == 0 and candidates(con, index_bits(con, SearchQuery("zebra"))) == (2, 2)
    finally:
        con.close()


def test_the_rows_a_vector_may_share_with_a_long_text_are_not_read():
    assert search_index._stretches([5000], 9999) == [(0, 5000 - search_index.VECTOR_ROWS), (5000 + search_index.VECTOR_ROWS, 9999)]
    assert search_index._stretches([0, 1, 3000], 10_000) == [(3000 + search_index.VECTOR_ROWS, 10_000)]
    assert search_index._stretches([9999], 9999) == [(0, 9999 - search_index.VECTOR_ROWS)]


def test_a_masking_connection_searches_the_index_with_its_barrier():
    con = build_db(None, {"a:b:s1": [Msg("user", "mail me at dana.scully@fbi.example.org today", ts=TS)]})
    try:
        search_index.materialize_search_index(con)
        blind_search(con)
        for text in ("mail me at", "scully@fbi", "fbi.example"):
            indexed, scanned, bits = _both_ways(con, SearchQuery(text))
            assert bits and indexed.equals(scanned), text
        assert _both_ways(con, SearchQuery("scully@fbi"))[0]["total"].iloc[0] == 0
        assert _both_ways(con, SearchQuery("mail me at"))[0]["total"].iloc[0] == 1
    finally:
        con.close()


def _re2_orbits(con) -> tuple[list[str], dict[str, str], dict[str, set[str]]]:
    """(every cased character, DuckDB's lower() of each, the characters a case-insensitive RE2
    match pairs with each — and i, I, İ, which the search pattern pairs)."""
    def maps(c):
        return {x for x in (c.lower(), c.upper(), c.casefold(), c.title()) if len(x) == 1}

    cased = {chr(cp): maps(chr(cp)) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and maps(chr(cp)) - {chr(cp)}}
    chars = sorted(set(cased) | {x for m in cased.values() for x in m} | set("iIİ"))
    low = dict(con.execute("SELECT c, lower(c) FROM unnest(?::VARCHAR[]) t(c)", [chars]).fetchall())
    up = dict(con.execute("SELECT c, upper(c) FROM unnest(?::VARCHAR[]) t(c)", [chars]).fetchall())
    linked = collections.defaultdict(set)
    for c in chars:
        for x in cased.get(c, set()) | {low[c], up[c]}:
            if len(x) == 1:
                linked[c].add(x)
                linked[x].add(c)
    component: dict[str, set[str]] = {}
    for c in chars:
        if c not in component:
            seen, todo = {c}, [c]
            while todo:
                for z in linked[todo.pop()] - seen:
                    seen.add(z)
                    todo.append(z)
            for y in seen:
                component[y] = seen
    pairs = [(c, x) for c in chars for x in component[c]]
    rows = con.execute(
        "SELECT c, x FROM (SELECT unnest(?::VARCHAR[]) c, unnest(?::VARCHAR[]) x, unnest(?::VARCHAR[]) p) "
        "WHERE regexp_full_match(x, '(?i)' || p)",
        [[c for c, _ in pairs], [x for _, x in pairs], ["\\x{%X}" % ord(c) for c, _ in pairs]]).fetchall()
    orbit = collections.defaultdict(set)
    for c, x in rows:
        orbit[c].add(x)
    for c in "iIİ":
        orbit[c] |= set("iIİ")
    return chars, low, orbit


def test_every_pair_a_case_insensitive_match_makes_folds_to_one_character():
    con = duckdb.connect()
    chars, low, orbit = _re2_orbits(con)
    fold = lambda c: search_grams.FOLD.get(low[c], low[c])  # noqa: E731
    assert all(len(low[c]) == 1 for c in chars)  # lower() maps one character to one
    assert [c for c in chars if {fold(x) for x in orbit[c]} != {fold(c)}] == []
    # and FOLD holds nothing more than that needs: each entry joins two lower-case forms of one orbit
    for variant, letter in search_grams.FOLD.items():
        assert any(variant in {low[x] for x in orbit[c]} and letter in {low[x] for x in orbit[c]} for c in chars)


# --- kept right by loads and erasures --------------------------------------------------------

START = dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)


def _store(path, threads: dict[str, str]) -> None:
    saver = open_sqlite_saver(str(path))
    try:
        run_scenarios(saver, ["simple_chat"], threads=threads, start=START)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


def _say(path, thread_id: str, text: str, reply: str) -> None:
    saver = open_sqlite_saver(str(path))
    try:
        graph = build_chat_graph(ScriptedChatModel(replies=[Reply(reply)]), saver)
        with Clock(START + dt.timedelta(days=3)) as clock:
            say(graph, thread_config(thread_id), text, clock)
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        saver.conn.close()


def _index_rows(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert search_index.current(con)
        return con.execute(f"SELECT * FROM {search_index.TABLE} ORDER BY thread_id, ordinal").fetchall()
    finally:
        con.close()


def _found(db, text: str) -> set[tuple[str, int]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        query = SearchQuery(text, limit=1000)
        indexed, scanned, bits = _both_ways(con, query)
        assert bits and indexed.equals(scanned)
        return {(r.thread_id, r.ordinal) for r in indexed.dropna(subset=["thread_id"]).itertuples()}
    finally:
        con.close()


def test_an_incremental_load_rewrites_the_replaced_threads_rows(tmp_path):
    store, db, full = tmp_path / "src.sqlite", tmp_path / "inc.duckdb", tmp_path / "full.duckdb"
    _store(store, {f"acme:web:s{i}": "simple_chat" for i in range(3)})
    transcript_lens.load(store, db, workers=1)
    assert _found(db, "Quokka-Rückerstattung") == set()

    _say(store, "acme:web:s1", "Where is my QUOKKA-RÜCKERSTATTUNG?", "Your quokka-rückerstattung is on its way.")
    _store(store, {"zeta:web:s9": "simple_chat"})
    assert transcript_lens.load(store, db, incremental=True).changed == 2
    transcript_lens.load(store, full, workers=1)
    assert _index_rows(db) == _index_rows(full)
    hits = _found(db, "Quokka-Rückerstattung")
    assert len(hits) == 2 and {t for t, _ in hits} == {"acme:web:s1"}
    assert run_search(str(db), "quokka-rückerstattung").total == 2


def test_an_erasure_removes_the_threads_index_rows(tmp_path):
    store, db = tmp_path / "src.sqlite", tmp_path / "lens.duckdb"
    _store(store, {f"acme:web:s{i}": "simple_chat" for i in range(2)})
    _say(store, "acme:web:s0", "My wombat-number is 31337", "Noted your wombat-number.")
    transcript_lens.load(store, db, workers=1)
    assert {t for t, _ in _found(db, "wombat-number")} == {"acme:web:s0"}

    rewrite_without(db, ["acme:web:s0"])
    assert [r for r in _index_rows(db) if r[0] == "acme:web:s0"] == []
    assert _found(db, "wombat-number") == set()
    assert {r[0] for r in _index_rows(db)} == {"acme:web:s1"}


def test_a_tenant_scope_reads_its_own_rows_of_the_index(tmp_path):
    db = tmp_path / "two.duckdb"
    con = build_db(db, {"acme:web:s1": [Msg("user", "acme wants a refund", ts=TS)],
                        "globex:web:s2": [Msg("user", "globex wants a refund too", ts=TS)]})
    search_index.materialize_search_index(con)
    con.close()
    scoped = analytics.connect(db, tenants=["acme"])
    try:
        indexed, scanned, bits = _both_ways(scoped, SearchQuery("refund"))
        assert bits and indexed.equals(scanned)
        assert list(indexed["thread_id"]) == ["acme:web:s1"]
    finally:
        scoped.close()
    other = analytics.connect(db, tenants=["globex"])
    try:
        assert run_search(other, "refund").hits["thread_id"].tolist() == ["globex:web:s2"]
    finally:
        other.close()


def test_an_index_written_by_other_code_is_not_read(tmp_path):
    con = build_db(None, {"a:b:s1": [Msg("user", "a refund please", ts=TS)]})
    try:
        search_index.materialize_search_index(con)
        assert index_bits(con, SearchQuery("refund"))
        con.execute(f"COMMENT ON TABLE {search_index.TABLE} IS 'search_index sha256:0000'")
        con.execute(f"UPDATE {search_index.TABLE} SET g0 = 0, g1 = 0, g2 = 0, g3 = 0")  # (wrong bits: must not matter)
        assert index_bits(con, SearchQuery("refund")) is None
        assert run_search(con, "refund").total == 1
    finally:
        con.close()
