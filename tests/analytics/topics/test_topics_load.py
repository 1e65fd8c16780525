"""Topics written at load time from the labelled set (real graphs, real saver): tables, agreement
with the labelled topics, the same topics live, after a reload and after an incremental load."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import duckdb

import analytics
import transcript_lens
import transcript_lens.cli
from analytics.catalog import CONVERSATION_TOPICS, TOPICS
from analytics.topic_mining import materialize as mat
from analytics.topic_mining.report import OVERVIEW_COLUMNS, TOPIC_COLUMNS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_outcomes import adjusted_rand  # noqa: E402


def _rows(db, sql):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_load_writes_both_tables_with_one_row_per_conversation(labelled):
    db, labels = labelled
    per_thread = _rows(db, "SELECT thread_id, topic_id, topic_label FROM conversation_topics ORDER BY 1")
    assert [r[0] for r in per_thread] == sorted(labels["threads"])
    topics = _rows(db, "SELECT topic_id, topic_label, threads FROM topics ORDER BY topic_id")
    assert [t[0] for t in topics] == list(range(len(topics)))
    sizes = Counter(r[1] for r in per_thread)
    assert [t[2] for t in topics] == [sizes[t[0]] for t in topics] == sorted(sizes.values(), reverse=True)
    assert {(r[1], r[2]) for r in per_thread} <= {(t[0], t[1]) for t in topics}
    with duckdb.connect(str(db), read_only=True) as con:
        assert mat.materialized(con)
        for table in (CONVERSATION_TOPICS, TOPICS):
            got = con.execute(f"SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{table.name}' "
                              "ORDER BY ordinal_position").fetchall()
            assert got == [(c.name, c.type.duckdb) for c in table.columns]


def test_topics_agree_with_the_labelled_topics(labelled):
    db, labels = labelled
    frame = analytics.topics(str(db))
    assert tuple(frame.columns) == TOPIC_COLUMNS
    truth = [labels["threads"][t]["topic"] for t in frame["thread_id"]]
    assert adjusted_rand(truth, list(frame["topic_id"])) >= 0.8
    # The question is the first user message of 3+ words: a greeting before it is skipped.
    greeted = [t for t, want in labels["threads"].items() if want["first_question_ordinal"] > 0]
    assert greeted
    at = frame.set_index("thread_id")["question_ordinal"]
    assert all(at[t] == labels["threads"][t]["first_question_ordinal"] for t in greeted)


def test_live_topics_equal_the_tables_and_a_reload_gives_the_same(labelled, tmp_path):
    db, _ = labelled
    with duckdb.connect(str(db), read_only=True) as con:
        found, asked = mat.compute(con)
    stored = _rows(db, "SELECT thread_id, topic_id, topic_label, question_ordinal FROM conversation_topics ORDER BY 1")
    assert stored == [(t, found.assignment[t], found.topics[found.assignment[t]].label, asked[t]) for t in sorted(asked)]
    store = Path(db).with_name("labelled.sqlite")
    again = tmp_path / "again.duckdb"
    transcript_lens.load(store, again)
    assert _rows(again, "SELECT * FROM topics ORDER BY topic_id") == _rows(db, "SELECT * FROM topics ORDER BY topic_id")


def test_a_database_without_the_tables_answers_live_the_same(labelled, tmp_path):
    db, _ = labelled
    bare = tmp_path / "bare.duckdb"
    shutil.copy(db, bare)
    with duckdb.connect(str(bare)) as con:
        con.execute("DROP TABLE conversation_topics")
        con.execute("DROP TABLE topics")
    with analytics.connect(bare) as con:  # (read-only: the live tables are temporary)
        assert not mat.materialized(con)
        live = analytics.topics(con)
        overview = analytics.topic_overview(con)
    stored = analytics.topics(str(db))
    assert live.equals(stored)
    assert overview.equals(analytics.topic_overview(str(db)))


def test_an_incremental_load_recomputes_the_topics(labelled, tmp_path):
    db, labels = labelled
    store = tmp_path / "store.sqlite"
    shutil.copy(Path(db).with_name("labelled.sqlite"), store)
    first = tmp_path / "inc.duckdb"
    transcript_lens.load(store, first)
    dropped = sorted(labels["threads"])[:5]
    with sqlite3.connect(store) as src:
        for table in ("checkpoints", "writes"):
            src.executemany(f"DELETE FROM {table} WHERE thread_id = ?", [(t,) for t in dropped])
    transcript_lens.load(store, first, incremental=True)
    full = tmp_path / "full.duckdb"
    transcript_lens.load(store, full)
    sql = "SELECT * FROM conversation_topics ORDER BY thread_id"
    assert _rows(first, sql) == _rows(full, sql)
    assert not set(dropped) & {r[0] for r in _rows(first, sql)}


def test_overview_counts_outcomes_per_topic_and_filters_choose_threads(labelled):
    db, labels = labelled
    overview = analytics.topic_overview(str(db))
    assert tuple(overview.columns) == OVERVIEW_COLUMNS
    assert overview["threads"].sum() == len(labels["threads"])
    per_topic = analytics.topics(str(db))
    for row in overview.itertuples():
        members = per_topic[per_topic["topic_id"] == row.topic_id]
        assert row.failed_rate == (members["outcome"] == "failed").mean()
        others = per_topic[per_topic["topic_id"] != row.topic_id]
        rest = (others["outcome"] == "failed").mean()
        if rest:
            assert abs(row.failed_vs_rest - row.failed_rate / rest) < 1e-9
    acme = analytics.topic_overview(str(db), analytics.Filters(tenants=("acme",)))
    assert acme["threads"].sum() == sum(1 for t in labels["threads"] if t.startswith("acme:"))
    assert set(acme["topic_label"]) <= set(overview["topic_label"])  # filters never relabel a topic
    trend = analytics.topic_trend(str(db), period="week")
    assert trend["threads"].sum() == len(labels["threads"])


def test_report_outcomes_carries_each_thread_topic(labelled, tmp_path):
    db, _ = labelled
    frame = analytics.outcomes(str(db))
    topics = analytics.topics(str(db)).set_index("thread_id")
    assert list(frame["topic_id"]) == [topics.at[t, "topic_id"] for t in frame["thread_id"]]
    out = tmp_path / "o.csv"
    assert transcript_lens.cli.main(["report", "outcomes", "--db", str(db), "--out", str(out)]) in (0, None)
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[header.index("outcome_reason") + 1:][:2] == ["topic_id", "topic_label"]
    for report in ("topics", "patterns"):
        path = tmp_path / f"{report}.csv"
        assert transcript_lens.cli.main(["report", report, "--db", str(db), "--out", str(path)]) in (0, None)
        assert len(path.read_text(encoding="utf-8").splitlines()) > 1


def test_a_tenant_scoped_reader_gets_topics_of_its_own_questions(labelled):
    db, labels = labelled
    acme = sorted(t for t in labels["threads"] if t.startswith("acme:"))
    with analytics.connect(db, tenants=["acme"]) as con:
        with mat.every_thread(con):
            docs, _ = mat.thread_documents(con)
        frame = analytics.topics(con)
        overview = analytics.topic_overview(con)
    assert sorted(frame["thread_id"]) == acme == sorted(d.key for d in docs)
    # Its topics are made from acme's questions alone: the typical ones are acme's.
    assert all(t.startswith("acme:") for ids in overview["typical_thread_ids"] for t in ids.split())
