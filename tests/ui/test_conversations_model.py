"""`ui.models.conversations.conversations_page` against the analytics queries it composes."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from analytics import metrics
from analytics.db import connect
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.scope import ThreadConditions
from tests.analytics.conftest import edited_copy
from ui.models.conversations import CONVERSATION_TABLE_COLUMNS, conversations_page, latency_histogram


def test_the_conversations_page_with_a_text_filter_is_the_full_queries_answer(con):
    word = con.execute(
        "SELECT content FROM messages WHERE role = 'user' AND content_chars > 3 ORDER BY thread_id, ordinal LIMIT 1"
    ).fetchall()[0][0][:4]
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    for f in (Filters(text=word), Filters(text=word, tenants=(tenant,)), Filters(text="no such text at all")):
        for turns in (0, 2):
            page = conversations_page(con, f, min_turns=turns)
            scoped = ThreadConditions(text=f.text, tenants=f.tenants, min_user_turns=turns)
            conv = fetch_frame(con, *metrics.conversations_sql(scoped))
            want = (conv[list(CONVERSATION_TABLE_COLUMNS)]
                    .sort_values(["last_ts", "thread_id"], ascending=[False, True], na_position="last")
                    .reset_index(drop=True))
            pd.testing.assert_frame_equal(page.matching, want, check_exact=True)
            lat = fetch_frame(con, *metrics.latency_distribution_sql(scoped))
            pd.testing.assert_frame_equal(page.latency, latency_histogram(lat["latency_s"], lat["model"]))
            (total,), = con.execute(f"SELECT count(*) FROM threads t WHERE {f.thread_where()[0]}",
                                    f.thread_where()[1]).fetchall()
            assert page.total == total


def test_the_conversations_table_is_newest_first_with_ties_and_no_time_in_thread_order(loaded, tmp_path):
    # Ties and missing times made on purpose: the page sorts on last_ts alone and relies on
    # conversations() answering by thread id for the order within a tie.
    db = edited_copy(
        loaded, tmp_path / "ties.duckdb",
        "UPDATE conversation_metrics SET last_ts = TIMESTAMPTZ '2030-01-01 00:00:00+00' WHERE thread_id IN "
        "(SELECT thread_id FROM conversation_metrics ORDER BY thread_id DESC LIMIT 4)",
        "UPDATE conversation_metrics SET last_ts = NULL WHERE thread_id IN "
        "(SELECT thread_id FROM conversation_metrics ORDER BY thread_id LIMIT 3)",
    )
    with connect(db) as c:
        page = conversations_page(c)
        rows = c.execute("SELECT thread_id, last_ts FROM conversation_metrics").fetchall()
    timed = sorted((r for r in rows if r[1] is not None), key=lambda r: r[0])
    timed.sort(key=lambda r: r[1], reverse=True)  # stable: ties keep thread-id order
    want = [r[0] for r in timed] + sorted(r[0] for r in rows if r[1] is None)
    assert list(page.matching["thread_id"]) == want
    assert sum(t == datetime(2030, 1, 1, tzinfo=timezone.utc) for t in page.matching["last_ts"]) == 4
