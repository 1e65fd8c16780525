"""The fuzz targets: each feeds one input to a C entry point and to its pure-Python twin and
raises `Mismatch` when they disagree (fuzz/README.md lists what each compares).

A target is a function of the input bytes; `TARGETS` names them. The twins are
the code paths `TRANSCRIPT_LENS_PUREPYTHON=1` runs: the module-level switches
(`bundles.native_scan`, `timestamps._ts_list`, `parts._stage`) are set to
None for the Python side, exactly as `loaders/_native.py` leaves them without C.
An exception other than `Mismatch` is a finding too: neither path may raise on
input a store can hold.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import sqlite3
import tempfile
from array import array
from contextlib import contextmanager
from pathlib import Path

from fuzz.common import Mismatch, Reader, decode_records, read_value

# Bound by `bind()` after the sanitized extensions are loaded (fuzz/run.py).
scan = readahead = rows = None
bundles = sqlite_reader = transform = timestamps = parts = records = None
pa = ipc = None
REGEX = SCHEMAS = None
DATA_TABLES: tuple[str, ...] = ()
_BASES: list[bytes] = []
_SCRATCH: Path | None = None


def bind() -> None:
    """Import the loader (after `common.use_sanitized_extensions`) and what the targets need."""
    global scan, readahead, rows, bundles, sqlite_reader, transform, timestamps, parts, records, pa, ipc, REGEX, SCHEMAS, DATA_TABLES, _SCRATCH
    import pyarrow
    import pyarrow.ipc

    import loaders.catalog as catalog
    import loaders.parts
    import loaders.records
    import loaders.bundles
    import loaders.sqlite.reader
    import loaders.thread_keys
    import loaders.transform.thread
    import loaders.transform.timestamps
    from loaders import _native

    scan, readahead, rows = _native.scan, _native.readahead, _native.rows
    bundles, sqlite_reader = loaders.bundles, loaders.sqlite.reader
    transform, timestamps = loaders.transform.thread, loaders.transform.timestamps
    parts, records = loaders.parts, loaders.records
    pa, ipc = pyarrow, pyarrow.ipc
    REGEX = loaders.thread_keys.compile_thread_key(None)
    SCHEMAS = catalog.staging_schemas()
    DATA_TABLES = catalog.DATA_TABLES
    # Scratch files (a SQLite image per readahead input, a thread's parts) in the folder the campaign
    # made and removes (libFuzzer ends the process without Python's exit handlers), else in one of ours.
    _SCRATCH = Path(tempfile.mkdtemp(prefix="tl-fuzz-", dir=os.environ.get("TL_FUZZ_SCRATCH") or scratch_root()))
    atexit.register(shutil.rmtree, _SCRATCH, True)
    bases = os.environ.get("TL_FUZZ_BASES")
    if bases:
        _BASES[:] = [p.read_bytes() for p in sorted(Path(bases).glob("*.sqlite"))]


def scratch_root() -> str | None:
    """A tmpfs when there is one: scratch files are written once per input."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else None


@contextmanager
def pure_python():
    """The loader's switches as `TRANSCRIPT_LENS_PUREPYTHON=1` sets them, for the block."""
    saved = bundles.native_scan, timestamps._ts_list, parts._stage
    bundles.native_scan = timestamps._ts_list = parts._stage = None
    try:
        yield
    finally:
        bundles.native_scan, timestamps._ts_list, parts._stage = saved


def _view(cp):
    """A RawCheckpoint as comparable data, types included (an array's typecode too)."""
    if cp is None:
        return None
    msgs = cp.messages
    return (type(cp).__name__, *cp[:5], type(cp.ts).__name__,
            None if msgs is None else (type(msgs).__name__, msgs.typecode, msgs.tolist()), cp.damaged, cp.metadata,
            type(cp.metadata).__name__)


def _state(table):
    """Everything `_scan.row` may touch in a `Payloads`, by value and by identity."""
    return (list(table.items), dict(table._index), table._prev_versions.tolist(), id(table._prev), id(table.blob),
            id(table.spans), table._prev is None)


def _numbering(table):
    return [(type(x).__name__, x) for x in table.items], table._prev_versions.tolist()


# --- row: `_scan.row` vs `fast_checkpoint`'s ormsgpack path / `decode_checkpoint_row` ----------------

METADATA = [b'{"step": 1, "source": "loop"}', '{"step": 2}', b"{}", None, b"[1]", '{"a": NaN}', b'{"x": "\xff"}']


