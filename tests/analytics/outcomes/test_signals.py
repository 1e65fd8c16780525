"""Each signal fires on the conversation written to show it and on no decoy; its ordinals open
the messages LangGraph's own API (tests/oracle.py) holds at those positions."""

from __future__ import annotations

import re

import pytest

import analytics
from analytics.conversation_outcomes.signals import SIGNALS
from tests.analytics.outcomes.conftest import CASES


@pytest.fixture(scope="module")
def frame(signal_store):
    return analytics.outcomes(signal_store[1]).set_index("thread_id")


@pytest.mark.parametrize("thread", sorted(CASES))
def test_signals_fire_exactly_where_written(frame, signal_store, thread):
    _, expected, outcome = CASES[thread]
    row = frame.loc[thread]
    assert {s for s in SIGNALS if row[s]} == set(expected), row["outcome_reason"]
    oracle = {r["ordinal"]: r for r in signal_store[2][thread]}
    for signal in SIGNALS:
        ordinals = row[f"{signal}_ordinals"]
        assert bool(ordinals) == bool(row[signal]), signal
        if signal in expected:
            assert len(ordinals) == len(expected[signal]), (signal, ordinals)
            for ordinal, text in zip(ordinals, expected[signal]):
                assert text in oracle[ordinal]["content"], (signal, ordinal, oracle[ordinal])
    assert row["outcome"] == outcome, row["outcome_reason"]


def test_ordinals_point_at_the_right_roles(frame, signal_store):
    roles = {"abandoned": "user", "resolved_closing": "user", "user_frustration": "user", "repetition": "assistant",
             "agent_loop": "assistant", "tool_error_cascade": "tool"}
    for thread, row in frame.iterrows():
        oracle = {r["ordinal"]: r for r in signal_store[2][thread]}
        for signal, role in roles.items():
            assert all(oracle[o]["role"] == role for o in row[f"{signal}_ordinals"]), (thread, signal)


def test_the_reason_names_the_signal_and_message(frame):
    assert frame.loc["en:cascade", "outcome_reason"] == "failed: dropped_after_failure, ends at message 4 (tool error)"
    assert frame.loc["en:abandoned", "outcome_reason"].startswith("abandoned: user message 2 unanswered for ")
    assert frame.loc["de:hitl-waiting", "outcome_reason"].startswith("waiting: interrupt pending at message ")


#: The role of the message each outcome rests on (`outcome_ordinals`), by the step of the rule that matched.
OUTCOME_ROLES = {"failed": {"tool", "assistant"}, "abandoned": {"user"}, "waiting": {"assistant"},
                 "resolved": {"user", "assistant"}, "unknown": {"user", "tool"}}


@pytest.mark.parametrize("thread", sorted(CASES))
def test_the_outcome_points_at_the_message_its_reason_names(frame, signal_store, thread):
    row = frame.loc[thread]
    oracle = {r["ordinal"]: r for r in signal_store[2][thread]}
    (ordinal,) = row["outcome_ordinals"]
    assert oracle[ordinal]["role"] in OUTCOME_ROLES[row["outcome"]], (row["outcome_reason"], oracle[ordinal])
    named = re.search(r"message \(?(\d+)", row["outcome_reason"])
    assert named and int(named.group(1)) == ordinal, row["outcome_reason"]


def test_a_failure_no_signal_names_points_at_the_failed_tool_result(frame, signal_store):
    row = frame.loc["en:error-then-reply"]
    assert not any(row[s] for s in SIGNALS) and row["outcome"] == "failed"
    oracle = {r["ordinal"]: r for r in signal_store[2]["en:error-then-reply"]}
    (ordinal,) = row["outcome_ordinals"]
    assert oracle[ordinal]["role"] == "tool" and "X-9" in oracle[ordinal]["content"]
    assert oracle[max(oracle)]["role"] == "assistant"  # (the conversation goes on after it: no give-up, no drop)
