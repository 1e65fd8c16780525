"""Failure patterns: failed conversations (and those abandoned after a failure) grouped by what led to the failure.

A conversation's *signature* (docs/topics.md) is the tool sequence of the turn that failed,
up to the failing message, and the error: its class and its message with ids, numbers, hex,
uuids, e-mail addresses, URLs, paths and quoted values replaced by placeholders. Conversations
of one signature are one pattern, with its count, tenants, trend and examples that open at
the failing message.

>>> normalise_error("Error: RuntimeError('KeyError: A-1043 unknown to 0x7f3a9c2e in /srv/app/db.py')\\n Please fix your mistakes.")
('RuntimeError: KeyError', '<id> unknown to <hex> in <path>')
>>> patterns("lens.duckdb").head()  # doctest: +SKIP

    transcript-lens report patterns --db lens.duckdb --out patterns.csv
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby

import duckdb

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.report import outcomes_relation
from analytics.reporting.spec import ReportSpec, register_report
from analytics.trends import BUCKETS

#: The columns of `pattern_threads()`.
THREAD_COLUMNS = ("thread_id", "tenant_id", "outcome", "signature", "label", "failing_ordinal", "first_ts")
#: The columns of `patterns()` and of the `patterns` report.
PATTERN_COLUMNS = (
    "signature", "label", "tools", "error_class", "error", "threads", "failed", "abandoned", "tenants",
    "tenant_ids", "first_seen", "last_seen", "examples",
)
#: The periods of a trend: those of every trend of the app (`analytics.trends`).
PERIODS = BUCKETS
#: Examples per pattern (`thread_id@N`, N the failing message as the transcript numbers it, the earliest first).
EXAMPLES = 5
#: An error is read up to this many characters (its first line).
ERROR_CHARS = 500

# Wrappers a tool runner puts around an exception: "Error: RuntimeError('…')" (LangGraph's ToolNode).
_WRAPPED = re.compile(r"^\s*(?:error:\s*)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Timeout))\((['\"])(.*)\2\)\s*$",
                      re.S | re.I)
_CLASS = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Timeout))\s*:\s*(.*)$", re.S)
_NORMALISERS = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "<email>"),
    (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
    (re.compile(r"(?<![\w<])(?:[A-Za-z]:)?(?:[\\/][\w.@-]+){2,}[\\/]?"), "<path>"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|“[^”\n]*”|«[^»\n]*»"), "<value>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w]+(?:-[\w]+)*\b"), "<id>"),
    (re.compile(r"[-+]?\b\d+(?:[.,:]\d+)*\b"), "<n>"),
)


@lru_cache(maxsize=65_536)  # (a failing tool repeats its message: normalised once per distinct text)
def normalise_error(text: str | None) -> tuple[str, str]:
    """(error class, message with variable parts replaced) of a failed tool result's text.

    >>> normalise_error("TimeoutError: upstream track_parcel timed out after 30 s")
    ('TimeoutError', 'upstream track_parcel timed out after <n> s')
    >>> normalise_error('order 7f3e2a1b-0c4d-4e5f-8a9b-1c2d3e4f5a6b not found for "Nimbus X2"')
    ('', 'order <uuid> not found for <value>')
    """
    first = (text or "")[:ERROR_CHARS].strip()
    classes = []
    while True:
        wrapped = _WRAPPED.match(first.split("\n")[0])
        if wrapped:
            classes.append(wrapped.group(1))
            first = wrapped.group(3)
            continue
        named = _CLASS.match(first)
        if named:
            classes.append(named.group(1))
            first = named.group(2)
            continue
        break
    message = first.split("\n")[0].strip()
    for pattern, placeholder in _NORMALISERS:
        message = pattern.sub(placeholder, message)
    return ": ".join(classes), re.sub(r"\s+", " ", message).strip()


@dataclass(frozen=True)
class Failure:
    """What led one conversation to fail: the turn's tools in order, the error, the failing message."""

    thread_id: str
    tools: tuple[str, ...]
    error_class: str
    error: str
    failing_ordinal: int

    @property
    def signature(self) -> str:
        return f"{' > '.join(self.tools) or '(no tool)'} | {self.error_class or '-'} | {self.error}"

    @property
    def label(self) -> str:
        what = f"{self.error_class}: {self.error}" if self.error_class else self.error
        return f"{' → '.join(self.tools) or 'no tool'}: {what}"


