"""How the app writes durations, times, counts and plurals: one way, on every page and chart.

No Streamlit here, so the page models (`ui.models`) write their texts with it too;
`ui.render` hands the same functions to the pages. Counts, durations, times and plurals come from
`analytics.formats`, which the command line's text output writes with too.

>>> duration(2587), plural(1, "row"), plural(1234, "message")
('43 m 07 s', '1 row', '1,234 messages')
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pandas as pd

from analytics.formats import (  # noqa: F401  (this module is where the pages take them from)
    MISSING,
    duration,
    is_missing,
    minute_text,
    number,
    plural,
    seconds,
    text,
    utc,
    word_plural,
)
from analytics.conversation_outcomes.labels import OUTCOME_LABELS, SIGNAL_LABELS, why_text


#: `seconds` as a printf format (a table's number column draws its cells with it).
SECONDS_FORMAT = "%.1f s"
#: A share as a table's number column draws it, from a value in percent (a share × 100): "2.7 %".
PERCENT_FORMAT = "%.1f %%"


def clock(ts: Any) -> str:
    """A time to the second in UTC, or "time unknown" (the store has no per-message clock).

    >>> clock(pd.Timestamp("2025-03-03 10:05:00", tz="UTC")), clock(None)
    ('2025-03-03 10:05:00 UTC', 'time unknown')
    """
    if is_missing(ts):
        return "time unknown"
    if isinstance(ts, (datetime, pd.Timestamp)):
        return utc(ts).strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(ts)


def article(phrase: str) -> str:
    """`phrase` after the indefinite article its first sound takes ("an" before a vowel sound).

    >>> article("other message"), article("user message"), article("hour"), article("assistant reply")
    ('an other message', 'a user message', 'an hour', 'an assistant reply')
    >>> article("unknown outcome"), article("error"), article("one-off")
    ('an unknown outcome', 'an error', 'a one-off')
    """
    low = phrase.lower()
    vowel = low[:1] in ("a", "e", "i", "o", "u")
    if re.match(r"(uni|use|usu|one|once|eu)", low):  # a "y" or "w" sound: a user, a one-off
        vowel = False
    elif re.match(r"(hour|honest|honou?r)", low):  # a silent h
        vowel = True
    return f"{'an' if vowel else 'a'} {phrase}"


def header(name: str) -> str:
    """A column name as a table's header and a download's reads it.

    >>> header("checkpoint_id"), header("ts"), header("before_ts"), header("expected_position")
    ('Checkpoint id', 'Time (UTC)', 'Before: time (UTC)', 'Expected position')
    >>> header("gap_s"), header("reply_latency_p50_s"), header("resume_no"), header("tenant_id"), header("value_a")
    ('Gap (s)', 'Reply latency p50 (s)', 'Resume #', 'Tenant', 'Value (A)')

    A name that is not a column's (a topic's or a pattern's label heading a trend's column) stays as written:

    >>> header("2 · “Is the badge reader down?”"), header("lookup_order: ValueError")
    ('2 · “Is the badge reader down?”', 'lookup_order: ValueError')
    """
    if name in _HEADERS:
        return _HEADERS[name]
    if not _COLUMN_NAME.fullmatch(name):
        return name
    if name.endswith("_ts"):
        return f"{header(name.removesuffix('_ts'))}: time (UTC)"
    if name.endswith("_s") and len(name) > 2:  # seconds: the unit in brackets, not a stray "s"
        return f"{header(name.removesuffix('_s'))} (s)"
    if name.endswith(("_a", "_b")) and len(name) > 2:  # a figure of cohort A or B (Compare)
        return f"{header(name[:-2])} ({name[-1].upper()})"
    return name.replace("_", " ").capitalize()


_COLUMN_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_HEADERS = {"ts": "Time (UTC)", "thread_id": "Thread", "n": "N", "ok": "OK", "jsonl": "JSONL", "resume_no": "Resume #",
            "tenant_id": "Tenant", "sub_tenant_id": "Sub-tenant", "session_id": "Session", "ci_low": "CI low",
            "ci_high": "CI high", "p_value": "P-value", "q_value": "Q-value", "p_rank": "P rank"}

#: A time in a download (CSV): to the second, in UTC (its header says so), as the Conversations
#: CSV writes its times (`ui.models.report_csv`: the same text, cut from a report's ISO time).
CSV_TIME = "%Y-%m-%d %H:%M:%S"
#: A column holding a share of 0–1 (`share`, `rate`, `went_wrong_share`, `resolved_rate`, as the page
#: models name them): a download writes it in percent to a tenth, as a table draws it (`PERCENT_FORMAT`),
#: its header saying "(%)".
SHARE = re.compile(r"(?:[a-z0-9_]*_)?(?:share|rate)")
#: Significant digits of any other fractional number in a download: the figure, not a float's noise
#: (0.0007750000000000001 is 0.000775).
CSV_DIGITS = 6
#: A column of codes by its name, and the words the pages show for them (the Conversations table's).
CODE_WORDS = {
    "outcome": lambda v: OUTCOME_LABELS.get(v, v),
    "signal": lambda v: SIGNAL_LABELS.get(v, v),
    "outcome_reason": lambda v: why_text(v) or None,
}


def readable(frame: pd.DataFrame, labels: Any = None) -> pd.DataFrame:
    """`frame` as a download holds it, in the words and formats its page shows: each column under
    its header (`labels`' — a page's `st.column_config`, a name or a config with a `label` — else
    `header`'s), times written `CSV_TIME` with "(UTC)" in their header, flags as yes / no (as the
    Conversations CSV writes them), codes of `CODE_WORDS`' columns as the pages' words, a share in
    percent (`SHARE`), seconds to a tenth, other fractions to `CSV_DIGITS` significant digits, whole
    numbers without ".0"; texts as they are. A column `labels` maps to None (hidden in the table)
    is left out.

    >>> frame = pd.DataFrame({"thread_id": ["a:b"], "first_ts": pd.to_datetime(["2025-03-03 10:05:00.25"], utc=True),
    ...                       "waiting_since": pd.to_datetime(["2025-03-04 00:00"], utc=True), "ok": [True]})
    >>> readable(frame, {"ok": {"label": "Passed"}}).to_dict("records")
    [{'Thread': 'a:b', 'First: time (UTC)': '2025-03-03 10:05:00', 'Waiting since (UTC)': '2025-03-04 00:00:00', 'Passed': 'yes'}]
    >>> figures = pd.DataFrame({"outcome": ["waiting"], "rate": [5 / 12], "wait_s": [241819.005], "cost": [0.0007750000000000001],
    ...                         "threads": [9.0]})
    >>> readable(figures).to_dict("records")
    [{'Outcome': 'Waiting', 'Rate (%)': 41.7, 'Wait (s)': 241819.0, 'Cost': 0.000775, 'Threads': 9}]
    """
    labels = labels or {}
    out = {}
    for name in frame.columns:
        if name in labels and labels[name] is None:  # a column the table hides (its config None) is not shown
            continue
        given = labels.get(name)
        label = given if isinstance(given, str) else (given or {}).get("label") or header(name)
        values = frame[name]
        if pd.api.types.is_datetime64_any_dtype(values):
            times = values.dt.tz_convert("UTC") if values.dt.tz is not None else values  # (naive times are UTC)
            values = times.dt.strftime(CSV_TIME).astype(object).where(times.notna(), None)
            label = label if "UTC" in label else f"{label} (UTC)"
        elif pd.api.types.is_bool_dtype(values):
            values = values.map({True: "yes", False: "no"}).astype(object).where(values.notna(), None)
        elif name in CODE_WORDS:
            values = values.map(lambda v: CODE_WORDS[name](v) if isinstance(v, str) else v).astype(object)
        elif pd.api.types.is_numeric_dtype(values):
            values, label = _figures(name, label, values)
        if label in out:
            raise ValueError(f"two columns of a download under one header: {label!r}")
        out[label] = values
    return pd.DataFrame(out, index=frame.index)


def _figures(name: str, label: str, values: pd.Series) -> tuple[pd.Series, str]:
    """A number column as a download writes it (`readable`), and its header."""
    if SHARE.fullmatch(name):
        return (values.astype(float) * 100).round(1), label if "%" in label else f"{label} (%)"
    if not pd.api.types.is_float_dtype(values):
        return values, label
    if label.endswith("(s)"):
        return values.round(1), label
    known = values.dropna()
    if len(known) and (known == known.round()).all() and known.abs().max() < 2 ** 53:
        return values.astype("Int64"), label
    return values.map(lambda v: v if pd.isna(v) or v == 0 else float(f"{v:.{CSV_DIGITS}g}")), label


def download_label(n: int, word: str) -> str:
    """A "download every row" button's label.

    >>> download_label(31, "row"), download_label(1, "hit"), download_label(0, "hit")
    ('Download all 31 rows (CSV)', 'Download the 1 hit (CSV)', 'No hits to download')
    """
    if n == 0:  # (the button is disabled then: ui.render.download_data)
        return f"No {word_plural(word)} to download"
    return f"Download {'the' if n == 1 else 'all'} {plural(n, word)} (CSV)"


_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~|`+)(?=\S)(.+?)(?<=\S)\1")
_HEADING = re.compile(r"(?m)^ {0,3}#{1,6}\s+")


def unmarked(text: str) -> str:
    """Markdown read as plain text, for a snippet cut out of a message (its syntax would show raw):
    emphasis, code spans and headings lose their marks, a link or image keeps its text.

    >>> unmarked("talking to **ledger-svc** via `curl`; see [the runbook](http://x/rb) ## not a heading")
    'talking to ledger-svc via curl; see the runbook ## not a heading'
    >>> unmarked("# Summary\\n2 * 3 * 4 stays")
    'Summary\\n2 * 3 * 4 stays'
    """
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _HEADING.sub("", text)


#: How a time axis of a chart (ECharts' `axisLabel.formatter`, by the tick's level) writes its ticks:
#: times of day, and a tick at midnight as its day ("Mar 2"), not the bare day of the month (ECharts'
#: default, a "2" that reads as a count); the axis is in UTC (`useUTC`).
AXIS_TIME = {"year": "{yyyy}", "month": "{MMM} {yyyy}", "day": "{MMM} {d}", "hour": "{HH}:{mm}", "minute": "{HH}:{mm}",
             "second": "{HH}:{mm}:{ss}", "millisecond": "{HH}:{mm}:{ss}.{SSS}"}
