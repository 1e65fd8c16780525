"""What a cohort can be chosen by: the models, and the checkpoint metadata keys with their values.

A metadata key is offered when the transcript checkpoints carry it as a plain value (text,
number, boolean) with at most `MAX_VALUES` distinct values (an app version, a region, an
experiment arm), LangGraph's own keys aside (`step`, `source`, `parents`, …: not cohorts).
On a masking connection a key or value holding a personal value is not offered
(`analytics.masking.shown_whole_sql`): the choices would show it.

>>> cohort_facets("lens.duckdb").metadata  # doctest: +SKIP
(('app_version', '1.0', 29), ('app_version', '1.1', 29))
"""

from __future__ import annotations

from dataclasses import dataclass

from analytics.db import ConOrPath, connection
from analytics.masking import shown_whole_sql

MAX_VALUES = 50
#: Keys LangGraph writes itself (or a run id): no use as a cohort.
OWN_KEYS = ("step", "source", "parents", "writes", "run_id", "thread_id", "checkpoint_ns", "checkpoint_id",
            "langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns")

_SQL = """
WITH m AS (
  SELECT c.metadata FROM threads t
  JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = t.transcript_checkpoint_id
  WHERE c.metadata IS NOT NULL AND json_type(c.metadata) = 'OBJECT'),
kv AS (SELECT k AS key, metadata, '/' || replace(replace(k, '~', '~0'), '/', '~1') AS pointer
       FROM (SELECT unnest(json_keys(metadata)) AS k, metadata FROM m) WHERE k NOT IN (SELECT unnest(?::VARCHAR[]))),
v AS (SELECT key, json_extract_string(metadata, pointer) AS value FROM kv
      WHERE json_type(metadata, pointer) IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE', 'BOOLEAN')),
counted AS (SELECT key, value, count(*) AS n FROM v GROUP BY ALL),
offered AS (SELECT key, value, n FROM counted QUALIFY count(*) OVER (PARTITION BY key) <= ?)
SELECT key, value, n FROM offered WHERE {shown} ORDER BY key, value
""".format(shown=shown_whole_sql("key || chr(10) || value"))


@dataclass(frozen=True)
class CohortFacets:
    """`models`: every `messages.model`; `metadata`: (key, value, threads) of the offered keys."""

    models: tuple[str, ...]
    metadata: tuple[tuple[str, str, int], ...]


def cohort_facets(con_or_path: ConOrPath, max_values: int = MAX_VALUES) -> CohortFacets:
    """The models and the metadata (key, value, threads) a cohort can be chosen by."""
    with connection(con_or_path) as con:
        models = tuple(r[0] for r in con.execute(
            "SELECT DISTINCT model FROM thread_model_metrics WHERE model IS NOT NULL ORDER BY 1").fetchall())
        metadata = tuple((k, v, int(n)) for k, v, n in con.execute(_SQL, [list(OWN_KEYS), max_values]).fetchall())
    return CohortFacets(models, metadata)