def thread_rows(data: bytes, odd: bool = False) -> list[tuple]:
    """A thread's `checkpoints` rows from an input (fuzz/common.py's records).

    flags & 7: the metadata (7: record 0 is the metadata, bytes when flags & 8, else text);
    flags & 0x10: each row's parent is the row before; flags & 0x20: a subgraph namespace;
    flags & 0x40: a namespace over `records.KEY_MAX_BYTES` (both paths must treat it alike);
    flags & 0x80 with `odd`: every row but the first is of a shape only the Python path judges (another
    type tag, a BLOB key or parent, text metadata with a lone surrogate), in turn.
    Every other record is one checkpoint blob, in checkpoint-id order.
    """
    flags, recs = decode_records(data)
    variant = flags & 7
    if variant == 7:
        raw = recs[0] if recs else b""
        recs = recs[1:]
        metadata = raw if flags & 8 else raw.decode("utf-8", "replace")
    else:
        metadata = METADATA[variant]
    ns = "sub:1" if flags & 0x20 else ""
    if flags & 0x40:
        ns += "n" * (records.KEY_MAX_BYTES + 1)
    rows, parent = [], None
    for i, blob in enumerate(recs):
        cid = f"1ef{i:05d}"
        row = ("t", ns, cid, parent, "msgpack", blob, metadata)
        if odd and flags & 0x80 and i:
            row = _odd(row, i % 4)
        rows.append(row)
        if flags & 0x10:
            parent = cid
    return rows


def _odd(row: tuple, which: int) -> tuple:
    t, ns, cid, parent, type_, blob, metadata = row
    if which == 0:
        return (t, ns, cid, parent, "json", blob, metadata)
    if which == 1:
        return (t, ns, cid.encode(), parent, type_, blob, metadata)
    if which == 2:
        return (t, ns, cid, b"p", type_, blob, metadata)
    return (t, ns, cid, parent, type_, blob, '{"a": "\ud800"}')


def _py_fast(row, table, limit):
    with pure_python():
        return bundles.fast_checkpoint(row, table, limit)


def _element_limit(data: bytes) -> int:
    """The values-per-value limit a row input is read under (`loaders/elements.py`): the input's last
    byte picks a small one (1-64) half the time, so that the budget declines real checkpoints."""
    import loaders.elements

    last = data[-1] if data else 255
    return last % 64 + 1 if last < 128 else loaders.elements.MAX_ELEMENTS


def _same_count(blob, limit: int) -> None:
    """`_scan.elements` equals its twin `elements.count_py`, flat and deep."""
    import loaders.elements

    if not isinstance(blob, bytes):
        return
    for deep in (False, True):
        c, p = scan.elements(blob, limit, deep), loaders.elements.count_py(blob, limit, deep)
        if c != p:
            raise Mismatch(f"_scan.elements({limit}, deep={deep}) = {c}, count_py = {p}")


def target_row(data: bytes) -> None:
    """Row by row, `_scan.row` against the Python path on a `Payloads` in the same state.

    - C says None: the table is untouched, and the Python path run on it gives what it gives on the twin table;
    - C answers: the ormsgpack path answers too (C never accepts what Python would judge), with the same
      RawCheckpoint, and both tables number the payloads the same;
    - neither: `decode_checkpoint_row` reports the same errors on both tables.
    Both under a values-per-value limit the input picks (`_element_limit`), whose counter
    `_scan.elements` must equal its twin on every blob.
    Then the whole thread through `bundle_thread`, compiled and pure: the same bundle.
    """
    rows = thread_rows(data, odd=True)
    if not rows:
        return
    RawCheckpoint, Payloads = records.RawCheckpoint, records.Payloads
    limit = _element_limit(data)
    tc, tp = Payloads(), Payloads()
    for row in rows:
        _same_count(row[5], limit)
        before = _state(tc)
        c = scan.row(row, tc, RawCheckpoint, limit)
        p = _py_fast(row, tp, limit)
        if c is None:
            if _state(tc) != before:
                raise Mismatch("_scan.row declined a row but changed the payload numbering")
            c = _py_fast(row, tc, limit)
        elif p is None:
            raise Mismatch(f"_scan.row accepted a row the Python path declines: {_view(c)!r:.300}")
        if c is None and p is None:
            ec, ep = [], []
            c = bundles.decode_checkpoint_row(row, ec, tc)
            p = bundles.decode_checkpoint_row(row, ep, tp)
            if ec != ep:
                raise Mismatch(f"decode_checkpoint_row errors differ: {ec!r:.300} vs {ep!r:.300}")
        if _view(c) != _view(p):
            raise Mismatch(f"checkpoint differs: C {_view(c)!r:.400} vs Python {_view(p)!r:.400}")
        if _numbering(tc) != _numbering(tp):
            raise Mismatch(f"payload numbering differs: {_numbering(tc)!r:.300} vs {_numbering(tp)!r:.300}")
    compiled = bundles.bundle_thread("t", rows, [])
    with pure_python():
        pure = bundles.bundle_thread("t", rows, [])
    if _bundle(compiled) != _bundle(pure):
        raise Mismatch("bundle_thread differs between the compiled and the pure-Python paths")


