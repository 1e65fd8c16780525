"""The outcome signals' facts, read set-based from the loaded tables (DuckDB SQL).

Each query runs over the threads of `thread_where` (a `Filters.thread_where("t")` over
`threads t`) and returns a few rows per thread; `analytics.conversation_outcomes.materialize` turns
them into one `conversation_signals` row per thread. The text-level rules (lexicon,
similarity) run in Python over only what these queries hand them.

The signals, their names in the table, in the order of the columns (docs/outcomes.md
defines each):

>>> SIGNALS[:3]
('abandoned', 'resolved_closing', 'dropped_after_failure')
"""

from __future__ import annotations

SIGNALS = (
    "abandoned", "resolved_closing", "dropped_after_failure", "agent_loop", "tool_error_cascade",
    "user_frustration", "repetition", "slow_hitl", "lost_context",
)
OUTCOMES = ("resolved", "abandoned", "failed", "waiting", "unknown")
#: Calls of one tool with the same arguments in one user turn that make a loop.
LOOP_CALLS = 3
#: The text rules (lexicon, closings, near-duplicates) read messages of at most this many
#: characters: a pasted log is none of those, and a scan that reads its text whole could
#: take more memory than a load may (the column is read only where `content_chars` allows).
TEXT_CHARS = 16_384



def _text_row(alias: str) -> str:
    """The messages whose text the text rules read: user messages and assistant replies with text."""
    return (f"{alias}.content_chars BETWEEN 1 AND {TEXT_CHARS} AND {alias}.role IN ('user', 'assistant') "
            f"AND {alias}.content IS NOT NULL")


_SCOPE = "scope AS (SELECT t.thread_id, t.interrupt_pending, t.last_ts FROM threads t WHERE {where})"

#: Per thread: the pending interrupt, the last message (system messages aside), the last user
#: message, whether only assistant text follows it, whether the last tool result is an error
#: with no user message after it, and the texts of the last message and the last user message
#: where the text rules read them (`_text_row`). One aggregate pass over the messages (ordinals
#: are unique in a thread): "only assistant text after the last user message" is "the last
#: message that is not a plain assistant reply is that user message".
ENDINGS_SQL = """
WITH """ + _SCOPE + """,
e AS (SELECT thread_id, max(ordinal) AS last_ordinal, arg_max(role, ordinal) AS last_role,
             arg_max_null(tool_status, ordinal) AS last_status,
             max(ordinal) FILTER (WHERE role = 'user') AS last_user_ordinal,
             arg_max_null(ts, ordinal) FILTER (WHERE role = 'user') AS last_user_ts,
             max(ordinal) FILTER (WHERE role <> 'assistant' OR coalesce(tool_call_count, 0) > 0) AS last_turn_ordinal,
             max(ordinal) FILTER (WHERE role = 'tool') AS last_tool_ordinal,
             arg_max_null(tool_status, ordinal) FILTER (WHERE role = 'tool') AS last_tool_status
      FROM messages WHERE thread_id IN (SELECT thread_id FROM scope) AND role <> 'system' GROUP BY thread_id)
SELECT s.thread_id, s.interrupt_pending,
       e.last_ordinal, e.last_role,
       coalesce(e.last_role = 'tool' AND e.last_status = 'error', FALSE) AS last_is_tool_error,
       e.last_user_ordinal, coalesce(e.last_user_ts, s.last_ts) AS last_user_ts,
       coalesce(e.last_turn_ordinal = e.last_user_ordinal, TRUE) AS only_replies_after_user,
       coalesce(e.last_tool_status = 'error' AND (e.last_user_ordinal IS NULL OR e.last_user_ordinal < e.last_tool_ordinal),
                FALSE) AS last_tool_error,
       e.last_tool_ordinal,
       lm.content AS last_content, um.content AS last_user_content
FROM scope s
LEFT JOIN e USING (thread_id)
LEFT JOIN messages lm ON lm.thread_id = s.thread_id AND lm.ordinal = e.last_ordinal AND """ + _text_row("lm") + """
LEFT JOIN messages um ON um.thread_id = s.thread_id AND um.ordinal = e.last_user_ordinal AND """ + _text_row("um") + """
"""

