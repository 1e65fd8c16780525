"""`analytics.scope.thread_scope`: the threads of one view, narrowed once and handed to every query."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics import metrics
from analytics.errors import BadRequest
from analytics.filters import Filters, Range
from analytics.scope import ThreadConditions, scoped_rows, scoped_view, thread_scope


def _ids(con, filters: Filters) -> list[str]:
    where, params = filters.thread_where("t")
    return [r[0] for r in con.execute(f"SELECT t.thread_id FROM threads t WHERE {where} ORDER BY 1", params).fetchall()]


def test_a_text_filter_becomes_the_ids_of_its_threads(con):
    word = con.execute(
        "SELECT content FROM messages WHERE role = 'user' AND content_chars > 3 ORDER BY thread_id, ordinal LIMIT 1"
    ).fetchall()[0][0][:4]
    filters = Filters(text=word)
    scope = thread_scope(con, filters, min_user_turns=2)
    assert scope.conditions.text is None and sorted(scope.conditions.thread_ids) == _ids(con, filters)
    assert scope.total == len(_ids(con, filters)) > 0
    assert _ids(con, scope.conditions) == _ids(con, ThreadConditions(text=word, min_user_turns=2))


def test_no_match_keeps_the_text_filter_so_nothing_matches(con):
    scope = thread_scope(con, Filters(text="no such text at all"))
    assert scope.total == 0 and scope.conditions.text == "no such text at all"
    assert _ids(con, scope.conditions) == []


def test_conditions_and_the_total_before_them(con):
    scope = thread_scope(con, Filters(), min_user_turns=2)
    assert scope.total == con.execute("SELECT count(*) FROM threads").fetchall()[0][0]
    # The loaded store has a current conversation_metrics: user turns are read from it.
    assert scope.conditions.turns_from_table and metrics.materialized(con)
    by_messages = _ids(con, ThreadConditions(min_user_turns=2))
    assert _ids(con, scope.conditions) == by_messages
    assert 0 < len(by_messages) < scope.total


def test_min_user_turns_is_checked(con):
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(BadRequest, match="min_turns"):
            thread_scope(con, Filters(), min_user_turns=bad)


def test_pending_and_forks_are_thread_flags(con):
    flags = (({"pending_only": True}, "coalesce(interrupt_pending, false)"), ({"forks_only": True}, "fork_count > 0"))
    for kwargs, column in flags:
        scope = thread_scope(con, Filters(), **kwargs)
        want = [r[0] for r in con.execute(f"SELECT thread_id FROM threads WHERE {column} ORDER BY 1").fetchall()]
        assert _ids(con, scope.conditions) == want and len(want) > 0, kwargs


def _answers(con, conditions) -> dict:
    return {
        "list": metrics.conversation_list(con, conditions, sort="duration_s"),
        "count": con.execute(*metrics.conversation_count_sql(con, conditions)).fetchall(),
        "daily": metrics.daily(con, conditions),
        "by_model": metrics.by_model(con, conditions),
        "latency": metrics.latency_distribution(con, conditions).sort_values(["thread_id", "user_ordinal"],
                                                                              ignore_index=True),
        "overview": dict(metrics.overview(con, conditions)),
    }  # fmt: skip


def test_scoped_rows_give_every_query_the_same_threads_and_go_away(con):
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    (lo, hi), = con.execute("SELECT min(ts), max(ts) FROM messages").fetchall()
    word = con.execute("SELECT left(content, 4) FROM messages WHERE role = 'user' AND content_chars > 3 "
                       "ORDER BY thread_id, ordinal LIMIT 1").fetchall()[0][0]  # fmt: skip
    cases = [
        thread_scope(con, Filters(), min_user_turns=2).conditions,
        thread_scope(con, Filters(text=word)).conditions,
        thread_scope(con, Filters(tenants=(tenant,), since=lo + (hi - lo) / 3), forks_only=False).conditions,
        ThreadConditions(pending_only=True),
    ]
    kinds = set()
    for conditions in cases:
        want = _answers(con, conditions)
        assert 0 < want["count"][0][0] < len(_ids(con, Filters())), conditions  # each narrows
        with scoped_rows(con, conditions) as scoped:
            assert scoped.rows_table is not None and scoped.thread_where("t")[1] == []
            assert _ids(con, scoped) == _ids(con, conditions)
            got = _answers(con, scoped)
            table = scoped.rows_table
            kinds.add(scoped.rows_out)
        for key in want:
            if isinstance(want[key], pd.DataFrame):
                pd.testing.assert_frame_equal(got[key], want[key], check_exact=True, obj=f"{key} {conditions}")
            else:
                assert got[key] == want[key], (key, conditions)
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0]
    # The table held the passing threads' ids for some, the others' (fewer: `min_user_turns=2`) for some.
    assert kinds == {False, True}


def test_scoped_rows_leave_conditions_that_keep_every_thread_and_refuse_other_tables(con):
    with scoped_rows(con, ThreadConditions()) as scoped:
        assert scoped == ThreadConditions()
    tenant = ThreadConditions(tenants=(con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0],))
    with scoped_rows(con, tenant) as scoped:  # each query compares its rows' own tenant instead
        assert scoped == tenant
    with pytest.raises(BadRequest, match="scope table"):
        ThreadConditions(rows_table="threads; DROP TABLE threads").thread_where()


def _key_cases(con) -> list[Filters]:
    (tenant,), = con.execute("SELECT min(tenant_id) FROM threads").fetchall()
    (sub_tenant,), = con.execute("SELECT min(sub_tenant_id) FROM threads WHERE tenant_id = ?", [tenant]).fetchall()
    (lo, hi), = con.execute("SELECT min(last_ts), max(last_ts) FROM threads").fetchall()
    return [
        Filters(tenants=(tenant,)),
        Filters(tenants=(tenant, "no-such-tenant")),
        Filters(sub_tenants=(sub_tenant,)),
        Filters(tenants=(tenant,), sub_tenants=(sub_tenant,)),
        ThreadConditions(tenants=(tenant,)),
        # Other conditions narrow the tenant's threads further: compared on thread ids.
        Filters(tenants=(tenant,), since=lo + (hi - lo) / 2),
        ThreadConditions(tenants=(tenant,), min_user_turns=2, turns_from_table=True),
        ThreadConditions(forks_only=True),
        ThreadConditions(pending_only=True),
        ThreadConditions(tenants=(tenant,), ranges=(Range("tool_calls", 1, None),), turns_from_table=True),
    ]


def _rows_in_scope(con, filters: Filters, table: str, columns: tuple[str, ...]) -> tuple[set[str], str]:
    threads_sql, params = filters.threads_sql()
    where = metrics.in_scope(filters, "d", columns)
    sql = f"WITH scope AS MATERIALIZED ({threads_sql}) SELECT DISTINCT d.thread_id FROM {table} d WHERE {where}"
    return {r[0] for r in con.execute(sql, params).fetchall()}, where


def test_rows_of_a_tenant_scope_are_found_on_their_own_key_columns(con):
    """`metrics.in_scope` keeps a row of messages and of every derived table exactly when its thread passes,
    whether it compares the row's tenant / sub-tenant or its thread id."""
    tables = {"messages": metrics.MESSAGE_COLUMNS, **metrics.DERIVED_COLUMNS}
    cases = _key_cases(con)
    on_keys = set()
    for filters in cases:
        passing = set(_ids(con, filters))
        assert passing, filters
        # Only the tenant / sub-tenant conditions alone are key parts.
        assert bool(filters.key_parts()) == (filters in cases[:5]), filters
        with scoped_rows(con, ThreadConditions(**vars(filters)) if type(filters) is Filters else filters) as scoped:
            for f in (filters, scoped):  # and the same threads found once, into a table
                for table, columns in tables.items():
                    got, where = _rows_in_scope(con, f, table, columns)
                    (every,) = con.execute(f"SELECT list(DISTINCT thread_id) FROM {table}").fetchall()[0]
                    assert got == passing & set(every), (table, f)
                    if "thread_id" not in where:
                        on_keys.add(table)
    # Every table whose rows carry the tenant keys is scoped on them (conversation_signals and
    # conversation_topics carry thread ids only, and are scoped on those; so does the text index,
    # which a search scopes as it scopes messages, by `Filters.message_where`).
    assert on_keys == {t for t, columns in tables.items() if "tenant_id" in columns}
    assert on_keys >= set(tables) - {"conversation_signals", "conversation_topics", "search_text"}


