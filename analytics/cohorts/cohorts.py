"""One row per conversation of two cohorts (two `Filters`): every figure a comparison compares.

The figures: the per-conversation metrics (`MEANS`, from `conversation_metrics`), the outcome
signals and the outcome (`analytics.outcomes`), the topic when the database has
`conversation_topics` (`tables.topics_join`: live under masking or a tenant scope), and the cost when a price table is given (`analytics.cohorts.costs`:
NULL for a conversation with tokens of a model the table does not price). Both cohorts are read
by one query (a thread may be in both): `in_a`, `in_b` say which.

>>> frame = cohort_frame("lens.duckdb", Filters(metadata=(("app_version", "1.0"),)),
...                      Filters(metadata=(("app_version", "1.1"),)))  # doctest: +SKIP
>>> frame[frame["in_b"]].columns[:4].tolist()  # doctest: +SKIP
['thread_id', 'in_a', 'in_b', 'messages']
"""

from __future__ import annotations

from analytics import _pandas as pd
from analytics.cohorts.costs import priced_rows_sql
from analytics.cohorts.prices import PriceTable
from analytics.cohorts.tables import topics_join
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.conversation_outcomes.materialize import TABLE as SIGNALS_TABLE, materialized
from analytics.conversation_outcomes.report import outcomes_relation
from analytics.conversation_outcomes.signals import SIGNALS

#: The per-conversation means compared, and how the page names them (docs/metrics.md defines each).
MEANS = {
    "messages": "Messages",
    "user_turns": "User turns",
    "assistant_messages": "Assistant messages",
    "tool_calls": "Tool calls",
    "tool_errors": "Tool errors",
    "input_tokens": "Input tokens",
    "output_tokens": "Output tokens",
    "total_tokens": "Total tokens",
    "duration_s": "Duration (s)",
    "latency_median_s": "Median reply latency (s)",
    "resume_points": "Resume points",
}
#: The cost column, when a price table is given.
COST = "cost"


def cohort_frame(db_or_con: ConOrPath, a: Filters, b: Filters, prices: PriceTable | None = None) -> pd.DataFrame:
    """One row per thread that passes `a` or `b` (by thread id): `thread_id`, `in_a`, `in_b`, the
    `MEANS`, each signal (bool), `outcome`, `topic_label` (None without topics), and, when `prices`
    is given, `cost` and `unpriced_models` (the models of its tokens the table has no price for,
    comma-separated)."""
    with connection(db_or_con) as con:
        a_where, a_params = a.metrics_where("cm")
        b_where, b_params = b.metrics_where("cm")
        scope, scope_params = f"(({a_where}) OR ({b_where}))", [*a_params, *b_params]
        columns = [f"cm.{c}" for c in MEANS]
        joins, params = [], []
        live = not materialized(con)
        if not live:
            columns += [f"s.{c}" for c in (*SIGNALS, "outcome")]
            joins.append(f"LEFT JOIN {SIGNALS_TABLE} s USING (thread_id)")
        topics = topics_join(con)
        if topics:
            columns.append("ct.topic_label")
            joins.append(topics)
        else:
            columns.append("NULL::VARCHAR AS topic_label")
        if prices is not None:
            rows_sql, cost_params = priced_rows_sql(scope, scope_params, prices)
            # A conversation without tokens has no priced rows: it costs nothing.
            columns += [f"CASE WHEN k.thread_id IS NULL THEN 0.0 ELSE k.{COST} END AS {COST}", "k.unpriced_models"]
            joins.append(f"""LEFT JOIN (SELECT thread_id, CASE WHEN bool_and(priced) THEN sum(cost) END AS {COST},
                                string_agg(DISTINCT CASE WHEN NOT priced THEN model END, ',') AS unpriced_models
                             FROM ({rows_sql}) GROUP BY thread_id) k USING (thread_id)""")
            params += cost_params
        frame = con.execute(
            f"SELECT cm.thread_id, coalesce(({a_where}), FALSE) AS in_a, coalesce(({b_where}), FALSE) AS in_b, "
            f"{', '.join(columns)} FROM conversation_metrics cm {' '.join(joins)} WHERE {scope} ORDER BY cm.thread_id",
            [*a_params, *b_params, *params, *scope_params]).df()
        if live:  # signals computed by the rules, not read from the table a load wrote
            signals = outcomes_relation(con, Filters(thread_ids=tuple(frame["thread_id"]))
                                        ).select(", ".join(("thread_id", *SIGNALS, "outcome"))).df()
            frame = frame.merge(signals, on="thread_id", how="left")
    for name in SIGNALS:
        frame[name] = frame[name].fillna(False).astype(bool)
    return frame
