"""`conversation_signals`: every thread's outcome signals, computed at load time.

`thread_facts` reads the set-based facts (`signals`), applies the lexicon and the
similarity rule in Python over only the texts they concern, and returns one row of facts
per thread; `outcome.FINISH_SQL` then adds the signals measured against the store's
latest checkpoint time and the outcome. An incremental load recomputes the facts of the
threads it replaced only, then finishes every row again (one row per thread: cheap), so it
equals a full load.

>>> materialize_signals(con)  # doctest: +SKIP
>>> materialize_signals(con, ["acme:web:s1"])  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Callable

import pyarrow as pa

from analytics.catalog import CONVERSATION_SIGNALS
from analytics.db import every_thread, query_fingerprint, table_comments
from analytics.conversation_outcomes import signals as q
from analytics.conversation_outcomes.columns import arrow_table
from analytics.conversation_outcomes.lexicon import Lexicon, built_in, clauses, words
from analytics.conversation_outcomes.outcome import FINISH_SQL
from analytics.conversation_outcomes.texts import text_signals

TABLE = CONVERSATION_SIGNALS.name
DEFAULT_IDLE_MINUTES = 30.0
DEFAULT_HITL_HOURS = 4.0
#: Assistant replies shorter than this are not compared for repetition ("OK.", "Done!").
MIN_REPLY_CHARS = 20
#: Text rows read at a time (up to `signals.TEXT_CHARS` characters each).
TEXT_BATCH_ROWS = 10_000
#: A closing message has at most this many words (quoted passages included) and no question mark.
MAX_CLOSING_TOKENS = 12
#: Bumped when the Python part of a rule changes, so an older table is not read.
RULES_VERSION = "5"

_FACT_TYPES = {
    "thread_id": pa.string(), "resolved_closing": pa.bool_(), "dropped_after_failure": pa.bool_(),
    "agent_loop": pa.bool_(), "tool_error_cascade": pa.bool_(), "user_frustration": pa.bool_(),
    "repetition": pa.bool_(), "lost_context": pa.bool_(),
    **{f"{s}_ordinals": pa.list_(pa.int32()) for s in (
        "resolved_closing", "dropped_after_failure", "agent_loop", "tool_error_cascade", "user_frustration",
        "repetition", "lost_context")},
    "interrupt_pending": pa.bool_(), "last_role": pa.string(), "last_ordinal": pa.int32(),
    "last_user_ordinal": pa.int32(), "last_tool_error": pa.bool_(), "last_tool_ordinal": pa.int32(),
    "failure_kind": pa.string(), "unanswered_since": pa.timestamp("us", tz="UTC"),
    "waiting_since": pa.timestamp("us", tz="UTC"), "waiting_ordinal": pa.int32(),
    "hitl_answered_ordinals": pa.list_(pa.int32()),
}


def is_closing(text: str | None, lexicon: Lexicon) -> bool:
    """A user's message ending the conversation well: short (every word counts, a quoted passage's too:
    a message that quotes a letter reports it), no question, a closing phrase, no thanks for what is
    still to come (`pending`: "thanks in advance"), and no complaint or request for a human.

    >>> is_closing("Perfect, that's all. Thanks!", built_in()), is_closing("Thanks, but it still fails?", built_in())
    (True, False)
    """
    if not text or "?" in text or len(words(text)) > MAX_CLOSING_TOKENS:
        return False
    parts = clauses(text)
    return (lexicon.find("closing", parts) and not lexicon.find("pending", parts)
            and not lexicon.find("wrong", parts) and not lexicon.find("human", parts))


def _norm_args(args: str | None) -> str:
    try:
        return json.dumps(json.loads(args), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(args)


_ORDINALS = {"thread_id": pa.string(), "ordinals": pa.list_(pa.int32())}
_VERDICTS = {"text": pa.string(), "flag": pa.bool_()}


def _ordinals_table(by_thread: dict[str, list[int]]) -> pa.Table:
    return arrow_table({"thread_id": list(by_thread), "ordinals": list(by_thread.values())}, _ORDINALS)


def _verdicts(con, sql: str, rule: Callable[[str], bool]) -> pa.Table:
    """`rule` over each distinct text of `sql` (NULL read as ''), as (text, flag) rows."""
    texts = [text or "" for (text,) in con.execute(sql).fetchall()]
    return arrow_table({"text": texts, "flag": [bool(rule(t)) for t in texts]}, _VERDICTS)


def thread_facts(con, where: str, params: list, lexicon: Lexicon | None = None,
                 hitl_hours: float = DEFAULT_HITL_HOURS, risks_ready: Callable[[], object] | None = None) -> pa.Table:
    """One row of facts per thread of `threads t WHERE where` (`_FACT_TYPES`).

    The facts are joined in SQL (`signals.FACTS_SQL`) from the set-based queries, kept as
    temporary tables of the connection, and from what Python adds: the loops' normalised
    arguments, the text signals (`texts`) and the closing and give-up rules, each read once
    per distinct text. `risks_ready`, when given, is called (and waited for) before the one
    query that reads `risk_figures`, the last one: the other facts need no derived table, so a
    load computes them while another connection writes `risk_figures` (`analytics.derived`)."""
    lexicon = lexicon or built_in()
    temps, registered = [], []

    def temp(name: str, sql: str, sql_params: list) -> None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}", sql_params)
        temps.append(name)

    def register(name: str, table: pa.Table) -> None:
        con.register(name, table)
        registered.append(name)

    try:
        temp("tl_sig_endings", q.ENDINGS_SQL.format(where=where), params)
        temp("tl_sig_cascades", q.CASCADES_SQL.format(where=where), params)
        temp("tl_sig_interrupts", q.INTERRUPT_FACTS_SQL.format(where=where), [*params, hitl_hours])
        groups: dict[tuple, list[int]] = defaultdict(list)
        normalised: dict[str | None, str] = {}  # (agents repeat their calls: each distinct argument text once)
        for thread, turn, ordinal, name, args in con.execute(q.LOOP_CANDIDATES_SQL.format(where=where), params).fetchall():
            norm = normalised.get(args)
            if norm is None:
                norm = normalised[args] = _norm_args(args)
            groups[(thread, turn, name, norm)].append(ordinal)
        loops: dict[str, set[int]] = defaultdict(set)
        for (thread, *_), ordinals in groups.items():
            if len(ordinals) >= q.LOOP_CALLS:
                loops[thread].update(ordinals)
        register("tl_sig_loops", _ordinals_table({t: sorted(o) for t, o in loops.items()}))
        # Every message's text: read a batch at a time, not held whole.
        texts = con.sql(q.TEXTS_SQL.format(where=where), params=params).to_arrow_reader(TEXT_BATCH_ROWS)
        frustration, repetition = text_signals(texts, lexicon, MIN_REPLY_CHARS)
        register("tl_sig_frustration", _ordinals_table(frustration))
        register("tl_sig_repetition", _ordinals_table(repetition))
        register("tl_sig_closing", _verdicts(
            con, "SELECT DISTINCT coalesce(last_user_content, '') FROM temp.main.tl_sig_endings "
                 "WHERE last_user_ordinal IS NOT NULL AND only_replies_after_user", lambda t: is_closing(t, lexicon)))
        register("tl_sig_gives_up", _verdicts(
            con, "SELECT DISTINCT coalesce(last_content, '') FROM temp.main.tl_sig_endings WHERE last_role = 'assistant'",
            lambda t: lexicon.find("give_up", clauses(t))))
        if risks_ready is not None:
            risks_ready()
        sql, lost_params = q.lost_context_sql(where, params, _risks_source(con))
        temp("tl_sig_lost", f"SELECT thread_id, list_sort(list_distinct(list(ordinal))) AS ordinals FROM ({sql}) "
                            "GROUP BY thread_id", lost_params)
        facts = con.sql(q.FACTS_SQL).to_arrow_table()
    finally:
        for name in registered:
            con.unregister(name)
        for name in temps:
            con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
    return facts.cast(pa.schema(_FACT_TYPES))


def _risks_source(con) -> str:
    """`risk_figures` when the database holds a current one, else the live query's text (no parameters)."""
    from analytics.resume.risk_figures import _risks_materialized, risks_sql

    if _risks_materialized(con):
        return "SELECT * FROM risk_figures"
    sql, params = risks_sql()
    if params:  # (the default query binds its cap and gap: inline the live query as a table instead)
        con.execute("CREATE OR REPLACE TEMP TABLE tl_outcome_risks AS " + sql, params)
        return "SELECT * FROM temp.main.tl_outcome_risks"
    return sql


