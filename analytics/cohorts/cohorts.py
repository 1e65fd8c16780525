"""One row per conversation of a cohort (a `Filters`): every figure a comparison compares.

The figures: the per-conversation metrics (`MEANS`, from `conversation_metrics`), the outcome
signals and the outcome (`analytics.outcomes`), the topic when the database has
`conversation_topics`, and the cost when a price table is given (`analytics.cohorts.costs`:
NULL for a conversation with tokens of a model the table does not price).

>>> cohort_frame("lens.duckdb", Filters(metadata=(("app_version", "1.1"),))).columns[:3].tolist()  # doctest: +SKIP
['thread_id', 'messages', 'user_turns']
"""

from __future__ import annotations

from analytics._pandas import pd
from analytics.cohorts.costs import priced_rows_sql
from analytics.cohorts.prices import PriceTable
from analytics.cohorts.tables import TOPICS, has_table
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.outcomes.report import outcomes_relation
from analytics.outcomes.signals import SIGNALS

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


def cohort_frame(db_or_con: ConOrPath, filters: Filters, prices: PriceTable | None = None) -> pd.DataFrame:
    """One row per thread that passes `filters` (by thread id): `thread_id`, the `MEANS`, each signal
    (bool), `outcome`, `topic_label` (None without topics), and, when `prices` is given, `cost` and
    `unpriced_models` (the models of its tokens the table has no price for, comma-separated)."""
    with connection(db_or_con) as con:
        where, params = filters.metrics_where("cm")
        frame = con.execute(f"SELECT cm.thread_id, {', '.join(f'cm.{c}' for c in MEANS)} FROM conversation_metrics cm "
                            f"WHERE {where} ORDER BY cm.thread_id", params).df()
        signals = outcomes_relation(con, filters).select(", ".join(("thread_id", *SIGNALS, "outcome"))).df()
        frame = frame.merge(signals, on="thread_id", how="left")
        if has_table(con, TOPICS):
            t_where, t_params = filters.metrics_where("cm")
            topics = con.execute(
                f"SELECT thread_id, any_value(topic_label) AS topic_label FROM {TOPICS} "
                f"WHERE thread_id IN (SELECT cm.thread_id FROM conversation_metrics cm WHERE {t_where}) GROUP BY thread_id",
                t_params).df()
            frame = frame.merge(topics, on="thread_id", how="left")
        else:
            frame["topic_label"] = None
        if prices is not None:
            rows_sql, r_params = priced_rows_sql(con, filters, prices)
            cost = con.execute(
                f"SELECT thread_id, CASE WHEN bool_and(priced) THEN sum(cost) END AS {COST}, "
                "string_agg(DISTINCT CASE WHEN NOT priced THEN model END, ',') AS unpriced_models "
                f"FROM ({rows_sql}) GROUP BY thread_id", r_params).df()
            frame = frame.merge(cost, on="thread_id", how="left")
            # A conversation without tokens costs nothing (it has none to price).
            frame[COST] = frame[COST].where(frame[COST].notna() | frame["thread_id"].isin(cost["thread_id"]), 0.0)
    for name in SIGNALS:
        frame[name] = frame[name].fillna(False).astype(bool)
    return frame.sort_values("thread_id", ignore_index=True)
