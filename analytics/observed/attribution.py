"""Which resume each observed window belongs to (contract §5.5): the attribution rules.

An observed log may hold several restarts of one thread, each a window of
lines. Every line is placed, thread by thread in file order:

1. **By checkpoint.** A line naming `checkpoint_id` (a root checkpoint of
   its thread) belongs to the window rebuilt from it (`checkpoint_id`, exact).
2. **By time.** A line with a time belongs to the resume point whose first
   post-restart checkpoint (`after`) it follows: the rehydrate runs as the
   first turn after the restart starts, so its log time equals or follows the
   new input checkpoint's `ts`. With `LEAD_S` (5 s) for clocks that disagree
   and `TOLERANCE_S` (120 s) for a slow start or a buffered log, in this order:
   - `after − LEAD_S ≤ t ≤ after + TOLERANCE_S`: that resume (`high`; the
     latest such resume when several qualify);
   - as close to the start of another turn (an `input` checkpoint that is no
     resume's `after`): a restart the gap threshold and the process keys did
     not show, rebuilt from the checkpoint before that turn (`low`, no resume number);
   - a `resume_at` (the restart's own time) inside the idle gap before a
     resume's first checkpoint: that resume (`medium`);
   - after the thread's last checkpoint: a restart the store has no
     checkpoint of yet, rebuilt from the latest checkpoint (`medium`);
   - before the thread's first checkpoint: `unresolved`;
   - otherwise the resume whose first checkpoint is nearest in time (`low`).
3. **By order.** A thread's lines with neither are split into windows where
   positions start again (`starts_window`: 0 after a higher position, or a
   position the window holds coming back below the previous line's) and matched, in file order, to its
   resume points and then its latest checkpoint (a restart now) that no line
   named by checkpoint or time: the order-keeping assignment that leaves the
   fewest findings (`medium` when each window's match is also its best one,
   `low` otherwise). More windows than restarts: each goes to its best match (`low`).

Within one placement a window also ends where positions start again, so two
rehydrates from one checkpoint are two windows, and a repeated position is a
`malformed` line only inside one window, never because another restart used it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Union

from analytics import _pandas as pd
from analytics.filters import Filters
from analytics.observed.log import LineError, ObservedEntry
from analytics.resume.chain import resume_points

__all__ = ["LEAD_S", "TOLERANCE_S", "Target", "Window", "attribute", "starts_window"]

#: Seconds a log time may precede a resume's first post-restart checkpoint and still be its rehydrate.
LEAD_S = 5.0
#: Seconds a log time may follow that checkpoint with full confidence.
TOLERANCE_S = 120.0

Item = Union[ObservedEntry, LineError]


@dataclass(frozen=True)
class Target:
    """A rehydrate's source: the root checkpoint rebuilt from, and the resume point it is (if one)."""

    checkpoint_id: str
    resume_no: int | None = None
    after_checkpoint_id: str | None = None
    after_ts: datetime | None = None


@dataclass
class Window:
    """One observed window: its lines, where it was placed, how and how surely."""

    thread_id: str
    target: Target | None
    attributed_by: str  # checkpoint_id | time | position order
    confidence: str  # exact | high | medium | low
    attribution: str
    entries: list[ObservedEntry] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)

    @property
    def lines(self) -> list[int]:
        return sorted([e.line for e in self.entries] + [e.line for e in self.errors])

    @property
    def logged_at(self) -> datetime | None:
        times = [i.at for i in (*self.entries, *self.errors) if i.at is not None]
        return min(times) if times else None


@dataclass(frozen=True)
class _Thread:
    """What attribution needs to know of one thread."""

    roots: frozenset[str]
    chain: list[tuple[str, Any, str | None, str | None]]  # (checkpoint_id, ts, source, parent), chain order
    points: list[Target]
    befores: dict[str, Any]  # resume point's before checkpoint → its ts
    latest: str | None


def starts_window(position: int | None, held: set[int], previous: int | None, by_position: bool = False) -> bool:
    """Whether a line at `position` starts a new window after lines holding `held` positions.

    A position the window already holds comes back *below* the previous line's (0 after
    a full window; 1 when the next window's position 0 is missing). A position repeated
    right away (`2, 2`), or out of order without going back, stays: it is one window's
    duplicate (`malformed`) or a reordered entry. `by_position` (lines with neither a
    checkpoint nor a time, where positions are all there is): also a 0 after a higher
    position, held or not.

    >>> starts_window(0, {0, 1, 2}, 2), starts_window(1, {0, 1, 2}, 2), starts_window(2, {0, 1, 2}, 2)
    (True, True, False)
    >>> starts_window(0, {1, 2, 3}, 3), starts_window(0, {1, 2, 3}, 3, by_position=True)
    (False, True)
    """
    if position is None or previous is None:
        return False
    return (position in held and position < previous) or (by_position and position == 0 and previous > 0)


