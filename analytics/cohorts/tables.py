"""Which optional tables a loaded database holds (derived by other parts of a load, or not yet).

>>> import duckdb; has_table(duckdb.connect(), "conversation_topics")
False
"""

from __future__ import annotations

from analytics.db import applied_policy

#: The derived table of topics (thread_id, topic_id, topic_label), when a load wrote it.
TOPICS = "conversation_topics"


def has_table(con, name: str) -> bool:
    """Whether `con` has a table or view `name` (in any schema a bare name reaches: main, or a view of a policy)."""
    return bool(con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema IN ('main', current_schema())",
        [name]).fetchone()[0])


def topics_join(con, alias: str = "ct") -> str:
    """A LEFT JOIN of each thread's `topic_label` on `thread_id` (aliased `alias`), or "" when the
    database has no topics table. The load's topics; on a connection that masks or sees only some
    tenants, those `analytics.topics` computes live from what it reads (`topic_sources`), as the
    Topics page shows them: the load's are named by words of every tenant's unmasked questions."""
    if not has_table(con, TOPICS):
        return ""
    per_thread = TOPICS
    if not applied_policy(con).is_open:
        from analytics.topic_mining.report import topic_sources  # (topics read outcomes, cohorts read both)

        per_thread, _ = topic_sources(con)
    return (f"LEFT JOIN (SELECT thread_id, any_value(topic_label) AS topic_label FROM {per_thread} "
            f"GROUP BY thread_id) {alias} USING (thread_id)")
