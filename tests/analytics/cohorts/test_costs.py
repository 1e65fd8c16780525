"""Cost from a user's price table on a real loaded store: hand-computed from the messages' tokens,
models without a price reported and left unpriced, cached input at its own price, the groupings,
the price files (TOML, CSV) and their errors."""

from __future__ import annotations

import pytest

import analytics
from analytics.cohorts.costs import NO_MODEL
from analytics.cohorts.prices import ModelPrice, load_prices
from analytics.errors import BadRequest
from analytics.filters import Filters
from tests.analytics.conftest import edited_copy

MODEL = "gpt-4o-mini-2024-07-18"


def _tokens(db, where="TRUE"):
    con = analytics.connect(db)
    try:
        return con.execute(f"SELECT thread_id, sum(input_tokens), sum(output_tokens) FROM messages WHERE model = '{MODEL}' "
                           f"AND {where} GROUP BY ALL").fetchall()
    finally:
        con.close()


def test_cost_per_thread_is_tokens_times_price(labelled_db):
    db, _ = labelled_db
    frame = analytics.costs(db, {MODEL: {"input": 0.15, "output": 0.6}}).set_index("thread")
    want = {t: (i * 0.15 + o * 0.6) / 1e6 for t, i, o in _tokens(db)}
    assert want and set(frame.index) == set(want)
    for thread, cost in want.items():
        assert frame.loc[thread, "cost"] == pytest.approx(cost)
    assert (frame["unpriced_tokens"] == 0).all() and frame["unpriced_models"].isna().all()


def test_a_model_without_a_price_is_reported_not_priced_at_zero(labelled_db):
    db, _ = labelled_db
    frame = analytics.costs(db, {"some-other-model": {"input": 1, "output": 1}}, by="model")
    assert frame["model"].tolist() == [MODEL]
    row = frame.iloc[0]
    assert row.unpriced_models == MODEL and row.unpriced_tokens == sum(i + o for _, i, o in _tokens(db))
    rows = analytics.compare_cohorts(db, Filters(metadata=(("app_version", "1.0"),)),
                                     Filters(metadata=(("app_version", "1.1"),)), prices={"x": {"input": 1, "output": 1}})
    assert rows.attrs["unpriced_models"] == [MODEL]
    cost = rows.set_index("name").loc["cost"]
    # only the threads without tokens have a known cost (0): the others are left out, not counted as 0
    assert cost.n_a < rows.attrs["threads_a"] and cost.value_a == 0


def test_cached_input_is_priced_at_its_own_price(labelled_db, tmp_path):
    db, _ = labelled_db
    cached = edited_copy(db, tmp_path / "cached.duckdb", f"""
        UPDATE messages SET usage_metadata = json_object('input_tokens', input_tokens, 'output_tokens', output_tokens,
            'input_token_details', json_object('cache_read', input_tokens // 2))
        WHERE model = '{MODEL}'""")
    table = {MODEL: {"input": 2.0, "output": 8.0, "cached_input": 0.5}}
    got = analytics.costs(cached, table, by="tenant")
    con = analytics.connect(cached)
    rows = con.execute(f"SELECT input_tokens, output_tokens, input_tokens // 2 FROM messages WHERE model = '{MODEL}'").fetchall()
    con.close()
    price = ModelPrice(2.0, 8.0, 0.5)
    assert got["cost"].sum() == pytest.approx(sum(price.cost(i, o, c) for i, o, c in rows))
    assert got["cached_input_tokens"].sum() == sum(c for _, _, c in rows)
    # without a cached price, the cached tokens cost the input price
    plain = analytics.costs(cached, {MODEL: {"input": 2.0, "output": 8.0}}, by="tenant")
    assert plain["cost"].sum() == pytest.approx(sum((i * 2.0 + o * 8.0) / 1e6 for i, o, _ in rows))


