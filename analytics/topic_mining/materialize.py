"""`topics` and `conversation_topics`: the topics of the users' first questions, computed at load time.

A conversation's document (docs/topics.md): its *first question*, the first user message
of 3 or more word tokens (a bare "Hello" is not the question; none: the first user message),
and the tools the agent called in that question's turn (up to the next user message). With
`all_turns` the document is every user message of the thread and every tool it called. The
topics are a function of every thread's document (`analytics.topic_mining.cluster`), so every load,
incremental ones included, computes them again over the whole store.

>>> materialize_topics(con)  # doctest: +SKIP
>>> thread_documents(con, all_turns=True)[:1]  # doctest: +SKIP
[Doc(key='acme:web:s1', text='Where is my parcel?', tools=('track_parcel',))]
"""

from __future__ import annotations

from itertools import groupby

import pyarrow as pa

from analytics.catalog import CONVERSATION_TOPICS, TOPICS
from analytics.db import every_thread, query_fingerprint, table_comments
from analytics.conversation_outcomes.columns import arrow_table
from analytics.conversation_outcomes.lexicon import tokens
from analytics.topic_mining import cluster as model

TABLE, TOPICS_TABLE = CONVERSATION_TOPICS.name, TOPICS.name
#: A question has at least this many word tokens (function words included).
MIN_QUESTION_TOKENS = 3
#: A question is read up to this many characters (a pasted log adds nothing to its topic).
QUESTION_CHARS = 2_000
#: Bumped when a rule of the documents or the clustering changes, so an older table is not read.
RULES_VERSION = "5"
_ROW_TYPES = {"thread_id": pa.string(), "topic_id": pa.int32(), "topic_label": pa.string(), "question_ordinal": pa.int32()}

_USER_SQL = """
SELECT m.thread_id, m.ordinal, left(m.content, ?) AS text FROM messages m JOIN threads t USING (thread_id)
WHERE {where} AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.thread_id, m.ordinal
"""
_CALLS_SQL = """
SELECT m.thread_id, m.ordinal, list(c.name ORDER BY c.name) AS tools
FROM messages m JOIN threads t USING (thread_id),
     unnest(from_json(m.tool_calls, '[{{"name": "VARCHAR"}}]')) AS u(c)
WHERE {where} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL AND c.name IS NOT NULL
GROUP BY ALL ORDER BY m.thread_id, m.ordinal
"""


def thread_documents(con, where: str = "TRUE", params: list | None = None,
                     all_turns: bool = False) -> tuple[list[model.Doc], dict[str, int]]:
    """Every thread's document, by thread id, and the ordinal of its first question."""
    params = params or []
    users = con.execute(_USER_SQL.format(where=where), [QUESTION_CHARS, *params]).fetchall()
    calls: dict[str, list[tuple[int, list[str]]]] = {}
    for thread, group in groupby(con.execute(_CALLS_SQL.format(where=where), params).fetchall(), key=lambda r: r[0]):
        calls[thread] = [(ordinal, tools) for _, ordinal, tools in group]
    docs, asked = [], {}
    question: dict[str, bool] = {}  # text -> long enough to be the question (greetings repeat: read each once)

    def is_question(text: str) -> bool:
        found = question.get(text)
        if found is None:
            found = question[text] = len(tokens(text)) >= MIN_QUESTION_TOKENS
        return found

    for thread, group in groupby(users, key=lambda r: r[0]):
        turns = [(ordinal, text) for _, ordinal, text in group]
        at = next((i for i, (_, text) in enumerate(turns) if is_question(text)), 0)
        start = turns[at][0]
        if all_turns:
            text, lo, hi = "\n".join(t for _, t in turns), -1, None
        else:
            text, lo, hi = turns[at][1], start, turns[at + 1][0] if at + 1 < len(turns) else None
        tools = sorted({name for ordinal, names in calls.get(thread, ()) if ordinal > lo and (hi is None or ordinal < hi)
                        for name in names})
        docs.append(model.Doc(thread, text, tuple(tools)))
        asked[thread] = start
    return docs, asked


def compute(con, all_turns: bool = False) -> tuple[model.Topics, dict[str, int]]:
    """The topics of every thread of the store (under a tenant policy: those visible)."""
    with every_thread(con):
        docs, asked = thread_documents(con, all_turns=all_turns)
    return model.cluster(docs), asked


def fingerprint() -> str:
    settings = [model.NGRAM, model.TOOL_WEIGHT, model.TOOL_IDF_POWER, model.CONCEPT_WEIGHT,
                model.built_in_concepts().fingerprint(), model.NGRAM_WEIGHT, model.MIN_DF, model.MAX_DF_SHARE,
                model.DIMENSIONS, model.K_FINE, model.MERGE_COSINE, model.FIT_SAMPLE, model.SEED, MIN_QUESTION_TOKENS,
                QUESTION_CHARS]
    return query_fingerprint(TABLE, repr((_USER_SQL, _CALLS_SQL, RULES_VERSION)), settings)


def materialized(con) -> bool:
    """Whether `con`'s database holds topic tables written by the current rules."""
    stamps = table_comments(con, [TABLE, TOPICS_TABLE])
    return stamps.get(TABLE) == stamps.get(TOPICS_TABLE) == fingerprint()


def write_tables(con, found: model.Topics, asked: dict[str, int], prefix: str = "") -> None:
    """(Re)create `conversation_topics` and `topics` from `found` (`prefix`: as temporary tables
    `temp.main.<prefix>conversation_topics` …, for a live answer on a read-only connection)."""
    labels = {t.id: t.label for t in found.topics}
    threads = sorted(found.assignment)
    for table in (TOPICS, CONVERSATION_TOPICS):
        columns = ", ".join(c.ddl() for c in table.columns)
        con.execute(f"CREATE OR REPLACE {'TEMP ' if prefix else ''}TABLE {prefix}{table.name} ({columns})")
    prefix = f"temp.main.{prefix}" if prefix else ""
    if found.topics:
        con.execute(
            f"INSERT INTO {prefix}{TOPICS_TABLE} SELECT * FROM (SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[]), "
            "unnest(?::VARCHAR[][]), unnest(?::VARCHAR[][]), unnest(?::VARCHAR[][]), unnest(?::BIGINT[]))",
            [[t.id for t in found.topics], [t.label for t in found.topics], [list(t.terms) for t in found.topics],
             [list(t.tools) for t in found.topics], [list(t.examples) for t in found.topics],
             [t.size for t in found.topics]])
    if threads:
        # One row per thread: Arrow columns built from buffers (bound lists are copied and bound
        # value by value, seconds at 100,000 threads; pyarrow's conversion would import pandas).
        ids = [found.assignment[t] for t in threads]
        rows = arrow_table({"thread_id": threads, "topic_id": ids, "topic_label": [labels[i] for i in ids],
                            "question_ordinal": [asked[t] for t in threads]}, _ROW_TYPES)
        con.register("tl_topic_rows", rows)
        try:
            con.execute(f"INSERT INTO {prefix}{TABLE} SELECT * FROM tl_topic_rows")
        finally:
            con.unregister("tl_topic_rows")


def materialize_topics(con, threads: list[str] | None = None) -> None:
    """(Re)create both topic tables over every thread (`threads`, an incremental load's, changes
    nothing: a new question can move others' topics). Called at load time (`analytics.derived`)."""
    del threads
    found, asked = compute(con)
    write_tables(con, found, asked)
    stamp = fingerprint()
    for name in (TABLE, TOPICS_TABLE):
        con.execute(f"COMMENT ON TABLE {name} IS '{stamp}'")