#: Per thread with a cascade: the ordinals of the failed tool results that stand in a run of
#: two or more (tool results in transcript order, no successful one between).
CASCADES_SQL = """
WITH """ + _SCOPE + """,
tools AS (SELECT thread_id, ordinal, coalesce(tool_status = 'error', FALSE) AS err FROM messages
          WHERE role = 'tool' AND thread_id IN (SELECT thread_id FROM scope)),
runs AS (SELECT *, sum(CASE WHEN err THEN 0 ELSE 1 END)
                   OVER (PARTITION BY thread_id ORDER BY ordinal ROWS UNBOUNDED PRECEDING) AS run FROM tools),
cascades AS (SELECT thread_id, run, list(ordinal ORDER BY ordinal) AS ords FROM runs WHERE err
             GROUP BY ALL HAVING count(*) >= 2)
SELECT thread_id, flatten(list(ords ORDER BY run)) AS ordinals FROM cascades GROUP BY thread_id
"""

#: Tool calls that may form a loop: (thread, user turn, tool) called three or more times in the
#: turn; the arguments are compared, normalised, in Python. A user turn is the messages from one
#: user message up to the next (turn 0: before the first). Only threads with three tool calls or
#: more in all are numbered into turns: a hash aggregate that spares most threads the window's
#: sort (on the 1M-message benchmark database the query takes 0.11 CPU-s, 0.34 without it).
LOOP_CANDIDATES_SQL = """
WITH """ + _SCOPE + """,
busy AS (SELECT thread_id FROM messages WHERE tool_call_count > 0 AND thread_id IN (SELECT thread_id FROM scope)
         GROUP BY thread_id HAVING sum(tool_call_count) >= """ + str(LOOP_CALLS) + """),
turns AS (SELECT thread_id, ordinal, role, tool_calls,
                 sum(CASE WHEN role = 'user' THEN 1 ELSE 0 END)
                   OVER (PARTITION BY thread_id ORDER BY ordinal ROWS UNBOUNDED PRECEDING) AS turn
          FROM messages WHERE (role = 'user' OR tool_call_count > 0) AND thread_id IN (SELECT thread_id FROM busy)),
calls AS (SELECT thread_id, turn, ordinal, unnest(json_extract_string(tool_calls, '$[*].name')) AS name,
                 unnest(json_extract(tool_calls, '$[*].args'))::VARCHAR AS args
          FROM turns WHERE role = 'assistant' AND tool_calls IS NOT NULL)
SELECT thread_id, turn, ordinal, name, args FROM calls
QUALIFY count(*) OVER (PARTITION BY thread_id, turn, name) >= """ + str(LOOP_CALLS) + """
ORDER BY thread_id, ordinal
"""

#: Every user message and every assistant reply with text, in order (lexicon and similarity).
TEXTS_SQL = """
WITH """ + _SCOPE + """
SELECT thread_id, ordinal, role, content FROM messages m
WHERE """ + _text_row("m") + """ AND thread_id IN (SELECT thread_id FROM scope)
ORDER BY thread_id, ordinal
"""

#: Every interrupt on the current branch: the root checkpoint it is keyed on (pending from its
#: ts), the checkpoint written from it when it was resumed (NULL: not resumed), and the last
#: message it had (`message_count - 1`, the transcript's ordinal of that message).
INTERRUPTS_SQL = """
WITH """ + _SCOPE + """
SELECT c.thread_id, c.ts AS pending_ts, min(r.ts) AS resumed_ts, any_value(c.message_count) - 1 AS ordinal,
       c.checkpoint_id = any_value(t.transcript_checkpoint_id) AS is_transcript
FROM checkpoints c
JOIN threads t ON t.thread_id = c.thread_id
LEFT JOIN checkpoints r ON r.thread_id = c.thread_id AND r.parent_checkpoint_id = c.checkpoint_id
     AND r.is_root AND r.on_current_branch
WHERE c.is_root AND c.on_current_branch AND c.has_interrupt AND c.thread_id IN (SELECT thread_id FROM scope)
GROUP BY c.thread_id, c.checkpoint_id, c.ts
"""

