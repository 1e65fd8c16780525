"""`costs()`: tokens priced by the user's price table, per conversation, tenant, model, topic, outcome or day.

Tokens are `thread_model_metrics`' (per thread, UTC day and model: the messages naming a
model). A model the table does not name is not priced: its tokens are counted in
`unpriced_tokens` and it is named in `unpriced_models`; tokens of messages that name no model
are unpriced under `(no model)` (on the thread's first day). `cost` is the sum of the priced
tokens only, so a group with unpriced tokens shows a lower bound, and says so. With a
`cached_input` price, the cached part of the input (`usage_metadata.input_token_details.cache_read`)
is priced at it; docs/cost.md.

>>> costs("lens.duckdb", "prices.toml", by=("topic", "outcome"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.cohorts.prices import PriceTable, load_prices
from analytics.cohorts.tables import has_table, topics_join
from analytics.conversation_outcomes.materialize import TABLE as SIGNALS_TABLE

NO_MODEL = "(no model)"
#: Each grouping `costs(by=...)` knows and the SQL expression of a priced row it groups by.
GROUPS = {
    "thread": "u.thread_id",
    "tenant": "u.tenant_id",
    "model": "u.model",
    "topic": "ct.topic_label",
    "outcome": "s.outcome",
    "day": "u.day",
    "week": "CAST(date_trunc('week', u.day) AS DATE)",
}
#: The figures of every group, after its keys.
FIGURES = ("conversations", "input_tokens", "cached_input_tokens", "output_tokens", "cost",
           "unpriced_tokens", "unpriced_models")


def _prices_sql(prices: PriceTable) -> tuple[str, list]:
    names = sorted(prices.models)
    rows = [prices.models[n] for n in names]
    return ("SELECT unnest(?::VARCHAR[]) AS model, unnest(?::DOUBLE[]) AS p_in, unnest(?::DOUBLE[]) AS p_out, "
            "unnest(?::DOUBLE[]) AS p_cached",
            [names, [r.input for r in rows], [r.output for r in rows],
             [r.input if r.cached_input is None else r.cached_input for r in rows]])


def priced_rows_sql(where: str, params: list, prices: PriceTable) -> tuple[str, list]:
    """A query of one row per thread × UTC day × model (`u`: thread_id, tenant_id, model, day, the
    tokens, `cost` NULL when the model has no price), over the threads whose `conversation_metrics`
    row `cm` passes `where` (e.g. `Filters.metrics_where("cm")`, with its `params`)."""
    price_sql, price_params = _prices_sql(prices)
    cached, cached_join = "0", ""
    if prices.has_cached_prices:
        # Only then is the per-message JSON read (a million messages: a scan worth skipping).
        cached = "least(coalesce(c.cached, 0), t.input_tokens)"
        cached_join = """LEFT JOIN (
  SELECT m.thread_id, m.model, epoch_us(m.ts) // 86400000000 AS day_n,
         sum(TRY_CAST(json_extract(m.usage_metadata, '$.input_token_details.cache_read') AS BIGINT)) AS cached
  FROM messages m WHERE m.model IS NOT NULL AND m.thread_id IN (SELECT thread_id FROM scope) GROUP BY ALL
) c ON c.thread_id = t.thread_id AND c.model = t.model AND c.day_n IS NOT DISTINCT FROM t.day_n"""
    sql = f"""
WITH scope AS (SELECT cm.thread_id, cm.tenant_id, cm.first_ts, cm.input_tokens, cm.output_tokens
               FROM conversation_metrics cm WHERE {where}),
p AS ({price_sql}),
named AS (SELECT tm.thread_id, tm.tenant_id, tm.model, tm.day_n,
                 coalesce(sum(tm.input_tokens), 0) AS input_tokens, coalesce(sum(tm.output_tokens), 0) AS output_tokens
          FROM thread_model_metrics tm WHERE tm.thread_id IN (SELECT thread_id FROM scope) GROUP BY ALL),