def _bundle(b):
    return (b.thread_id, [_view(cp) for cp in b.checkpoints], b.writes, b.errors, [(type(x).__name__, x) for x in b.payloads])


# --- thread: the per-thread path end to end (bundle, transform, staged Arrow parts) -------------------

def _staged(thread_rows_) -> dict:
    """What `PartWriter` writes for one thread's rows: {table: pyarrow Table read back from the part}."""
    folder = Path(tempfile.mkdtemp(dir=_SCRATCH))
    try:
        writer = parts.PartWriter(folder, SCHEMAS, "p0", flush_rows=7)  # several batches per table
        for table in DATA_TABLES:
            writer.append(table, getattr(thread_rows_, table))
        writer.append_errors(thread_rows_.errors)
        out = {}
        for table, path in writer.close().items():
            with ipc.open_file(path) as fh:
                out[table] = fh.read_all()
        return out
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def _norm(value):
    if isinstance(value, array):
        return ("array", value.typecode, value.tolist())
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def target_thread(data: bytes) -> None:
    """One thread through `bundle_thread` → `transform_thread` → `PartWriter`, compiled and pure:
    the same table rows and the same staged Arrow tables (`ts_list` and `stage` on real shapes)."""
    rows = thread_rows(data)
    if not rows:
        return
    out = {}
    for mode in ("compiled", "pure"):
        ctx = pure_python() if mode == "pure" else _nothing()
        with ctx:
            bundle = bundles.bundle_thread("t", rows, [])
            trows = transform.transform_thread(bundle, REGEX)
            out[mode] = (_norm([getattr(trows, f) for f in DATA_TABLES]), trows.errors, _staged(trows))
    (rc, ec, sc), (rp, ep, sp) = out["compiled"], out["pure"]
    if rc != rp:
        raise Mismatch("transform_thread rows differ between the compiled and the pure-Python paths")
    if ec != ep:
        raise Mismatch(f"load errors differ: {ec!r:.300} vs {ep!r:.300}")
    if sc.keys() != sp.keys() or any(not sc[t].equals(sp[t]) for t in sc):
        raise Mismatch(f"staged parts differ: {sorted(sc)} vs {sorted(sp)}")


@contextmanager
def _nothing():
    yield


# --- ts_list: `_scan.ts_list` vs `ts_micros` per value ----------------------------------------------

def target_ts_list(data: bytes) -> None:
    """Every value: the C reading equals `timestamps.ts_micros`; what C hands to the fallback is the rest.

    Values are fuzz/common.py's tagged values (strings of every kind, None, ints, bytes ...), as
    the `ts` of RawCheckpoints (or of plain 5-tuples when the first byte is odd).
    """
    r = Reader(data)
    plain = r.byte() & 1
    values = []
    while r.left() > 0 and len(values) < 64:
        values.append(read_value(r))
    RawCheckpoint = records.RawCheckpoint
    cps = [(("t", "", f"c{i}", None, v) if plain else RawCheckpoint("t", "", f"c{i}", None, v, None, False, None))
           for i, v in enumerate(values)]
    handed = []

    def fallback(v):
        handed.append(v)
        return timestamps.ts_micros(v)

    got = scan.ts_list(cps, fallback)
    want = [timestamps.ts_micros(v) for v in values]
    if type(got) is not list or [(type(x), x) for x in got] != [(type(x), x) for x in want]:
        raise Mismatch(f"ts_list differs: {values!r:.300}: C {got!r:.300} vs Python {want!r:.300}")
    # What C read itself must be what LangGraph writes: a str in the exact UTC ISO shape.
    read_in_c = [v for v in values if not any(v is h for h in handed)]
    for v in read_in_c:
        if type(v) is not str or len(v) not in (25, 32) or not v.endswith("+00:00"):
            raise Mismatch(f"ts_list read {v!r} in C instead of handing it to the fallback")