def _collapse(names: list[str]) -> tuple[str, ...]:
    """Consecutive calls of one tool as one: a failure after one try, a retry or a loop is one pattern
    (how often a tool repeated is the `agent_loop` signal's business, not the failure's).

    >>> _collapse(["a", "a", "a", "b", "a"])
    ('a', 'b', 'a')
    """
    return tuple(k for k, _ in groupby(names))


_MESSAGES_SQL = """
SELECT m.thread_id, m.ordinal, m.role, m.tool_status,
       CASE WHEN m.role = 'tool' AND m.tool_status = 'error' THEN left(m.content, ?) END AS error_text,
       CASE WHEN m.role = 'assistant' AND m.tool_calls IS NOT NULL
            THEN list_transform(from_json(m.tool_calls, '[{"name": "VARCHAR"}]'), lambda c: c.name) END AS calls
FROM messages m WHERE m.thread_id IN (SELECT unnest(?)) AND m.role IN ('user', 'assistant', 'tool')
ORDER BY m.thread_id, m.ordinal
"""


def _failure(thread: str, rows: list[tuple], outcome: str, failure_kind: str | None, last_ordinal: int,
             last_user_ordinal: int | None) -> Failure | None:
    """The failure of one conversation (its message rows in order), or None (abandoned without one)."""
    if outcome == "failed" and failure_kind == "assistant gave up":
        anchor = last_ordinal
    else:
        low, high = -1, last_ordinal if last_ordinal is not None else -1
        if outcome == "abandoned":  # (the turn answered just before the unanswered user message)
            high = last_user_ordinal if last_user_ordinal is not None else -1
            low = max((r[1] for r in rows if r[2] == "user" and r[1] < high), default=-1)
        errors = [r for r in rows if r[2] == "tool" and r[3] == "error" and low < r[1] <= high]
        if not errors:
            return None
        anchor = errors[-1][1]
    turn_start = max((r[1] for r in rows if r[2] == "user" and r[1] < anchor), default=-1)
    turn = [r for r in rows if turn_start < r[1] <= anchor]
    tools = _collapse([name for r in turn if r[5] for name in r[5] if name])
    failed = [r for r in turn if r[2] == "tool" and r[3] == "error"]
    if failed:
        error_class, error = normalise_error(failed[-1][4])
    else:
        error_class, error = "", "assistant gave up"
    return Failure(thread, tools, error_class, error, anchor)


def thread_failures(con, filters: Filters | None = None) -> list[tuple[Failure, str, str | None, object]]:
    """(failure, outcome, tenant, first ts) of each failed conversation and each abandoned after a failure."""
    outcomes = outcomes_relation(con, filters).select("thread_id, outcome, failure_kind, last_ordinal, last_user_ordinal")
    con.register("tl_pattern_outcomes", outcomes.arrow().read_all())
    candidates = con.execute(
        "SELECT o.*, t.tenant_id, t.first_ts FROM tl_pattern_outcomes o JOIN threads t USING (thread_id) "
        "WHERE o.outcome IN ('failed', 'abandoned') ORDER BY o.thread_id").fetchall()
    if not candidates:
        return []
    rows = con.execute(_MESSAGES_SQL, [ERROR_CHARS, [c[0] for c in candidates]]).fetchall()
    by_thread = {thread: list(group) for thread, group in groupby(rows, key=lambda r: r[0])}
    found = []
    for thread, outcome, kind, last_ordinal, last_user_ordinal, tenant, first_ts in candidates:
        failure = _failure(thread, by_thread.get(thread, []), outcome, kind, last_ordinal, last_user_ordinal)
        if failure is not None:
            found.append((failure, outcome, tenant, first_ts))
    return found


def pattern_threads(db_or_con: ConOrPath, filters: Filters | None = None) -> pd.DataFrame:
    """One row per failed conversation (or abandoned after a failure): `THREAD_COLUMNS`."""
    with connection(db_or_con) as con:
        return _threads_frame(thread_failures(con, filters))


def _threads_frame(failures: list[tuple]) -> pd.DataFrame:
    rows = [(f.thread_id, tenant, outcome, f.signature, f.label, f.failing_ordinal, first_ts)
            for f, outcome, tenant, first_ts in failures]
    return pd.DataFrame(rows, columns=list(THREAD_COLUMNS))


