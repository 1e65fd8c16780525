"""The Topics page's model numbers topics as a reader counts them, from 1, and orders the trend
(the chart's legend, the CSV's columns) by that number, not as text ("10" before "2"), on a store
with more than nine topics written by the real agent graph."""

from __future__ import annotations

import datetime as dt
import re

import pytest

import analytics
import transcript_lens
from storegen import Reply
from tests.analytics.outcomes.stores import START, Script, User, write_store
from ui.models.topics import topic_threads, topics_page

#: What each group of three threads asks about: no words in common with another group's.
SUBJECTS = ("printer toner cartridge", "wifi router password", "invoice billing address", "parcel tracking courier",
            "laptop battery charging", "vacation leave request", "payroll salary slip", "garden hose nozzle",
            "passport renewal appointment", "pizza oven temperature", "guitar string tuning", "bicycle brake pads")


@pytest.fixture(scope="module")
def many_topics(tmp_path_factory):
    folder = tmp_path_factory.mktemp("topics")
    threads = {f"t{i:02d}:web:s{j}": Script([Reply("Let me check.")], [User(question, 0)],
                                            start=START + dt.timedelta(days=i % 5, minutes=j))
               for i, subject in enumerate(SUBJECTS)
               for j, question in enumerate((f"My {subject} is broken", f"Question about the {subject}",
                                             f"Where do I find the {subject}"))}
    write_store(folder / "store.sqlite", threads)
    transcript_lens.load(folder / "store.sqlite", folder / "lens.duckdb", workers=1)
    return folder / "lens.duckdb"


def test_topics_are_numbered_from_1_in_the_table_and_the_csv(many_topics):
    page = topics_page(many_topics)
    overview = analytics.topic_overview(many_topics)
    assert page.topics > 9
    for frame in (page.table, page.overview):
        assert frame["topic"].tolist() == list(range(1, page.topics + 1))
        assert frame["topic_label"].tolist() == overview["topic_label"].tolist()  # the largest is Topic 1
        assert "topic_id" not in frame.columns


def test_the_trend_orders_its_topics_by_number(many_topics):
    trend = topics_page(many_topics, period="day").trend
    topics = [c for c in trend.columns if c != "period_start"]
    numbers = [int(re.match(r"(\d+) · ", c).group(1)) for c in topics]
    assert numbers == sorted(numbers) and numbers[0] == 1 and max(numbers) > 9


def test_a_topic_lists_the_conversations_of_its_number(many_topics):
    per_thread = analytics.topics(many_topics)
    labels = topics_page(many_topics).table.set_index("topic")["topic_label"]
    for number in (1, len(labels)):
        listed = topic_threads(many_topics, topic=number)
        want = per_thread[per_thread["topic_label"] == labels[number]]
        assert sorted(listed["thread_id"]) == sorted(want["thread_id"])
