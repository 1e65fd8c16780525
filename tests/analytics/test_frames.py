"""`analytics.frames`: the one SQL → typed DataFrame helper (every module of analytics reads through it)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from analytics import frames, resume
from analytics.frames import fetch_frame, typed

RESUME_DTYPES = [
    resume.RESUME_COLUMNS, resume.WINDOW_COLUMNS, resume.RESUME_WINDOW_COLUMNS, resume.TIMELINE_COLUMNS,
    resume.RISK_COLUMNS, resume.THREAD_RISK_COLUMNS,
]


def test_without_dtypes_integers_stay_nullable_and_the_rest_converts_as_arrow_does(con):
    frame = fetch_frame(con, """
        SELECT 1::INTEGER AS i, NULL::BIGINT AS n, 1.5::DOUBLE AS d, DATE '2025-01-02' AS day,
               TRUE AS b, 'x' AS s, TIMESTAMPTZ '2025-01-02 03:04:05.5+00' AS ts""")
    assert [str(t) for t in frame.dtypes] == ["Int64", "Int64", "float64", "datetime64[ms]", "bool", "str",
                                              "datetime64[us, UTC]"]
    assert frame["n"].isna().all() and frame["ts"][0] == pd.Timestamp("2025-01-02 03:04:05.5", tz="UTC")


def test_with_dtypes_exactly_those_columns_in_that_order(con):
    dtypes = {"b": "Int64", "a": "str", "missing": "Float64"}
    got = fetch_frame(con, "SELECT 'x' AS a, 2 AS b, 3 AS c WHERE $keep", {"keep": True}, dtypes)
    assert list(got.columns) == list(dtypes) and [str(t) for t in got.dtypes] == list(dtypes.values())
    assert got["missing"].isna().all()
    empty = fetch_frame(con, "SELECT 'x' AS a, 2 AS b, 3 AS c WHERE $keep", {"keep": False}, dtypes)
    assert empty.empty and [str(t) for t in empty.dtypes] == list(dtypes.values())


def test_timestamps_are_utc_whatever_the_session_time_zone(con):
    con.execute("SET TimeZone = 'America/New_York'")
    try:
        got = fetch_frame(con, "SELECT TIMESTAMPTZ '2025-01-02 03:04:05+00' AS ts", [], {"ts": frames.UTC_MICROS})
    finally:
        con.execute("SET TimeZone = 'UTC'")
    assert str(got["ts"].dtype) == frames.UTC_MICROS
    assert got["ts"][0] == pd.Timestamp("2025-01-02 03:04:05", tz="UTC")


@pytest.mark.parametrize("dtypes", RESUME_DTYPES)
def test_every_resume_qa_frame_gets_its_declared_dtypes_even_when_empty(dtypes):
    berlin = timezone(timedelta(hours=1))
    row = {name: (datetime(2025, 1, 1, tzinfo=berlin) if dtype.startswith("datetime64") else None)
           for name, dtype in list(dtypes.items())[::2]}  # every other column missing
    for frame in (pd.DataFrame(), pd.DataFrame([row, row], index=[5, 3])):
        got = typed(frame, dtypes)
        assert list(got.columns) == list(dtypes) and [str(t) for t in got.dtypes] == list(dtypes.values())
        assert list(got.index) == list(range(len(frame)))
