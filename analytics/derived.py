"""The tables a load writes for the query layer, so that pages read a scan instead of
several passes over every message.

`conversation_metrics` (every thread's `conversations()` row, default resume gap),
the trend tables (latency pairs, per thread x day and x model sums) and
`risk_figures` (the Resume QA overview), `conversation_signals` (outcome signals,
`analytics.outcomes`) and `topics` / `conversation_topics` (`analytics.topics`: computed over
every thread at every load, since a new question can move the others' topics). Each carries a fingerprint of the query
that wrote it; a reader finding another fingerprint (an older tool) runs the live
query instead. The composition root (`transcript_lens.load`) hands `LoadTimeTables`
to the loader, which calls it in the load's own commit; the loader itself never
imports this package.

Every row of these tables is a function of one thread's rows, so after an
incremental load only the threads it replaced are computed again: the same
queries run where the loader's tables show only those threads (`analytics.db.only_threads`,
one block for every table).

A full load of 100,000 messages or more (`SIDE_BY_SIDE_MESSAGES`) writes them side by side, each step on a connection of its own (`con.cursor()`):
the metric, trend and risk tables are DuckDB queries that leave the GIL free; the topic step
spends most of its time in Python (the documents, the model), the signal step in DuckDB
queries with the text rules in Python between them. The signals read `risk_figures` only in their last query and wait for it there.
An incremental load, one transaction on one connection (a cursor would not see its
rows), writes them one after the other.

>>> write_derived_tables(con)  # doctest: +SKIP
>>> write_derived_tables(con, ["acme:web:s1"])  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import math
import os
from concurrent.futures import Future, ThreadPoolExecutor

from analytics.db import only_threads
from analytics.metrics import materialize_conversations, materialize_trends
from analytics.conversation_outcomes.materialize import materialize_signals
from analytics.resume import materialize_risks
from analytics.text_index import materialize_text_index
from analytics.topic_mining.concepts import Concepts
from analytics.topic_mining.materialize import materialize_topics


def write_derived_tables(con, threads: list[str] | None = None, topic_concepts: Concepts | None = None) -> None:
    """(Re)create every derived table on `con`: whole (`threads` None: a full load), or
    only the rows of `threads` (an incremental load that replaced or dropped them).
    A table written by another definition of its query is rebuilt whole either way.
    `topic_concepts`: the concept table of the topics (None: the built-in one)."""
    if threads is None and not _in_transaction(con) and _messages(con) >= SIDE_BY_SIDE_MESSAGES:
        _write_side_by_side(con, topic_concepts)
        return
    with only_threads(con, threads) if threads is not None else contextlib.nullcontext():  # (views made once)
        materialize_conversations(con, threads)  # sets TimeZone = 'UTC' on the connection, like readers
        materialize_trends(con, threads)
        materialize_risks(con, threads)
        materialize_signals(con, threads)  # reads risk_figures: after it
        materialize_topics(con, threads, topic_concepts)  # (over every thread, whatever the load replaced)
        materialize_text_index(con, threads)


def _write_side_by_side(con, topic_concepts: Concepts | None = None) -> None:
    """Every derived table of a full rebuild: the signals and the topics each on a cursor of
    its own, beside the metric, trend and risk tables on `con`."""
    (database,) = con.execute("SELECT current_database()").fetchone()
    cursors = []
    risks: Future = Future()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_memory_for(con, 3))
        for _ in range(2):  # (made here: `con` is used by this thread only)
            cursors.append(stack.enter_context(con.cursor()))
            cursors[-1].execute("USE " + '"' + database.replace('"', '""') + '"')  # (a name DuckDB gave)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="derived") as pool:
            signals = pool.submit(materialize_signals, cursors[0], None, risks.result)
            topics = pool.submit(materialize_topics, cursors[1], None, topic_concepts)
            try:
                materialize_conversations(con)
                materialize_trends(con)
                materialize_risks(con)
                materialize_text_index(con)
            except BaseException as exc:
                risks.set_exception(exc)  # (the signals stop at their wait; the exception is raised here)
                raise
            risks.set_result(None)
            signals.result()
            topics.result()


#: Messages from which a full rebuild writes the tables side by side: below, the two steps take
#: well under a second, and two more threads would cost memory (their arenas, a raised limit) for nothing.
SIDE_BY_SIDE_MESSAGES = 100_000


def _messages(con) -> int:
    return con.execute("SELECT count(*) FROM messages").fetchone()[0]


def _in_transaction(con) -> bool:
    """Whether `con` is inside an explicit transaction (which another connection would not see):
    there two statements share one transaction id, under autocommit each has its own."""
    first = con.execute("SELECT txid_current()").fetchone()[0]
    return con.execute("SELECT txid_current()").fetchone()[0] == first


#: Bytes of each unit DuckDB shows a memory setting in ("244.1 MiB"; below 1 KiB: "1000 bytes").
_UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


@contextlib.contextmanager
def _memory_for(con, statements: int):
    """DuckDB's memory limit (one for the whole database) times `statements` until the block
    ends: as much for each of that many statements run side by side as one statement had
    (the loader caps a load's DuckDB at 256 MB; three big queries at once did not fit in it),
    and never past DuckDB's own default, 80 % of the machine's memory."""
    (before,) = con.execute("SELECT current_setting('memory_limit')").fetchone()
    limit = memory_bytes(before)
    machine = int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    con.execute(f"SET memory_limit = '{min(limit * statements, max(limit, machine))} B'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{limit} B'")


def memory_bytes(setting: str) -> int:
    """The least bytes DuckDB shows as `setting`: it shows whole 1/1024ths of the unit, cut
    to tenths ("244.1 MiB" for 256 MB), so set again it shows as it was.

    >>> memory_bytes("244.1 MiB"), memory_bytes("18.7 GiB")
    (255958016, 20079181824)
    """
    number, _, unit = setting.partition(" ")
    return math.ceil(float(number) * 1024) * (_UNITS[unit] // 1024) if unit != "bytes" else int(number)