def failure_views(db_or_con: ConOrPath, filters: Filters | None = None,
                  period: str = "day") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """`patterns()`, `pattern_threads()` and `pattern_trend()` of `filters` from one reading of the failures."""
    _check_period(period)
    with connection(db_or_con) as con:
        failures = thread_failures(con, filters)
    threads = _threads_frame(failures)
    return pd.DataFrame(_grouped_of(failures), columns=list(PATTERN_COLUMNS)), threads, _trend_of(threads, period)


def _grouped(con, filters: Filters | None) -> list[tuple]:
    return _grouped_of(thread_failures(con, filters))


def _grouped_of(failures: list[tuple]) -> list[tuple]:
    groups: dict[str, list] = defaultdict(list)
    for failure, outcome, tenant, first_ts in failures:
        groups[failure.signature].append((failure, outcome, tenant, first_ts))
    out = []
    for signature, members in groups.items():
        f = members[0][0]
        tenants = sorted({t for _, _, t, _ in members if t is not None})
        times = [ts for *_, ts in members if ts is not None]
        ordered = sorted(members, key=lambda m: (m[3] is None, m[3], m[0].thread_id))
        out.append((signature, f.label, " > ".join(f.tools), f.error_class, f.error, len(members),
                    sum(o == "failed" for _, o, _, _ in members), sum(o == "abandoned" for _, o, _, _ in members),
                    len(tenants), " ".join(tenants), min(times, default=None), max(times, default=None),
                    " ".join(f"{m[0].thread_id}@{m[0].failing_ordinal + 1}" for m in ordered[:EXAMPLES])))
    return sorted(out, key=lambda r: (-r[5], r[0]))


def patterns(db_or_con: ConOrPath, filters: Filters | None = None) -> pd.DataFrame:
    """One row per failure pattern, the most frequent first: `PATTERN_COLUMNS` (docs/topics.md).

    `threads`: conversations; `failed` / `abandoned`: of them, by outcome; `tenants`: tenants
    affected; `examples`: `thread_id@N`, N the failing message's number in the transcript ("Message N",
    from 1), the earliest first."""
    with connection(db_or_con) as con:
        rows = _grouped(con, filters)
    return pd.DataFrame(rows, columns=list(PATTERN_COLUMNS))


def pattern_trend(db_or_con: ConOrPath, filters: Filters | None = None, period: str = "day") -> pd.DataFrame:
    """Conversations per pattern and `period` (`day`, `week` or `month`, UTC, by the thread's first checkpoint):
    `signature`, `period_start`, `threads`."""
    _check_period(period)
    return _trend_of(pattern_threads(db_or_con, filters), period)


def _check_period(period: str) -> None:
    if period not in PERIODS:
        raise BadRequest(f"period must be one of {', '.join(PERIODS)}, got {period!r}")


def _trend_of(frame: pd.DataFrame, period: str) -> pd.DataFrame:
    frame = frame[frame["first_ts"].notna()]
    if frame.empty:
        return pd.DataFrame(columns=["signature", "period_start", "threads"])
    ts = pd.to_datetime(frame["first_ts"], utc=True).dt.tz_convert("UTC").dt.tz_localize(None)
    day = ts.dt.floor("D")
    start = {"day": day, "week": day - pd.to_timedelta(ts.dt.weekday, unit="D"),
             "month": day - pd.to_timedelta(ts.dt.day - 1, unit="D")}[period]
    out = frame.assign(period_start=start.dt.date).groupby(["signature", "period_start"]).size().reset_index(name="threads")
    return out.sort_values(["period_start", "signature"]).reset_index(drop=True)


def _report_rows(con, filters: Filters, options) -> duckdb.DuckDBPyRelation:
    import pyarrow as pa

    rows = _grouped(con, filters)
    columns = list(zip(*rows)) if rows else [[] for _ in PATTERN_COLUMNS]
    table = pa.table({name: pa.array(list(values), type=pa.timestamp("us", tz="UTC") if name in ("first_seen", "last_seen")
                                     else pa.int64() if name in ("threads", "failed", "abandoned", "tenants") else pa.string())
                      for name, values in zip(PATTERN_COLUMNS, columns)})
    return con.from_arrow(table)


register_report(ReportSpec(
    "patterns", "per failure pattern: signature, count, tenants, examples at the failing message (analytics.patterns)",
    PATTERN_COLUMNS, _report_rows,
))  # fmt: skip
