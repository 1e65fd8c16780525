"""Failure patterns: the error normaliser on texts made here, and the patterns of the labelled set
(real graphs whose tools fail by region with errors that name the order, a timeout, a status code)."""

from __future__ import annotations

import duckdb
import pytest

import analytics
from analytics.topic_mining.patterns import PATTERN_COLUMNS, failure_views, normalise_error, pattern_threads, pattern_trend


@pytest.mark.parametrize("text, want", [
    ("Error: RuntimeError('TimeoutError: upstream lookup_order timed out after 30 s')\n Please fix your mistakes.",
     ("RuntimeError: TimeoutError", "upstream lookup_order timed out after <n> s")),
    ("KeyError: 'A-1043'", ("KeyError", "<value>")),
    ("order 7f3e2a1b-0c4d-4e5f-8a9b-1c2d3e4f5a6b of ana@example.org not in /var/lib/orders/db.json",
     ("", "order <uuid> of <email> not in <path>")),
    ("HTTP 503 from https://api.example.com/v2/orders?id=9 at 0xdeadbeef", ("", "HTTP <n> from <url> at <hex>")),
    ("ValueError: invoice INV-2037 has total 12.50, expected 13", ("ValueError", "invoice <id> has total <n>, expected <n>")),
])
def test_errors_lose_their_variable_parts(text, want):
    assert normalise_error(text) == want


def test_two_orders_failing_alike_share_a_signature():
    a = normalise_error("Error: KeyError('A-1043 unknown to the legacy system')")
    b = normalise_error("Error: KeyError('B-77 unknown to the legacy system')")
    assert a == b == ("KeyError", "<id> unknown to the legacy system")


def test_every_failed_conversation_has_one_pattern_and_opens_at_the_failing_message(labelled):
    db, labels = labelled
    failed = {t for t, want in labels["threads"].items() if want["outcome"] == "failed"}
    assert failed
    threads = pattern_threads(str(db))
    assert failed <= set(threads["thread_id"])
    assert set(threads["outcome"]) <= {"failed", "abandoned"}
    with duckdb.connect(str(db), read_only=True) as con:
        for row in threads.itertuples():
            role, status = con.execute("SELECT role, tool_status FROM messages WHERE thread_id = ? AND ordinal = ?",
                                       [row.thread_id, row.failing_ordinal]).fetchone()
            assert (role, status) == ("tool", "error") or (role == "assistant" and row.thread_id in failed)
    frame = analytics.patterns(str(db))
    assert tuple(frame.columns) == PATTERN_COLUMNS
    assert frame["threads"].sum() == len(threads)
    assert list(frame["threads"]) == sorted(frame["threads"], reverse=True)
    for row in frame.itertuples():
        assert "<n>" in row.error or "<id>" in row.error or "<value>" in row.error or row.error == "assistant gave up"
        assert not any(ch.isdigit() for ch in row.signature.split(" | ", 1)[1])  # no number survives
        examples = row.examples.split()
        assert 1 <= len(examples) <= min(row.threads, 5)
        members = threads[threads["signature"] == row.signature]
        assert row.tenants == members["tenant_id"].nunique()
        assert {e.rsplit("@", 1)[0] for e in examples} <= set(members["thread_id"])
    trend = pattern_trend(str(db), period="week")
    assert trend["threads"].sum() == len(threads)


def test_filters_choose_the_conversations_of_the_patterns(labelled):
    db, labels = labelled
    acme = pattern_threads(str(db), analytics.Filters(tenants=("acme",)))
    assert set(acme["tenant_id"]) <= {"acme"}
    everyone = pattern_threads(str(db))
    assert set(acme["thread_id"]) == {t for t in everyone["thread_id"] if t.startswith("acme:")}


def _rows(*messages):
    """Message rows as the patterns query reads them: (thread, ordinal, role, status, error text, calls)."""
    return [("t", i, role, status, text, calls) for i, (role, status, text, calls) in enumerate(messages)]


def test_an_abandoned_conversation_counts_only_when_the_turn_before_the_last_question_failed():
    from analytics.topic_mining.patterns import _failure

    failed_then_asked = _rows(("user", None, None, None), ("assistant", None, None, ["lookup_order"]),
                              ("tool", "error", "TimeoutError: upstream timed out after 30 s", None),
                              ("assistant", None, None, None), ("user", None, None, None))
    found = _failure("t", failed_then_asked, "abandoned", None, 4, 4)
    assert (found.tools, found.error_class, found.failing_ordinal) == (("lookup_order",), "TimeoutError", 2)
    recovered_long_before = _rows(("user", None, None, None), ("assistant", None, None, ["lookup_order"]),
                                  ("tool", "error", "TimeoutError: x", None), ("assistant", None, None, None),
                                  ("user", None, None, None), ("assistant", None, None, None), ("user", None, None, None))
    assert _failure("t", recovered_long_before, "abandoned", None, 6, 6) is None


def test_a_retry_before_the_failure_is_the_same_pattern_as_one_call():
    """One call that failed and two calls (a retry) that failed with the same error are one pattern."""
    from analytics.topic_mining.patterns import _failure

    err = "Error: RuntimeError('tests failed: 3 of 40')"
    once = [("t1", 0, "user", None, None, None), ("t1", 1, "assistant", None, None, ["run_tests"]),
            ("t1", 2, "tool", "error", err, None)]
    retry = [("t2", 0, "user", None, None, None), ("t2", 1, "assistant", None, None, ["run_tests"]),
             ("t2", 2, "tool", "error", err, None), ("t2", 3, "assistant", None, None, ["run_tests"]),
             ("t2", 4, "tool", "error", err.replace("3 of", "4 of"), None)]
    a = _failure("t1", once, "failed", "tool error", 2, 0)
    b = _failure("t2", retry, "failed", "tool error", 4, 0)
    assert a.tools == b.tools == ("run_tests",)
    assert a.signature == b.signature
    assert b.failing_ordinal == 4


def test_the_three_views_from_one_reading_equal_each_call(labelled):
    db, _ = labelled
    acme = analytics.Filters(tenants=("acme",))
    for filters in (None, acme):
        frame, threads, trend = failure_views(str(db), filters, "week")
        assert frame.equals(analytics.patterns(str(db), filters))
        assert threads.equals(pattern_threads(str(db), filters))
        assert trend.equals(pattern_trend(str(db), filters, period="week"))
        assert len(threads)


def test_examples_name_the_failing_message_as_the_transcript_numbers_it(labelled):
    """`thread@N`: N is the "Message N" the transcript shows (and the conversations table's
    "Failing message"), the first message being Message 1."""
    db, _ = labelled
    failing = pattern_threads(str(db)).set_index("thread_id")["failing_ordinal"]
    shown = 0
    for row in analytics.patterns(str(db)).itertuples():
        for example in row.examples.split():
            thread, number = example.rsplit("@", 1)
            assert int(number) == failing[thread] + 1, example
            shown += 1
    assert shown
