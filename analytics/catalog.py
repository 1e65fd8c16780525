"""The tables analytics writes into every loaded database, declared once like the loader's.

`conversation_metrics`, the trend tables and `risk_figures` are `CREATE TABLE … AS`
the live queries (`analytics.derived`), so their columns are whatever those
queries select; they are declared here — name, DuckDB type, whether the figure
can be NULL, one line of meaning — with the record types of `loaders.catalog`
(analytics imports the loader's catalogue; the loader never imports analytics).
tests/analytics/test_catalog.py holds each declaration to its query and to the
table a real load writes; `CONVERSATION_COLUMNS` and the table names in
`analytics.metrics` come from here. docs/schema.md shows every table of both
catalogues; `python scripts/schema_doc.py` regenerates its tables (`--check`:
only say whether they are current).

>>> CONVERSATION_METRICS.column("latency_median_s").type.ddl
'DOUBLE'
"""

from __future__ import annotations


from loaders import catalog as loader_catalog
from loaders.catalog import (
    BIGINT, BOOLEAN, DOUBLE, INTEGER, INTEGER_LIST, SESSION_ID, SUB_TENANT_ID, TENANT_ID, THREAD_ID, TIMESTAMPTZ, VARCHAR,
    Column, SqlType, Table, render_doc,
)


def _c(name: str, type_: SqlType, doc: str, *, null: bool = True) -> Column:
    return Column(name, type_, null, doc)


def _count(name: str, doc: str) -> Column:
    return _c(name, BIGINT, doc, null=False)


_KEY = (THREAD_ID, TENANT_ID, SUB_TENANT_ID, SESSION_ID)
_MESSAGES = _count("messages", "rows of the transcript")
#: The roles a message can have (contract §3.3), in the order their counts are columns.
ROLES = ("user", "assistant", "tool", "system", "other")

_ROLE_COUNTS = tuple(
    _count(f"{role}_messages", f"messages with `role = '{role}'`")
    for role in ROLES
)
_TOKENS = tuple(
    _c(f"{kind}_tokens", BIGINT, f"sum of `messages.{kind}_tokens`; NULL when no message has it")
    for kind in ("input", "output", "total")
)
_DAY_N = _c("day_n", BIGINT, "UTC day as days since 1970-01-01; NULL for messages without ts")
_FIRST_TS = _c("first_ts", TIMESTAMPTZ, "smallest `ts` of the messages; NULL if none has a ts")
_LAST_TS = _c("last_ts", TIMESTAMPTZ, "greatest `ts` of the messages; NULL if none has a ts")
_TOOL_CALLS = _count("tool_calls", "sum of `tool_call_count` (calls requested by assistant messages)")
_EDITED = _c("edited_messages", INTEGER, "`threads.edited_message_count` (current branch)", null=False)
_REMOVED = _c("removed_messages", INTEGER, "`threads.removed_message_count` (current branch)", null=False)
_FORKS = _c("forks", INTEGER, "`threads.fork_count`: root checkpoints with more than one child", null=False)
_BRANCHES = _c("branches", INTEGER, "`threads.branch_count`: root leaves", null=False)
_INTERRUPT = _c(
    "interrupt_pending", BOOLEAN, "`threads.interrupt_pending`: the transcript's checkpoint carries an interrupt", null=False
)
_TRANSCRIPT_CHECKPOINT = _c(
    "transcript_checkpoint_id", VARCHAR, "`threads.transcript_checkpoint_id`: the root checkpoint the transcript comes from"
)
_STALE = Column(
    "stale_reason", VARCHAR, True,
    "`threads.stale_reason`: why the transcript is not the latest root checkpoint's; NULL when it is", personal=True,
)

