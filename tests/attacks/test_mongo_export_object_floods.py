"""A mongoexport line within both per-line counts (objects and arrays, members) can still ask for a
gigabyte of Python objects: a one-key object is 7 bytes of BSON and 184 bytes of dict. Its cost
parsed is estimated before anything is built, and a line over `MAX_PARSE_COST` refuses the load in
one line naming the file, the line and the limit, within the budget (docs/security.md) — a 106 KB
gzip of such a line took a load to 1.1 GB."""

from __future__ import annotations

import gzip

from loaders.mongo.files import MAX_CONTAINERS, MAX_MEMBERS, MAX_PARSE_COST
from tests.attacks.harness import attack

_WRITE = (b'{"_id":{"$oid":"65a1b2c3d4e5f6a7b8c9d0e1"},"thread_id":"t1","checkpoint_ns":"","checkpoint_id":"c1",'
          b'"task_id":"x","idx":0,"channel":"c","type":"null","value":{"$binary":{"base64":"","subType":"00"}}}\n')


def _flood(i: int, objects: int, strings: int) -> bytes:
    """A checkpoint line of `objects` one-key objects and `strings` short strings, under both counts."""
    assert objects < MAX_CONTAINERS and objects + strings < MAX_MEMBERS
    head = b'{"_id":{"$oid":"65a1b2c3d4e5f6a7b8c9d0e%d"},"thread_id":"t%d","checkpoint_ns":"","checkpoint_id":"c%d","x":[' % (i, i, i)
    return head + (b'{"a":"bcd"},' * objects + b'"abcde",' * strings)[:-1] + b"]}\n"


def test_an_export_line_of_small_objects_under_both_counts_is_refused_within_the_budget(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    with gzip.open(folder / "checkpoints.json.gz", "wb", compresslevel=9) as fh:
        fh.write(_flood(1, 2_390_000, 4_300_000))  # (63 MB: under the 64 MiB floor of a gzip's inflation)
    with gzip.open(folder / "checkpoint_writes.json.gz", "wb") as fh:
        fh.write(_WRITE)
    db = tmp_path / "t.duckdb"
    out = attack(["load", str(folder), "--db", str(db), "--workers", "1"], tmp_path)
    out.refused("checkpoints.json.gz", "line 1", f"{MAX_PARSE_COST >> 20} MiB").within_budget().wrote_only([db])
    assert not db.exists()


def test_an_export_line_of_a_few_thousand_small_objects_loads_its_documents(tmp_path):
    """The estimate refuses floods only: a line of 2,000 small objects is read (its stage error
    is the saver's, a missing serialization type), the load exits 0."""
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "checkpoints.json").write_bytes(_flood(1, 2_000, 2_000))
    (folder / "checkpoint_writes.json").write_bytes(_WRITE)
    db = tmp_path / "t.duckdb"
    attack(["load", str(folder), "--db", str(db), "--workers", "1"], tmp_path).succeeded().within_budget()


def test_an_export_line_of_more_short_strings_than_a_document_holds_is_counted_within_the_budget(tmp_path):
    """Members are counted outside strings a window at a time: a 34 MB line of 9 million one-letter
    strings is a `load_errors` row, within the budget (a substitution of its strings kept 9 million
    pieces: 1.6 GB)."""
    import duckdb

    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "checkpoints.json").write_bytes(b'{"_id":1,"x":[' + b'"a",' * 9_000_000 + b'"a"]}\n')
    (folder / "checkpoint_writes.json").write_bytes(_WRITE)
    db = tmp_path / "t.duckdb"
    attack(["load", str(folder), "--db", str(db), "--workers", "1"], tmp_path).succeeded().within_budget()
    con = duckdb.connect(str(db), read_only=True)
    try:
        reasons = [r for (r,) in con.execute("SELECT reason FROM load_errors").fetchall()]
    finally:
        con.close()
    assert any(f"line 1: more members (over {MAX_MEMBERS:,})" in r for r in reasons), reasons
