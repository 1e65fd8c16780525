"""Two cohorts side by side, and what conversations cost.

- `stats`: the intervals and tests (pure Python, deterministic);
- `tables`: the optional tables a database may hold (`conversation_topics`);
- `prices`: the user's per-model price table (TOML or CSV);
- `costs`: `costs()`, tokens priced per conversation, tenant, model, topic, outcome or day;
- `cohorts`: one row per conversation of a cohort, every figure compared;
- `compare`: `compare_cohorts()`;
- `report`: the `compare` and `costs` CSV reports.

docs/compare.md has the method; docs/cost.md the price table.
"""
