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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analytics.catalog import CONVERSATION_TOPICS, TOPICS
from analytics.db import every_thread, query_fingerprint, table_comments
from analytics.conversation_outcomes.columns import arrow_table, numpy_of, numpy_to_arrow
from analytics.conversation_outcomes.lexicon import tokens
from analytics.topic_mining import cluster as model
from analytics.topic_mining.concepts import Concepts

TABLE, TOPICS_TABLE = CONVERSATION_TOPICS.name, TOPICS.name
#: A question has at least this many word tokens (function words included).
MIN_QUESTION_TOKENS = 3
#: A question is read up to this many characters (a pasted log adds nothing to its topic).
QUESTION_CHARS = 2_000
#: Bumped when a rule of the documents or the clustering changes, so an older table is not read.
RULES_VERSION = "9"
_ROW_TYPES = {"thread_id": pa.string(), "topic_id": pa.int32(), "question_ordinal": pa.int32()}

#: Every user message with text, in thread and message order (its text cut to `QUESTION_CHARS`).
_USER_SQL = """
SELECT m.thread_id, m.ordinal, left(m.content, ?) AS text FROM messages m JOIN threads t USING (thread_id)
WHERE {where} AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.thread_id, m.ordinal
"""
#: The tools of each thread's question turn (`tl_topic_turns`: row, thread, after ordinal, before
#: ordinal or NULL): the distinct names the assistant called between, in code-point order; one
#: list per row of `tl_topic_turns`, in its order (empty: none).
_CALLS_SQL = """
WITH called AS (
  SELECT q.row, list_sort(list_distinct(list(c.name))) AS tools
  FROM tl_topic_turns q JOIN messages m ON m.thread_id = q.thread_id AND m.ordinal > q.after
       AND (q.before IS NULL OR m.ordinal < q.before),
       unnest(from_json(m.tool_calls, '[{"name": "VARCHAR"}]')) AS u(c)
  WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL AND c.name IS NOT NULL
  GROUP BY q.row)
SELECT coalesce(called.tools, []::VARCHAR[]) AS tools FROM tl_topic_turns q LEFT JOIN called USING (row) ORDER BY q.row
"""
#: Every thread's user messages with text joined by newlines (the document of `all_turns`).
_ALL_TURNS_SQL = """
SELECT m.thread_id, string_agg(left(m.content, ?), chr(10) ORDER BY m.ordinal) AS text
FROM messages m JOIN threads t USING (thread_id)
WHERE {where} AND m.role = 'user' AND m.content IS NOT NULL GROUP BY m.thread_id
"""


def _is_question(text: str) -> bool:
    return len(tokens(text)) >= MIN_QUESTION_TOKENS


def first_questions(users: pa.Table) -> np.ndarray:
    """The row of each thread's first question in `users` (`_USER_SQL`'s rows): its first
    message that is a question, else its first message; one row index per thread, in order.

    The test reads each distinct text once, and only the messages up to each thread's first
    question: round k looks at the k-th message of the threads still without one.

    >>> users = pa.table({"thread_id": ["a", "a", "b"], "ordinal": pa.array([0, 2, 1], pa.int32()),
    ...                   "text": ["Hi", "Where is my parcel?", "Thanks"]})
    >>> first_questions(users).tolist()
    [1, 2]
    """
    n = users.num_rows
    if not n:
        return np.zeros(0, dtype=np.int64)
    thread = users.column("thread_id").combine_chunks()
    starts = np.ones(n, dtype=bool)
    starts[1:] = numpy_of(pc.not_equal(thread.slice(1), thread.slice(0, n - 1)))
    first = np.flatnonzero(starts)
    size = np.diff(np.append(first, n))
    encoded = pc.dictionary_encode(users.column("text").combine_chunks())
    texts, text_id = encoded.dictionary, numpy_of(encoded.indices).astype(np.int64)
    known = np.full(len(texts), -1, dtype=np.int8)  # per distinct text: -1 not read yet, 0 no, 1 a question
    chosen = first.copy()
    open_ = np.arange(len(first))  # threads without a question found yet
    for k in range(int(size.max())):
        open_ = open_[size[open_] > k]
        if not len(open_):
            break
        rows = first[open_] + k
        ids = text_id[rows]
        for t in np.unique(ids[known[ids] < 0]).tolist():
            known[t] = _is_question(texts[t].as_py())
        found = known[ids] == 1
        chosen[open_[found]] = rows[found]
        open_ = open_[~found]
    return chosen