def _load(con, threads: Sequence[str], gap_minutes: float) -> dict[str, _Thread]:
    rows = con.sql(
        "SELECT c.thread_id, c.checkpoint_id, c.parent_checkpoint_id, c.ts, c.source, c.on_current_branch, "
        "c.checkpoint_id = t.transcript_checkpoint_id FROM checkpoints AS c JOIN threads AS t USING (thread_id) "
        "WHERE c.is_root AND c.thread_id IN (SELECT unnest($threads))",
        params={"threads": list(threads)},
    ).fetchall()
    points = resume_points(con, None, gap_minutes, filters=Filters(thread_ids=tuple(threads))) if threads else None
    by_thread: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_thread[row[0]].append(row[1:])
    out = {}
    for thread in threads:
        cps = by_thread.get(thread, [])
        latest = next((c[0] for c in cps if c[5]), None)
        parent_of = {c[0]: c[1] for c in cps if c[4]}
        info = {c[0]: (c[2], c[3]) for c in cps}
        chain, node, seen = [], latest, set()
        while node is not None and node in parent_of and node not in seen:
            seen.add(node)
            chain.append((node, info[node][0], info[node][1], parent_of[node]))
            node = parent_of[node]
        chain.reverse()
        mine = points[points["thread_id"] == thread] if points is not None else points
        targets = [
            Target(p.before_checkpoint_id, int(p.resume_no), p.after_checkpoint_id, _ts(p.after_ts))
            for p in (mine.itertuples() if mine is not None else ())
        ]
        befores = {p.before_checkpoint_id: _ts(p.before_ts) for p in (mine.itertuples() if mine is not None else ())}
        out[thread] = _Thread(frozenset(c[0] for c in cps), chain, targets, befores, latest)
    return out


def _ts(value: Any) -> datetime | None:
    return None if value is None or pd.isna(value) else pd.Timestamp(value).to_pydatetime()


def _seconds(delta: timedelta) -> str:
    s = delta.total_seconds()
    return f"{s:.1f} s" if abs(s) < 120 else f"{s / 60:.1f} min" if abs(s) < 7200 else f"{s / 3600:.1f} h"


def _by_time(t: datetime, th: _Thread, field_name: str, lead: timedelta, tolerance: timedelta):
    """(target, confidence, sentence) for a line logged at `t`; None target: unresolved (module docstring)."""
    said = f"logged at {t.isoformat()} ({field_name})"
    timed = [p for p in th.points if p.after_ts is not None]
    close = [p for p in timed if p.after_ts - lead <= t <= p.after_ts + tolerance]
    if close:
        p = max(close, key=lambda p: (p.after_ts, p.resume_no))
        return p, "high", f"{said}, {_seconds(t - p.after_ts)} after resume #{p.resume_no}'s first checkpoint"
    afters = {p.after_checkpoint_id for p in timed}
    starts = [
        c for c in th.chain
        if c[2] == "input" and c[3] is not None and c[1] is not None and c[0] not in afters
        and c[1] - lead <= t <= c[1] + tolerance
    ]  # fmt: skip
    if starts:
        start = starts[-1]
        return Target(start[3], None, start[0], start[1]), "low", (
            f"{said}: no resume point fits (no idle gap over the threshold, no process change there); placed at the "
            f"turn that started at {start[1].isoformat()}, rebuilt from the checkpoint before it"
        )
    if field_name == "resume_at":
        for p in timed:
            before = th.befores.get(p.checkpoint_id)
            if before is not None and before < t < p.after_ts - lead:
                return p, "medium", f"{said}, a restart time in the idle gap before resume #{p.resume_no}"
    times = [c[1] for c in th.chain if c[1] is not None]
    if times and t > max(times) and th.latest is not None:
        return Target(th.latest), "medium", (
            f"{said}, {_seconds(t - max(times))} after the thread's last checkpoint: a restart the store has no "
            "checkpoint of yet, rebuilt from the latest checkpoint"
        )
    if not times or t < min(times):
        first = min(times).isoformat() if times else "none"
        return None, None, f"{said}, before the thread's first checkpoint ({first})"
    if timed:
        p = min(timed, key=lambda p: (abs(t - p.after_ts), p.resume_no))
        when = "after" if t > p.after_ts else "before"
        return p, "low", (
            f"{said}, {_seconds(abs(t - p.after_ts))} {when} resume #{p.resume_no}'s first checkpoint (the nearest), "
            f"outside the {lead.total_seconds():.0f} s lead and {tolerance.total_seconds():.0f} s tolerance"
        )
    return Target(th.latest), "low", f"{said}: the thread has no resume point; rebuilt from the latest checkpoint"


