"""`outcomes()`: every thread's outcome signals and outcome, and the `outcomes` CSV report.

With the default window, service level and lexicon the rows are read from the table the
load wrote (`conversation_signals`); other parameters compute them live, by the same rules.

>>> outcomes("lens.duckdb").query("outcome == 'abandoned'")  # doctest: +SKIP
>>> outcomes("lens.duckdb", idle_minutes=120, lexicon="my_lexicon.toml")  # doctest: +SKIP

    transcript-lens report outcomes --db lens.duckdb --out outcomes.csv
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

import duckdb

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.conversation_outcomes.lexicon import Lexicon, built_in, lexicon_from, load_lexicon
from analytics.conversation_outcomes.materialize import (
    DEFAULT_HITL_HOURS, DEFAULT_IDLE_MINUTES, FINISH_SQL, TABLE, materialized, store_latest, thread_facts,
)
from analytics.conversation_outcomes.signals import SIGNALS
from analytics.reporting.spec import ReportSpec, register_report
from analytics.cli_types import number

#: The columns of `outcomes()`.
OUTCOME_COLUMNS = ("thread_id", *SIGNALS, *(f"{s}_ordinals" for s in SIGNALS), "outcome", "outcome_reason",
                   "outcome_ordinals", "topic_id", "topic_label")
#: The columns of the `outcomes` CSV report (ordinals as JSON arrays: `[3,5]`).
REPORT_COLUMNS = ("thread_id", *SIGNALS, "outcome", "outcome_reason", "topic_id", "topic_label",
                  *(f"{s}_ordinals" for s in SIGNALS), "outcome_ordinals")


def as_lexicon(lexicon: Lexicon | str | os.PathLike | Mapping | None) -> Lexicon | None:
    """A `Lexicon` from one, a TOML/JSON file, or a mapping of category → phrases (None: the built-in one)."""
    if lexicon is None or isinstance(lexicon, Lexicon):
        return lexicon
    if isinstance(lexicon, Mapping):
        return lexicon_from(dict(lexicon))
    return load_lexicon(lexicon)


def _check(idle_minutes: float, hitl_hours: float) -> None:
    for name, value in (("idle_minutes", idle_minutes), ("hitl_hours", hitl_hours)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise BadRequest(f"{name} must be a number >= 0, got {value!r}")


def outcomes_relation(con, filters: Filters | None = None, idle_minutes: float = DEFAULT_IDLE_MINUTES,
                      hitl_hours: float = DEFAULT_HITL_HOURS, lexicon=None) -> duckdb.DuckDBPyRelation:
    """The rows of `outcomes()` as a DuckDB relation (every column of `conversation_signals`), by thread id."""
    _check(idle_minutes, hitl_hours)
    lex = as_lexicon(lexicon)
    where, params = (filters or Filters()).thread_where("t")
    defaults = (float(idle_minutes), float(hitl_hours)) == (DEFAULT_IDLE_MINUTES, DEFAULT_HITL_HOURS)
    if defaults and (lex is None or lex.fingerprint() == built_in().fingerprint()) and materialized(con):
        return con.sql(f"SELECT s.* FROM {TABLE} s JOIN threads t USING (thread_id) WHERE {where} ORDER BY s.thread_id",
                       params=params)
    facts = thread_facts(con, where, params, lex, hitl_hours)
    con.register("tl_live_signal_facts", facts)
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE tl_live_outcomes AS " + FINISH_SQL.format(facts="tl_live_signal_facts"),
                    [store_latest(con), float(idle_minutes), float(hitl_hours)])
    finally:
        con.unregister("tl_live_signal_facts")
    return con.sql("SELECT * FROM temp.main.tl_live_outcomes ORDER BY thread_id")


def outcomes(db_or_con: ConOrPath, filters: Filters | None = None, idle_minutes: float = DEFAULT_IDLE_MINUTES,
             hitl_hours: float = DEFAULT_HITL_HOURS, lexicon=None) -> pd.DataFrame:
    """One row per thread: `OUTCOME_COLUMNS` (docs/outcomes.md defines each signal and the outcome).

    `idle_minutes`: the abandonment window; `hitl_hours`: the human-in-the-loop service level;
    `lexicon`: a `Lexicon`, a TOML/JSON file or a mapping replacing the built-in phrases
    (`analytics.conversation_outcomes.lexicon`). Ordinals are `messages.ordinal`s (0-based), as lists.
    """
    with connection(db_or_con) as con:
        frame = _with_topics(con, outcomes_relation(con, filters, idle_minutes, hitl_hours, lexicon)).select(
            *OUTCOME_COLUMNS).df()
    for name in OUTCOME_COLUMNS:
        if name.endswith("_ordinals"):
            frame[name] = [[int(v) for v in values] for values in frame[name]]
    return frame


def _with_topics(con, rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """`rel` with each thread's `topic_id` and `topic_label` (`analytics.topics`: the load's, else live)."""
    from analytics.topic_mining.report import topic_sources  # (topics read outcomes: imported when used)

    per_thread, _ = topic_sources(con)
    con.register("tl_outcome_rows", rel.arrow().read_all())
    return con.sql(f"SELECT o.*, ct.topic_id, ct.topic_label FROM tl_outcome_rows o "
                   f"LEFT JOIN {per_thread} ct USING (thread_id) ORDER BY o.thread_id")


def _report_rows(con, filters: Filters, options: Mapping[str, Any]) -> duckdb.DuckDBPyRelation:
    rel = _with_topics(con, outcomes_relation(
        con, filters, options.get("idle_minutes") or DEFAULT_IDLE_MINUTES,
        options.get("hitl_hours") or DEFAULT_HITL_HOURS, options.get("lexicon"),
    ))
    columns = ", ".join(f"to_json({c})::VARCHAR AS {c}" if c.endswith("_ordinals") else c for c in REPORT_COLUMNS)
    return rel.select(columns)


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--idle-minutes", type=number(hi=52_560_000),  # (100 years) metavar="MIN",
                        help=f"outcomes: abandonment window in minutes (default {DEFAULT_IDLE_MINUTES:g})")
    parser.add_argument("--hitl-hours", type=number(hi=876_000), metavar="H",
                        help=f"outcomes: human-in-the-loop service level in hours (default {DEFAULT_HITL_HOURS:g})")
    parser.add_argument("--lexicon", metavar="FILE", help="outcomes: a TOML or JSON lexicon (docs/outcomes.md)")


register_report(ReportSpec(
    "outcomes", "per thread: the outcome signals, the outcome and the messages each points at (analytics.outcomes)",
    REPORT_COLUMNS, _report_rows, arguments=_report_arguments,
))  # fmt: skip
