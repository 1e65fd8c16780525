"""How Transcript Lens names each outcome and signal to a person: the app's pages and the command
line's text output (`analytics.reporting.readable`); the tables, the CSV and JSON keep the codes.

>>> OUTCOME_LABELS["resolved"], SIGNAL_LABELS["slow_hitl"]
('Resolved', 'slow human-in-the-loop')
"""

from __future__ import annotations

import re

from analytics.formats import duration


#: How the app names each outcome and signal (the table's columns keep their own names).
OUTCOME_LABELS = {
    "resolved": "Resolved", "abandoned": "Abandoned", "failed": "Failed", "waiting": "Waiting", "unknown": "Unknown",
}  # fmt: skip
SIGNAL_LABELS = {
    "abandoned": "abandoned",
    "resolved_closing": "closed by the user",
    "dropped_after_failure": "dropped after a failure",
    "agent_loop": "agent loop",
    "tool_error_cascade": "tool error cascade",
    "user_frustration": "user frustration",
    "repetition": "repetition",
    "slow_hitl": "slow human-in-the-loop",
    "lost_context": "lost context",
}


_MESSAGE_NUMBER = re.compile(r"(message \(?)(\d+)")


def reason_text(reason: str) -> str:
    """`outcome_reason` with its messages numbered as the transcript numbers them (ordinal + 1).

    and each signal by the name the app gives it.

    >>> reason_text("unknown: ends with a tool message (4)")
    'unknown: ends with a tool message (5)'
    >>> reason_text("failed: dropped_after_failure")
    'failed: dropped after a failure'
    >>> reason_text("abandoned: user message 9 unanswered for 120.7 h")
    'abandoned: user message 10 unanswered for 5 d'
    """
    named = _SIGNAL_CODE.sub(lambda m: SIGNAL_LABELS[m.group(0)], reason)
    timed = _HOURS.sub(lambda m: duration(float(m.group(1)) * 3600), named)  # (the app's one way to write a span)
    return _MESSAGE_NUMBER.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1}", timed)


_HOURS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) h\b")


#: The stored reasons (`analytics/conversation_outcomes/outcome.py`) the Why column says shorter,
#: each with its words; messages are renumbered from 1 and hours written as spans after.
_WHY = (
    (re.compile(r"failed: dropped_after_failure, ends at message (\d+) \(assistant gave up\)"),
     "assistant gave up at message {0}"),
    (re.compile(r"failed: dropped_after_failure, ends at message (\d+) \(tool error\)"), "ends on a tool error at message {0}"),
    (re.compile(r"failed: last tool result \(message (\d+)\) is an error"), "last tool result failed, message {0}"),
    (re.compile(r"abandoned: user message (\d+) unanswered for (\S+) h"), "no reply for {1} h after message {0}"),
    (re.compile(r"waiting: interrupt pending at message (\d+) since (\S+ \S+) UTC"), "waits on a human since {1}, message {0}"),
    (re.compile(r"unknown: user message (\d+) awaits a reply.*"), "message {0} awaits a reply"),
)


def why_text(reason: str | None) -> str:
    """Why a conversation got its outcome, short, as the Conversations table's Why column says it:
    the rule that decided it and the message it rests on, numbered as the transcript numbers it
    (`reason_text`), without the outcome's name (the Outcome column beside it says it); empty for
    a resolved conversation (nothing to explain) and for a thread without an outcome.

    >>> why_text("failed: dropped_after_failure, ends at message 4 (assistant gave up)")
    'assistant gave up at message 5'
    >>> why_text("failed: last tool result (message 6) is an error")
    'last tool result failed, message 7'
    >>> why_text("abandoned: user message 2 unanswered for 2.5 h")
    'no reply for 2 h 30 m after message 3'
    >>> why_text("waiting: interrupt pending at message 2 since 2025-03-12 16:50 UTC")
    'waits on a human since 2025-03-12 16:50, message 3'
    >>> why_text("unknown: ends with a tool message (4)")
    'ends with a tool message (5)'
    >>> why_text("resolved: assistant answered last (message 3)"), why_text(None)
    ('', '')
    """
    if not isinstance(reason, str) or not reason:
        return ""
    outcome, _, said = reason.partition(": ")
    if outcome == "resolved":
        return ""
    for pattern, words in _WHY:
        if found := pattern.fullmatch(reason):
            return reason_text(words.format(*found.groups()))
    return reason_text(said or reason)


_SIGNAL_CODE = re.compile(r"\b(?:" + "|".join(sorted(SIGNAL_LABELS, key=len, reverse=True)) + r")\b")