def store_latest(con):
    """The greatest checkpoint ts of the whole store (every thread, also inside `only_threads`)."""
    with every_thread(con):
        return con.execute("SELECT max(ts) FROM checkpoints").fetchall()[0][0]


def finish(con, facts: str, idle_minutes: float, hitl_hours: float):
    """A relation of `conversation_signals` rows from the relation named `facts`."""
    return con.sql(FINISH_SQL.format(facts=facts), params=[store_latest(con), idle_minutes, hitl_hours])


def fingerprint(lexicon: Lexicon | None = None, idle_minutes=DEFAULT_IDLE_MINUTES, hitl_hours=DEFAULT_HITL_HOURS) -> str:
    sqls = (q.ENDINGS_SQL, q.CASCADES_SQL, q.LOOP_CANDIDATES_SQL, q.TEXTS_SQL, q.INTERRUPT_FACTS_SQL, q.FACTS_SQL,
            q.LOST_CONTEXT_CANDIDATES, q.LOST_CONTEXT_SQL,
            FINISH_SQL, RULES_VERSION, (lexicon or built_in()).fingerprint())
    return query_fingerprint(TABLE, repr(sqls), [idle_minutes, hitl_hours, MIN_REPLY_CHARS, MAX_CLOSING_TOKENS])


def materialized(con) -> bool:
    """Whether `con`'s database holds a `conversation_signals` written by the current rules."""
    return table_comments(con, [TABLE]).get(TABLE) == fingerprint()


