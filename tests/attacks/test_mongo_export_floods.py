"""A mongoexport line is one document, which MongoDB caps at 16 MiB of BSON: a line holding more
objects and arrays (or members) than such a document can is a `load_errors` row, counted before
anything is parsed — parsed, each is a Python object, and a 60 MB line of 20 million `{}` took
1.5 GB (docs/security.md: "read one document at a time against MongoDB's 16 MiB document limit")."""

from __future__ import annotations

import duckdb

from loaders.mongo.files import MAX_CONTAINERS
from tests.attacks.harness import attack

# A checkpoint document as mongoexport writes it (relaxed Extended JSON), its metadata a flood.
_HEAD = ('{"thread_id":"a:b:c","checkpoint_ns":"","checkpoint_id":"1","type":"msgpack",'
         '"checkpoint":{"$binary":{"base64":"gA==","subType":"00"}},"metadata":{"x":[')


def test_an_export_line_of_more_objects_than_a_document_holds_is_a_load_error(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "checkpoints.json").write_text(_HEAD + "{}," * 3_000_000 + "{}]}}\n")
    (folder / "checkpoint_writes.json").write_text("")
    db = tmp_path / "t.duckdb"
    out = attack(["load", str(folder), "--db", str(db), "--workers", "1"], tmp_path)
    out.no_traceback().within_budget()
    con = duckdb.connect(str(db), read_only=True)
    try:
        reasons = [r for (r,) in con.execute("SELECT reason FROM load_errors").fetchall()]
    finally:
        con.close()
    assert any(f"line 1: more objects and arrays (over {MAX_CONTAINERS:,}) than a 16 MiB document holds; skipped" in r
               for r in reasons), (out.stderr, reasons)
