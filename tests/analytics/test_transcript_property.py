"""`read` against a plain-Python reading of contract §4, over generated transcripts and queries.

The reference below is written from the contract's text (docs/contract.md §4), step by step, with list
slicing; `read` does the same in one DuckDB query. Any disagreement (a row,
its number, or the error raised) is a bug in one of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics import BadRequest, TranscriptQuery, Unsupported, read
from tests.analytics.dbutil import Msg, create_schema, insert_threads

BASE = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
# Few distinct stamps, so equal timestamps (many messages per checkpoint) are the norm.
STAMPS = [BASE + timedelta(minutes=k) for k in range(5)]
ROLES = ["user", "assistant", "tool", "system", "other"]
OFFSETS = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-7))]


@dataclass(frozen=True)
class Spec:
    """A generated request, before validation (so invalid ones can be generated too)."""

    speaker: str
    index: int | None
    since: datetime | None
    until: datetime | None
    limit: int | None


def reference(msgs: list[Msg], spec: Spec) -> list[tuple[int, int]] | type[Exception]:
    """contract §4 literally: the (index, ordinal) pairs a read answers, or the error it raises."""
    if spec.speaker not in ("user", "assistant", "all"):
        return BadRequest
    if spec.limit is not None and spec.limit < 0:
        return BadRequest
    time_range = spec.since is not None or spec.until is not None
    if spec.index is not None and time_range:
        return BadRequest
    if spec.since is not None and spec.until is not None and spec.since > spec.until:
        return BadRequest
    # 1-2. speaker filter, numbered within that view
    rows = [(i, ordinal) for i, ordinal in enumerate(o for o, m in enumerate(msgs) if spec.speaker in ("all", m.role))]
    # 3. closed time range; NULL ts out; no ts in the whole thread → unsupported
    if time_range:
        if all(m.ts is None for m in msgs):
            return Unsupported
        rows = [
            (i, o)
            for i, o in rows
            if msgs[o].ts is not None
            and (spec.since is None or msgs[o].ts >= spec.since)
            and (spec.until is None or msgs[o].ts <= spec.until)
        ]
    # 4. one row of the view, Python's own negative indexing; out of range → empty
    if spec.index is not None:
        rows = [rows[spec.index]] if -len(rows) <= spec.index < len(rows) else []
    # 5. first rows
    if spec.limit is not None:
        rows = rows[: spec.limit]
    return rows


@st.composite
def messages(draw) -> list[Msg]:
    n = draw(st.integers(0, 12))
    without_stamps = draw(st.booleans()) and draw(st.booleans())  # ~1 in 4 threads has no ts at all
    out = []
    for _ in range(n):
        role = draw(st.sampled_from(ROLES))
        has_id = draw(st.integers(0, 4)) > 0
        ts = None if (without_stamps or not has_id) else draw(st.none() | st.sampled_from(STAMPS))
        out.append(Msg(role, draw(st.text(max_size=6)), ts=ts, message_id="AUTO" if has_id else None))
    return out


def bounds() -> st.SearchStrategy[datetime | None]:
    # Exactly a stamp (inclusive edges), a microsecond either side, or far away;
    # in another offset or naive, which must compare as the same UTC instant.
    instant = st.builds(
        lambda ts, nudge: ts + timedelta(microseconds=nudge),
        st.sampled_from(STAMPS + [BASE - timedelta(days=1), BASE + timedelta(days=1)]),
        st.sampled_from([0, 0, 0, -1, 1]),
    )
    shown = st.builds(
        lambda ts, how: ts.replace(tzinfo=None) if how is None else ts.astimezone(how),
        instant,
        st.sampled_from([None, *OFFSETS]),
    )
    return st.none() | shown


@st.composite
def specs(draw, valid_only: bool = False) -> Spec:
    speaker = draw(
        st.sampled_from(["user", "assistant", "all"])
        if valid_only
        else st.sampled_from(["user", "assistant", "all", "all", "tool", "Bot"])
    )
    mode = draw(st.sampled_from(["plain", "index", "time"] if valid_only else ["plain", "index", "time", "both"]))
    index = draw(st.integers(-15, 15)) if mode in ("index", "both") else None
    since = draw(bounds()) if mode in ("time", "both") else None
    until = draw(bounds()) if mode in ("time", "both") else None
    if mode == "both" and since is None and until is None:
        since = STAMPS[0]
    if valid_only and since is not None and until is not None and _utc(since) > _utc(until):
        since, until = until, since
    limit = draw(st.none() | st.integers(-1 if not valid_only else 0, 15))
    return Spec(speaker, index, since, until, limit)


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def db():
    con = duckdb.connect()
    create_schema(con)
    # Every example adds its thread next to the earlier ones, which then act as
    # decoys: a read must only ever see its own thread.
    yield con, itertools.count()
    con.close()


def _load(db, msgs: list[Msg]) -> tuple[duckdb.DuckDBPyConnection, str]:
    con, counter = db
    thread_id = f"t:{next(counter)}:s"
    insert_threads(con, {thread_id: msgs})
    return con, thread_id


def _utc_spec(spec: Spec) -> Spec:
    return Spec(
        spec.speaker,
        spec.index,
        None if spec.since is None else _utc(spec.since),
        None if spec.until is None else _utc(spec.until),
        spec.limit,
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(msgs=messages(), requests=st.lists(specs(), min_size=1, max_size=4))
def test_read_matches_the_reference(db, msgs, requests):
    con, thread_id = _load(db, msgs)
    for spec in requests:  # several requests per generated thread: inserting is the slow part
        expected = reference(msgs, _utc_spec(spec))
        if isinstance(expected, type):
            with pytest.raises(expected):
                read(con, TranscriptQuery(thread_id, spec.speaker, spec.index, spec.since, spec.until, spec.limit))
            continue
        frame = read(con, TranscriptQuery(thread_id, spec.speaker, spec.index, spec.since, spec.until, spec.limit))
        assert list(zip(frame["index"], frame["ordinal"])) == expected, spec
        # Each row is the stored message at that ordinal, untouched.
        for row in frame.itertuples(index=False):
            m = msgs[row.ordinal]
            assert (row.role, row.content) == (m.role, m.content)
            assert row.ts == m.ts if m.ts is not None else row.ts != row.ts  # NaT != NaT


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(msgs=messages(), spec=specs(valid_only=True))
def test_limit_is_a_prefix_and_numbers_match_the_plain_speaker_view(db, msgs, spec):
    con, thread_id = _load(db, msgs)
    query = TranscriptQuery(thread_id, spec.speaker, spec.index, spec.since, spec.until)
    try:
        uncapped = read(con, query)
    except Unsupported:
        assert all(m.ts is None for m in msgs)
        return
    capped = read(con, TranscriptQuery(thread_id, spec.speaker, spec.index, spec.since, spec.until, spec.limit))
    assert capped.equals(uncapped.iloc[: spec.limit].reset_index(drop=True) if spec.limit is not None else uncapped)
    # Whatever later steps dropped, a row's index is its place in the plain speaker read.
    view = read(con, TranscriptQuery(thread_id, spec.speaker))
    for row in capped.itertuples(index=False):
        assert view["ordinal"].iloc[row.index] == row.ordinal
