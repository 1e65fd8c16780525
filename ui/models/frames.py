"""Reshaping helpers the page models share."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd


def is_missing(value: Any) -> bool:
    """None, pandas' NA / NaT, or a float NaN: a cell with nothing in it.

    >>> [is_missing(v) for v in (None, pd.NA, float("nan"), 0, "")]
    [True, True, True, False, False]
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def per_day(daily: pd.DataFrame) -> pd.DataFrame:
    """`metrics.daily()` rows (one per day × tenant) summed per day.

    A thread has one tenant, so summing over tenants counts each thread once.
    """
    cols = [c for c in daily.columns if c not in ("day", "tenant_id", "latency_median_s")]
    return daily.groupby("day", as_index=False)[cols].sum(min_count=1)


def empty(dtypes: Mapping[str, str]) -> pd.DataFrame:
    """No rows, with exactly `dtypes`' columns and dtypes (an analytics `*_COLUMNS` mapping).

    >>> empty({"a": "Int64", "ts": "datetime64[us, UTC]"}).dtypes.astype(str).tolist()
    ['Int64', 'datetime64[us, UTC]']
    """
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})