# --- stage: `_scan.stage` vs pyarrow's conversion (`parts._column`) ----------------------------------

_RANDOM_TYPES = None


def _schema(r: Reader):
    global _RANDOM_TYPES
    real = list(SCHEMAS.values())
    pick = r.byte() % (len(real) + 1)
    if pick < len(real):
        return real[pick]
    if _RANDOM_TYPES is None:
        _RANDOM_TYPES = [pa.string(), pa.int32(), pa.int64(), pa.timestamp("us", tz="UTC"), pa.bool_(), pa.list_(pa.int32())]
    n = 1 + r.byte() % 6
    return pa.schema([(f"c{j}", _RANDOM_TYPES[r.byte() % len(_RANDOM_TYPES)]) for j in range(n)])


def stage_input(data: bytes):
    """(schema, rows) from an input: a schema byte (a real staging schema, or a random one), then rows of
    tagged values, each row led by a shape byte (0xFE: a list, 0xFF: one cell too many, else a tuple)."""
    r = Reader(data)
    schema = _schema(r)
    rows = []
    while r.left() > 0 and len(rows) < 64:
        shape = r.byte()
        width = len(schema) + (shape == 0xFF)
        cells = [read_value(r) for _ in range(width)]
        rows.append(cells if shape == 0xFE else tuple(cells))
    return schema, rows


def target_stage(data: bytes) -> None:
    """`_scan.stage` either raises TypeError / ValueError / OverflowError (then `PartWriter` converts with
    pyarrow) or builds buffers that make a valid record batch equal to pyarrow's conversion of the rows."""
    schema, rows = stage_input(data)
    if not rows:
        return
    kinds = parts._kinds(schema)
    try:
        staged = scan.stage(rows, kinds)
    except (TypeError, ValueError, OverflowError):
        return  # PartWriter's fallback: pyarrow converts, or reports, the rows
    batch = parts.column_batch(schema, records.ColumnBuffers(len(rows), dict(zip(schema.names, staged))))
    try:
        batch.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise Mismatch(f"_scan.stage built invalid Arrow buffers: {exc}") from None
    try:
        want = pa.Table.from_arrays([parts._column(c, f.type) for c, f in zip(zip(*rows), schema)], schema=schema)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise Mismatch(f"_scan.stage staged rows pyarrow refuses ({type(exc).__name__}: {exc})") from None
    got = pa.Table.from_batches([batch])
    if not got.equals(want):
        raise Mismatch(f"staged columns differ: C {got.to_pylist()!r:.300} vs pyarrow {want.to_pylist()!r:.300}")


# --- readahead: every row through the read-ahead VFS vs through SQLite's own -------------------------

READS = [
    "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
    "SELECT * FROM checkpoints",
    "SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    "PRAGMA quick_check",
]
_QUICK_CHECK = READS.index("PRAGMA quick_check")


def _checked(outcome):
    """`PRAGMA quick_check`'s outcome as the comparison takes it: whether the file passed.

    On some damaged pages SQLite's own check is not deterministic: the same file, read
    through SQLite's own VFS in fresh connections, sometimes returns its findings
    (`Page 105: free space corruption`, …) and sometimes raises `database disk image is
    malformed` (3.40.1; `fuzz/findings/readahead-quick-check-differs`: 8 of 40 connections
    one way, 32 the other). Both say "damaged"; which one is SQLite's, not the VFS's.
    """
    return outcome == ("ok", [(b"ok",)])


def patched_image(data: bytes) -> bytes:
    """A real store (one of TL_FUZZ_BASES) with the input's patches applied: a base byte, a flag byte
    (bit 0: truncate at the next u32, modulo the size), then patches (u32 offset, u8 length, bytes)."""
    r = Reader(data)
    base = _BASES[r.byte() % len(_BASES)]
    flags = r.byte()
    image = bytearray(base)
    cut = int.from_bytes(r.take(4).ljust(4, b"\0"), "little")
    for _ in range(16):
        if r.left() <= 0:
            break
        off = int.from_bytes(r.take(4).ljust(4, b"\0"), "little") % max(len(image), 1)
        chunk = r.take(r.byte())
        image[off:off + len(chunk)] = chunk
    if flags & 1:
        del image[cut % (len(image) + 1):]
    return bytes(image)