CONVERSATION_METRICS = Table(
    "conversation_metrics",
    "per-conversation metrics, computed at load time",
    (
        *_KEY,
        _MESSAGES,
        *_ROLE_COUNTS,
        _count("user_turns", "= `user_messages` (every user message is a turn)"),
        _FIRST_TS,
        _LAST_TS,
        _c("duration_s", DOUBLE, "`last_ts − first_ts` in seconds"),
        _c("first_checkpoint_ts", TIMESTAMPTZ, "`threads.first_ts`: smallest ts of any root checkpoint, any branch"),
        _c("last_checkpoint_ts", TIMESTAMPTZ, "`threads.last_ts`: greatest ts of any root checkpoint, any branch"),
        _c("root_checkpoints", INTEGER, "`threads.root_checkpoint_count`", null=False),
        _c("subgraph_checkpoints", INTEGER, "`threads.subgraph_checkpoint_count`", null=False),
        _count("latency_pairs", "user→assistant pairs (docs/metrics.md)"),
        _c("latency_median_s", DOUBLE, "median latency of the pairs, seconds (`quantile_cont`); NULL without pairs"),
        _c("latency_p90_s", DOUBLE, "90th percentile of the pairs' latencies, seconds; NULL without pairs"),
        _c("latency_max_s", DOUBLE, "greatest latency of the pairs, seconds; NULL without pairs"),
        _TOOL_CALLS,
        _count("distinct_tools", "distinct `name`s in the assistant messages' `tool_calls` JSON"),
        _count("tool_errors", "tool messages with `tool_status = 'error'`"),
        *_TOKENS,
        _c("models", VARCHAR, "distinct `model` values, sorted, joined with `,` (NULL when none)"),
        _FORKS,
        _BRANCHES,
        _INTERRUPT,
        _TRANSCRIPT_CHECKPOINT,
        _STALE,
        _REMOVED,
        _EDITED,
        _count(
            "resume_points",
            "idle gaps longer than 30 minutes between consecutive root checkpoints of the current branch, by ts",
        ),
        _c("mean_chars_user", DOUBLE, "mean `content_chars` of user messages"),
        _c("mean_chars_assistant", DOUBLE, "mean `content_chars` of assistant messages"),
    ),
)

#: `threads` columns that `conversation_metrics` copies under another name (the others it copies keep
#: theirs: the key parts, `interrupt_pending`): thread conditions read them there without a join.
THREAD_COLUMNS_IN_METRICS = {"first_ts": "first_checkpoint_ts", "last_ts": "last_checkpoint_ts", "fork_count": "forks"}

LATENCY_PAIR_ROWS = Table(
    "latency_pair_rows",
    "every user→assistant pair of every thread, computed at load time",
    (
        THREAD_ID,
        TENANT_ID,
        _c("user_ordinal", INTEGER, "`messages.ordinal` of the question", null=False),
        _c("assistant_ordinal", INTEGER, "`messages.ordinal` of its reply (the next assistant message with a ts)", null=False),
        _c("user_ts", TIMESTAMPTZ, "`ts` of the question", null=False),
        _c("assistant_ts", TIMESTAMPTZ, "`ts` of the reply", null=False),
        _c("latency_s", DOUBLE, "`assistant_ts − user_ts` in seconds (negative when writers' clocks disagree)", null=False),
        _c("model", VARCHAR, "`model` of the reply"),
    ),
)

THREAD_DAY_METRICS = Table(
    "thread_day_metrics",
    "per thread × UTC day sums over the messages, computed at load time",
    (
        _DAY_N,
        THREAD_ID,
        TENANT_ID,
        _count("messages", "messages of the thread stamped that day"),
        *_ROLE_COUNTS,
        _TOOL_CALLS,
        *_TOKENS,
        _FIRST_TS,
        _LAST_TS,
    ),
)

THREAD_MODEL_METRICS = Table(
    "thread_model_metrics",
    "per thread × UTC day × model sums over the messages naming a model, computed at load time",
    (
        _DAY_N,
        THREAD_ID,
        TENANT_ID,
        _c("model", VARCHAR, "`messages.model`", null=False),
        _count("messages", "messages of the thread that day naming the model"),
        *_TOKENS,
    ),
)

#: A 128-bit signature (`analytics.text_index`); only in a table written by the load.
UHUGEINT = SqlType("UHUGEINT", "UHUGEINT")

SEARCH_TEXT = Table(
    "search_text",
    "the text index: every message with content, with the trigram signature a text search narrows by "
    "(`analytics.text_index`), written at load time",
    (
        loader_catalog.MESSAGES.column("thread_id"),
        loader_catalog.MESSAGES.column("ordinal"),
        loader_catalog.MESSAGES.column("role"),
        loader_catalog.MESSAGES.column("ts"),
        _c("grams", UHUGEINT, "one bit set per trigram of the case-folded content (a 7-bit hash of it); "
                              "a message containing a text holds every bit of the text's trigrams", null=False),
        loader_catalog.MESSAGES.column("content"),
    ),
)

