"""contract §4, rule by rule, on a hand-written transcript (see `test_transcript_property` for random ones)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pandas as pd
import pytest

from analytics import BadRequest, Filters, NotFound, TranscriptQuery, Unsupported, read, search_threads
from analytics import connection as analytics_connect
from analytics.transcript import TRANSCRIPT_COLUMNS, threads
from tests.analytics.dbutil import Msg, build_db, write_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)
T2 = T0 + timedelta(minutes=30)
T3 = T0 + timedelta(minutes=31)
T4 = T0 + timedelta(hours=2)

THREAD = "acme:eu:session:with:colons"
CALL = [{"name": "search", "args": {"q": "flights"}, "id": "call-1", "type": "tool_call"}]

TRANSCRIPT = [
    Msg("system", "You are a travel agent.", ts=T0),  # 0
    Msg("user", "Find me a flight to Lisbon", ts=T0),  # 1
    Msg("assistant", "", ts=T1, tool_calls=CALL, input_tokens=40, output_tokens=7, model="gpt-x"),  # 2
    Msg("tool", "3 flights found", ts=T1, name="search", tool_call_id="call-1", tool_status="success"),  # 3
    Msg("assistant", "I found 3 flights.", ts=T1, input_tokens=60, output_tokens=12, model="gpt-x"),  # 4
    Msg("user", "Which one is cheapest?", ts=T2),  # 5
    Msg("other", "[moderator] ok", ts=T2, lc_type="chat", chat_role="moderator"),  # 6
    Msg("assistant", "The 07:15 one.", ts=T3, model="gpt-x"),  # 7
    Msg("user", "Book it (sent without an id)", ts=None, message_id=None),  # 8
    Msg("assistant", "Booked.", ts=T4, model="gpt-x"),  # 9
]
USER_ORDINALS = [1, 5, 8]
ASSISTANT_ORDINALS = [2, 4, 7, 9]


@pytest.fixture(scope="module")
def con():
    c = build_db(
        None,
        {
            THREAD: TRANSCRIPT,
            "no-stamps": [Msg("user", "hello", message_id=None), Msg("assistant", "hi", message_id=None)],
            "empty": [],
            # Users without ids (NULL ts) but timestamped assistant replies.
            "globex::s2": [Msg("user", "q", message_id=None), Msg("assistant", "a", ts=T2)],
            # The same content in another thread must never leak into a read of THREAD.
            "acme:us:other": [Msg("user", "Find me a flight to Lisbon", ts=T0)],
        },
    )
    yield c
    c.close()


def ordinals(frame: pd.DataFrame) -> list[int]:
    return frame["ordinal"].tolist()


def indexes(frame: pd.DataFrame) -> list[int]:
    return frame["index"].tolist()


# Rule 1: speaker


@pytest.mark.parametrize("speaker", ["bot", "User", "", "tool", "system", None, 1])
def test_unknown_speaker_is_a_bad_request(speaker):
    with pytest.raises(BadRequest, match="speaker"):
        TranscriptQuery(THREAD, speaker=speaker)


def test_bad_request_is_also_a_value_error():
    with pytest.raises(ValueError):
        TranscriptQuery(THREAD, speaker="bot")


def test_all_keeps_every_row_tool_system_and_other_included(con):
    frame = read(con, TranscriptQuery(THREAD))
    assert ordinals(frame) == list(range(len(TRANSCRIPT)))
    assert frame["role"].tolist() == [m.role for m in TRANSCRIPT]
    assert {"tool", "system", "other"} <= set(frame["role"])
    assert indexes(frame) == ordinals(frame)


@pytest.mark.parametrize(("speaker", "expected"), [("user", USER_ORDINALS), ("assistant", ASSISTANT_ORDINALS)])
def test_speaker_keeps_only_its_rows(con, speaker, expected):
    frame = read(con, TranscriptQuery(THREAD, speaker=speaker))
    assert ordinals(frame) == expected
    assert set(frame["role"]) == {speaker}


def test_a_read_never_sees_another_thread(con):
    frame = read(con, TranscriptQuery(THREAD))
    assert set(frame["thread_id"]) == {THREAD}


# Rule 2: numbering within the speaker-filtered view


def test_rows_are_numbered_within_the_speaker_view(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="user"))
    assert indexes(frame) == [0, 1, 2]
    assert ordinals(frame) == USER_ORDINALS


def test_a_row_keeps_its_number_after_a_time_filter(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="user", since=T2))
    # The second user message is still number 1, not 0.
    assert indexes(frame) == [1]
    assert ordinals(frame) == [5]


def test_a_row_keeps_its_number_after_index_and_limit(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="assistant", index=-1, limit=1))
    assert indexes(frame) == [3]
    assert ordinals(frame) == [9]


# Rule 3: since / until


def test_since_and_until_are_inclusive(con):
    frame = read(con, TranscriptQuery(THREAD, since=T1, until=T2))
    assert ordinals(frame) == [2, 3, 4, 5, 6]
    assert frame["ts"].min() == T1 and frame["ts"].max() == T2


def test_a_bound_one_microsecond_past_a_checkpoint_excludes_it(con):
    tick = timedelta(microseconds=1)
    assert ordinals(read(con, TranscriptQuery(THREAD, since=T1 + tick, until=T2 - tick))) == []
    assert ordinals(read(con, TranscriptQuery(THREAD, since=T1 - tick, until=T1 + tick))) == [2, 3, 4]


def test_since_equal_to_until_selects_one_checkpoint(con):
    assert ordinals(read(con, TranscriptQuery(THREAD, since=T1, until=T1))) == [2, 3, 4]


@pytest.mark.parametrize("bounds", [{"since": T0}, {"until": T4}, {"since": T0, "until": T4}])
def test_rows_with_null_ts_are_excluded_from_a_time_read(con, bounds):
    frame = read(con, TranscriptQuery(THREAD, **bounds))
    assert 8 not in ordinals(frame)
    assert ordinals(frame) == [o for o in range(len(TRANSCRIPT)) if o != 8]
    assert frame["ts"].notna().all()


def test_open_ended_bounds(con):
    assert ordinals(read(con, TranscriptQuery(THREAD, since=T3))) == [7, 9]
    assert ordinals(read(con, TranscriptQuery(THREAD, until=T0))) == [0, 1]


def test_time_read_of_a_thread_without_timestamps_is_unsupported(con):
    for bounds in ({"since": T0}, {"until": T4}, {"since": T0, "until": T4}):
        with pytest.raises(Unsupported, match="no-stamps"):
            read(con, TranscriptQuery("no-stamps", **bounds))


def test_ordinal_reads_of_a_thread_without_timestamps_still_work(con):
    frame = read(con, TranscriptQuery("no-stamps", speaker="user", index=0))
    assert frame["content"].tolist() == ["hello"]
    assert frame["ts"].isna().all()


def test_unsupported_is_judged_on_the_whole_thread_not_the_speaker_view(con):
    # The user rows have no ts, but the thread has one: an ordinary empty answer.
    frame = read(con, TranscriptQuery("globex::s2", speaker="user", since=T0))
    assert frame.empty
    assert ordinals(read(con, TranscriptQuery("globex::s2", since=T0))) == [1]


def test_time_read_of_a_thread_without_messages_is_unsupported(con):
    with pytest.raises(Unsupported):
        read(con, TranscriptQuery("empty", since=T0))


def test_time_range_outside_the_thread_is_empty_not_unsupported(con):
    assert read(con, TranscriptQuery(THREAD, since=T4 + timedelta(days=1))).empty


def test_since_after_until_is_a_bad_request():
    with pytest.raises(BadRequest, match="after"):
        TranscriptQuery(THREAD, since=T2, until=T1)


# Naive datetimes and ISO strings


def test_naive_datetimes_are_utc(con):
    naive = read(con, TranscriptQuery(THREAD, since=T1.replace(tzinfo=None), until=T2.replace(tzinfo=None)))
    aware = read(con, TranscriptQuery(THREAD, since=T1, until=T2))
    assert ordinals(naive) == ordinals(aware) == [2, 3, 4, 5, 6]


def test_bounds_in_another_offset_compare_as_instants(con):
    plus2 = timezone(timedelta(hours=2))
    frame = read(con, TranscriptQuery(THREAD, since=T1.astimezone(plus2), until=T1.astimezone(plus2)))
    assert ordinals(frame) == [2, 3, 4]


def test_iso_strings_are_accepted_naive_ones_as_utc(con):
    query = TranscriptQuery(THREAD, since="2025-03-01T09:01:00", until="2025-03-01T11:30:00+02:00")
    assert query.since == T1 and query.until == T2
    assert ordinals(read(con, query)) == [2, 3, 4, 5, 6]


def test_pandas_timestamps_are_accepted(con):
    frame = read(con, TranscriptQuery(THREAD, since=pd.Timestamp(T3)))
    assert ordinals(frame) == [7, 9]


@pytest.mark.parametrize("bad", ["yesterday", "2025-13-01", "", "01/03/2025"])
def test_a_bad_iso_string_is_a_bad_request(bad):
    with pytest.raises(BadRequest, match="ISO 8601"):
        TranscriptQuery(THREAD, since=bad)


def test_a_bare_date_is_a_bad_request():
    with pytest.raises(BadRequest, match="datetime"):
        TranscriptQuery(THREAD, until=T0.date())


# Rule 4: index


def test_first_thing_the_user_asked(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="user", index=0))
    assert frame["content"].tolist() == ["Find me a flight to Lisbon"]
    assert indexes(frame) == [0]


def test_last_assistant_reply(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="assistant", index=-1))
    assert frame["content"].tolist() == ["Booked."]
    assert indexes(frame) == [len(ASSISTANT_ORDINALS) - 1]


@pytest.mark.parametrize(("index", "ordinal"), [(0, 2), (1, 4), (3, 9), (-1, 9), (-2, 7), (-4, 2)])
def test_index_picks_one_row_of_the_view(con, index, ordinal):
    frame = read(con, TranscriptQuery(THREAD, speaker="assistant", index=index))
    assert ordinals(frame) == [ordinal]
    assert indexes(frame) == [index % len(ASSISTANT_ORDINALS)]


@pytest.mark.parametrize("index", [4, 5, 1000, -5, -1000])
def test_index_out_of_range_is_empty_and_never_raises(con, index):
    frame = read(con, TranscriptQuery(THREAD, speaker="assistant", index=index))
    assert frame.empty
    assert list(frame.columns) == list(TRANSCRIPT_COLUMNS)


def test_index_on_an_empty_thread_is_empty(con):
    assert read(con, TranscriptQuery("empty", index=-1)).empty


# Rule 5: index with since/until


@pytest.mark.parametrize("bounds", [{"since": T0}, {"until": T0}, {"since": T0, "until": T1}])
def test_index_with_a_time_range_is_a_bad_request(bounds):
    with pytest.raises(BadRequest, match="index"):
        TranscriptQuery(THREAD, index=0, **bounds)


# Rule 6: limit last, first rows


def test_limit_keeps_the_first_rows(con):
    full = read(con, TranscriptQuery(THREAD, speaker="assistant"))
    capped = read(con, TranscriptQuery(THREAD, speaker="assistant", limit=2))
    pd.testing.assert_frame_equal(capped, full.iloc[:2])


def test_limit_applies_after_the_time_filter(con):
    frame = read(con, TranscriptQuery(THREAD, speaker="assistant", since=T1, limit=2))
    assert ordinals(frame) == [2, 4]
    assert indexes(frame) == [0, 1]
    later = read(con, TranscriptQuery(THREAD, speaker="assistant", since=T3, limit=1))
    assert indexes(later) == [2]


def test_limit_applies_after_the_index(con):
    assert ordinals(read(con, TranscriptQuery(THREAD, speaker="user", index=-1, limit=5))) == [8]
    assert read(con, TranscriptQuery(THREAD, speaker="user", index=-1, limit=0)).empty


def test_limit_zero_is_empty_and_a_large_limit_is_everything(con):
    assert read(con, TranscriptQuery(THREAD, limit=0)).empty
    assert ordinals(read(con, TranscriptQuery(THREAD, limit=10_000))) == list(range(len(TRANSCRIPT)))


@pytest.mark.parametrize(
    ("field", "value"), [("limit", -1), ("limit", "3"), ("limit", 2.0), ("index", True), ("index", "0")]
)
def test_bad_limit_or_index_is_a_bad_request(field, value):
    with pytest.raises(BadRequest, match=field):
        TranscriptQuery(THREAD, **{field: value})


# Unknown threads and empty threads


def test_unknown_thread_is_not_found(con):
    with pytest.raises(NotFound, match="nope"):
        read(con, TranscriptQuery("nope"))
    with pytest.raises(NotFound):
        read(con, TranscriptQuery("nope", since=T0))


def test_known_thread_without_messages_reads_empty(con):
    frame = read(con, TranscriptQuery("empty"))
    assert frame.empty
    assert list(frame.columns) == list(TRANSCRIPT_COLUMNS)


def test_empty_thread_id_is_a_bad_request():
    with pytest.raises(BadRequest):
        TranscriptQuery("")


# The frame itself


def test_columns_and_dtypes_do_not_depend_on_the_rows(con):
    full = read(con, TranscriptQuery(THREAD))
    empty = read(con, TranscriptQuery(THREAD, limit=0))
    assert list(full.columns) == list(TRANSCRIPT_COLUMNS)
    pd.testing.assert_series_equal(full.dtypes, empty.dtypes)
    assert str(full["ts"].dtype) == "datetime64[us, UTC]"


def test_rows_carry_the_stored_fields(con):
    frame = read(con, TranscriptQuery(THREAD)).set_index("ordinal")
    call = frame.loc[2]
    assert call["tool_calls"] and "search" in call["tool_calls"]
    assert (call["input_tokens"], call["output_tokens"], call["total_tokens"], call["model"]) == (40, 7, 47, "gpt-x")
    tool = frame.loc[3]
    assert (tool["name"], tool["tool_call_id"], tool["tool_status"]) == ("search", "call-1", "success")
    other = frame.loc[6]
    assert (other["lc_type"], other["chat_role"]) == ("chat", "moderator")
    assert frame.loc[8, "message_id"] is pd.NA or pd.isna(frame.loc[8, "message_id"])
    assert set(frame["tenant_id"]) == {"acme"}
    assert set(frame["sub_tenant_id"]) == {"eu"}
    assert set(frame["session_id"]) == {"session:with:colons"}


def test_ts_and_checkpoint_come_from_the_database_not_invented(con):
    stored = con.execute(
        "SELECT ordinal, ts, checkpoint_id, message_id FROM messages WHERE thread_id = ? ORDER BY ordinal", [THREAD]
    ).fetchall()
    frame = read(con, TranscriptQuery(THREAD))
    for (ordinal, ts, checkpoint_id, message_id), row in zip(stored, frame.itertuples(index=False), strict=True):
        assert row.ordinal == ordinal
        assert (pd.isna(row.ts) and ts is None) or row.ts == ts
        assert (pd.isna(row.checkpoint_id) and checkpoint_id is None) or row.checkpoint_id == checkpoint_id
        assert (pd.isna(row.message_id) and message_id is None) or row.message_id == message_id


def test_read_by_path_equals_read_by_connection(tmp_path):
    path = write_db(tmp_path / "lens.duckdb", {THREAD: TRANSCRIPT})
    by_path = read(path, TranscriptQuery(THREAD, speaker="user"))
    by_str = read(str(path), TranscriptQuery(THREAD, speaker="user"))
    with build_db(None, {THREAD: TRANSCRIPT}) as mem:
        by_con = read(mem, TranscriptQuery(THREAD, speaker="user"))
    pd.testing.assert_frame_equal(by_path, by_con)
    pd.testing.assert_frame_equal(by_str, by_con)


def test_answers_are_utc_whatever_the_callers_session_time_zone(tmp_path):
    path = write_db(tmp_path / "lens.duckdb", {THREAD: TRANSCRIPT})
    with build_db(None, {}) as other:
        other.execute("SET TimeZone = 'Asia/Tokyo'")
        other.execute("ATTACH ? AS lens (READ_ONLY)", [str(path)])
        other.execute("USE lens")
        frame = read(other, TranscriptQuery(THREAD, since=T1, until=T1))
    assert str(frame["ts"].dtype) == "datetime64[us, UTC]"
    assert frame["ts"].tolist() == [T1] * 3


def test_keywords_are_the_same_as_a_query(con):
    pd.testing.assert_frame_equal(
        read(con, THREAD, speaker="user", index=-1), read(con, TranscriptQuery(THREAD, speaker="user", index=-1))
    )
    with pytest.raises(BadRequest):
        read(con, TranscriptQuery(THREAD), speaker="user")


def test_read_wants_a_query_or_a_thread_id(con):
    with pytest.raises(BadRequest):
        read(con, 42)  # type: ignore[arg-type]


def test_query_is_frozen():
    query = TranscriptQuery(THREAD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        query.speaker = "user"  # type: ignore[misc]


# Thread pickers


def test_threads_lists_every_thread_most_recent_first(con):
    frame = threads(con)
    assert set(frame["thread_id"]) == {THREAD, "no-stamps", "empty", "globex::s2", "acme:us:other"}
    assert frame["last_ts"].dropna().is_monotonic_decreasing
    assert frame["thread_id"].iloc[0] == THREAD  # its last ts (T4) is the latest
    counts = dict(zip(frame["thread_id"], frame["message_count"]))
    assert counts[THREAD] == len(TRANSCRIPT) and counts["empty"] == 0


def test_a_limit_keeps_the_first_threads_of_the_order(con):
    every = threads(con)
    for limit in (0, 1, 3, 100):
        pd.testing.assert_frame_equal(threads(con, limit=limit), every.head(limit))
        listed = search_threads(con, "", limit=limit)  # an empty search lists them the same way
        assert listed["thread_id"].tolist() == every["thread_id"].head(limit).tolist()
    assert search_threads(con, "  ", limit=None)["thread_id"].tolist() == every["thread_id"].tolist()
    with pytest.raises(BadRequest, match="limit"):
        threads(con, limit=-1)


def test_threads_apply_filters(con):
    frame = threads(con, Filters(tenants=("acme",)))
    assert sorted(frame["thread_id"]) == sorted([THREAD, "acme:us:other"])
    assert set(frame["tenant_id"]) == {"acme"}


def test_search_finds_message_text_case_insensitively(con):
    frame = search_threads(con, "LISBON")
    assert set(frame["thread_id"]) == {THREAD, "acme:us:other"}
    assert frame["snippet"].str.contains("Lisbon").all()
    assert (frame["first_match_ordinal"] >= 0).all()


def test_search_ranks_by_match_count_and_finds_thread_ids(con):
    frame = search_threads(con, "flight")
    assert frame["thread_id"].iloc[0] == THREAD  # 3 messages mention flights, the other thread 1
    assert frame["match_count"].iloc[0] == 3
    by_id = search_threads(con, "globex")
    assert by_id["thread_id"].tolist() == ["globex::s2"]
    assert by_id["match_count"].tolist() == [0]


def test_search_treats_wildcards_literally_and_honours_limit_and_filters(con):
    assert search_threads(con, "%").empty
    assert search_threads(con, "_").empty
    assert len(search_threads(con, "a", limit=2)) == 2
    assert set(search_threads(con, "Lisbon", filters=Filters(sub_tenants=("us",)))["thread_id"]) == {"acme:us:other"}


def test_empty_search_lists_threads(con):
    listed = search_threads(con, " ", limit=None)
    assert sorted(listed["thread_id"]) == sorted(threads(con)["thread_id"])
    assert len(search_threads(con, "", limit=1)) == 1
    with pytest.raises(BadRequest):
        search_threads(con, "x", limit=-1)


# End to end: a real store written by real graphs, loaded by the real loader,
# read under the contract, checked against the contract §3 oracle + the §4 reference.


def test_reads_of_a_loaded_store_match_the_oracle(loaded, oracle_rows):
    from tests.analytics.test_transcript_property import Spec, reference

    by_thread: dict[str, list[dict]] = {}
    for row in oracle_rows:
        by_thread.setdefault(row["thread_id"], []).append(row)
    assert len(by_thread) >= 5
    with analytics_connect(loaded) as con:
        for thread_id, rows in by_thread.items():
            rows.sort(key=lambda r: r["ordinal"])
            msgs = [Msg(r["role"], r["content"], ts=r["ts"], message_id=r["message_id"]) for r in rows]
            stamps = sorted({r["ts"] for r in rows if r["ts"] is not None})
            specs = [
                Spec(speaker, index, None, None, limit)
                for speaker in ("user", "assistant", "all")
                for index, limit in ((None, None), (0, None), (-1, None), (-2, 1), (99, None), (None, 2), (-1, 0))
            ]
            if stamps:
                mid = stamps[len(stamps) // 2]
                ranges = ((stamps[0], mid), (mid, None), (None, mid), (mid, mid))
                specs += [Spec(s, None, lo, hi, None) for s in ("user", "all") for lo, hi in ranges]
            for spec in specs:
                expected = reference(msgs, spec)
                query = TranscriptQuery(thread_id, spec.speaker, spec.index, spec.since, spec.until, spec.limit)
                if isinstance(expected, type):
                    with pytest.raises(expected):
                        read(con, query)
                    continue
                frame = read(con, query)
                assert list(zip(frame["index"], frame["ordinal"])) == expected, (thread_id, spec)
                assert frame["content"].tolist() == [msgs[o].content for _, o in expected]
                stored_ts = [None if pd.isna(ts) else ts for ts in frame["ts"]]
                assert stored_ts == [msgs[o].ts for _, o in expected]