# Python's sqlite3 answers some damage with exceptions that are not sqlite3 errors: UnicodeDecodeError
# when SQLite's message quotes damaged schema text that is not UTF-8, MemoryError when SQLite says
# SQLITE_NOMEM (`PRAGMA quick_check` on some damaged headers). Outcomes to compare, like the others
# (docs/security.md, "Fuzzing").
_READ_ERRORS = (sqlite3.Error, UnicodeDecodeError, MemoryError)


def _read_all(path: Path, vfs: str | None):
    extra = f"&vfs={vfs}" if vfs else ""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1{extra}", uri=True)
    except _READ_ERRORS as exc:
        return ("connect error", type(exc).__name__, str(exc))
    con.text_factory = bytes  # the stored bytes, compared exactly
    try:
        out = []
        for sql in READS:
            try:
                out.append(("ok", con.execute(sql).fetchall()))
            except _READ_ERRORS as exc:
                out.append(("error", type(exc).__name__, str(exc)))
        return out
    finally:
        con.close()


def target_readahead(data: bytes) -> None:
    """A damaged copy of a real store reads the same, row for row and error for error, both ways
    (and passes or fails `quick_check` both ways: see `_checked`)."""
    if not _BASES:
        raise SystemExit("TL_FUZZ_BASES names no *.sqlite stores (python -m fuzz.seeds builds them)")
    path = _SCRATCH / "store.sqlite"
    path.write_bytes(patched_image(data))
    got, want = _read_all(path, readahead.VFS_NAME), _read_all(path, None)
    if isinstance(got, list) and isinstance(want, list):
        got[_QUICK_CHECK], want[_QUICK_CHECK] = _checked(got[_QUICK_CHECK]), _checked(want[_QUICK_CHECK])
    if got != want:
        first = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b) if isinstance(got, list) else -1
        raise Mismatch(f"the read-ahead VFS reads differently (query {first}): {str(got)[:300]} vs {str(want)[:300]}")


# --- rows: the C row source (`_rows.Store`) vs the sqlite3 cursor, a whole read of a damaged store --

def _reader_output(path: Path, native: bool):
    """Everything `SqliteReader.threads` hands over (or how it ends), with the C rows or the cursor."""
    saved = sqlite_reader.native_rows
    sqlite_reader.native_rows = rows if native else None
    try:
        try:
            reader = sqlite_reader.SqliteSource().open(str(path), sqlite_reader.SourceOptions())
        except Exception as exc:  # noqa: BLE001 - an unreadable file: compared, both ways
            return ("refused", type(exc).__name__, str(exc))
        out = []
        try:
            for b in reader.threads(None):
                out.append((type(b.thread_id).__name__, b.thread_id, [_view(cp) for cp in b.checkpoints], b.writes,
                            [_integrity_as_compared(e) for e in b.errors], [(type(p).__name__, p) for p in b.payloads]))
        except _READ_ERRORS + (records.SourceError,) as exc:
            out.append(("raised", type(exc).__name__, str(exc)))
        finally:
            reader.close()
        return out
    finally:
        sqlite_reader.native_rows = saved


def _integrity_as_compared(error):
    """A load error, with the file check's findings as one wording (see `_checked`): the
    reader's `PRAGMA integrity_check` runs on a connection of its own, the same code on
    both paths, and SQLite words some damage differently from one connection to the next."""
    damaged = "SQLite reports the file damaged: "
    if error.thread_id is None and error.stage == "file" and error.reason.startswith(damaged) \
            and not error.reason.startswith(damaged + "reading stopped"):
        return dataclasses.replace(error, reason=damaged + "(the integrity check's findings)")
    return error


def target_rows(data: bytes) -> None:
    """A damaged copy of a real store (the `readahead` target's inputs) read whole by the SQLite reader,
    its checkpoint rows stepped and scanned in C (`_rows`) and through the sqlite3 cursor: the same
    bundles, load errors and exceptions (where SQLite raises, and which thread the reader charges)."""
    if not _BASES:
        raise SystemExit("TL_FUZZ_BASES names no *.sqlite stores (python -m fuzz.seeds builds them)")
    path = _SCRATCH / "rows.sqlite"
    path.write_bytes(patched_image(data))
    got, want = _reader_output(path, True), _reader_output(path, False)
    if got != want:
        raise Mismatch(f"the C row source reads differently: {str(got)[:400]} vs {str(want)[:400]}")


TARGETS = {
    "row": target_row,
    "thread": target_thread,
    "ts_list": target_ts_list,
    "stage": target_stage,
    "readahead": target_readahead,
    "rows": target_rows,
}
