"""`loaders/_rows.c`: the SQLite reader's checkpoint rows stepped and scanned in C give the
reader exactly what the sqlite3 cursor (its twin) gives: the same bundles, errors and
exceptions, on real stores, crafted rows and damaged pages.

Every store is written by real graphs through a real `SqliteSaver` (storegen's scenarios),
then edited with SQL or byte edits (tests/loaders/hostile_util.py). The comparison is the
whole read (`SqliteReader.threads`), so where a SQLite error is raised, and which thread
it is charged to (`Rows.reading`), count too: the reader re-reads and reports by them.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from loaders import records
from loaders.sqlite import reader as sqlite_reader
from loaders.source import SourceOptions
from tests.conftest import copy_store_files
from tests.loaders.hostile_util import StoreEditor, damage_pages, saver_store, table_pages
from tests.loaders.test_sqlite_damage import _overflow_pointer

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(sqlite_reader.native_rows is None, reason="loaders._rows is not built"),
]

SCENARIOS = {
    f"{tenant}:s{i}": scenario
    for i, (tenant, scenario) in enumerate(
        (t, s) for t in ("acme", "globex") for s in ("simple_chat", "tool_calls", "interrupt_pending", "edit", "subgraph",
                                                     "operator_add", "interrupt_resumed")
    )
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saver_store(tmp_path_factory.mktemp("rows") / "rows.sqlite", SCENARIOS)


def _view(cp) -> tuple:
    if type(cp) is not records.RawCheckpoint:
        return ("raw?", repr(cp))
    msgs = cp.messages
    return (*cp[:5], None if msgs is None else (msgs.typecode, msgs.tolist()), cp.damaged, cp.metadata)


def _read(path: Path, native: bool, **reader_state) -> tuple:
    """Everything one read hands over (or the exception it ends with), C rows or the sqlite3 cursor."""
    saved = sqlite_reader.native_rows
    if not native:
        sqlite_reader.native_rows = None
    reader = sqlite_reader.SqliteSource().open(str(path), SourceOptions())
    for name, value in reader_state.items():
        setattr(reader, name, value)
    out: list = []
    try:
        for b in reader.threads(None):
            out.append((type(b.thread_id).__name__, b.thread_id, [_view(cp) for cp in b.checkpoints], b.writes, b.errors,
                        [(type(p).__name__, p) for p in b.payloads]))
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        out.append(("raised", type(exc).__name__, str(exc)))
    finally:
        reader.close()
        sqlite_reader.native_rows = saved
    return tuple(out)


def _same_both_ways(path: Path, **reader_state) -> tuple:
    c, py = _read(path, True, **reader_state), _read(path, False, **reader_state)
    assert c == py
    return c


def test_a_real_store_reads_the_same_and_in_c(store):
    got = _same_both_ways(store)
    assert len(got) == len(SCENARIOS) and all(b[2] for b in got)


def test_the_c_rows_are_used(store, monkeypatch):
    # (else every other test here compares the cursor with itself)
    opened = []
    real = sqlite_reader.SqliteReader._open_store

    def counting(self):
        opened.append(real(self))
        return opened[-1]

    monkeypatch.setattr(sqlite_reader.SqliteReader, "_open_store", counting)
    _read(store, True)
    assert len(opened) == 1 and type(opened[0]).__name__ == "Store"


def test_a_store_c_cannot_open_is_read_by_the_cursor(store, monkeypatch):
    # (a second connection refused: the reader's own one reads on, the same rows)
    def refused(self):
        raise sqlite3.OperationalError("unable to open database file")

    want = _read(store, True)
    monkeypatch.setattr(sqlite_reader.SqliteReader, "_open_store", refused)
    assert _read(store, True) == want


def _edited(store: Path, tmp_path: Path, *sql: tuple[str, list]) -> Path:
    copy = copy_store_files(store, tmp_path)
    editor = StoreEditor(copy)
    try:
        for statement, params in sql:
            editor.con.execute(statement, params)
    finally:
        editor.close()
    return copy


def _middle(store: Path, thread: str = "acme:s1") -> str:
    con = sqlite3.connect(store)
    try:
        ids = [r[0] for r in con.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY 1", [thread])]
    finally:
        con.close()
    return ids[len(ids) // 2]


@pytest.mark.parametrize("edit", [
    "type = 'json'",  # legacy rows: the Python path decodes them
    "type = 'pickle'",
    "checkpoint = x'c1'",  # not msgpack
    "checkpoint = x''",
    "checkpoint = NULL",
    "metadata = NULL",
    "metadata = CAST('{\"a\": NaN}' AS BLOB)",
    "metadata = '{\"step\": 1}'",  # text, not a BLOB: loads as the same
    "metadata = x'7b22ff227d'",  # not UTF-8
    "metadata = CAST(x'7b22ff227d' AS TEXT)",
    "parent_checkpoint_id = 7",
    "parent_checkpoint_id = x'01'",
    "parent_checkpoint_id = CAST(x'ff' AS TEXT)",
    "checkpoint_ns = CAST(x'ff' AS TEXT)",
    "checkpoint_id = x'31'",
])
def test_a_row_c_is_not_sure_of_goes_to_python_with_the_rest_of_its_thread(store, tmp_path, edit):
    cid = _middle(store)
    copy = _edited(store, tmp_path, (f"UPDATE checkpoints SET {edit} WHERE thread_id = 'acme:s1' AND checkpoint_id = ?", [cid]))
    _same_both_ways(copy)


def _loose(store: Path, tmp_path: Path) -> Path:
    """A copy whose checkpoints table declares no types and no NOT NULL (what SQLite then
    stores as given: NULL, integer and real keys), keyed as the saver keys it."""
    copy = copy_store_files(store, tmp_path)
    editor = StoreEditor(copy)
    try:
        editor.con.execute(f"CREATE TABLE c2 ({_COLUMNS}, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))")
        editor.con.execute(f"INSERT INTO c2 SELECT {_COLUMNS} FROM checkpoints")
        editor.con.execute("DROP TABLE checkpoints")
        editor.con.execute("ALTER TABLE c2 RENAME TO checkpoints")
    finally:
        editor.close()
    return copy


_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"


@pytest.mark.parametrize("thread_id", ["NULL", "1", "1.0", "2.5", "x'0069'", "CAST(x'ffff' AS TEXT)", "CAST(x'' AS TEXT)", "''"],
                         ids=["null", "int", "float", "real", "blob", "not-utf8", "empty-bytes", "empty"])
def test_thread_ids_that_are_not_text_are_grouped_as_python_groups_them(store, tmp_path, thread_id):
    # Two threads under one id (their rows interleave by key): a group holds several threads' rows.
    copy = _loose(store, tmp_path)
    editor = StoreEditor(copy)
    try:
        for src in ("acme:s0", "globex:s8"):
            editor.con.execute(f"UPDATE checkpoints SET thread_id = {thread_id} WHERE thread_id = ?", [src])
    finally:
        editor.close()
    got = _same_both_ways(copy)
    assert len(got) > 2


@pytest.mark.parametrize("edit", ["checkpoint_ns = NULL", "checkpoint_id = NULL", "checkpoint_ns = 0", "checkpoint_id = 1.5"])
def test_keys_that_are_not_text_go_to_python(store, tmp_path, edit):
    copy = _loose(store, tmp_path)
    copy = _edited(copy, tmp_path / "edited", (f"UPDATE checkpoints SET {edit} WHERE thread_id = 'acme:s1' AND checkpoint_id = ?",
                                               [_middle(store)]))
    got = _same_both_ways(copy)
    assert any(e.reason.endswith("row skipped") for b in got for e in b[4])


def test_ids_equal_as_numbers_are_one_group_shown_each_as_stored(store, tmp_path):
    copy = _loose(store, tmp_path)
    editor = StoreEditor(copy)
    try:
        editor.con.execute("UPDATE checkpoints SET thread_id = 1 WHERE thread_id = 'acme:s0'")
        editor.con.execute("UPDATE checkpoints SET thread_id = 1.0 WHERE thread_id = 'acme:s1'")
    finally:
        editor.close()
    got = _same_both_ways(copy)
    shown = {e.thread_id for b in got for e in b[4]}
    assert {"1", "1.0"} <= shown


def test_a_key_stored_twice_is_handed_to_python(store, tmp_path):
    # A checkpoints table without its primary key, holding one row twice.
    copy = copy_store_files(store, tmp_path)
    editor = StoreEditor(copy)
    try:
        editor.con.execute(f"CREATE TABLE c2 AS SELECT {_COLUMNS} FROM checkpoints")
        editor.con.execute(f"INSERT INTO c2 SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = 'acme:s1' "
                           "AND checkpoint_id = ?", [_middle(store)])
        editor.con.execute("DROP TABLE checkpoints")
        editor.con.execute("ALTER TABLE c2 RENAME TO checkpoints")
    finally:
        editor.close()
    got = _same_both_ways(copy)
    assert any("a second checkpoints row" in e.reason for b in got for e in b[4])


@pytest.mark.parametrize("seed", range(24))
def test_damaged_pages_read_the_same_errors_and_threads_included(store, tmp_path, seed):
    # Page damage SQLite meets while the checkpoints are read: the same exception where it
    # is raised, the same thread charged with it (`Rows.reading`), so the reader re-reads,
    # reports and reads on alike.
    copy = copy_store_files(store, tmp_path)
    rng = random.Random(seed)
    pages = table_pages(copy, "checkpoints")
    index = table_pages(copy, "sqlite_autoindex_checkpoints_1")
    kind = ["leaf", "overflow", "index", "interior"][seed % 4]
    if kind == "index":
        spots = [(rng.choice(index["leaf"]), 0, 8)]
    elif kind == "interior" and pages.get("internal"):
        spots = [(rng.choice(pages["internal"]), rng.randrange(0, 100), 16)]
    else:
        spots = [(p, rng.randrange(0, 4000), rng.choice([4, 24])) for p in rng.sample(pages[kind if kind != "interior" else "leaf"], 2)]
    damage_pages(copy, spots, rng)
    _same_both_ways(copy)


def test_a_step_error_is_charged_to_the_thread_python_was_reading(store, tmp_path):
    # The cursor steps to row k+1 before it hands row k over: an error met stepping onto a
    # damaged row is raised in place of the row before it, while the Python reader still
    # reads the thread of the row before that. Here the damaged row is a thread's second:
    # the error comes in place of its first, charged to the thread before it, which is
    # read again alone, then the damaged thread is named. (Charged to the damaged thread
    # itself, the thread before it was lost.)
    copy = _edited(store, tmp_path, (
        # every row of the thread long enough to continue on overflow pages
        "UPDATE checkpoints SET metadata = '{\"pad\": \"' || printf('%.6000c', 'x') || '\"}' WHERE thread_id = 'acme:s3'", []))
    con = sqlite3.connect(copy)
    try:
        rowid = con.execute(
            "SELECT rowid FROM checkpoints WHERE thread_id = 'acme:s3' ORDER BY checkpoint_id LIMIT 1 OFFSET 1").fetchone()[0]
    finally:
        con.close()
    with open(copy, "r+b") as fh:
        fh.seek(_overflow_pointer(copy, rowid))
        fh.write(b"\xff" * 4)  # its first overflow page: past the end of the file
    got = _same_both_ways(copy, _bytes=1 << 40)  # (too big to integrity-check: only the read's own errors)
    named = [e.thread_id for b in got for e in b[4] if e.stage == "file"]
    loaded = {b[1] for b in got if b[2]}
    assert named == ["acme:s3"] and {"acme:s2", "acme:s4"} <= loaded, (named, sorted(loaded))



def _misplaced_index_entry(store: Path, tmp_path: Path, damaged_row: int) -> Path:
    """A copy whose key index names acme:s3's last checkpoint acme:s9 (so acme:s4 comes after it
    out of order), and whose acme:s4 row `damaged_row` continues on a page past the end of the file."""
    copy = _edited(store, tmp_path, (
        "UPDATE checkpoints SET metadata = '{\"pad\": \"' || printf('%.6000c', 'x') || '\"}' WHERE thread_id = 'acme:s4'", []))
    con = sqlite3.connect(copy)
    try:
        rowid = con.execute("SELECT rowid FROM checkpoints WHERE thread_id = 'acme:s4' ORDER BY checkpoint_id LIMIT 1 OFFSET ?",
                            [damaged_row]).fetchone()[0]
        last = con.execute("SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'acme:s3'").fetchone()[0]
    finally:
        con.close()
    entry = b"acme:s3" + last.encode()  # (an index record's thread_id, checkpoint_ns '' and id, back to back)
    image = bytearray(copy.read_bytes())
    size = int.from_bytes(image[16:18], "big")
    leaves = {p: image[(p - 1) * size:p * size] for p in table_pages(copy, "sqlite_autoindex_checkpoints_1")["leaf"]}
    starts = [(p - 1) * size + page.find(entry) for p, page in leaves.items() if entry in page]
    assert len(starts) == 1
    image[starts[0] + 6] = ord("9")  # the index's entry only: the table row still says acme:s3
    copy.write_bytes(bytes(image))
    with open(copy, "r+b") as fh:
        fh.seek(_overflow_pointer(copy, rowid))
        fh.write(b"\xff" * 4)
    return copy


def test_a_thread_out_of_order_whose_rows_fail_is_judged_out_of_order_first(store, tmp_path):
    # The cursor hands a thread over at its first row, so the reader finds its id out of
    # order before its damaged rows are read; `_rows` hands a thread over whole and met the
    # damage first. (Found by the `rows` fuzz target: the C path reported "reading stopped"
    # where the cursor path raised the out-of-order error.) acme:s4's third row is damaged:
    # the error comes in place of its second, while the reader holds acme:s4.
    got = _same_both_ways(_misplaced_index_entry(store, tmp_path, 2), _bytes=1 << 40)
    assert got[-1][:2] == ("raised", "SourceError") and "out of order" in got[-1][2], got[-1]


def test_a_thread_the_index_misplaces_does_not_hide_the_threads_after_it(store, tmp_path):
    # acme:s4's second row is damaged: the error comes in place of its first, charged to the
    # misplaced acme:s9, whose key finds no row. Reading on after acme:s9 skipped acme:s4,
    # s5 and s6 without a word (the integrity check is off, as for a file too big for it).
    got = _same_both_ways(_misplaced_index_entry(store, tmp_path, 1), _bytes=1 << 40)
    loaded = {b[1] for b in got if b[2]}
    named = [e.thread_id for b in got for e in b[4] if e.stage == "file"]
    assert named == ["acme:s4"] and {"acme:s5", "acme:s6", "globex:s7"} <= loaded, (named, sorted(loaded))
