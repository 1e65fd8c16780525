"""Per-conversation metrics and corpus trends (contract §8).

Every figure is defined in docs/metrics.md. Each function is one set-based
DuckDB query (no per-thread Python); docs/metrics.md has their timings on a
million messages.

Two scopes, both from `Filters`:
- thread-level figures (`conversations`, `conversation`, thread counts) take
  the threads that pass `Filters.thread_where` and describe their *whole*
  transcript;
- message-level figures (`daily`, `by_model`, `overview` message and token
  totals, `latency_distribution`, `top_*`) take the messages that pass
  `Filters.message_where` (so `since`/`until` also cut messages by `ts`).

>>> import analytics
>>> analytics.conversations("demo.duckdb").head()  # doctest: +SKIP

The parts: `scope` (filters as SQL, day numbers), `per_conversation` (the per-thread metrics and
their load-time table), `trend_tables` (the load-time trend tables), `listing` (the Conversations
list) and `corpus` (the Overview's figures). This module is their public face: `analytics.metrics.X`
is every public name of the parts.
"""

from __future__ import annotations

from analytics.metrics.scope import (  # noqa: F401
    AS_DATE,
    DAY_NUMBER,
    DERIVED_COLUMNS,
    EPOCH,
    MESSAGE_COLUMNS,
    ONE_DAY,
    column_list,
    day_range,
    day_where,
    in_scope,
    is_scoped,
    scope_clause,
)
from analytics.metrics.per_conversation import (  # noqa: F401
    CONVERSATION_COLUMNS,
    ConversationMetrics,
    MATERIALIZED_TABLE,
    PAIRS_SQL,
    ROLE_COUNTS,
    TOKEN_SUMS,
    TOOL_ROWS_SQL,
    conversation,
    conversations,
    conversations_fingerprint,
    conversations_query,
    conversations_sql,
    materialize_conversations,
    materialized,
)
from analytics.metrics.trend_tables import (  # noqa: F401
    NO_PAIRS,
    PAIRS_TABLE,
    PAIR_COLUMNS,
    PER_DAY_BODIES,
    THREAD_DAYS_SQL,
    THREAD_DAYS_TABLE,
    THREAD_MODELS_SQL,
    THREAD_MODELS_TABLE,
    TOOL_ROWS_TABLE,
    aggregate_source,
    aggregate_sql,
    current_trend_tables,
    latency_distribution_sql,
    materialize_trends,
    pairs_cte,
    thread_days_sql,
    thread_models_sql,
    tool_rows_cte,
    trend_tables,
)
from analytics.metrics.listing import (  # noqa: F401
    DEFAULT_SORT,
    LIST_COLUMNS,
    PREVIEW_CHARS,
    PREVIEW_COLUMN,
    PREVIEW_SQL,
    RANGE_COLUMNS,
    SORT_COLUMNS,
    conversation_count_sql,
    conversation_ids_sql,
    conversation_list,
    conversation_list_sql,
    list_order,
    sort_column,
    turns_histogram_sql,
    unordered_conversations,
)
from analytics.metrics.corpus import (  # noqa: F401
    DAILY_COLUMNS,
    DAILY_LATENCY,
    MODEL_LATENCY,
    Overview,
    by_model,
    by_model_sql,
    daily,
    daily_sql,
    latency_distribution,
    overview,
    overview_sql,
    top_models,
    top_tenants,
    top_tools,
    top_tools_sql,
)

__all__ = [
    "AS_DATE",
    "CONVERSATION_COLUMNS",
    "ConversationMetrics",
    "DAILY_COLUMNS",
    "DAILY_LATENCY",
    "DAY_NUMBER",
    "DEFAULT_SORT",
    "DERIVED_COLUMNS",
    "EPOCH",
    "LIST_COLUMNS",
    "MATERIALIZED_TABLE",
    "MESSAGE_COLUMNS",
    "MODEL_LATENCY",
    "NO_PAIRS",
    "ONE_DAY",
    "Overview",
    "PAIRS_SQL",
    "PAIRS_TABLE",
    "PAIR_COLUMNS",
    "PER_DAY_BODIES",
    "PREVIEW_CHARS",
    "PREVIEW_COLUMN",
    "PREVIEW_SQL",
    "RANGE_COLUMNS",
    "ROLE_COUNTS",
    "SORT_COLUMNS",
    "THREAD_DAYS_SQL",
    "THREAD_DAYS_TABLE",
    "THREAD_MODELS_SQL",
    "THREAD_MODELS_TABLE",
    "TOKEN_SUMS",
    "TOOL_ROWS_SQL",
    "TOOL_ROWS_TABLE",
    "aggregate_source",
    "aggregate_sql",
    "by_model",
    "by_model_sql",
    "column_list",
    "conversation",
    "conversation_count_sql",
    "conversation_ids_sql",
    "conversation_list",
    "conversation_list_sql",
    "conversations",
    "conversations_fingerprint",
    "conversations_query",
    "conversations_sql",
    "current_trend_tables",
    "daily",
    "daily_sql",
    "day_range",
    "day_where",
    "in_scope",
    "is_scoped",
    "latency_distribution",
    "latency_distribution_sql",
    "list_order",
    "materialize_conversations",
    "materialize_trends",
    "materialized",
    "overview",
    "overview_sql",
    "pairs_cte",
    "scope_clause",
    "sort_column",
    "thread_days_sql",
    "thread_models_sql",
    "tool_rows_cte",
    "top_models",
    "top_tenants",
    "top_tools",
    "top_tools_sql",
    "trend_tables",
    "turns_histogram_sql",
    "unordered_conversations",
]
