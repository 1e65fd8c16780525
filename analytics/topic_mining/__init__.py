"""Topics and failure patterns: what users ask about, and what led conversations to fail.

- `cluster`: the topics of short texts (TF-IDF, LSA, k-means; numpy only, deterministic);
- `concepts`: support vocabulary of English, German, French and Spanish mapped to one concept each;
- `stopwords`: the function words of English, German, French and Spanish;
- `materialize`: the `topics` and `conversation_topics` tables a load writes;
- `report`: `topics()`, `topic_overview()`, `topic_trend()` and the `topics` CSV report;
- `patterns`: `patterns()` and the `patterns` CSV report (failure signatures).

docs/topics.md defines each.
"""
