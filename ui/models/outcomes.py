"""The Outcomes page: outcome shares and their trend, each signal's count and rate, the
tenants with most abandoned or failed conversations, and who breaches the
human-in-the-loop service level (docs/outcomes.md defines every signal and the outcome).

Every figure counts threads of `analytics.outcomes()`; a conversation counts in the
period (UTC) of its last activity (`threads.last_ts`).

>>> page = outcomes_page("demo.duckdb", by="week")  # doctest: +SKIP
>>> page.shares[["outcome", "threads"]].values.tolist()  # doctest: +SKIP
[['resolved', 20], ['abandoned', 3], ['failed', 4], ['waiting', 1], ['unknown', 3]]
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analytics.catalog import CONVERSATION_SIGNALS
from analytics.db import ConOrPath, connection
from analytics.filters import Filters
from analytics.conversation_outcomes.materialize import DEFAULT_HITL_HOURS
from analytics.conversation_outcomes.report import outcomes_relation
from analytics.conversation_outcomes.signals import OUTCOMES, SIGNALS
from analytics.conversation_outcomes.waits import longest_waits
from analytics.conversation_outcomes.labels import (  # noqa: F401  (the pages take them from here)
    OUTCOME_LABELS, SIGNAL_LABELS, reason_text, why_text,
)

#: Each signal's definition: its column's meaning in the catalogue (docs/schema.md, docs/outcomes.md).
SIGNAL_DEFINITIONS = {c.name: c.doc for c in CONVERSATION_SIGNALS.columns if c.name in SIGNALS}
#: What each outcome means (the rule of docs/outcomes.md, first match wins).
OUTCOME_DEFINITIONS = {
    "waiting": "An interrupt is pending: the graph waits on a human",
    "failed": "Ends on a failed tool result or an assistant giving up, with no user message after it",
    "abandoned": "The user spoke last, not a closing, and got no reply within the idle window",
    "resolved": "The user closed (thanks, bye …) or the assistant answered last",
    "unknown": "Anything else: the user spoke last within the idle window, no messages, or a tool result last",
}
#: The outcomes that went wrong: the tenants ranked by them, the Overview's tiles.
WENT_WRONG = ("abandoned", "failed")
#: The Overview's outcome tiles, what went wrong first.
TILE_ORDER = ("abandoned", "failed", "waiting", "unknown", "resolved")
TOP_TENANTS = 10
NO_TENANT = "(no tenant)"


@dataclass(frozen=True)
class OutcomesPage:
    """Everything the Outcomes page draws; each frame is also its table and CSV."""

    threads: int  # threads passing the filters
    shares: pd.DataFrame  # outcome, threads, share (every outcome, in `OUTCOMES` order)
    trend: pd.DataFrame  # period, outcome, threads, share (of the period's threads)
    signals: pd.DataFrame  # signal, label, threads, rate, definition (every signal, in `SIGNALS` order)
    tenants: pd.DataFrame  # tenant_id, threads, abandoned, failed, went_wrong, went_wrong_share
    slow_hitl: pd.DataFrame  # thread_id, tenant_id, sub_tenant_id, status, longest_wait (s), waiting_since, first_message, outcome, outcome_reason
    slow_by_tenant: pd.DataFrame  # tenant_id, breaches, waiting_now
    by: str
    hitl_hours: float = DEFAULT_HITL_HOURS


def _period(day: pd.Series, by: str) -> pd.Series:
    """The first day of the UTC day / ISO week / month holding each day, as a date.

    >>> d = pd.Series(pd.to_datetime(["2025-03-05", "2025-03-15"]).date)
    >>> [str(p) for p in _period(d, "week")], [str(p) for p in _period(d, "month")]
    (['2025-03-03', '2025-03-10'], ['2025-03-01', '2025-03-01'])
    """
    day = pd.to_datetime(day)
    if by == "week":
        day = day - pd.to_timedelta(day.dt.weekday, unit="D")
    elif by == "month":
        day = day.dt.to_period("M").dt.start_time
    return day.dt.date


#: Per tenant, UTC day of the last activity and outcome: the threads and the threads of each signal.
_CUBE = ("tenant_id, timezone('UTC', last_ts)::DATE AS day, outcome, count(*) AS threads, "
         + ", ".join(f"count_if({s}) AS {s}" for s in SIGNALS))
_SLOW = ("thread_id, tenant_id, sub_tenant_id, interrupt_pending, waiting_since, outcome, outcome_reason, "
         "slow_hitl_ordinals[1] + 1 AS first_slow_hitl")  # (lists count from 1)


def outcome_cube(con_or_path: ConOrPath, filters: Filters = Filters()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The threads passing `filters` counted in DuckDB per (tenant_id, day, outcome), with one count per
    signal; and the threads where `slow_hitl` fired, one row each (`_SLOW`)."""
    with connection(con_or_path) as con:
        keys = con.table("threads").select("thread_id, tenant_id, sub_tenant_id, last_ts")
        rows = outcomes_relation(con, filters).select(", ".join(["thread_id", "outcome", "outcome_reason",
                                                                 "interrupt_pending", "waiting_since",
                                                                 "slow_hitl_ordinals", *SIGNALS]))
        joined = rows.join(keys, "thread_id")
        cube = joined.aggregate(_CUBE, "tenant_id, day, outcome").df()
        slow = joined.filter("slow_hitl").select(_SLOW).df()
    return cube, slow


