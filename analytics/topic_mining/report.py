"""`topics()`: each conversation's topic; `topic_overview()`: each topic's size, terms, typical
questions and outcomes; `topic_trend()`: conversations per topic and day or week; the `topics` report.

The topics are those the load wrote (`topics`, `conversation_topics`), with the concept table
the load was given; without them (an older database), or with `concepts` other than the load's
(a file whose hash differs from the one the tables record), they are computed live over the
whole store, by the same rules. Filters choose the conversations counted, never the topics: a
topic keeps its id and label under any filter.

>>> topics("lens.duckdb").head()  # doctest: +SKIP
>>> topic_overview("lens.duckdb", Filters(tenants=("acme",)))  # doctest: +SKIP
>>> topics("lens.duckdb", concepts="concepts.toml")  # doctest: +SKIP

    transcript-lens report topics --db lens.duckdb --out topics.csv [--topic-concepts FILE]
"""

from __future__ import annotations

import os

import duckdb

from analytics import _pandas as pd
from analytics.db import ConOrPath, applied_policy, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.report import outcomes_relation
from analytics.conversation_outcomes.signals import OUTCOMES
from analytics.reporting.spec import ReportSpec, register_report
from analytics.topic_mining import materialize as mat
from analytics.topic_mining.concepts import Concepts, concept_table
from analytics.trends import BUCKETS

#: The columns of `topics()`.
TOPIC_COLUMNS = ("thread_id", "topic_id", "topic_label", "question_ordinal", "question", "outcome")
#: The columns of `topic_overview()` and of the `topics` report.
OVERVIEW_COLUMNS = (
    "topic_id", "topic_label", "threads", "share", *(f"{o}_rate" for o in OUTCOMES),
    "abandoned_vs_rest", "failed_vs_rest", "terms", "tools", "typical_questions", "typical_thread_ids",
)
#: The periods of a trend: those of every trend of the app (`analytics.trends`).
PERIODS = BUCKETS


def topic_sources(con, all_turns: bool = False, concepts: Concepts | None = None) -> tuple[str, str]:
    """Names of a `conversation_topics` and a `topics` relation: the load's, or computed live into temp tables.

    `concepts`: the concept table (None: the one the load used). A connection that masks personal
    data or sees only some tenants computes live from what it reads: the load's topics are named by
    words of every tenant's unmasked questions."""
    if not all_turns and applied_policy(con).is_open and mat.materialized(con, concepts):
        return mat.TABLE, mat.TOPICS_TABLE
    found, asked = mat.compute(con, all_turns, concepts)
    mat.write_tables(con, found, asked, prefix="tl_live_")
    return f"temp.main.tl_live_{mat.TABLE}", f"temp.main.tl_live_{mat.TOPICS_TABLE}"


def topics_relation(con, filters: Filters | None = None, all_turns: bool = False,
                    sources: tuple[str, str] | None = None, concepts: Concepts | None = None) -> duckdb.DuckDBPyRelation:
    """One row per conversation of `filters`: `TOPIC_COLUMNS`, by thread id."""
    per_thread, _ = sources or topic_sources(con, all_turns, concepts)
    outcomes = outcomes_relation(con, filters)
    con.register("tl_topic_outcomes", outcomes.select("thread_id, outcome").arrow().read_all())
    where, params = (filters or Filters()).thread_where("t")
    return con.sql(
        f"SELECT ct.thread_id, ct.topic_id, ct.topic_label, ct.question_ordinal, m.content AS question, o.outcome "
        f"FROM {per_thread} ct JOIN threads t USING (thread_id) "
        "LEFT JOIN messages m ON m.thread_id = ct.thread_id AND m.ordinal = ct.question_ordinal "
        f"LEFT JOIN tl_topic_outcomes o ON o.thread_id = ct.thread_id WHERE {where} ORDER BY ct.thread_id",
        params=params)


def topics(db_or_con: ConOrPath, filters: Filters | None = None, all_turns: bool = False,
           concepts: Concepts | str | os.PathLike | None = None) -> pd.DataFrame:
    """Each conversation's topic (`TOPIC_COLUMNS`): id, label, the first question (ordinal, text) and outcome.

    `all_turns`: cluster all the users' messages of each conversation instead of its first
    question (computed live, not cached). `concepts`: a concept table file (or `Concepts`) to
    cluster with (docs/topics.md); None: the one the load used."""
    table = concept_table(concepts)
    with connection(db_or_con) as con:
        return topics_relation(con, filters, all_turns, concepts=table).df()


