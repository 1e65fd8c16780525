"""A frozen, manually advanced wall clock for writing checkpoints at chosen times.

LangGraph stamps every checkpoint with ``datetime.now(timezone.utc)`` and derives
checkpoint ids (uuid6) from ``time.time_ns()``. Both are patched by
``time_machine`` while a :class:`Clock` is active, so a scenario decides what the
``ts`` column says. The clock never ticks by itself (``tick=False``): between two
``advance`` calls every checkpoint gets the *same* ts, which is how ts ties appear.

Example:
    >>> from datetime import datetime, timezone
    >>> with Clock(datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)) as clock:
    ...     _ = clock.advance(minutes=5)
    ...     clock.now().isoformat()
    '2025-03-03T09:05:00+00:00'
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

import time_machine

UTC = dt.timezone.utc
DEFAULT_START = dt.datetime(2025, 3, 3, 9, 0, tzinfo=UTC)

# The innermost active clock; fake models and tools advance it to simulate
# latency without having the clock threaded through every LangChain call.
_active: list[Clock] = []


class Clock:
    """Frozen wall clock; ``advance`` moves it forward.

    Example:
        >>> c = Clock(DEFAULT_START)
        >>> with c:
        ...     _ = c.advance(seconds=1.5)
        >>> c.position.isoformat()
        '2025-03-03T09:00:01.500000+00:00'
    """

    def __init__(self, start: dt.datetime = DEFAULT_START) -> None:
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self.position: dt.datetime = start
        self._travel: time_machine.travel | None = None
        self._traveller: time_machine.Traveller | None = None

    @property
    def active(self) -> bool:
        return self._traveller is not None

    def __enter__(self) -> Clock:
        if self.active:
            raise RuntimeError("clock already active")
        self._travel = time_machine.travel(self.position, tick=False)
        self._traveller = self._travel.start()
        _active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.position = self.now()
        assert self._travel is not None
        self._travel.stop()
        self._travel = self._traveller = None
        _active.remove(self)

    def now(self) -> dt.datetime:
        """Current simulated time (aware, UTC)."""
        if not self.active:
            return self.position
        return dt.datetime.now(UTC)

    def advance(
        self,
        seconds: float = 0.0,
        *,
        minutes: float = 0.0,
        hours: float = 0.0,
        days: float = 0.0,
    ) -> dt.datetime:
        """Move forward; returns the new time. ``advance(0)`` is a no-op."""
        delta = dt.timedelta(seconds=seconds, minutes=minutes, hours=hours, days=days)
        if delta < dt.timedelta(0):
            raise ValueError("a Clock only moves forward")
        if self._traveller is None:
            self.position += delta
        elif delta:
            self._traveller.shift(delta)
        return self.now()

    def move_to(self, when: dt.datetime) -> None:
        """Jump to ``when`` (forward or backward: used between independent threads)."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        if self._traveller is None:
            self.position = when
        else:
            self._traveller.move_to(when)


def current_clock() -> Clock | None:
    """The innermost active :class:`Clock`, if any."""
    return _active[-1] if _active else None


def advance_active(seconds: float) -> None:
    """Advance the active clock, if there is one (latency of fake models/tools)."""
    clock = current_clock()
    if clock is not None and seconds > 0:
        clock.advance(seconds)


@contextmanager
def clock_scope(clock: Clock | dt.datetime | None = None) -> Iterator[Clock]:
    """Yield an active clock: ``clock`` itself if already running, else start one.

    Example:
        >>> with clock_scope(None) as c:
        ...     c.now() == DEFAULT_START
        True
    """
    if isinstance(clock, Clock) and clock.active:
        yield clock
        return
    if clock is None:
        clock = Clock(DEFAULT_START)
    elif isinstance(clock, dt.datetime):
        clock = Clock(clock)
    with clock:
        yield clock