def _shares(cube: pd.DataFrame) -> pd.DataFrame:
    counts = cube.groupby("outcome")["threads"].sum().reindex(list(OUTCOMES), fill_value=0)
    total = int(counts.sum())
    return pd.DataFrame({"outcome": list(OUTCOMES), "threads": counts.astype(int).to_numpy(),
                         "share": counts.to_numpy() / total if total else 0.0})  # fmt: skip


def _trend(cube: pd.DataFrame, by: str) -> pd.DataFrame:
    dated = cube[cube["day"].notna()]
    if dated.empty:
        return pd.DataFrame({"period": [], "outcome": [], "threads": [], "share": []})
    counts = dated.assign(period=_period(dated["day"], by)).groupby(["period", "outcome"])["threads"].sum()
    frame = counts.reset_index()
    frame["threads"] = frame["threads"].astype(int)
    frame["share"] = frame["threads"] / frame.groupby("period")["threads"].transform("sum")
    order = {o: i for i, o in enumerate(OUTCOMES)}
    return frame.sort_values(["period", "outcome"], key=lambda c: c.map(order) if c.name == "outcome" else c,
                             kind="stable").reset_index(drop=True)  # fmt: skip


def _signals(cube: pd.DataFrame) -> pd.DataFrame:
    total = int(cube["threads"].sum())
    counts = [int(cube[s].sum()) for s in SIGNALS]
    return pd.DataFrame({
        "signal": list(SIGNALS), "label": [SIGNAL_LABELS[s] for s in SIGNALS], "threads": counts,
        "rate": [c / total if total else 0.0 for c in counts], "definition": [SIGNAL_DEFINITIONS[s] for s in SIGNALS],
    }).sort_values("threads", ascending=False, kind="stable").reset_index(drop=True)  # most frequent first  # fmt: skip


def _named(frame: pd.DataFrame) -> pd.Series:
    return frame["tenant_id"].astype(object).where(frame["tenant_id"].notna(), NO_TENANT)


def _tenants(cube: pd.DataFrame, top: int) -> pd.DataFrame:
    named = pd.DataFrame({
        "tenant_id": _named(cube), "threads": cube["threads"],
        "abandoned": cube["threads"].where(cube["outcome"] == "abandoned", 0),
        "failed": cube["threads"].where(cube["outcome"] == "failed", 0),
    })  # fmt: skip
    frame = named.groupby("tenant_id", sort=True).sum().astype(int).reset_index()
    frame["went_wrong"] = frame["abandoned"] + frame["failed"]
    frame["went_wrong_share"] = frame["went_wrong"] / frame["threads"]
    frame = frame[frame["went_wrong"] > 0]
    return frame.sort_values(["went_wrong", "tenant_id"], ascending=[False, True], kind="stable").head(top).reset_index(
        drop=True)


