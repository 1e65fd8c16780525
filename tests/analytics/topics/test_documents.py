"""The topic documents as a load reads them: each thread's first question found over Arrow
columns (each distinct text tested once, only up to the thread's first question), and the
documents equal to the rule read per thread in plain Python."""

from __future__ import annotations

from itertools import groupby

import duckdb
import pyarrow as pa

from analytics.conversation_outcomes.lexicon import tokens
from analytics.db import every_thread
from analytics.topic_mining import materialize as mat


def _users(rows: list[tuple[str, int, str]]) -> pa.Table:
    return pa.table({"thread_id": [r[0] for r in rows], "ordinal": pa.array([r[1] for r in rows], pa.int32()),
                     "text": [r[2] for r in rows]})


def test_the_first_question_of_each_thread_reads_each_text_once_and_stops_at_it(monkeypatch):
    read: list[str] = []
    real = mat._is_question
    monkeypatch.setattr(mat, "_is_question", lambda text: read.append(text) or real(text))
    users = _users([
        ("a", 0, "Hi"), ("a", 2, "Where is my parcel?"), ("a", 4, "never read after the question"),
        ("b", 1, "Hi"), ("b", 3, "ok"),  # no question: its first message
        ("c", 0, "Where is my parcel?"), ("c", 5, "Hi"),
    ])
    assert mat.first_questions(users).tolist() == [1, 3, 5]
    assert sorted(read) == sorted(["Hi", "Where is my parcel?", "ok"])


def _reference(con, all_turns: bool) -> tuple[list, dict]:
    """The documents by the rule of docs/topics.md, thread by thread in Python."""
    users = con.execute("SELECT thread_id, ordinal, left(content, ?) FROM messages WHERE role = 'user' "
                        "AND content IS NOT NULL ORDER BY thread_id, ordinal", [mat.QUESTION_CHARS]).fetchall()
    calls = con.execute("SELECT m.thread_id, m.ordinal, c.name FROM messages m, "
                        "unnest(from_json(m.tool_calls, '[{\"name\": \"VARCHAR\"}]')) AS u(c) "
                        "WHERE m.role = 'assistant' AND c.name IS NOT NULL").fetchall()
    docs, asked = [], {}
    for thread, group in groupby(users, key=lambda r: r[0]):
        turns = [(o, t) for _, o, t in group]
        at = next((i for i, (_, t) in enumerate(turns) if len(tokens(t)) >= mat.MIN_QUESTION_TOKENS), 0)
        lo, hi = (-1, None) if all_turns else (turns[at][0], turns[at + 1][0] if at + 1 < len(turns) else None)
        tools = sorted({n for t, o, n in calls if t == thread and o > lo and (hi is None or o < hi)})
        text = "\n".join(t for _, t in turns) if all_turns else turns[at][1]
        docs.append(mat.model.Doc(thread, text, tuple(tools)))
        asked[thread] = turns[at][0]
    return docs, asked


def test_documents_equal_the_rule_read_per_thread(labelled):
    db, _ = labelled
    with duckdb.connect(str(db), read_only=True) as con, every_thread(con):
        for all_turns in (False, True):
            assert mat.thread_documents(con, all_turns=all_turns) == _reference(con, all_turns)