def test_groupings_add_up_and_filters_apply(labelled_db):
    db, labels = labelled_db
    table = {MODEL: {"input": 1.0, "output": 4.0}}
    total = analytics.costs(db, table, by="tenant")["cost"].sum()
    for by in ("thread", "model", "outcome", "day", "week", ("topic", "outcome")):
        frame = analytics.costs(db, table, by=by)
        assert frame["cost"].sum() == pytest.approx(total), by
    by_outcome = analytics.costs(db, table, by="outcome").set_index("outcome")
    failed = [t for t, r in labels["threads"].items() if r["outcome"] == "failed"]
    where = "thread_id IN (" + ", ".join(f"'{t}'" for t in failed) + ")"
    assert by_outcome.loc["failed", "cost"] == pytest.approx(sum(i + 4 * o for _, i, o in _tokens(db, where)) / 1e6)
    v11 = analytics.costs(db, table, by="tenant", filters=Filters(metadata=(("app_version", "1.1"),)))
    assert 0 < v11["cost"].sum() < total
    with pytest.raises(BadRequest, match="choose from"):
        analytics.costs(db, table, by="planet")


def test_tokens_without_a_model_are_unpriced(labelled_db, tmp_path):
    db, _ = labelled_db
    edited = edited_copy(db, tmp_path / "nomodel.duckdb",
                         "UPDATE conversation_metrics SET input_tokens = input_tokens + 100 WHERE input_tokens IS NOT NULL")
    frame = analytics.costs(edited, {MODEL: {"input": 1, "output": 1}}, by="model").set_index("model")
    assert frame.loc[NO_MODEL, "unpriced_tokens"] == 100 * frame.loc[NO_MODEL, "conversations"]


def test_price_files(tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text('currency = "EUR"\n[models."m-1"]\ninput = 2.5\noutput = 10\ncached_input = 1.25\n', encoding="utf-8")
    table = load_prices(toml)
    assert table.currency == "EUR" and table.models["m-1"] == ModelPrice(2.5, 10.0, 1.25)
    csv = tmp_path / "p.csv"
    csv.write_text("model,input_per_1m,output_per_1m,cached_input_per_1m\nm-1,2.5,10,\nm-2,1,2,0.5\n", encoding="utf-8")
    table = load_prices(csv)
    assert table.models == {"m-1": ModelPrice(2.5, 10.0, None), "m-2": ModelPrice(1.0, 2.0, 0.5)}
    for name, text, match in (
        ("bad.csv", "model,input\nm,1\n", "needs model, input and output"),
        ("neg.csv", "model,input,output\nm,-1,2\n", ">= 0"),
        ("twice.csv", "model,input,output\nm,1,2\nm,1,2\n", "twice"),
        ("bad.toml", '[models."m"]\ninput = 1\n', "needs input and output"),
        ("text.toml", '[models."m"]\ninput = "cheap"\noutput = 1\n', "not a number"),
        ("p.json", "{}", ".toml or .csv"),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(BadRequest, match=match):
            load_prices(tmp_path / name)
    with pytest.raises(BadRequest, match="no such price table"):
        load_prices(tmp_path / "missing.toml")


def test_the_compare_page_costs_each_cohort_by_outcome(labelled_db):
    from ui.models.compare import cost_by_outcome

    db, _ = labelled_db
    table = load_prices({MODEL: {"input": 1.0, "output": 4.0}})
    a, b = Filters(metadata=(("app_version", "1.0"),)), Filters(metadata=(("app_version", "1.1"),))
    frame = cost_by_outcome(db, a, b, table).set_index("outcome")
    for side, filters in (("a", a), ("b", b)):
        want = analytics.costs(db, table, by="outcome", filters=filters).set_index("outcome")
        assert frame[f"cost_{side}"].sum() == pytest.approx(want["cost"].sum())
        assert frame.loc["Resolved", f"conversations_{side}"] == want.loc["resolved", "conversations"]
