"""What a thread says, as text an erasure looks for: its messages and its checkpoint metadata.

Both rules of an erasure that ask "is this the erased threads' text?" — the scan's needles
(`analytics.erasure.scan`) and the export-log values it replaces (`analytics.erasure.exports`) —
read the same text of each thread (`said_sql`, one row per piece):

- each message's text and its tool calls' arguments;
- its checkpoints' **metadata**: what the graph's caller wrote there (`config["metadata"]`, the
  configurable keys LangGraph copies in) — a customer's e-mail, a CRM note, filtered on with
  `--meta KEY=VALUE`. Each key and each scalar value at any depth (a string as it is, a number
  or a boolean as JSON writes it) of every top-level key but LangGraph's own (`OWN_KEYS`: the
  step and source, the ids of the parent checkpoints, of the run and of the thread, and
  `writes`, the messages themselves in a LangGraph 0.2 checkpoint, which the message text covers).

>>> "customer" in OWN_KEYS, "parents" in OWN_KEYS
(False, True)
"""

from __future__ import annotations

import json

import duckdb

#: LangGraph's own top-level keys of a checkpoint's metadata (and any `langgraph_…` key): its
#: bookkeeping, not what the caller said.
OWN_KEYS = ("source", "step", "parents", "writes", "run_id", "thread_id", "thread_ts", "checkpoint_ns",
            "checkpoint_id")


def metadata_sql(catalog: str) -> str:
    """SQL of (thread_id, said): each key and scalar value of the metadata of `catalog`'s `checkpoints`
    that is not LangGraph's own (`OWN_KEYS`), as text, once per thread. A thread's checkpoints
    mostly repeat the caller's metadata: LangGraph's keys are taken out first (a JSON merge
    patch, in C) and the rest made distinct, so only a few values per thread are walked."""
    patch = json.dumps(dict.fromkeys(OWN_KEYS))
    return (
        "SELECT DISTINCT thread_id, said FROM (SELECT m.thread_id, unnest(["
        "CASE WHEN t.fullkey = '$' THEN e.key END, "
        "CASE WHEN t.fullkey <> '$' AND NOT suffix(t.fullkey, ']') THEN t.key END, "
        "CASE WHEN t.type NOT IN ('OBJECT', 'ARRAY', 'NULL') THEN t.value ->> '$' END]) AS said "
        f"FROM (SELECT DISTINCT thread_id, json_merge_patch(metadata, '{patch}') AS metadata "
        f"      FROM {catalog}.main.checkpoints WHERE json_type(metadata) = 'OBJECT') m, "
        "json_each(m.metadata) e, json_tree(e.value) t WHERE NOT starts_with(e.key, 'langgraph_')) "
        "WHERE said IS NOT NULL AND said <> ''")


#: The temp table `said_sql` keeps the metadata's pieces in (one pass over the checkpoints).
METADATA_TABLE = "said_metadata"


def said_sql(con: duckdb.DuckDBPyConnection, catalog: str) -> str | None:
    """SQL of (thread_id, said) for the database attached as `catalog` on `con`: every message's text
    and tool calls (one row each) and every piece of checkpoint metadata (`metadata_sql`, read once
    into the temp table `METADATA_TABLE` of `con`: a rule may ask for it twice, of the erased and
    of the kept threads); None when the database has neither table."""
    columns: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                                     "WHERE database_name = ? AND schema_name = 'main'", [catalog]).fetchall():
        columns.setdefault(table, set()).add(column)
    parts = []
    if {"thread_id", "content"} <= columns.get("messages", set()):
        tools = ", m.tool_calls::VARCHAR" if "tool_calls" in columns["messages"] else ""
        parts.append(f"SELECT m.thread_id, concat_ws(chr(10), m.content{tools}) AS said FROM {catalog}.main.messages m")
    if {"thread_id", "metadata"} <= columns.get("checkpoints", set()):
        con.execute(f"CREATE OR REPLACE TEMP TABLE {METADATA_TABLE} AS {metadata_sql(catalog)}")
        parts.append(f"SELECT thread_id, said FROM {METADATA_TABLE}")
    return " UNION ALL ".join(parts) or None