def _slow(slow: pd.DataFrame, waits: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    waiting_now = slow["interrupt_pending"].fillna(False).astype(bool)
    longest = slow["thread_id"].map(dict(zip(waits["thread_id"], waits["longest_wait_hours"]))).astype("float64")
    table = pd.DataFrame({
        "thread_id": slow["thread_id"], "tenant_id": slow["tenant_id"], "sub_tenant_id": slow["sub_tenant_id"],
        "status": waiting_now.map({True: "still waiting", False: "answered late"}),
        "longest_wait": longest * 3600,
        "waiting_since": slow["waiting_since"].where(waiting_now), "first_message": slow["first_slow_hitl"],
        "outcome": slow["outcome"], "outcome_reason": slow["outcome_reason"],
    }).sort_values(["status", "longest_wait", "thread_id"], ascending=[False, False, True],  # still waiting, then
                   kind="stable").reset_index(drop=True)  # the longest wait first  # fmt: skip
    by_tenant = pd.DataFrame({"tenant_id": _named(table), "breaches": 1,
                              "waiting_now": (table["status"] == "still waiting").astype(int)})  # fmt: skip
    by_tenant = by_tenant.groupby("tenant_id", sort=True).sum().reset_index().sort_values(
        ["breaches", "tenant_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return table, by_tenant


def outcomes_page(con_or_path: ConOrPath, filters: Filters = Filters(), by: str = "day",
                  top: int = TOP_TENANTS) -> OutcomesPage:  # fmt: skip
    """The Outcomes page's figures over the threads of `filters`, the trend bucketed `by` day / week / month.

    Counted in DuckDB per tenant, day and outcome (a few thousand rows at any size); only the
    threads breaching the human-in-the-loop service level come back one by one."""
    with connection(con_or_path) as con:
        cube, slow = outcome_cube(con, filters)
        table, by_tenant = _slow(slow, longest_waits(con, slow["thread_id"].tolist()))
    return OutcomesPage(int(cube["threads"].sum()), _shares(cube), _trend(cube, by), _signals(cube),
                        _tenants(cube, top), table, by_tenant, by)  # fmt: skip


def share_text(share: float) -> str:
    """A tile's share of the conversations.

    >>> share_text(0.0968), share_text(0.0)
    ('9.7 %', '0 %')
    """
    return f"{share * 100:.1f} %" if share else "0 %"


def outcome_counts(con_or_path: ConOrPath, filters: Filters = Filters()) -> pd.DataFrame:
    """The threads of each outcome (outcome, threads, share; every outcome, in `OUTCOMES` order):
    the Overview's tiles, counted in DuckDB."""
    with connection(con_or_path) as con:
        found = outcomes_relation(con, filters).aggregate("outcome, count(*) AS threads", "outcome").fetchall()
    counts = dict(found)
    total = sum(counts.values())
    return pd.DataFrame({"outcome": list(OUTCOMES), "threads": [int(counts.get(o, 0)) for o in OUTCOMES],
                         "share": [counts.get(o, 0) / total if total else 0.0 for o in OUTCOMES]})  # fmt: skip


@dataclass(frozen=True)
class ThreadOutcome:
    """One thread's outcome and the messages its signals point at, numbered as the transcript
    numbers them (ordinal + 1)."""

    outcome: str
    reason: str  # `reason_text` of `outcome_reason`
    marks: dict[int, tuple[str, ...]]  # message number → the signals pointing at it, in `SIGNALS` order
    first: dict[str, int]  # signal → the first message it points at (fired signals only)
    at: int | None = None  # the message the outcome rests on (`outcome_ordinals`); None without messages

    def focus(self, signal: str | None) -> int | None:
        """The message a link about `signal` opens at (None: the signal did not fire here).

        >>> ThreadOutcome("failed", "", {3: ("agent_loop",)}, {"agent_loop": 3}).focus("agent_loop")
        3
        """
        return self.first.get(signal) if signal else None


def pointer_text(signal: str, number: int, first: bool) -> str:
    """What a signal's badge adds about message `number`, the message it points at: on the thread's
    banner (`first`) the first such message, under a message's header what it is to the signal.
    A `lost_context` points at the first message a restart's rebuilt window held (docs/outcomes.md):
    the badge says so, and which older messages the window left out.

    >>> pointer_text("agent_loop", 7, True), pointer_text("agent_loop", 7, False)
    (' · from message 7', '')
    >>> pointer_text("lost_context", 5, True)
    ' · a restart left out messages 1–4 (its window began at message 5)'
    >>> pointer_text("lost_context", 2, False)
    " · a restart's window began here: message 1 left out"
    """
    if signal != "lost_context":
        return f" · from message {number}" if first else ""
    left_out = f"messages 1–{number - 1}" if number > 2 else "message 1"
    if first:
        return f" · a restart left out {left_out} (its window began at message {number})"
    return f" · a restart's window began here: {left_out} left out"


def thread_outcome(con_or_path: ConOrPath, thread_id: str) -> ThreadOutcome | None:
    """`thread_id`'s outcome and flagged messages; None when the thread has no outcome row."""
    with connection(con_or_path) as con:
        rel = outcomes_relation(con, Filters(thread_ids=(thread_id,)))
        rows = rel.select(", ".join(["outcome", "outcome_reason", "outcome_ordinals",
                                     *(f"{s}_ordinals" for s in SIGNALS)])).fetchall()
    if not rows:
        return None
    outcome, reason, rests_on, *ordinals = rows[0]
    marks: dict[int, list[str]] = {}
    first: dict[str, int] = {}
    for signal, found in zip(SIGNALS, ordinals):
        for ordinal in found or ():
            marks.setdefault(int(ordinal) + 1, []).append(signal)
        if found:
            first[signal] = int(min(found)) + 1
    return ThreadOutcome(outcome, reason_text(reason), {n: tuple(s) for n, s in sorted(marks.items())}, first,
                         _number(rests_on))


def _number(ordinals) -> int | None:
    """The transcript's number (ordinal + 1) of the first of `ordinals`; None for none."""
    return int(min(ordinals)) + 1 if ordinals else None


def with_outcomes(con, rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` (one per thread, `thread_id`) with each thread's `outcome`, `signals` (the signals
    that fired, in `SIGNALS` order; `resolved_closing` left out: it is the outcome's reason, not a
    problem), `outcome_reason` (the signal and message the outcome rests on, as stored) and
    `outcome_message` (the number of the message the outcome rests on); a thread without an
    outcome row gets None, (), None and None."""
    ids = tuple(rows["thread_id"])
    found = {}
    if ids:
        rel = outcomes_relation(con, Filters(thread_ids=ids))
        for thread_id, outcome, reason, rests_on, *fired in rel.select(
                ", ".join(["thread_id", "outcome", "outcome_reason", "outcome_ordinals", *SIGNALS])).fetchall():
            found[thread_id] = (outcome, tuple(s for s, on in zip(SIGNALS, fired) if on and s != "resolved_closing"),
                                reason, _number(rests_on))
    missing = (None, (), None, None)
    return rows.assign(outcome=[found.get(t, missing)[0] for t in ids],
                       signals=[found.get(t, missing)[1] for t in ids],
                       outcome_reason=[found.get(t, missing)[2] for t in ids],
                       outcome_message=pd.array([found.get(t, missing)[3] for t in ids], dtype="Int64"))


def signals_text(signals: tuple[str, ...]) -> str:
    """The signals as the table shows them.

    >>> signals_text(("agent_loop", "user_frustration")), signals_text(())
    ('agent loop, user frustration', '')
    """
    return ", ".join(SIGNAL_LABELS.get(s, s) for s in signals)


def transcript_link(outcome: str | None, fired: tuple[str, ...], at: int | None, chosen_signals: tuple[str, ...] = (),
                    chosen_outcomes: tuple[str, ...] = ()) -> dict[str, object]:
    """Where a link from a conversation's row opens its transcript, as its params: at a chosen
    signal that fired there (`signal=`); else, when the list was filtered by this outcome, at the
    message the outcome rests on (`msg=`, `at`); else at the first signal that fired; else, for an
    outcome other than resolved, at the outcome's message; else from the start ({}).

    >>> transcript_link("failed", (), 8)  # failed by its last tool result alone: opens there
    {'msg': 8}
    >>> transcript_link("failed", ("agent_loop",), 8), transcript_link("failed", ("agent_loop",), 8, (), ("failed",))
    ({'signal': 'agent_loop'}, {'msg': 8})
    >>> transcript_link("resolved", (), 12), transcript_link(None, (), None)
    ({}, {})
    """
    at = None if at is None or pd.isna(at) else int(at)  # (a table cell: NA for a thread without an outcome row)
    chosen = next((s for s in chosen_signals if s in fired), None)
    if chosen is not None:
        return {"signal": chosen}
    if at is not None and outcome in chosen_outcomes:
        return {"msg": at}
    if fired:
        return {"signal": fired[0]}
    if at is not None and outcome not in (None, "resolved"):
        return {"msg": at}
    return {}