#: Threads restarted with more history than a restart rebuilds, the candidates of `lost_context`
#: (from the Resume QA risks, `{risks}`): a resume point, and more user/assistant messages than the
#: window cap now or before a removal (a removed message may have been in a window rebuilt earlier).
LOST_CONTEXT_CANDIDATES = """t.thread_id IN (SELECT thread_id FROM ({risks})
    WHERE resume_points >= 1 AND conversational_messages + removed_messages > ?)"""

#: Every restart whose rebuilt window lacked older turns: a resume point (`{points}`: the Resume QA
#: CTEs ending in `numbered`) whose `before` checkpoint, the state the runtime rehydrated from, held
#: more user/assistant messages than the window cap. One row per such restart: the thread and the
#: transcript ordinal of the first message that window held (by message id; the list position when
#: the message has none; NULL when the transcript no longer holds it).
LOST_CONTEXT_SQL = """{points},
long_before AS (SELECT DISTINCT thread_id, before_checkpoint_id AS checkpoint_id FROM numbered
                WHERE before_message_count > ?),
lists AS (SELECT c.thread_id, c.checkpoint_id, unnest(c.message_versions) AS version,
                 generate_subscripts(c.message_versions, 1) - 1 AS list_ordinal
          FROM checkpoints AS c JOIN long_before AS b USING (thread_id, checkpoint_id) WHERE c.is_root),
conv AS (SELECT l.thread_id, l.checkpoint_id, l.list_ordinal, v.message_id,
                row_number() OVER (PARTITION BY l.thread_id, l.checkpoint_id ORDER BY l.list_ordinal DESC) AS from_end
         FROM lists AS l JOIN message_versions AS v ON v.thread_id = l.thread_id AND v.version = l.version
         WHERE v.role IN ('user', 'assistant')),
first_kept AS (SELECT thread_id, checkpoint_id, any_value(list_ordinal) FILTER (WHERE from_end = ?) AS list_ordinal,
                      any_value(message_id) FILTER (WHERE from_end = ?) AS message_id
               FROM conv GROUP BY thread_id, checkpoint_id HAVING count(*) > ?)
SELECT DISTINCT f.thread_id, CASE WHEN f.message_id IS NULL THEN f.list_ordinal ELSE m.ordinal END AS ordinal
FROM first_kept AS f LEFT JOIN messages AS m ON m.thread_id = f.thread_id AND m.message_id = f.message_id
"""


def lost_context_sql(where: str, params: list, risks: str) -> tuple[str, list]:
    """`LOST_CONTEXT_SQL` over the threads of `where` (its values in `params`) and its parameters;
    `risks` is the text of a query of Resume QA risk rows (`risk_figures`, or its live query)."""
    # (imported here: analytics.filters imports this module's SIGNALS, and the resume modules import filters)
    from analytics.resume.chain import points_ctes
    from analytics.resume.common import DEFAULT_CAP, PROCESS_KEYS
    from analytics.resume.gap import DEFAULT_GAP_MINUTES

    scoped = f"({where}) AND " + LOST_CONTEXT_CANDIDATES.format(risks=risks)
    points, point_params = points_ctes(scoped, [*params, DEFAULT_CAP], DEFAULT_GAP_MINUTES, PROCESS_KEYS)
    return LOST_CONTEXT_SQL.format(points=points), [*point_params, DEFAULT_CAP, DEFAULT_CAP, DEFAULT_CAP, DEFAULT_CAP]


#: Per thread with an interrupt on the current branch: the ordinals of those answered after longer
#: than the service level (`?` hours; `max(ordinal, 0)`, sorted, NULL: none), and the transcript's
#: pending one (not resumed): its ts and ordinal.
INTERRUPT_FACTS_SQL = """
WITH i AS (""" + INTERRUPTS_SQL + """),
p AS (SELECT *, resumed_ts IS NULL AND coalesce(is_transcript, FALSE) AS pending FROM i)
SELECT thread_id,
       list_sort(list(greatest(ordinal, 0)) FILTER (WHERE resumed_ts IS NOT NULL AND pending_ts IS NOT NULL
                 AND resumed_ts - pending_ts > to_microseconds(CAST(? * 3600e6 AS BIGINT)))) AS answered,
       any_value(pending_ts) FILTER (WHERE pending) AS pending_ts,
       any_value(ordinal) FILTER (WHERE pending) AS pending_ordinal
FROM p GROUP BY thread_id
"""