TOOL_ROWS = Table(
    "tool_rows",
    "every tool call and every tool result of every thread, named by tool, computed at load time",
    (
        THREAD_ID,
        TENANT_ID,
        _c("ts", TIMESTAMPTZ, "`ts` of the calling assistant message, or of the tool message (a result)"),
        _c("kind", VARCHAR, "`call` (one per entry of `messages.tool_calls`) or `result` (a tool message)", null=False),
        _c("tool", VARCHAR, "a call's name; a result's: the name of the call it answers (`tool_call_id`), "
                            "else its own `messages.name`"),
        _c("error", BOOLEAN, "a result whose `tool_status` is `error` (FALSE for a call)", null=False),
    ),
)

RISK_FIGURES = Table(
    "risk_figures",
    "the Resume QA overview, computed at load time",
    (
        *_KEY,
        _c("risk_score", INTEGER, "sum of the weights of `flags`", null=False),
        _c("flags", VARCHAR, "the risk flags that apply, most severe first, joined with `,` (empty when none)", null=False),
        _count("conversational_messages", "user + assistant messages in the transcript"),
        _count("window_size", "entries in the window a restart now rebuilds (at most 50)"),
        _count("truncated_by", "conversational messages that fell off the window"),
        _count("window_no_id", "window messages without an id"),
        _count("window_no_ts", "window messages without a timestamp"),
        _EDITED,
        _count("edited_in_window", "window messages edited on the current branch"),
        _REMOVED,
        _BRANCHES,
        _FORKS,
        _c("latest_not_leaf", BOOLEAN, "the latest root checkpoint has children (`NOT threads.latest_is_leaf`)", null=False),
        _INTERRUPT,
        _count("undecodable_messages", "entries of the latest message list the loader could not decode"),
        _count("load_errors", "`load_errors` rows of the thread"),
        _c("latest_checkpoint_id", VARCHAR, "`threads.transcript_checkpoint_id`: the root checkpoint the transcript comes from"),
        _c("last_ts", TIMESTAMPTZ, "`threads.last_ts`"),
        _count("resume_points", "restarts of the thread: `resume_points()` at the default 30-minute gap, a human "
               "wait (an idle gap alone begun waiting on an interrupt) left out"),
    ),
)

_SIGNAL_DOCS = {
    "abandoned": "the user spoke last, unanswered, no interrupt pending, idle past 30 minutes to the store's latest checkpoint time",
    "resolved_closing": "the last user message is a closing (lexicon), followed only by assistant text",
    "dropped_after_failure": "the transcript ends on a failed tool result or an assistant message giving up (lexicon)",
    "agent_loop": "one tool called with the same normalised arguments 3+ times within one user turn",
    "tool_error_cascade": "2+ consecutive failed tool results (no successful one between)",
    "user_frustration": "a user message asking for a human or calling the answer wrong (lexicon), or near-duplicating the previous user message",
    "repetition": "an assistant reply (20+ characters) near-duplicating an earlier one",
    "slow_hitl": "an interrupt resumed after more than 4 hours, or pending longer than that to the store's latest checkpoint ts",
    "lost_context": "a restart after a pause (a Resume QA resume point: more than 30 minutes between checkpoints) rebuilt its window from a state with more user/assistant messages than the window cap (50): older turns left out",
}
_ORDINAL_DOCS = {
    "abandoned": "the unanswered user message",
    "resolved_closing": "the closing user message",
    "dropped_after_failure": "the last message (the failed tool result or the giving-up reply)",
    "agent_loop": "the assistant messages carrying the repeated calls",
    "tool_error_cascade": "the failed tool results of each run of 2+",
    "user_frustration": "the user messages that fired (a request for a human, a complaint, a repeat)",
    "repetition": "the assistant replies repeating an earlier one",
    "slow_hitl": "the last message before each slow interrupt",
    "lost_context": "for each such restart, the first message its rebuilt window held",
}

