"""The Topics page: what users ask about, how each topic ends, its trend, and the conversations behind each number.

>>> topics_page("lens.duckdb").table.head()  # doctest: +SKIP
>>> topic_threads("lens.duckdb", Filters(), topic=1, outcome="abandoned")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.signals import OUTCOMES
from ui.models.outcomes import OUTCOME_LABELS
from analytics.topic_mining.report import PERIODS, overview_relation, topic_trend, topics_relation

#: The outcomes a topic's conversations can be narrowed to ("all": none).
OUTCOME_CHOICES = ("all", *OUTCOMES)
#: Columns of the topic table the page shows (the CSV has every `OVERVIEW_COLUMNS` column, `topic`
#: for `topic_id`). `topic` is the topic's number as the page shows it: "Topic 1" is the largest
#: (the stored `topic_id` + 1, as "Message N" is a message's ordinal + 1).
TABLE_COLUMNS = ("topic", "topic_label", "threads", "share", *(f"{o}_rate" for o in OUTCOMES),
                 "abandoned_vs_rest", "failed_vs_rest", "typical_questions")  # (every outcome: a row sums to 100 %)
#: A topic's conversations: `message` is the question's number in the transcript explorer (ordinal + 1).
THREAD_COLUMNS = ("thread_id", "outcome", "question", "message", "question_ordinal")


@dataclass(frozen=True)
class TopicsPage:
    """`overview`: `topic_overview()` (the CSV); `table`: what the page shows; `trend`: one column per topic
    ("N · label", by number) over `period_start` (the chart and its CSV); the headline figures. Topics
    go by `topic`, their number from 1."""

    overview: pd.DataFrame
    table: pd.DataFrame
    trend: pd.DataFrame
    conversations: int
    topics: int

    def sentence(self) -> str | None:
        """The topic most often abandoned against the rest, in words ("… abandoned 3.0× as often as the others"),
        or the only topic abandoned at all.

        >>> o = pd.DataFrame({"topic": [1, 2], "topic_label": ["ship", "refund"], "threads": [2, 9],
        ...                   "abandoned_rate": [0.5, 0.0], "abandoned_vs_rest": [float("nan"), 0.0]})
        >>> TopicsPage(o, o, pd.DataFrame(), 11, 2).sentence()
        '“ship” conversations are the only ones abandoned (50% of 2).'
        """
        ranked = self.overview[(self.overview["abandoned_rate"] > 0) & (self.overview["threads"] >= 2)]
        if ranked.empty:
            return None
        only = ranked[ranked["abandoned_vs_rest"].isna()]  # (no other topic's conversation was abandoned)
        if len(only) == 1:
            top = only.iloc[0]
            return (f"“{top['topic_label']}” conversations are the only ones abandoned "
                    f"({top['abandoned_rate']:.0%} of {int(top['threads'])}).")
        ranked = ranked.dropna(subset=["abandoned_vs_rest"])
        if ranked.empty:
            return None
        top = ranked.sort_values(["abandoned_vs_rest", "topic"], ascending=[False, True]).iloc[0]
        return (f"“{top['topic_label']}” conversations are abandoned {top['abandoned_vs_rest']:.1f}× as often as the "
                f"others ({top['abandoned_rate']:.0%} of {int(top['threads'])}).")


def ratio_text(rate: float, ratio: float) -> str:
    """A topic's "× rest" cell: the ratio, "only here" when no other topic has the outcome, empty when this one has none.

    >>> ratio_text(0.25, 3.04), ratio_text(0.5, float("nan")), ratio_text(0.0, 0.0)
    ('3.0×', 'only here', '')
    """
    if not rate > 0:
        return ""
    return "only here" if pd.isna(ratio) else f"{ratio:.1f}×"


def topics_page(con_or_path: ConOrPath, filters: Filters = Filters(), period: str = "week") -> TopicsPage:
    """The page's topic table, trend and headline for `filters`."""
    if period not in PERIODS:
        raise BadRequest(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    with connection(con_or_path) as con:
        overview = numbered(overview_relation(con, filters).df())
        trend = topic_trend(con, filters, period)
    table = overview[list(TABLE_COLUMNS)].copy()
    for outcome in ("abandoned", "failed"):
        table[f"{outcome}_vs_rest"] = [ratio_text(r, x) for r, x in zip(overview[f"{outcome}_rate"], overview[f"{outcome}_vs_rest"])]
    return TopicsPage(overview, table, trend_columns(trend), int(overview["threads"].sum()) if len(overview) else 0,
                      len(overview))


def numbered(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its `topic_id` as the topic's number the page shows (`topic`, from 1), in its place.

    >>> numbered(pd.DataFrame({"topic_id": [0, 1], "threads": [5, 2]})).to_dict("list")
    {'topic': [1, 2], 'threads': [5, 2]}
    """
    return frame.rename(columns={"topic_id": "topic"}).assign(topic=frame["topic_id"] + 1)


def trend_columns(trend: pd.DataFrame) -> pd.DataFrame:
    """`topic_trend` rows as one column of threads per topic ("N · label") over `period_start`
    (a day, as the other trends' periods), the topics in the order of their number.

    >>> t = pd.DataFrame({"topic_id": [1, 9, 0], "topic_label": ["b", "j", "a"], "threads": [1, 2, 3],
    ...                   "period_start": pd.to_datetime(["2025-03-03"] * 3)})
    >>> list(trend_columns(t).columns)
    ['period_start', '1 · a', '2 · b', '10 · j']
    """
    if trend.empty:
        return pd.DataFrame({"period_start": []})
    trend = numbered(trend)
    names = trend["topic"].astype(str) + " · " + trend["topic_label"]
    order = names.iloc[trend["topic"].argsort(kind="stable")].drop_duplicates().tolist()
    wide = (trend.assign(name=names, period_start=pd.to_datetime(trend["period_start"]).dt.date)
            .pivot_table(index="period_start", columns="name", values="threads", aggfunc="sum", fill_value=0))
    wide = wide[order].reset_index()
    wide.columns.name = None
    return wide


def topic_threads(con_or_path: ConOrPath, filters: Filters = Filters(), topic: int | None = None,
                  outcome: str = "all") -> pd.DataFrame:
    """The conversations of one topic (`topic`: its number, from 1), optionally of one outcome: `THREAD_COLUMNS`."""
    if outcome not in OUTCOME_CHOICES:
        raise BadRequest(f"outcome must be one of {', '.join(OUTCOME_CHOICES)}, got {outcome!r}")
    with connection(con_or_path) as con:
        frame = topics_relation(con, filters).df()
    if topic is not None:
        frame = frame[frame["topic_id"] + 1 == topic]
    if outcome != "all":
        frame = frame[frame["outcome"] == outcome]
    # (outcomes by the names every page gives them: "Failed", as on Conversations)
    frame = frame.assign(message=frame["question_ordinal"] + 1, outcome=frame["outcome"].map(OUTCOME_LABELS))
    return frame[list(THREAD_COLUMNS)].reset_index(drop=True)