unnamed AS (SELECT s.thread_id, s.tenant_id, '{NO_MODEL}' AS model, epoch_us(s.first_ts) // 86400000000 AS day_n,
                   coalesce(s.input_tokens, 0) - coalesce(n.i, 0) AS input_tokens,
                   coalesce(s.output_tokens, 0) - coalesce(n.o, 0) AS output_tokens
            FROM scope s LEFT JOIN (SELECT thread_id, sum(input_tokens) AS i, sum(output_tokens) AS o
                                    FROM named GROUP BY ALL) n USING (thread_id)),
t AS (SELECT * FROM named UNION ALL BY NAME SELECT * FROM unnamed WHERE input_tokens > 0 OR output_tokens > 0)
SELECT t.thread_id, t.tenant_id, t.model, DATE '1970-01-01' + CAST(t.day_n AS INTEGER) AS day,
       t.input_tokens, t.output_tokens, {cached} AS cached_input_tokens, p.model IS NOT NULL AS priced,
       CASE WHEN p.model IS NOT NULL THEN
         ((t.input_tokens - {cached}) * p.p_in + {cached} * p.p_cached + t.output_tokens * p.p_out) / 1e6 END AS cost
FROM t LEFT JOIN p USING (model) {cached_join}
"""
    return sql, [*params, *price_params]


def costs(db_or_con: ConOrPath, prices: PriceTable | str | os.PathLike | Mapping,
          by: str | Sequence[str] = "thread", filters: Filters | None = None) -> pd.DataFrame:
    """Cost per group of `by` (any of `GROUPS`: thread, tenant, model, topic, outcome, day, week),
    over the threads that pass `filters`: the group's keys, then `FIGURES`, biggest cost first.

    `prices`: a `PriceTable`, a .toml / .csv file, or a mapping model → {input, output[, cached_input]}
    (per million tokens). `unpriced_models` names the models without a price, comma-separated.
    """
    table = load_prices(prices)
    keys = (by,) if isinstance(by, str) else tuple(by)
    if not keys or any(k not in GROUPS for k in keys) or len(set(keys)) != len(keys):
        raise BadRequest(f"costs by {', '.join(keys) or 'nothing'}: choose from {', '.join(GROUPS)}")
    with connection(db_or_con) as con:
        joins = ""
        if "topic" in keys:
            joins += " " + (topics_join(con) or "LEFT JOIN (SELECT NULL::VARCHAR AS thread_id, NULL::VARCHAR AS topic_label) ct USING (thread_id)")
        if "outcome" in keys:
            if not has_table(con, SIGNALS_TABLE):
                raise BadRequest("costs by outcome: this database has no conversation_signals (load it again)")
            joins += f" LEFT JOIN {SIGNALS_TABLE} s USING (thread_id)"
        rows_sql, params = priced_rows_sql(*(filters or Filters()).metrics_where("cm"), table)
        key_sql = ", ".join(f"{GROUPS[k]} AS {k}" for k in keys)
        frame = con.execute(f"""
SELECT {key_sql}, count(DISTINCT u.thread_id) AS conversations,
       sum(u.input_tokens)::BIGINT AS input_tokens, sum(u.cached_input_tokens)::BIGINT AS cached_input_tokens,
       sum(u.output_tokens)::BIGINT AS output_tokens, coalesce(sum(u.cost), 0)::DOUBLE AS cost,
       sum(CASE WHEN NOT u.priced THEN u.input_tokens + u.output_tokens ELSE 0 END)::BIGINT AS unpriced_tokens,
       string_agg(DISTINCT CASE WHEN NOT u.priced THEN u.model END, ',' ORDER BY CASE WHEN NOT u.priced THEN u.model END)
         AS unpriced_models
FROM ({rows_sql}) u {joins}
GROUP BY ALL ORDER BY cost DESC, {', '.join(str(i + 1) for i in range(len(keys)))}""", params).df()
    return frame