def thread_documents(con, where: str = "TRUE", params: list | None = None,
                     all_turns: bool = False) -> tuple[list[model.Doc], dict[str, int]]:
    """Every thread's document, by thread id, and the ordinal of its first question.

    The user messages are read as Arrow columns (`con.sql`: `con` holds no unfinished result)
    and the question found per thread in NumPy (`first_questions`); the tools of the question's
    turn are joined in SQL."""
    params = params or []
    users = con.sql(_USER_SQL.format(where=where), params=[QUESTION_CHARS, *params]).to_arrow_table()
    at = first_questions(users)
    n = users.num_rows
    at_ = numpy_to_arrow(at)  # (an index array handed to `take` as NumPy would make pyarrow import pandas)
    thread_ids = users.column("thread_id").combine_chunks().take(at_)
    ordinals = users.column("ordinal").combine_chunks()
    start = ordinals.take(at_)
    if all_turns:  # every message of the thread, every tool it called
        after = numpy_to_arrow(np.full(len(at), -1, dtype=np.int64)).cast(ordinals.type)
        before = pa.nulls(len(at), ordinals.type)
    else:  # the question's turn: up to the next user message of its thread
        nxt = np.minimum(at + 1, max(n - 1, 0))
        nxt_ = numpy_to_arrow(nxt)
        same = numpy_of(pc.equal(users.column("thread_id").combine_chunks().take(nxt_), thread_ids)) & (at + 1 < n)
        after = start
        before = pc.if_else(numpy_to_arrow(same), ordinals.take(nxt_), pa.nulls(len(at), ordinals.type))
    row = numpy_to_arrow(np.arange(len(at), dtype=np.int64))
    con.register("tl_topic_turns", pa.table([row, thread_ids, after, before], names=["row", "thread_id", "after", "before"]))
    try:
        tools = con.sql(_CALLS_SQL).to_arrow_table().column(0).to_pylist()
    finally:
        con.unregister("tl_topic_turns")
    keys = thread_ids.to_pylist()
    if all_turns:
        joined = dict(con.execute(_ALL_TURNS_SQL.format(where=where), [QUESTION_CHARS, *params]).fetchall())
        texts = [joined[k] for k in keys]
    else:
        texts = users.column("text").combine_chunks().take(at_).to_pylist()
    docs = list(map(model.Doc, keys, texts, map(tuple, tools)))
    return docs, dict(zip(keys, start.to_pylist()))


def compute(con, all_turns: bool = False, concepts: Concepts | None = None) -> tuple[model.Topics, dict[str, int]]:
    """The topics of every thread of the store (under a tenant policy: those visible), with the
    concept table `concepts` (None: the built-in one)."""
    with every_thread(con):
        docs, asked = thread_documents(con, all_turns=all_turns)
    return model.cluster(docs, concepts=concepts), asked


def rules_fingerprint() -> str:
    """The fingerprint of the documents' queries and the model's settings, the concept table apart."""
    settings = [model.NGRAM, model.TOOL_WEIGHT, model.TOOL_IDF_POWER, model.CONCEPT_WEIGHT,
                model.NGRAM_WEIGHT, model.MIN_DF, model.MAX_DF_SHARE,
                model.DIMENSIONS, model.K_FINE, model.MERGE_COSINE, model.FIT_SAMPLE, model.SEED, MIN_QUESTION_TOKENS,
                QUESTION_CHARS]
    return query_fingerprint(TABLE, repr((_USER_SQL, _CALLS_SQL, _ALL_TURNS_SQL, RULES_VERSION)), settings)


def fingerprint(concepts: Concepts | None = None) -> str:
    """The stamp topic tables carry: the rules' fingerprint and the concept table's hash
    (`concepts`; None: the built-in table), `<rules> concepts:<hash>`."""
    return f"{rules_fingerprint()} concepts:{(concepts or model.built_in_concepts()).fingerprint()}"


def concepts_hash(con) -> str | None:
    """The hash of the concept table the stored topic tables were computed with (None: no tables
    written by the current rules)."""
    stamps = table_comments(con, [TABLE, TOPICS_TABLE])
    stamp = stamps.get(TABLE)
    rules, _, digest = (stamp or "").partition(" concepts:")
    return digest if stamp == stamps.get(TOPICS_TABLE) and rules == rules_fingerprint() and digest else None


def materialized(con, concepts: Concepts | None = None) -> bool:
    """Whether `con`'s database holds topic tables written by the current rules with the concept
    table `concepts` (None: with whichever table the load was given)."""
    digest = concepts_hash(con)
    return digest is not None and (concepts is None or digest == concepts.fingerprint())


def write_tables(con, found: model.Topics, asked: dict[str, int], prefix: str = "") -> None:
    """(Re)create `conversation_topics` and `topics` from `found` (`prefix`: as temporary tables
    `temp.main.<prefix>conversation_topics` …, for a live answer on a read-only connection)."""
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
        # The labels are joined from the topics table rather than built as a column of strings.
        rows = arrow_table({"thread_id": threads, "topic_id": [found.assignment[t] for t in threads],
                            "question_ordinal": [asked[t] for t in threads]}, _ROW_TYPES)
        con.register("tl_topic_rows", rows)
        try:
            con.execute(f"INSERT INTO {prefix}{TABLE} SELECT r.thread_id, r.topic_id, t.topic_label, r.question_ordinal "
                        f"FROM tl_topic_rows r JOIN {prefix}{TOPICS_TABLE} t USING (topic_id) ORDER BY r.thread_id")
        finally:
            con.unregister("tl_topic_rows")


def materialize_topics(con, threads: list[str] | None = None, concepts: Concepts | None = None) -> None:
    """(Re)create both topic tables over every thread (`threads`, an incremental load's, changes
    nothing: a new question can move others' topics), with the concept table `concepts` (None: the
    built-in one), whose hash the tables' stamp records. Called at load time (`analytics.derived`)."""
    del threads
    found, asked = compute(con, concepts=concepts)
    write_tables(con, found, asked)
    stamp = fingerprint(concepts)
    for name in (TABLE, TOPICS_TABLE):
        con.execute(f"COMMENT ON TABLE {name} IS '{stamp}'")
