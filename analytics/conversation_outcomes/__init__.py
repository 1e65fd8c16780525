"""Conversation outcomes: which conversations went wrong and why, offline and without an LLM.

- `signals`: the set-based facts (DuckDB SQL) and the signal names;
- `lexicon`: the EN/DE/FR/ES phrases and text normalisation (a user lexicon: TOML or JSON);
- `similarity`: near-duplicate texts (token-set Jaccard);
- `outcome`: the store-relative signals and the outcome rule;
- `materialize`: the `conversation_signals` table a load writes;
- `report`: `outcomes()` and the `outcomes` CSV report.

docs/outcomes.md defines every signal.
"""
