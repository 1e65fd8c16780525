"""`analytics.frames`: the one SQL → typed DataFrame helper, and a drop-in for the
Resume QA module's own `_fetch` / `_typed` (same signature, same frames)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from analytics import frames, observed, resume
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


# --- a drop-in for analytics/resume.py's `_fetch` and `_typed` ---------------------------------


def _resume_has_its_own_helpers() -> bool:
    return getattr(resume, "_fetch", None) not in (None, fetch_frame) and hasattr(resume, "_typed")


needs_own = pytest.mark.skipif(not _resume_has_its_own_helpers(), reason="resume reads through analytics.frames already")


@needs_own
@pytest.mark.parametrize("dtypes", RESUME_DTYPES)
def test_typed_is_resumes_typed(dtypes):
    berlin = timezone(timedelta(hours=1))
    rows = []
    for i in range(3):
        row = {}
        for name, dtype in list(dtypes.items())[i::2]:  # every other column missing, another half each row
            row[name] = (
                datetime(2025, 1, 1, i, tzinfo=berlin) if dtype.startswith("datetime64")
                else None if i == 1 else i if dtype in ("Int64", "Float64") else i > 0 if dtype == "boolean" else f"v{i}"
            )
        rows.append(row)
    for frame in (pd.DataFrame(), pd.DataFrame(rows), pd.DataFrame(rows, index=[5, 3, 9])):
        pd.testing.assert_frame_equal(typed(frame, dtypes), resume._typed(frame, dtypes), check_exact=True)


@pytest.fixture()
def through_frames(monkeypatch):
    """Resume QA (and the observed-log comparison that imports its helpers) reading through analytics.frames."""

    def patch() -> None:
        for module in (resume, observed):
            monkeypatch.setattr(module, "_fetch", fetch_frame)
            monkeypatch.setattr(module, "_typed", typed)

    return patch


@needs_own
def test_resume_qa_answers_the_same_through_fetch_frame(con, through_frames):
    threads = [t for (t,) in con.execute("SELECT thread_id FROM threads ORDER BY thread_id").fetchall()]

    window = resume.expected_window(con, threads[0])
    # An observed log of that window with its last entry's text changed (so there is a finding).
    log = "".join(
        json.dumps({"thread_id": threads[0], "position": int(r.position), "speaker": r.speaker,
                    "content": r.content + ("!" if i == len(window) - 1 else "")}) + "\n"
        for i, r in enumerate(window.itertuples())
    )

    def answers() -> list[pd.DataFrame]:
        out = [resume.risks(con), resume.risks(con, cap=2), resume.resume_points(con), resume.resume_windows(con)]
        for t in threads:
            out += [resume.expected_window(con, t), resume.timeline(con, t), resume.thread_risks(con, t)]
        out += [*observed.compare(con, io.StringIO(log)), observed.resume_report(con),
                observed.resume_report(con, observed=io.StringIO(log))]
        return out

    own = answers()
    through_frames()
    for got, want in zip(answers(), own, strict=True):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
