"""A SQLite source's key texts fetched as one value (`loaders.sqlite.keys.one_step_digests`)
equal those fetched a row a thread, whatever the keys hold, and the loaded side's digest
(`loaders.digests.write_digests`) agrees with them for every thread a load stored."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loaders import resolve
from loaders.digests import key_digest, source_digests
from loaders.bundles import BadText
from loaders.sqlite.keys import one_step_digests
from tests.loaders.util import edited_store, load_db, rows


def _reader(path):
    src = resolve(str(path))
    return src.open_reader(str(path), src.options(None))


def _both(path) -> tuple[list, list]:
    """(one value, a row a thread) for the store at `path`."""
    reader = _reader(path)
    try:
        sql = reader._key_text_sql()
        one = list(one_step_digests(reader.con, sql))
        per_row = [r for r in reader.con.execute(sql).fetchall() if type(r[0]) is str]
        return one, per_row
    finally:
        reader.close()


def test_awkward_keys_come_out_alike(sqlite_store, tmp_path):
    store = edited_store(
        sqlite_store.path, tmp_path,
        ("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES (CAST(X'61ff62' AS TEXT), '', 'c1')", []),
        ("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES ('nul' || char(0) || 'in', '', 'c:1')", []),
        ("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES (42, '', 'c1')", []),
        ("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES ('colons:12:3', 'sub:9', '4:ab')", []),
        ("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) VALUES ('Rückerstattung ✓', '', 'é')", []),
    )
    one, per_row = _both(store)
    assert len(one) == len(sqlite_store.manifest) + 4  # every UTF-8 thread id (42 is '42' by the column's affinity)
    assert one == per_row
    ids = dict(one)
    assert ids["colons:12:3"] == "5:sub:94:4:ab"
    assert ids["nul\x00in"] == "0:3:c:1"
    assert ids["Rückerstattung ✓"] == "0:1:é"
    assert not [t for t in ids if type(t) is BadText or "\ufffd" in t]  # never a key, either way


def test_an_unchanged_store_digests_as_its_load_stored_them(sqlite_store, tmp_path):
    db = tmp_path / "d.duckdb"
    load_db(sqlite_store.path, db)
    stored = {r["thread_id"]: r["key_digest"] for r in rows(db, "SELECT thread_id, key_digest FROM thread_digests")}
    reader = _reader(sqlite_store.path)
    try:
        assert source_digests(reader) == stored
    finally:
        reader.close()


_key = st.one_of(st.text(max_size=12), st.binary(max_size=12))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.tuples(_key, _key, _key), min_size=0, max_size=12, unique=True))
def test_any_keys_come_out_alike(sqlite_store, tmp_path_factory, keys):
    """Text or raw bytes (as TEXT: not always UTF-8) in any key column, any number of threads."""
    store = edited_store(sqlite_store.path, tmp_path_factory.mktemp("k"), ("DELETE FROM checkpoints", []))
    con = sqlite3.connect(store)
    for thread, ns, cid in keys:
        values = [v if isinstance(v, str) else sqlite3.Binary(v) for v in (thread, ns, cid)]
        con.execute(
            "INSERT OR IGNORE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) "
            "VALUES (CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT))", values,
        )
    con.commit()
    con.close()
    one, per_row = _both(store)
    assert one == per_row
    assert [key_digest(k) for _, k in one] == [key_digest(k) for _, k in per_row]
