"""The tables a load writes for the query layer, so that pages read a scan instead of
several passes over every message.

`conversation_metrics` (every thread's `conversations()` row, default resume gap),
the trend tables (latency pairs, per thread x day and x model sums) and
`risk_figures` (the Resume QA overview). Each carries a fingerprint of the query
that wrote it; a reader finding another fingerprint (an older tool) runs the live
query instead. The composition root (`transcript_lens.load`) hands `LoadTimeTables`
to the loader, which calls it on the staged database before the swap; the loader
itself never imports this package.

>>> write_derived_tables(con)  # doctest: +SKIP
"""

from __future__ import annotations

from analytics.metrics import materialize_conversations, materialize_trends
from analytics.resume import materialize_risks


def write_derived_tables(con) -> None:
    """(Re)create every derived table on `con` (rebuilt whole after every load, full or incremental)."""
    materialize_conversations(con)  # sets TimeZone = 'UTC' on the connection, like readers
    materialize_trends(con)
    materialize_risks(con)