CONVERSATION_SIGNALS = Table(
    "conversation_signals",
    "per-conversation outcome signals and outcome, computed at load time (docs/outcomes.md)",
    (
        THREAD_ID,
        *(_c(name, BOOLEAN, doc, null=False) for name, doc in _SIGNAL_DOCS.items()),
        *(_c(f"{name}_ordinals", INTEGER_LIST, f"`messages.ordinal`s: {doc} (empty when the signal is false)", null=False)
          for name, doc in _ORDINAL_DOCS.items()),
        _c("outcome", VARCHAR, "`waiting`, `failed`, `abandoned`, `resolved` or `unknown` (docs/outcomes.md)", null=False),
        _c("outcome_reason", VARCHAR, "the outcome in words: the signal and the message it rests on", null=False),
        _c("outcome_ordinals", INTEGER_LIST, "`messages.ordinal` of the message the outcome rests on (the one "
           "`outcome_reason` names: the failed tool result, the unanswered or closing user message, the last reply…); "
           "empty without messages", null=False),
        _INTERRUPT,
        _c("last_role", VARCHAR, "`role` of the last message other than system; NULL without messages"),
        _c("last_ordinal", INTEGER, "`ordinal` of that message"),
        _c("last_user_ordinal", INTEGER, "`ordinal` of the last user message"),
        _c("last_tool_error", BOOLEAN, "the last tool result is an error and no user message follows it", null=False),
        _c("last_tool_ordinal", INTEGER, "`ordinal` of the last tool result"),
        _c("failure_kind", VARCHAR, "`tool error` or `assistant gave up` when `dropped_after_failure`"),
        _c("unanswered_since", TIMESTAMPTZ, "ts of the last user message when it is unanswered, not a closing, no interrupt pending"),
        _c("waiting_since", TIMESTAMPTZ, "ts of the checkpoint the pending interrupt is keyed on"),
        _c("waiting_ordinal", INTEGER, "the last message before the pending interrupt"),
        _c("hitl_answered_ordinals", INTEGER_LIST, "the last message before each interrupt resumed after more than 4 hours",
           null=False),
    ),
)

#: Lists of text (derived tables only).
VARCHAR_LIST = SqlType("VARCHAR[]", "VARCHAR[]")

CONVERSATION_TOPICS = Table(
    "conversation_topics",
    "each conversation's topic: its first question clustered with every other's, at load time (docs/topics.md)",
    (
        THREAD_ID,
        _c("topic_id", INTEGER, "`topics.topic_id`: 0 the largest topic, then by size and label", null=False),
        _c("topic_label", VARCHAR, "`topics.topic_label`", null=False),
        _c("question_ordinal", INTEGER, "`messages.ordinal` of the first question (first user message of 3+ words)",
           null=False),
    ),
)

TOPICS = Table(
    "topics",
    "the topics of the users' first questions, at load time (docs/topics.md)",
    (
        _c("topic_id", INTEGER, "0 the largest topic, then by size and label", null=False),
        _c("topic_label", VARCHAR, "its three top terms, joined with `, `; with fewer than two, its most typical question "
           "in quotes", null=False),
        _c("terms", VARCHAR_LIST, "its top terms (normalised words), the most distinctive first", null=False),
        _c("tools", VARCHAR_LIST, "the tools its conversations' agents called most in answer, most first", null=False),
        _c("typical_thread_ids", VARCHAR_LIST, "threads whose first question is closest to the topic's centre",
           null=False),
        _c("threads", BIGINT, "conversations of the topic", null=False),
    ),
)

#: Every table analytics writes at load time (`analytics.derived.write_derived_tables`).
DERIVED_TABLES: tuple[Table, ...] = (
    CONVERSATION_METRICS, LATENCY_PAIR_ROWS, THREAD_DAY_METRICS, THREAD_MODEL_METRICS, TOOL_ROWS, RISK_FIGURES,
    CONVERSATION_SIGNALS, CONVERSATION_TOPICS, TOPICS, SEARCH_TEXT,
)
#: Every table of a loaded database: the loader's, then the derived ones.
ALL_TABLES: tuple[Table, ...] = (*loader_catalog.TABLES, *DERIVED_TABLES)



def schema_doc(text: str) -> str:
    """`text` (docs/schema.md) with the block of every table regenerated (the database's, then
    the review workspace's: `analytics.workspace.catalog`); raises when a block names no table,
    or a table has no block."""
    from analytics.workspace.catalog import TABLES as WORKSPACE_TABLES  # (its package imports this module's users)

    tables = (*ALL_TABLES, *WORKSPACE_TABLES)
    names = loader_catalog.doc_blocks(text)
    known = {t.name for t in tables}
    if set(names) - known or known - set(names) or len(names) != len(set(names)):
        raise ValueError(
            f"docs/schema.md blocks {names} do not name each of the tables {sorted(known)} once"
        )
    return render_doc(text, tables)
