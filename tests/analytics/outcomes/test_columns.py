"""The facts' Arrow columns built from buffers equal pyarrow's own conversion of the same lists."""

from __future__ import annotations

import datetime as dt
import random
import zoneinfo

import pyarrow as pa
import pytest

from analytics.conversation_outcomes.columns import arrow_table, column

UTC = dt.timezone.utc


def _values(type_: pa.DataType, rng: random.Random, n: int, nulls: float) -> list:
    def one():
        if rng.random() < nulls:
            return None
        if pa.types.is_string(type_):
            return rng.choice(["", "tool error", "Grüße, ça va", "🙂 x" * rng.randint(1, 3)])
        if pa.types.is_boolean(type_):
            return rng.random() < 0.5
        if pa.types.is_int32(type_):
            return rng.randint(-2**31, 2**31 - 1)
        if pa.types.is_timestamp(type_):
            return dt.datetime(2025, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rng.randint(-10**15, 10**15))
        return rng.choice([[], (), [rng.randint(0, 900) for _ in range(rng.randint(1, 4))], [1, None] if nulls else (7,)])
    return [one() for _ in range(n)]


@pytest.mark.parametrize("type_", [pa.string(), pa.bool_(), pa.int32(), pa.timestamp("us", tz="UTC"),
                                   pa.list_(pa.int32())], ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1000])
@pytest.mark.parametrize("nulls", [0.0, 0.2], ids=["no nulls", "nulls"])  # (two ways of converting)
def test_a_column_equals_pyarrows_conversion(type_, n, nulls):
    values = _values(type_, random.Random(n), n, nulls)
    got = column(values, type_)
    got.validate(full=True)
    assert got.equals(pa.array([list(v) if isinstance(v, tuple) else v for v in values], type_))


def test_times_in_another_zone_and_without_one_are_the_same_instants():
    berlin = dt.datetime(2025, 6, 1, 14, 0, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"))
    naive_utc = dt.datetime(2025, 6, 1, 12, 0)
    got = column([berlin, naive_utc], pa.timestamp("us", tz="UTC")).to_pylist()
    assert got == [dt.datetime(2025, 6, 1, 12, 0, tzinfo=UTC)] * 2


def test_a_table_keeps_the_order_and_types_given():
    types = {"b": pa.bool_(), "a": pa.string()}
    table = arrow_table({"a": ["x", None], "b": [True, False]}, types)
    assert table.schema == pa.schema(list(types.items()))
    assert table.to_pylist() == [{"b": True, "a": "x"}, {"b": False, "a": None}]


def test_a_type_it_does_not_build_is_refused():
    with pytest.raises(TypeError):
        column([1.5], pa.float64())
