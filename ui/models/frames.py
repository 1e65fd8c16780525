"""Reshaping helpers the page models share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analytics.formats import is_missing  # noqa: F401  (the page models take it from here)


def per_day(daily: pd.DataFrame) -> pd.DataFrame:
    """`metrics.daily()` rows (one per day × tenant) summed per day.

    A thread has one tenant, so summing over tenants counts each thread once.
    """
    cols = [c for c in daily.columns if c not in ("day", "tenant_id", "latency_median_s")]
    return daily.groupby("day", as_index=False)[cols].sum(min_count=1)


def gaps_filled(frame: pd.DataFrame, key: str, steps: pd.Index) -> pd.DataFrame:
    """`frame` with a row for each of `steps` it lacks, its counts 0: a chart of days or of whole
    numbers draws a quiet day or an empty value as a gap of its width, not as nothing.

    >>> f = pd.DataFrame({"user_turns": pd.array([1, 2, 5], "Int64"), "threads": pd.array([4, 2, 1], "Int64")})
    >>> gaps_filled(f, "user_turns", pd.RangeIndex(1, 6))["threads"].tolist()
    [4, 2, 0, 0, 1]
    """
    if frame.empty:
        return frame
    out = frame.set_index(key).reindex(steps).fillna(0).rename_axis(key).reset_index()
    return out.astype(frame.dtypes.to_dict())


def empty(dtypes: Mapping[str, str]) -> pd.DataFrame:
    """No rows, with exactly `dtypes`' columns and dtypes (an analytics `*_COLUMNS` mapping).

    >>> empty({"a": "Int64", "ts": "datetime64[us, UTC]"}).dtypes.astype(str).tolist()
    ['Int64', 'datetime64[us, UTC]']
    """
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})
