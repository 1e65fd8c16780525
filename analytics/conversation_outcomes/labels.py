"""How Transcript Lens names each outcome and signal to a person: the app's pages and the command
line's text output (`analytics.reporting.readable`); the tables, the CSV and JSON keep the codes.

>>> OUTCOME_LABELS["resolved"], SIGNAL_LABELS["slow_hitl"]
('Resolved', 'slow human-in-the-loop')
"""

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