def overview_relation(con, filters: Filters | None = None, all_turns: bool = False,
                      concepts: Concepts | None = None) -> duckdb.DuckDBPyRelation:
    """`OVERVIEW_COLUMNS`, one row per topic with conversations under `filters`, by topic id."""
    per_thread, per_topic = sources = topic_sources(con, all_turns, concepts)
    rows = topics_relation(con, filters, all_turns, sources)
    con.register("tl_topic_rows", rows.arrow().read_all())
    rates = ", ".join(f"avg((r.outcome = '{o}')::INT) AS {o}_rate" for o in OUTCOMES)
    rest = ", ".join(
        f"({o}_rate / nullif((sum({o}_rate * per.threads) OVER () - {o}_rate * per.threads) "
        f"/ nullif(sum(per.threads) OVER () - per.threads, 0), 0)) AS {o}_vs_rest" for o in ("abandoned", "failed"))
    return con.sql(f"""
        WITH per AS (SELECT r.topic_id, count(*) AS threads, {rates} FROM tl_topic_rows r GROUP BY r.topic_id),
        typical AS (SELECT tp.topic_id, list(m.content ORDER BY x.i) FILTER (WHERE m.content IS NOT NULL) AS questions
                    FROM {per_topic} tp, unnest(tp.typical_thread_ids) WITH ORDINALITY AS x(thread_id, i)
                    LEFT JOIN {per_thread} ct ON ct.thread_id = x.thread_id
                    LEFT JOIN messages m ON m.thread_id = ct.thread_id AND m.ordinal = ct.question_ordinal
                    GROUP BY tp.topic_id)
        SELECT per.topic_id, tp.topic_label, per.threads, per.threads / sum(per.threads) OVER () AS share,
               {", ".join(f"{o}_rate" for o in OUTCOMES)}, {rest},
               array_to_string(tp.terms, ', ') AS terms, array_to_string(tp.tools, ', ') AS tools,
               array_to_string(coalesce(ty.questions, []), ' | ') AS typical_questions,
               array_to_string(tp.typical_thread_ids, ' ') AS typical_thread_ids
        FROM per JOIN {per_topic} tp USING (topic_id) LEFT JOIN typical ty USING (topic_id)
        ORDER BY per.topic_id""")


def topic_overview(db_or_con: ConOrPath, filters: Filters | None = None, all_turns: bool = False,
                   concepts: Concepts | str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per topic: `OVERVIEW_COLUMNS`. `<outcome>_rate`: the share of the topic's
    conversations with that outcome; `abandoned_vs_rest` / `failed_vs_rest`: that rate over the
    same rate of every other topic's conversations ("refund questions are abandoned 3x as often": 3.0).
    `concepts`: as `topics`."""
    table = concept_table(concepts)
    with connection(db_or_con) as con:
        return overview_relation(con, filters, all_turns, table).df()


def topic_trend(db_or_con: ConOrPath, filters: Filters | None = None, period: str = "day") -> pd.DataFrame:
    """Conversations per topic and `period` (`day`, `week` or `month`, UTC, by the thread's first checkpoint):
    `topic_id`, `topic_label`, `period_start`, `threads`."""
    if period not in PERIODS:
        raise BadRequest(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    with connection(db_or_con) as con:
        rows = topics_relation(con, filters)
        con.register("tl_topic_trend_rows", rows.arrow().read_all())
        return con.sql(
            f"SELECT r.topic_id, r.topic_label, date_trunc('{period}', t.first_ts AT TIME ZONE 'UTC')::DATE AS period_start, "
            "count(*) AS threads FROM tl_topic_trend_rows r JOIN threads t USING (thread_id) "
            "WHERE t.first_ts IS NOT NULL GROUP BY ALL ORDER BY period_start, r.topic_id").df()


def _report_rows(con, filters: Filters, options) -> duckdb.DuckDBPyRelation:
    return overview_relation(con, filters, bool(options.get("all_turns")), concept_table(options.get("topic_concepts")))


def _report_arguments(parser) -> None:
    parser.add_argument("--all-turns", action="store_true",
                        help="topics: cluster every user message of a conversation, not only its first question")
    parser.add_argument("--topic-concepts", metavar="FILE",
                        help="topics: cluster with this concept table (TOML or JSON: concept = [words]); "
                             "default: the one the load used")


register_report(ReportSpec(
    "topics", "per topic: size, outcome rates, top terms, typical questions (analytics.topic_overview)",
    OVERVIEW_COLUMNS, _report_rows, arguments=_report_arguments,
))  # fmt: skip