#: One row of facts per thread (`materialize._FACT_TYPES`), set-based over what the other queries
#: and the text rules left in the connection's relations `tl_sig_*`: the endings (`ENDINGS_SQL`),
#: the interrupts (`INTERRUPT_FACTS_SQL`), the cascades, lost contexts, loops, frustration and
#: repetition (thread, ordinals), and the verdict of the closing and give-up rules on each
#: distinct text they read (text, flag; a missing text reads as '').
FACTS_SQL = """
WITH x AS (
  SELECT e.*, coalesce(c.flag, FALSE) AS closing_, e.last_is_tool_error OR coalesce(g.flag, FALSE) AS drop_
  FROM tl_sig_endings e
  LEFT JOIN tl_sig_closing c ON e.last_user_ordinal IS NOT NULL AND e.only_replies_after_user
       AND c.text = coalesce(e.last_user_content, '')
  LEFT JOIN tl_sig_gives_up g ON e.last_role = 'assistant' AND g.text = coalesce(e.last_content, ''))
SELECT x.thread_id,
  x.closing_ AS resolved_closing, x.drop_ AS dropped_after_failure,
  l.thread_id IS NOT NULL AS agent_loop, ca.thread_id IS NOT NULL AS tool_error_cascade,
  fr.thread_id IS NOT NULL AS user_frustration, re.thread_id IS NOT NULL AS repetition,
  lo.thread_id IS NOT NULL AS lost_context,
  (CASE WHEN x.closing_ THEN [x.last_user_ordinal] ELSE [] END)::INTEGER[] AS resolved_closing_ordinals,
  (CASE WHEN x.drop_ THEN [x.last_ordinal] ELSE [] END)::INTEGER[] AS dropped_after_failure_ordinals,
  coalesce(l.ordinals, [])::INTEGER[] AS agent_loop_ordinals,
  coalesce(ca.ordinals, [])::INTEGER[] AS tool_error_cascade_ordinals,
  coalesce(fr.ordinals, [])::INTEGER[] AS user_frustration_ordinals,
  coalesce(re.ordinals, [])::INTEGER[] AS repetition_ordinals,
  coalesce(lo.ordinals, [])::INTEGER[] AS lost_context_ordinals,
  coalesce(x.interrupt_pending, FALSE) AS interrupt_pending, x.last_role,
  x.last_ordinal::INTEGER AS last_ordinal, x.last_user_ordinal::INTEGER AS last_user_ordinal,
  x.last_tool_error, x.last_tool_ordinal::INTEGER AS last_tool_ordinal,
  CASE WHEN x.last_is_tool_error THEN 'tool error' WHEN x.drop_ THEN 'assistant gave up' END AS failure_kind,
  CASE WHEN x.last_role = 'user' AND NOT x.closing_ AND NOT coalesce(x.interrupt_pending, FALSE)
       THEN x.last_user_ts END AS unanswered_since,
  CASE WHEN x.interrupt_pending THEN i.pending_ts END AS waiting_since,
  (CASE WHEN x.interrupt_pending THEN
     CASE WHEN i.pending_ordinal IS NOT NULL AND x.last_ordinal IS NOT NULL
          THEN greatest(0, least(i.pending_ordinal, x.last_ordinal)) ELSE i.pending_ordinal END END)::INTEGER
    AS waiting_ordinal,
  coalesce(i.answered, [])::INTEGER[] AS hitl_answered_ordinals
FROM x
LEFT JOIN tl_sig_loops l ON l.thread_id = x.thread_id
LEFT JOIN tl_sig_cascades ca ON ca.thread_id = x.thread_id
LEFT JOIN tl_sig_frustration fr ON fr.thread_id = x.thread_id
LEFT JOIN tl_sig_repetition re ON re.thread_id = x.thread_id
LEFT JOIN tl_sig_lost lo ON lo.thread_id = x.thread_id
LEFT JOIN tl_sig_interrupts i ON i.thread_id = x.thread_id
"""
