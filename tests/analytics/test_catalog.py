"""The catalogue of the tables analytics writes at load time (`analytics/catalog.py`) against
the queries that fill them and the tables a real load writes; docs/schema.md against both catalogues;
the dtype lists of the query layer against the column types."""

from __future__ import annotations

import typing
from datetime import datetime
from pathlib import Path

import pytest

from analytics import catalog, metrics, resume, transcript
from analytics.reporting import kinds, spec as specs
from analytics.derived import write_derived_tables
from analytics.filters import Filters
from analytics.frames import UTC_MICROS, dtype_of, dtypes_of
from loaders import catalog as loader_catalog

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"
from loaders.catalog import Table
from tests.analytics.metrics_db import build

DERIVED = {t.name: t for t in catalog.DERIVED_TABLES}


def _queries() -> dict[str, tuple[str, list]]:
    """{derived table: (sql, params) of the query that fills it}."""
    queries = {
        metrics.MATERIALIZED_TABLE: metrics.conversations_sql(Filters()),
        resume.RISKS_TABLE: resume.risks_sql(),
    }
    queries.update({name: (sql, params) for name, (sql, params, _) in metrics.trend_tables().items()})
    return queries


def _described(t: Table) -> list[tuple[str, str]]:
    return [(c.name, c.type.duckdb) for c in t.columns]


# Tables a query and Python rules write together, and the text index (written from Python:
# `analytics.text_index`); their columns: the load test below.
_NOT_ONE_QUERY = {catalog.CONVERSATION_SIGNALS.name, catalog.CONVERSATION_TOPICS.name, catalog.TOPICS.name,
                  catalog.SEARCH_TEXT.name}


def test_every_derived_table_is_declared_once():
    assert _queries().keys() == DERIVED.keys() - _NOT_ONE_QUERY
    assert not DERIVED.keys() & {t.name for t in loader_catalog.TABLES}
    for t in catalog.DERIVED_TABLES:
        assert t.doc and all(c.doc for c in t.columns), t.name


def test_each_query_selects_the_declared_columns_and_types(con):
    for name, (sql, params) in _queries().items():
        rel = con.sql(sql, params=params)
        assert [(c, str(t)) for c, t in zip(rel.columns, rel.types)] == _described(DERIVED[name]), name


def test_a_load_writes_exactly_the_catalogued_tables_with_their_types(con):
    got = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ).fetchall()
    tables: dict[str, list] = {}
    for table, column, type_ in got:
        tables.setdefault(table, []).append((column, type_))
    assert tables.keys() == {t.name for t in catalog.ALL_TABLES}
    for t in catalog.ALL_TABLES:
        assert tables[t.name] == _described(t), t.name


def _assert_no_nulls_where_declared(con) -> None:
    for t in catalog.DERIVED_TABLES:
        strict = [c.name for c in t.columns if not c.nullable]
        counts = con.execute(f"SELECT {', '.join(f'count(*) - count({c})' for c in strict)} FROM {t.name}").fetchall()[0]
        assert dict(zip(strict, counts)) == dict.fromkeys(strict, 0), t.name


def test_columns_declared_not_null_hold_no_null_after_a_real_load(con):
    _assert_no_nulls_where_declared(con)


def test_columns_declared_not_null_hold_no_null_on_the_hand_made_corpus():
    # Threads without messages, messages without ts, id or usage, models on some replies only.
    con = build(None)
    try:
        write_derived_tables(con)
        _assert_no_nulls_where_declared(con)
    finally:
        con.close()


# --- the Python side of the same columns -------------------------------------------------------

_PY_TYPES = {"VARCHAR": str, "BIGINT": int, "INTEGER": int, "DOUBLE": float, "BOOLEAN": bool,
             "TIMESTAMP WITH TIME ZONE": datetime}


def test_conversation_metrics_typeddict_is_the_catalogues():
    hints = typing.get_type_hints(metrics.ConversationMetrics)
    assert tuple(hints) == metrics.CONVERSATION_COLUMNS == catalog.CONVERSATION_METRICS.names
    for c in catalog.CONVERSATION_METRICS.columns:
        want = _PY_TYPES[c.type.duckdb]
        assert hints[c.name] == (want | None if c.nullable else want), c.name


def test_metrics_names_are_the_catalogues():
    assert metrics.MATERIALIZED_TABLE == catalog.CONVERSATION_METRICS.name
    assert metrics.PAIR_COLUMNS == catalog.LATENCY_PAIR_ROWS.names
    assert resume.RISKS_TABLE == catalog.RISK_FIGURES.name


# pandas dtypes a column of each DuckDB type may be read as (nullable or not).
_COMPATIBLE = {
    "VARCHAR": {"str"}, "JSON": {"str"}, "INTEGER": {"int64", "Int64"}, "BIGINT": {"int64", "Int64"},
    "BOOLEAN": {"bool", "boolean"}, "DOUBLE": {"float64", "Float64"}, "TIMESTAMP WITH TIME ZONE": {UTC_MICROS},
}


@pytest.mark.parametrize("dtypes, table", [
    (resume.RISK_COLUMNS, catalog.RISK_FIGURES),
    (resume.TIMELINE_COLUMNS, loader_catalog.CHECKPOINTS),
    (resume.WINDOW_COLUMNS, loader_catalog.MESSAGES),
    (transcript.SEARCH_COLUMNS, loader_catalog.THREADS),
])
def test_dtype_lists_read_catalogued_columns_as_their_type(dtypes, table):
    shared = [n for n in dtypes if n in table.names]
    assert shared
    for name in shared:
        c = table.column(name)
        assert dtypes[name] in _COMPATIBLE[c.type.duckdb], (table.name, name, dtypes[name])
        # A column that can be NULL needs a dtype that holds NULL.
        assert not (c.nullable and dtypes[name] in ("int64", "bool")), (table.name, name, dtypes[name])
    if table is catalog.RISK_FIGURES:
        assert tuple(dtypes) == table.names


def test_transcript_dtypes_are_the_catalogues():
    for name, dtype in transcript.TRANSCRIPT_COLUMNS.items():
        if name != "index":
            assert dtype == dtype_of(loader_catalog.MESSAGES.column(name)), name
    assert transcript.THREAD_COLUMNS == dtypes_of(loader_catalog.THREADS, *transcript.THREAD_COLUMNS)


def test_report_columns_are_catalogued_columns():
    assert set(kinds.TRANSCRIPT_COLUMNS) <= set(loader_catalog.MESSAGES.names)
    # The catalogued metrics, then a preview of the first user message (docs/metrics.md).
    # ... then the outcome (a catalogued column of conversation_signals), the signals that fired, in words,
    # and the outcome's reason (a catalogued column too).
    assert specs.report_spec("conversations").columns == (
        *catalog.CONVERSATION_METRICS.names, "first_user_message", "outcome", "signals", "outcome_reason")
    assert {"outcome", "outcome_reason"} <= set(catalog.CONVERSATION_SIGNALS.names)


# --- docs/schema.md ------------------------------------------------------------------------------


def test_schema_doc_shows_every_table_as_catalogued():
    text = SCHEMA_DOC.read_text()
    assert catalog.schema_doc(text) == text, "docs/schema.md is stale: run `python scripts/schema_doc.py`"


def test_schema_doc_refuses_a_missing_or_unknown_block():
    text = SCHEMA_DOC.read_text()
    with pytest.raises(ValueError):
        catalog.schema_doc(text.replace("<!-- catalog: risk_figures -->", "<!-- catalog: no_such_table -->"))
    start = text.index("<!-- catalog: meta -->")
    with pytest.raises(ValueError):
        catalog.schema_doc(text[:start])