def _assign(windows: list[Window], candidates: list[Target], score: Callable[[Window, Target], float]) -> None:
    """Give untimed windows (file order) targets: order-keeping, fewest findings (module docstring)."""
    k, m = len(windows), len(candidates)
    if m == 0:
        return
    scores = [[score(w, c) for c in candidates] for w in windows]
    best = [max(range(m), key=lambda j, i=i: (scores[i][j], -j)) for i in range(k)]
    if k > m:
        for i, w in enumerate(windows):
            c = candidates[best[i]]
            w.target, w.confidence = c, "low"
            w.attribution = f"untimed window {i + 1} of {k}, more windows than restarts: its best match, {_name(c)}"
        return
    # dp[i][j]: best total of windows i.. with candidates j.. (window i takes a candidate ≥ j).
    neg = float("-inf")
    dp = [[neg] * (m + 1) for _ in range(k + 1)]
    for j in range(m + 1):
        dp[k][j] = 0.0
    for i in range(k - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = max(dp[i][j + 1], scores[i][j] + dp[i + 1][j + 1])
    j = 0
    for i, w in enumerate(windows):
        while scores[i][j] + dp[i + 1][j + 1] < dp[i][j + 1] or dp[i + 1][j + 1] == neg:
            j += 1  # leaving candidate j out scores better (ties: the earlier candidate)
        c = candidates[j]
        w.target = c
        w.confidence = "medium" if best[i] == j else "low"
        w.attribution = f"untimed window {i + 1} of {k} in file order, matched to {_name(c)} in order" + (
            "" if best[i] == j else f" (it matches {_name(candidates[best[i]])} better)"
        )
        j += 1


def _name(t: Target) -> str:
    return f"resume #{t.resume_no}" if t.resume_no is not None else f"checkpoint {t.checkpoint_id}"


def attribute(
    con,
    items: Sequence[tuple[Item, str]],
    gap_minutes: float,
    score: Callable[[Window, Target], float],
    lead_s: float = LEAD_S,
    tolerance_s: float = TOLERANCE_S,
) -> tuple[list[Window], list[LineError]]:
    """Place `(line, thread_id)` items (entries and readable bad lines) into windows.

    Returns the windows (in thread, then file order) and the lines that fit none
    (`unresolved` errors). `score(window, target)` rates a candidate for an
    untimed window (higher is better: minus its findings).
    """
    lead, tolerance = timedelta(seconds=lead_s), timedelta(seconds=tolerance_s)
    by_thread: dict[str, list[Item]] = defaultdict(list)
    for item, thread in items:
        by_thread[thread].append(item)
    info = _load(con, sorted(by_thread), gap_minutes)
    windows: list[Window] = []
    unplaced: list[LineError] = []
    for thread in sorted(by_thread):
        th = info[thread]
        open_: dict[tuple, Window] = {}
        held_in: dict[tuple, set] = {}  # the positions each open window holds (kept as it grows: one pass)
        last_pos: dict[tuple, int | None] = {}
        points = {p.checkpoint_id: p for p in th.points}
        mine: list[Window] = []
        untimed: list[Window] = []
        for item in sorted(by_thread[thread], key=lambda i: i.line):
            position = item.position
            if item.checkpoint_id:
                if item.checkpoint_id not in th.roots:
                    unplaced.append(_unresolved(item, f"no root checkpoint {item.checkpoint_id!r} in thread {thread!r}"))
                    continue
                point = points.get(item.checkpoint_id)
                target = point or Target(item.checkpoint_id)
                key = ("checkpoint", item.checkpoint_id)
                how = ("checkpoint_id", "exact", f"names checkpoint {item.checkpoint_id}")
            elif item.at is not None:
                target, confidence, sentence = _by_time(item.at, th, item.time_field or "time", lead, tolerance)
                if target is None:
                    unplaced.append(_unresolved(item, f"{thread!r}: {sentence}"))
                    continue
                key = ("time", target.checkpoint_id)
                how = ("time", confidence, sentence)
            else:
                target, key, how = None, ("order",), ("position order", "low", "")
            window = open_.get(key)
            held = held_in[key] if window is not None else set()
            # A bad line joins the open window; only good lines start one.
            new = isinstance(item, ObservedEntry) and starts_window(position, held, last_pos.get(key), key == ("order",))
            if window is None or new:
                window = Window(thread, target, *how)
                open_[key] = window
                held_in[key] = set()
                mine.append(window)
                if key == ("order",):
                    untimed.append(window)
            if isinstance(item, ObservedEntry):
                window.entries.append(item)
                held_in[key].add(item.position)
            else:
                window.errors.append(item)
            if position is not None and isinstance(item, ObservedEntry):
                last_pos[key] = position
        if untimed:
            claimed = {w.target.checkpoint_id for w in mine if w.target is not None}
            candidates = [p for p in th.points if p.checkpoint_id not in claimed]
            if th.latest is not None and th.latest not in claimed:
                candidates.append(Target(th.latest))
            _assign(untimed, candidates, score)
            for w in untimed:
                if w.target is None:
                    unplaced.extend(_unresolved(i, f"thread {thread!r} has no root checkpoint") for i in (*w.entries, *w.errors))
            mine = [w for w in mine if w.target is not None]
        windows.extend(mine)
    return windows, unplaced


def _unresolved(item: Item, why: str) -> LineError:
    if isinstance(item, LineError):
        return item  # already a bad line: it keeps its own reason
    return LineError(item.line, why, "", thread_id=item.thread_id, checkpoint_id=item.checkpoint_id, at=item.at,
                     time_field=item.time_field, position=item.position, kind="unresolved")  # fmt: skip
