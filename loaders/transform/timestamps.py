"""A checkpoint's `ts` as integer microseconds since the Unix epoch, UTC: how rows carry timestamps.

LangGraph's own UTC form is read in C (`_scan.ts_list`) where the extension is built; every
other value, and every value without it, goes through `ts_micros`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from loaders import _native
from loaders.records import RawCheckpoint

# LangGraph's own UTC timestamps read in C, same answers (None: every one goes through `ts_micros`).
_ts_list = _native.scan.ts_list if _native.scan is not None else None

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_MIN_MICROS = (datetime.min.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND
_MAX_MICROS = (datetime.max.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND


def ts_micros(value: Any) -> int | None:
    """A checkpoint `ts` as integer microseconds since the Unix epoch (UTC); None if unreadable
    or, in UTC, outside years 1 to 9999.

    Rows carry timestamps this way: an int orders and converts to Arrow at C
    speed, where an aware `datetime` costs microseconds per value.

    >>> ts_micros("1970-01-01T00:00:01.5+00:00"), ts_micros("1970-01-01T01:00:00+01:00")
    (1500000, 0)
    """
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    # Aware subtraction honours the offset: no conversion to UTC needed first.
    micros = (dt - _EPOCH) // _MICROSECOND
    # An offset can push a time past the years a datetime holds (9999-12-31T23:59:59-01:00 is
    # in year 10000 UTC): such a ts is as unreadable as any other (contract §7.12).
    return micros if _MIN_MICROS <= micros <= _MAX_MICROS else None


def ts_micros_of(cps: list[RawCheckpoint]) -> list[int | None]:
    """Each checkpoint's `ts` as `ts_micros` reads it, in order.

    >>> cp = RawCheckpoint("t", "", "c1", None, "1970-01-01T00:00:02+00:00", None)
    >>> ts_micros_of([cp, cp._replace(ts="2024-13-01")])
    [2000000, None]
    """
    return _ts_list(cps, ts_micros) if _ts_list is not None else [ts_micros(cp.ts) for cp in cps]
