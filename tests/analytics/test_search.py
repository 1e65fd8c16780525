"""`analytics.search` on a store of real graphs speaking several languages: case, scripts,
decomposed accents, final sigma, speakers, tool arguments, filters and paging, each against a
plain Python scan of the transcripts."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import unicodedata

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analytics
import transcript_lens
from analytics.errors import BadRequest
from analytics.reporting.writer import report_frame
from analytics.searching import SearchQuery, search, snippet
from storegen.build import open_sqlite_saver
from storegen.clock import Clock
from storegen.graphs import build_agent_graph, build_chat_graph
from storegen.models import Reply, ScriptedChatModel
from storegen.scenarios import say, thread_config
from storegen.tools import SUPPORT_TOOLS

CHATS = {
    "de:web:s1": [("Ich möchte eine RÜCKERSTATTUNG für meine Bestellung Ö-77.", "Die Rückerstattung ist unterwegs."),
                  ("Danke schön!", "Gern geschehen.")],
    "el:web:s2": [("Ο Σίσυφος ρωτά για επιστροφή χρημάτων.", "Η ΕΠΙΣΤΡΟΦΗ ΧΡΗΜΆΤΩΝ εγκρίθηκε.")],
    "ja:web:s3": [("返金をお願いします。注文番号は A-1043 です。", "返金手続きを開始しました。")],
    "tr:web:s4": [("İSTANBUL mağazasına iade edebilir miyim?", "Evet, İstanbul mağazası iadeleri kabul ediyor.")],
    # Stored decomposed (NFD): "Café" as C-a-f-e + COMBINING ACUTE ACCENT.
    "fr:web:s5": [(unicodedata.normalize("NFD", "Le Café de la gare a fermé."), "Dommage pour le café.")],
}
START = dt.datetime(2025, 4, 1, 9, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def intl_db(tmp_path_factory):
    """A SqliteSaver store written by real graphs (scripted models), loaded by the real loader."""
    root = tmp_path_factory.mktemp("intl")
    store = root / "intl.sqlite"
    saver = open_sqlite_saver(store)
    try:
        for i, (thread, turns) in enumerate(CHATS.items()):
            model = ScriptedChatModel(replies=[Reply(reply) for _, reply in turns])
            with Clock(START + dt.timedelta(hours=i)) as clock:
                graph = build_chat_graph(model, saver)
                for question, _ in turns:
                    say(graph, thread_config(thread), question, clock, think=30)
        refund = ScriptedChatModel(replies=[
            Reply("", [("issue_refund", {"order_id": "Ö-77", "amount": 12.5, "reason": "Kratzer im Gehäuse"})]),
            Reply("Erledigt."),
        ])  # fmt: skip
        with Clock(START + dt.timedelta(days=1)) as clock:
            graph = build_agent_graph(refund, SUPPORT_TOOLS, saver)
            say(graph, thread_config("de:api:s6"), "Bitte erstatten Sie Ö-77.", clock, think=0)
    finally:
        saver.conn.close()
    db = root / "intl.duckdb"
    transcript_lens.load(str(store), db)
    return db


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower().replace("ς", "σ")


def scan(db, text: str, speaker: str = "all") -> set[tuple[str, int]]:
    """The matching (thread, ordinal) by reading every transcript in Python."""
    con = analytics.connect(db)
    try:
        found = set()
        for thread in con.execute("SELECT thread_id FROM threads").fetchall():
            rows = analytics.read(con, thread[0])
            for r in rows.itertuples():
                if (speaker == "all" or r.role == speaker) and isinstance(r.content, str) and _fold(text) in _fold(r.content):
                    found.add((r.thread_id, int(r.ordinal)))
        return found
    finally:
        con.close()


def hits(db, text, **kw) -> set[tuple[str, int]]:
    result = search(db, SearchQuery(text, limit=1000, **kw))
    assert result.total == len(result.hits)
    return set(zip(result.hits["thread_id"], result.hits["ordinal"].astype(int)))


@pytest.mark.parametrize("text", ["rückerstattung", "RÜCKERSTATTUNG", "Rückerstattung", "ΣΊΣΥΦΟΣ", "σίσυφος",
                                  "επιστροφη", "返金", "A-1043", "café", "CAFÉ", "Ö-77", "danke"])
def test_every_message_that_contains_the_text_is_found_in_any_case_and_script(intl_db, text):
    expected = scan(intl_db, text)
    assert hits(intl_db, text) == expected
    if text not in ("επιστροφη",):  # Greek without its accent is another word: nothing to find
        assert expected


def test_greek_final_sigma_and_turkish_dotted_capital(intl_db):
    assert ("el:web:s2", 0) in hits(intl_db, "ΣΊΣΥΦΟΣ")  # stored "Σίσυφος", ending in ς
    assert {("tr:web:s4", 0), ("tr:web:s4", 1)} <= hits(intl_db, "istanbul")  # "İSTANBUL", "İstanbul"


def test_decomposed_text_is_found_by_its_composed_spelling_and_highlighted(intl_db):
    result = search(intl_db, SearchQuery("café"))
    assert set(zip(result.hits["thread_id"], result.hits["ordinal"])) == {("fr:web:s5", 0), ("fr:web:s5", 1)}
    for row in result.hits.itertuples():
        assert unicodedata.normalize("NFC", row.snippet[row.match_start:row.match_end]).lower() == "café"


def test_speaker_scope(intl_db):
    assert hits(intl_db, "rückerstattung", speaker="user") == scan(intl_db, "rückerstattung", "user") == {("de:web:s1", 0)}
    assert hits(intl_db, "rückerstattung", speaker="assistant") == {("de:web:s1", 1)}


def test_tool_arguments_are_searched_apart_from_the_text(intl_db):
    in_calls = search(intl_db, SearchQuery("KRATZER", in_="tool_calls"))
    assert in_calls.total == 1
    row = in_calls.hits.iloc[0]
    assert row["thread_id"] == "de:api:s6" and row["role"] == "assistant"
    assert row["snippet"].startswith("issue_refund(") and row["snippet"][row["match_start"]:row["match_end"]] == "Kratzer"
    # In message text, the same word is in the tool's result only (the call's message has no text).
    in_text = search(intl_db, SearchQuery("kratzer"))
    assert set(in_text.hits["role"]) == {"tool"}


def test_the_search_command_finds_a_tool_name_in_the_tool_calls(intl_db, tmp_path, monkeypatch):
    """The text sought is not also a thread filter on message text: `issue_refund` is said in no
    message, only named by the call (README: "in the tool calls (names and arguments)")."""
    from tests.attacks.harness import run_cli

    monkeypatch.setenv("TRANSCRIPT_LENS_WORKSPACE", str(tmp_path / "ws.sqlite"))  # the export log's
    out = run_cli(["search", "issue_refund", "--in", "tool_calls", "--db", str(intl_db), "--format", "csv"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "de:api:s6" in out.stdout and "issue_refund(" in out.stdout


def test_filters_narrow_the_threads_and_the_days(intl_db):
    assert hits(intl_db, "ö-77", filters=analytics.Filters(tenants=("de",))) == scan(intl_db, "ö-77")
    assert hits(intl_db, "ö-77", filters=analytics.Filters(tenants=("fr",))) == set()
    day2 = analytics.Filters(since=START + dt.timedelta(days=1))
    assert {t for t, _ in hits(intl_db, "ö-77", filters=day2)} == {"de:api:s6"}


def test_paging_counts_and_order(intl_db):
    everything = search(intl_db, SearchQuery("e", limit=1000))
    assert everything.total > 10 and everything.threads == len(set(everything.hits["thread_id"]))
    ts = everything.hits["ts"]
    assert ts.is_monotonic_decreasing  # newest first
    page2 = search(intl_db, SearchQuery("e", limit=4, offset=4))
    assert page2.total == everything.total
    assert page2.hits[["thread_id", "ordinal"]].values.tolist() == everything.hits[["thread_id", "ordinal"]].values[4:8].tolist()
    past = search(intl_db, SearchQuery("e", limit=4, offset=10_000))
    assert past.hits.empty and past.total == everything.total


def test_bad_requests():
    for kwargs, needle in [({"text": "  "}, "give some text"), ({"text": "x", "speaker": "bot"}, "speaker must be"),
                           ({"text": "x", "in_": "metadata"}, "search in must be"), ({"text": "x" * 600}, "at most"),
                           ({"text": "x", "limit": 0}, "limit must be")]:
        with pytest.raises(BadRequest, match=needle):
            SearchQuery(**kwargs)


def test_the_report_holds_every_hit_in_the_report_format(intl_db):
    frame = report_frame(intl_db, "search", analytics.Filters(text="rückerstattung"), {"speaker": "all"})
    assert set(zip(frame["thread_id"], frame["ordinal"].astype(int))) == scan(intl_db, "rückerstattung")
    assert (frame["message"].astype(int) == frame["ordinal"].astype(int) + 1).all()
    assert frame["ts"].str.endswith("Z").all()
    with pytest.raises(BadRequest, match="needs --text"):
        report_frame(intl_db, "search", analytics.Filters(), {})


def test_the_command_line(intl_db, tmp_path, capsys):
    from transcript_lens.cli import main

    run = [sys.executable, "-m", "transcript_lens", "search", "RÜCKERSTATTUNG", "--db", str(intl_db)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)  # (a fresh interpreter: its encoding)
    assert done.returncode == 0, done.stderr
    assert "2 messages in 1 threads" in done.stderr
    assert "»Rückerstattung«" in done.stdout and "»RÜCKERSTATTUNG«" in done.stdout
    # The same command's options, in this process.
    args = run[3:]
    assert main([*args, "--speaker", "user", "--format", "csv"]) == 0
    frame = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert frame[["thread_id", "message", "role"]].values.tolist() == [["de:web:s1", 1, "user"]]
    assert main([*args, "--in", "nowhere"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: search in must be")
    out = tmp_path / "hits.csv"
    assert main(["report", "search", "--db", str(intl_db), "--text", "返金", "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == len(scan(intl_db, "返金")) == 2


def test_snippet_marks_the_match_in_the_stored_text():
    text = "x" * 200 + "Die RÜCKERSTATTUNG kommt" + "y" * 200
    cut, a, b = snippet(text, "rückerstattung", context=10)
    assert cut.startswith("…") and cut.endswith("…") and cut[a:b] == "RÜCKERSTATTUNG"
    assert snippet("İstanbul", "istanbul")[1:] == (0, 8)
    assert snippet("no match here", "zzz") == ("no match here", None, None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_piece_of_a_message_finds_that_message_in_any_case(intl_db, data):
    con = analytics.connect(intl_db)
    try:
        rows = con.execute("SELECT thread_id, ordinal, content FROM messages WHERE length(content) > 3").fetchall()
    finally:
        con.close()
    thread, ordinal, content = data.draw(st.sampled_from(rows))
    content = unicodedata.normalize("NFC", content)
    start = data.draw(st.integers(0, len(content) - 2))
    piece = content[start: data.draw(st.integers(start + 1, min(len(content), start + 12)))]
    if not piece.strip():
        return
    # Change the case of letters whose case round-trips one to one (not ß, ı, İ …).
    flip = "".join(
        c.swapcase() if len(c.swapcase()) == 1 and c.swapcase().swapcase() == c and data.draw(st.booleans()) else c
        for c in piece
    )
    assert (thread, ordinal) in hits(intl_db, flip)


@pytest.mark.parametrize("text", ["ΣΊΣΥΦΟΣ", "café", "istanbul", "RÜCKERSTATTUNG", "50%", "(1.5)"])
def test_the_text_filter_and_the_thread_picker_find_the_threads_search_finds(intl_db, text):
    """One rule for every text question: Search, the "text in messages" filter, the picker."""
    threads = {t for t, _ in hits(intl_db, text)}
    con = analytics.connect(intl_db)
    try:
        filtered = set(analytics.conversations(con, analytics.Filters(text=text))["thread_id"])
        picked = analytics.search_threads(con, text, limit=None)
        by_message = set(picked.loc[picked["match_count"] > 0, "thread_id"])
    finally:
        con.close()
    assert filtered == by_message == threads



def test_a_snippet_is_found_by_a_linear_time_engine(monkeypatch):
    """The typed text is located in a hit's message by RE2, never Python's backtracking `re`: a
    1 MB run of `a` and a 500-character `aaa…b` cost `re` seconds of CPU per hit shown."""
    import re

    from analytics.text_match import snippet

    def backtracking(*_args, **_kwargs):
        raise AssertionError("Python's re used on the message")

    monkeypatch.setattr(re, "search", backtracking)
    monkeypatch.setattr(re, "compile", backtracking)
    text, needle = "a" * 1_000_000 + "b", "a" * 499 + "b"
    assert snippet(text, needle, context=3) == ("…aaa" + needle, 4, 504)
    assert snippet("Hello, I would like a REFUND", "refund", context=3)[1:] == (4, 10)
