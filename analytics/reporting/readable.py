"""A report as a person reads it: the app's headers and formats (`transcript-lens report … --table`).

The Conversations table's columns (`CONVERSATION_COLUMNS`: each column, its header and what it
holds) are defined here once: the app's table (`ui.columns`) and the command line's text output
both draw them. Counts get thousands separators, durations and times are written as the app
writes them (`analytics.formats`), outcomes and signals by their names. The CSV and JSON keep
machine values (`analytics.reporting.writer`).

>>> import pandas as pd
>>> rows = pd.DataFrame({"thread_id": ["acme:web:s1"], "last_ts": ["2025-03-05T19:52:03.901274Z"],
...                      "messages": [1234], "duration_s": [423.9], "outcome": ["resolved"]})
>>> print(text_table(rows, CONVERSATION_COLUMNS))
Thread       Last active (UTC)  Outcome   Messages  Duration
acme:web:s1  2025-03-05 19:52   Resolved     1,234  7 m 04 s
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analytics.conversation_outcomes.labels import OUTCOME_LABELS, SIGNAL_LABELS, why_text
from analytics.formats import duration, is_missing, minute_text, number, seconds
from analytics.terminal_table import aligned


@dataclass(frozen=True)
class Shown:
    """A column of the Conversations table: a `metrics.LIST_COLUMNS` name, its header and what it holds.

    `kind` decides how its cells are written (and the app's st.column_config for it).
    """

    column: str
    label: str
    kind: str  # text · count · seconds · duration · time · flag · stale · outcome · signals · why
    help: str | None = None
    sortable: bool = True  # a `metrics.LIST_COLUMNS` column, sorted in DuckDB (the outcome columns are not)


#: The Conversations table's columns, in order (the CSV has every `metrics.LIST_COLUMNS` column):
#: first what a reader scans a row for (when, whose, how it ended, how long, what was asked).
CONVERSATION_COLUMNS = (
    Shown("thread_id", "Thread", "text"),
    Shown("last_ts", "Last active (UTC)", "time", "Time of the last message"),
    Shown("tenant_id", "Tenant", "text"),
    Shown("outcome", "Outcome", "outcome", "Resolved, abandoned, failed, waiting or unknown (docs/outcomes.md)",
          sortable=False),
    Shown("outcome_reason", "Why", "why", "Why the outcome: the rule that decided it and the message it rests on "
          "(empty when resolved; docs/outcomes.md, Outcome)", sortable=False),
    Shown("messages", "Messages", "count"),
    Shown("first_user_message", "First question", "text", "The thread's first user message (shortened)"),
    Shown("signals", "Signals", "signals", "What went wrong on the way: the outcome signals that fired (the Outcomes "
          "page defines each)", sortable=False),
    Shown("stale_reason", "Stale", "stale", "The transcript is an older root checkpoint's: the latest did not decode "
          "(the transcript page says which and why)"),
    Shown("duration_s", "Duration", "duration", "Last message time − first message time"),
    Shown("user_turns", "User turns", "count"),
    Shown("tool_calls", "Tool calls", "count"),
    Shown("tool_errors", "Tool errors", "count", "Tool results with status error"),
    Shown("input_tokens", "Input tokens", "count"),
    Shown("output_tokens", "Output tokens", "count"),
    Shown("latency_median_s", "Median reply", "seconds", "Median user → assistant reply time"),
    Shown("latency_p90_s", "p90 reply", "seconds", "90th percentile user → assistant reply time"),
    Shown("models", "Models", "text"),
    Shown("sub_tenant_id", "Sub-tenant", "text"),
    Shown("first_ts", "Started (UTC)", "time", "Time of the first message"),
    Shown("forks", "Forks", "count"),
    Shown("interrupt_pending", "Pending interrupt", "flag"),
    Shown("resume_points", "Resumes", "count", "Restarts after a gap in the checkpoints"),
)  # fmt: skip
#: The report kinds with a text form, and its columns.
READABLE = {"conversations": CONVERSATION_COLUMNS}
#: The longest text a cell of the text output holds; a longer one ends in "…".
TEXT_CHARS = 60
_RIGHT = ("count", "seconds", "duration")  # (numbers line up on the right)


def signal_names(signals: Any) -> tuple[str, ...]:
    """The signals of a row: a tuple, a list, or the report's `;`-joined text.

    >>> signal_names("agent_loop;slow_hitl"), signal_names(None)
    (('agent_loop', 'slow_hitl'), ())
    """
    if signals is None or is_missing(signals) or signals == "":
        return ()
    return tuple(signals.split(";")) if isinstance(signals, str) else tuple(signals)


def cell(kind: str, value: Any) -> str:
    """One value of a column of `kind` as the app writes it ("" when there is nothing).

    >>> cell("count", 12345), cell("duration", 2587.3), cell("seconds", 1.94), cell("flag", "true")
    ('12,345', '43 m 07 s', '1.9 s', 'yes')
    >>> cell("outcome", "failed"), cell("signals", "agent_loop;user_frustration"), cell("stale", None)
    ('Failed', 'agent loop, user frustration', '')
    """
    if kind == "signals":
        return ", ".join(SIGNAL_LABELS.get(s, s) for s in signal_names(value))
    if value is None or is_missing(value) or value == "":
        return ""
    if kind == "count":
        return number(int(value))
    if kind == "seconds":
        return seconds(value)
    if kind == "duration":
        return duration(value)
    if kind == "time":
        return minute_text(value)
    if kind == "flag":
        return "yes" if value in (True, "true") else ""
    if kind == "stale":
        return "⚠ stale"
    if kind == "outcome":
        return OUTCOME_LABELS.get(value, str(value))
    if kind == "why":
        return why_text(value)
    text = " ".join(str(value).split())  # (one line per row)
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def text_table(rows, columns: tuple[Shown, ...]) -> str:
    """`rows` (a DataFrame holding some of `columns`) as aligned text under the app's headers, in
    the order of `columns` (`analytics.terminal_table.aligned`: widths of what a terminal shows)."""
    shown = [c for c in columns if c.column in rows.columns]
    return aligned([(c.label, [cell(c.kind, v) for v in rows[c.column].tolist()]) for c in shown],
                   right={c.label for c in shown if c.kind in _RIGHT})
