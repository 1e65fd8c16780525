"""The tables a load writes for the query layer, so that pages read a scan instead of
several passes over every message.

`conversation_metrics` (every thread's `conversations()` row, default resume gap),
the trend tables (latency pairs, per thread x day and x model sums) and
`risk_figures` (the Resume QA overview), `conversation_signals` (outcome signals,
`analytics.outcomes`), `topics` / `conversation_topics` (`analytics.topics`: computed over
every thread at every load, since a new question can move the others' topics) and
`search_index` (every message's text and trigram signature: `analytics.search_index`). Each carries a fingerprint of the query
that wrote it; a reader finding another fingerprint (an older tool) runs the live
query instead. The composition root (`transcript_lens.load`) hands `LoadTimeTables`
to the loader, which calls it in the load's own commit; the loader itself never
imports this package.

Every row of these tables is a function of one thread's rows, so after an
incremental load only the threads it replaced are computed again: the same
queries run where the loader's tables show only those threads (`analytics.db.only_threads`,
one block for every table).

>>> write_derived_tables(con)  # doctest: +SKIP
>>> write_derived_tables(con, ["acme:web:s1"])  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib

from analytics.db import only_threads
from analytics.metrics import materialize_conversations, materialize_trends
from analytics.outcomes.materialize import materialize_signals
from analytics.resume import materialize_risks
from analytics.search_index import materialize_search_index
from analytics.topics.materialize import materialize_topics


def write_derived_tables(con, threads: list[str] | None = None) -> None:
    """(Re)create every derived table on `con`: whole (`threads` None: a full load), or
    only the rows of `threads` (an incremental load that replaced or dropped them).
    A table written by another definition of its query is rebuilt whole either way."""
    with only_threads(con, threads) if threads is not None else contextlib.nullcontext():  # (views made once)
        materialize_conversations(con, threads)  # sets TimeZone = 'UTC' on the connection, like readers
        materialize_trends(con, threads)
        materialize_risks(con, threads)
        materialize_signals(con, threads)  # reads risk_figures: after it
        materialize_topics(con, threads)  # (over every thread, whatever the load replaced)
        materialize_search_index(con, threads)