def materialize_signals(con, threads: list[str] | None = None, risks_ready: Callable[[], object] | None = None) -> None:
    """(Re)create `conversation_signals` (`threads`: only these threads' facts are recomputed;
    every row is finished again against the store's latest time). Called at load time
    (`analytics.derived`), inside its `only_threads` block for an incremental load; reads
    `risk_figures` once `risks_ready()` returns (`thread_facts`)."""
    con.execute("SET TimeZone = 'UTC'")
    stamp = fingerprint()
    incremental = threads is not None and table_comments(con, [TABLE]).get(TABLE) == stamp
    with contextlib.nullcontext() if incremental else every_thread(con):  # (a rebuild reads every thread)
        facts = thread_facts(con, "TRUE", [], risks_ready=risks_ready)
    params = [store_latest(con), DEFAULT_IDLE_MINUTES, DEFAULT_HITL_HOURS]
    con.register("tl_signal_facts", facts)
    try:
        if not incremental:
            con.execute(f"CREATE OR REPLACE TABLE {TABLE} AS " + FINISH_SQL.format(facts="tl_signal_facts"), params)
            con.execute(f"COMMENT ON TABLE {TABLE} IS '{stamp}'")
            return
        con.execute(f"DELETE FROM {TABLE} WHERE thread_id IN (SELECT unnest(?))", [list(threads)])
        con.execute(f"INSERT INTO {TABLE} " + FINISH_SQL.format(facts="tl_signal_facts"), params)
    finally:
        con.unregister("tl_signal_facts")
    # The store's latest time may have moved for every thread: finish every row again.
    con.execute(f"CREATE OR REPLACE TEMP TABLE tl_signal_rows AS SELECT * FROM {TABLE}")
    con.execute(f"DELETE FROM {TABLE}")
    con.execute(f"INSERT INTO {TABLE} " + FINISH_SQL.format(facts="temp.main.tl_signal_rows"), params)
    con.execute("DROP TABLE temp.main.tl_signal_rows")
