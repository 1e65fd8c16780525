"""The Outcomes page model and the outcome / signal filters, on the demo store loaded into a
private database (demo/README.md lists the conversations that went wrong)."""

from __future__ import annotations

import pytest

import analytics
from analytics import metrics
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.signals import OUTCOMES, SIGNALS
from ui.models.outcomes import outcomes_page, pointer_text, reason_text


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    import transcript_lens

    path = tmp_path_factory.mktemp("outcomes") / "demo.duckdb"
    transcript_lens.load(str(transcript_lens.demo_store()), path)
    return path


def _threads(db, filters: Filters) -> list[str]:
    return sorted(metrics.conversations(db, filters)["thread_id"])


def test_filters_keep_the_threads_of_an_outcome_or_a_signal(demo):
    assert _threads(demo, Filters(outcomes=("abandoned",))) == ["acme:web:sess-1009"]
    assert _threads(demo, Filters(outcomes=("failed",))) == [
        "globex:api:sess-2104", "globex:api:sess-2108", "umbrella:eu:sess-7004"]
    assert _threads(demo, Filters(signals=("agent_loop",))) == ["acme:web:sess-1010"]
    # any of the signals; with a tenant, both conditions
    assert _threads(demo, Filters(signals=("agent_loop", "repetition"))) == [
        "acme:web:sess-1010", "initech:helpdesk:sess-5007"]
    assert _threads(demo, Filters(signals=("slow_hitl",), tenants=("acme",))) == [
        "acme:mobile:sess-3005", "acme:web:sess-1008"]
    assert _threads(demo, Filters(outcomes=("abandoned",), tenants=("globex",))) == []


def test_an_unknown_outcome_or_signal_is_refused():
    with pytest.raises(BadRequest, match="unknown outcomes 'lost'"):
        Filters(outcomes=("lost",))
    with pytest.raises(BadRequest, match="unknown signals 'agent_loop; DROP'"):
        Filters(signals=("agent_loop; DROP",))


def test_the_page_counts_every_outcome_and_signal(demo):
    page = outcomes_page(demo, by="week")
    shares = dict(zip(page.shares["outcome"], page.shares["threads"]))
    assert list(shares) == list(OUTCOMES) and page.threads == 37 == sum(shares.values())
    assert (shares["abandoned"], shares["failed"], shares["waiting"]) == (1, 3, 1)
    counts = dict(zip(page.signals["signal"], page.signals["threads"]))
    assert sorted(counts) == sorted(SIGNALS)  # (most frequent first: below)
    assert {s: counts[s] for s in ("abandoned", "agent_loop", "tool_error_cascade", "repetition", "slow_hitl")} == {
        "abandoned": 1, "agent_loop": 1, "tool_error_cascade": 1, "repetition": 1, "slow_hitl": 2}
    assert page.signals["definition"].str.len().min() > 20  # each signal carries its definition
    # the trend: each week's shares sum to 1, and its threads to every dated thread
    assert page.trend.groupby("period")["share"].sum().round(9).eq(1).all()
    assert page.trend["threads"].sum() == 37  # every thread has a checkpoint time (threads.last_ts)
    # tenants ranked by abandoned + failed
    top = page.tenants.set_index("tenant_id")
    assert top.loc["globex", "failed"] == 2 and top.loc["acme", "abandoned"] == 1
    assert page.tenants["went_wrong"].is_monotonic_decreasing
    # who breaches the human-in-the-loop service level, first the one still waiting
    assert page.slow_hitl[["thread_id", "status"]].values.tolist() == [
        ["acme:web:sess-1008", "still waiting"], ["acme:mobile:sess-3005", "answered late"]]
    assert page.slow_by_tenant.values.tolist() == [["acme", 2, 1]]
    # each breach says how long it waited: over the service level; a pending wait up to the store's latest time
    assert (page.slow_hitl["longest_wait"] > page.hitl_hours * 3600).all()
    import duckdb

    with duckdb.connect(str(demo), read_only=True) as con:
        latest = con.execute("SELECT max(ts) FROM checkpoints").fetchone()[0]
    pending = page.slow_hitl.iloc[0]
    assert pending["longest_wait"] == pytest.approx((latest - pending["waiting_since"]).total_seconds())


def test_a_filter_narrows_every_figure(demo):
    page = outcomes_page(demo, Filters(tenants=("umbrella",)))
    assert page.threads == 4
    assert dict(zip(page.shares["outcome"], page.shares["threads"]))["failed"] == 1
    assert page.slow_hitl.empty and page.tenants["tenant_id"].tolist() == ["umbrella"]


def test_the_reason_numbers_messages_as_the_transcript_does():
    # ... and its span as every page writes one (ui.formats.duration), not "24.0 h" beside "1 d"
    assert reason_text("abandoned: user message 2 unanswered for 24.0 h") == \
        "abandoned: user message 3 unanswered for 1 d"
    assert reason_text("abandoned: user message 2 unanswered for 2.5 h") == \
        "abandoned: user message 3 unanswered for 2 h 30 m"
    assert reason_text("failed: last tool result (message 6) is an error") == \
        "failed: last tool result (message 7) is an error"


def test_a_failed_or_abandoned_row_says_why_from_the_signal_its_outcome_rests_on(demo):
    """The table's Why cell of each conversation that went wrong names the rule that decided its
    outcome and the message it rests on, numbered as the transcript numbers it (ordinal + 1)."""
    from ui.columns import conversations_table
    from ui.models.conversations import conversations_page

    page = conversations_page(demo, page_size=1000)
    shown, config = conversations_table(page.table)
    assert config["outcome_reason"]["label"] == "Why"
    stored = analytics.outcomes(demo).set_index("thread_id")
    wrong = page.table.index[page.table["outcome"].isin(["failed", "abandoned"])]
    assert len(wrong), "the store has conversations that went wrong"
    for i in wrong:
        row = stored.loc[page.table.at[i, "thread_id"]]
        why, at = shown.at[i, "outcome_reason"], int(row["outcome_ordinals"][0]) + 1
        assert why and f"message {at}" in why, (why, row["outcome_reason"])
        if row["outcome"] == "abandoned":
            assert why.startswith("no reply for ")
        elif row["dropped_after_failure"]:
            assert why.startswith(("assistant gave up", "ends on a tool error"))
        else:
            assert why.startswith("last tool result failed")
    resolved = page.table.index[page.table["outcome"] == "resolved"]
    assert (shown.loc[resolved, "outcome_reason"] == "").all()


def test_a_lost_context_badge_says_what_the_restart_left_out():
    # (the signal points at the first message the rebuilt window held, docs/outcomes.md: the badge
    # there must not read as if that message had lost something)
    assert pointer_text("lost_context", 5, first=True) == " · a restart left out messages 1–4 (its window began at message 5)"
    assert "began here" in pointer_text("lost_context", 5, first=False)
    assert pointer_text("repetition", 5, first=True) == " · from message 5"


def test_signals_and_late_waits_come_most_frequent_and_longest_first(demo):
    page = outcomes_page(demo)
    assert page.signals["threads"].tolist() == sorted(page.signals["threads"], reverse=True)
    assert set(page.signals["signal"]) == set(SIGNALS)
    assert page.slow_hitl["status"].tolist() == sorted(page.slow_hitl["status"], reverse=True)  # still waiting first
    for _, rows in page.slow_hitl.groupby("status"):
        assert rows["longest_wait"].tolist() == sorted(rows["longest_wait"], reverse=True)