def test_a_view_finds_a_text_filters_threads_once_and_answers_as_thread_scope(con):
    word = con.execute("SELECT left(content, 4) FROM messages WHERE role = 'user' AND content_chars > 3 "
                       "ORDER BY thread_id, ordinal LIMIT 1").fetchall()[0][0]  # fmt: skip
    tenant = con.execute("SELECT min(tenant_id) FROM threads").fetchall()[0][0]
    cases = [(Filters(text=word), {}), (Filters(text=word), {"min_user_turns": 2}),
             (Filters(text=word, tenants=(tenant,)), {"forks_only": True}), (Filters(text="no such text"), {}),
             (Filters(tenants=(tenant,)), {"min_user_turns": 2})]  # fmt: skip
    for filters, kwargs in cases:
        want = thread_scope(con, filters, **kwargs)
        with scoped_view(con, filters, **kwargs) as (scope, scoped):
            assert scope == want, (filters, kwargs)  # the portable scope: ids, no table
            assert scoped.rows_table is not None or scoped.thread_where("t")[0] == "TRUE"
            assert _ids(con, scoped) == _ids(con, want.conditions)
            got = _answers(con, scoped)
            tables = con.execute("SELECT list(table_name) FROM duckdb_tables() WHERE temporary").fetchall()[0][0]
        expected = _answers(con, want.conditions)
        for key in expected:
            if isinstance(expected[key], pd.DataFrame):
                pd.testing.assert_frame_equal(got[key], expected[key], check_exact=True, obj=f"{key} {filters}")
            else:
                assert got[key] == expected[key], (key, filters)
        assert tables and not con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall()[0][0]
