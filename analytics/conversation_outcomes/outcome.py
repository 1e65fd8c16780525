"""The conversation-level outcome, and the signals measured against the store's latest time.

`abandoned` and the still-waiting part of `slow_hitl` depend on the latest checkpoint ts of
the whole store, which an incremental load moves for every thread; they are finished here,
set-based, over every row of the per-thread facts (`FINISH_SQL`), after each load. The
outcome is one rule, first match wins:

1. `waiting`: an interrupt is pending (`threads.interrupt_pending`);
2. `failed`: `dropped_after_failure`, or the last tool result is an error with no user message after it;
3. `abandoned`: `abandoned`;
4. `resolved`: `resolved_closing`, or the last message is the assistant's;
5. `unknown`: anything else (e.g. the user spoke last but the idle window has not passed).

`outcome_ordinals` is the message the matching step rests on (the one `outcome_reason` names):
the last message before the pending interrupt; the last message (dropped after a failure); the
failed tool result; the unanswered or closing user message; the assistant's last reply; for
`unknown`, the user message awaiting a reply or the last message. Empty without messages.
"""

from __future__ import annotations

#: `{facts}`: a relation of the per-thread facts (this query's own output qualifies: it keeps
#: them); parameters: the store's latest checkpoint ts, the idle window (minutes), the service
#: level (hours).
FINISH_SQL = """
WITH f AS (SELECT * FROM {facts}),
latest AS (SELECT ?::TIMESTAMPTZ AS store_ts),
d AS (
  SELECT f.*,
    coalesce(f.unanswered_since < l.store_ts - to_microseconds(CAST(? * 60e6 AS BIGINT)), FALSE) AS abandoned_,
    coalesce(f.waiting_since < l.store_ts - to_microseconds(CAST(? * 3600e6 AS BIGINT)), FALSE) AS waiting_slow,
    l.store_ts
  FROM f, latest l)
SELECT thread_id,
  abandoned_ AS abandoned, resolved_closing, dropped_after_failure, agent_loop, tool_error_cascade,
  user_frustration, repetition,
  len(hitl_answered_ordinals) > 0 OR waiting_slow AS slow_hitl, lost_context,
  CASE WHEN abandoned_ THEN [last_user_ordinal] ELSE []::INTEGER[] END AS abandoned_ordinals,
  resolved_closing_ordinals, dropped_after_failure_ordinals, agent_loop_ordinals, tool_error_cascade_ordinals,
  user_frustration_ordinals, repetition_ordinals,
  list_sort(list_distinct(hitl_answered_ordinals || CASE WHEN waiting_slow THEN [waiting_ordinal] ELSE []::INTEGER[] END))
    AS slow_hitl_ordinals,
  lost_context_ordinals,
  CASE WHEN interrupt_pending THEN 'waiting'
       WHEN dropped_after_failure OR last_tool_error THEN 'failed'
       WHEN abandoned_ THEN 'abandoned'
       WHEN resolved_closing OR last_role = 'assistant' THEN 'resolved'
       ELSE 'unknown' END AS outcome,
  CASE WHEN interrupt_pending THEN 'waiting: interrupt pending' || coalesce(' at message ' || waiting_ordinal, '')
                                  || coalesce(' since ' || strftime(waiting_since, '%Y-%m-%d %H:%M UTC'), '')
       WHEN dropped_after_failure THEN 'failed: dropped_after_failure, ends at message ' || last_ordinal
                                       || coalesce(' (' || failure_kind || ')', '')
       WHEN last_tool_error THEN 'failed: last tool result (message ' || last_tool_ordinal || ') is an error'
       WHEN abandoned_ THEN 'abandoned: user message ' || last_user_ordinal || ' unanswered for '
                            || printf('%.1f', epoch(store_ts - unanswered_since) / 3600) || ' h'
       WHEN resolved_closing THEN 'resolved: resolved_closing, user closed at message ' || last_user_ordinal
       WHEN last_role = 'assistant' THEN 'resolved: assistant answered last (message ' || last_ordinal || ')'
       WHEN last_role = 'user' THEN 'unknown: user message ' || last_user_ordinal || ' awaits a reply, idle window not passed'
       WHEN last_role IS NULL THEN 'unknown: no messages'
       ELSE 'unknown: ends with ' || CASE WHEN left(last_role, 1) IN ('a', 'e', 'i', 'o', 'u') THEN 'an ' ELSE 'a ' END
            || last_role || ' message (' || last_ordinal || ')' END AS outcome_reason,  -- an other, a system, a tool
  -- the message the outcome rests on: the one `outcome_reason` names (first match wins, as above)
  list_filter(CASE WHEN interrupt_pending THEN [waiting_ordinal]
                   WHEN dropped_after_failure THEN [last_ordinal]
                   WHEN last_tool_error THEN [last_tool_ordinal]
                   WHEN abandoned_ OR resolved_closing OR last_role = 'user' THEN [last_user_ordinal]
                   ELSE [last_ordinal] END, lambda o: o IS NOT NULL) AS outcome_ordinals,
  -- facts kept so the store-relative signals can be finished again after a later load
  interrupt_pending, last_role, last_ordinal, last_user_ordinal, last_tool_error, last_tool_ordinal, failure_kind,
  unanswered_since, waiting_since, waiting_ordinal, hitl_answered_ordinals
FROM d
"""
