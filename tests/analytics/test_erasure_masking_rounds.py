"""Masking a workspace's free texts by the reason's rule (`analytics.erasure.reason.masked_texts`)
runs one query per round of its search whatever the number of texts: every start of every text
is searched at once, so an erasure with thousands of notes on kept threads costs a few queries,
not a few per note."""

from __future__ import annotations

import duckdb

import transcript_lens
from analytics.erasure import reason
from tests.attacks.test_erasure_reason import CUSTOMER, GONE, SECRETS, store  # noqa: F401


class _Counting:
    """A DuckDB connection that counts the statements run on it."""

    def __init__(self, con, counter):
        self._con, self._counter = con, counter

    def execute(self, *args, **kwargs):
        self._counter.append(1)
        return self._con.execute(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def _queries(monkeypatch, db, texts) -> tuple[int, list]:
    counter: list[int] = []
    monkeypatch.setattr(reason.duckdb, "connect", lambda *a, **k: _Counting(_connect(*a, **k), counter))
    try:
        masked = reason.masked_texts(db, [GONE], texts)
    finally:
        monkeypatch.undo()
    return len(counter), masked


_connect = duckdb.connect


def test_the_queries_do_not_grow_with_the_texts(store, tmp_path, monkeypatch):  # noqa: F811
    db = tmp_path / "lens.duckdb"
    transcript_lens.load(store, db)
    notes = [f"note {i:04d}: mail {CUSTOMER}, code {SECRETS[1]}, nothing else" for i in range(400)]
    few, masked_few = _queries(monkeypatch, db, notes[:4])
    many, masked_many = _queries(monkeypatch, db, notes)
    assert masked_many[:4] == masked_few
    assert all(m == (f"note {i:04d}: mail <erased>, code <erased>, nothing else", 2) for i, m in enumerate(masked_many))
    assert many == few
