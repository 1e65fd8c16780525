"""`loaders._scan` (the C checkpoint scanner) answers as the ormsgpack path does, or not at all.

The scanner may decline any blob (None: the plain path decides); every answer
it gives must equal what unpacking with ormsgpack gives: the checkpoint's `ts`
and its `channel_values.messages` payloads. Checked on generated checkpoints,
on byte-level mutations of them (flips, truncations, insertions) and on a real
store; and the numbering stays first-seen numbering when a thread's lists
arrive by either path in any mix.
"""

from __future__ import annotations

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loaders import bundles
from loaders.decode import UNPACK_OPT, outer_hook
from loaders.elements import MAX_ELEMENTS
from loaders.records import Payloads, RawCheckpoint
from tests.loaders.util import assert_same_tables, load_db

_scan = bundles.native_scan
pytestmark = pytest.mark.native


def test_the_scanner_is_built():
    # `make test` builds it; a broken build must fail here, not silently test only the fallback.
    assert _scan is not None, "loaders/_scan.c is not built: run `python setup.py build_ext --inplace`"


def reference(blob: bytes):
    """What `fast_checkpoint`'s ormsgpack path reads from a blob: (ts, messages) or why not."""
    try:
        cp = ormsgpack.unpackb(blob, ext_hook=outer_hook, option=UNPACK_OPT)
    except Exception:  # noqa: BLE001
        return "error"
    if type(cp) is not dict:
        return "not a checkpoint"
    values, ts = cp.get("channel_values"), cp.get("ts")
    if type(values) is not dict or type(ts) is not str:
        return "not a checkpoint"
    messages = values.get("messages")
    if messages is not None and type(messages) is not list:
        return "not a checkpoint"
    return ts, messages


def scanned(blob: bytes):
    """What `_scan.row` reads from a blob, a thread's first checkpoint: (ts, payloads) or None (declined)."""
    table = Payloads()
    cp = _scan.row(("t", "", "c", None, "msgpack", blob, b"{}"), table, RawCheckpoint, MAX_ELEMENTS)
    if cp is None:
        return None
    return cp.ts, (None if cp.messages is None else [table.items[v] for v in cp.messages])


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(), st.text(max_size=12), st.binary(max_size=12),
    st.builds(ormsgpack.Ext, st.integers(0, 127), st.binary(max_size=10)),  # (negative codes: by mutation)
)
keys = st.one_of(st.text(max_size=10), st.integers(-5, 5), st.sampled_from(["ts", "channel_values", "messages"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=20)
payloads = st.binary(min_size=0, max_size=40)
messages = st.lists(payloads.map(lambda b: ormsgpack.Ext(5, b)), max_size=8)


@st.composite
def checkpoints(draw):
    """A checkpoint as LangGraph writes it (top-level keys in any order, extra channels)."""
    channel_values = draw(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "messages"), values, max_size=3))
    if draw(st.booleans()):
        channel_values["messages"] = draw(messages)
    top = {"v": 4, "ts": draw(st.text(max_size=40)), "id": draw(st.text(max_size=36)), "channel_values": channel_values}
    top.update(draw(st.dictionaries(st.sampled_from(["channel_versions", "versions_seen", "extra"]), values, max_size=3)))
    order = draw(st.permutations(list(top)))
    return ormsgpack.packb({k: top[k] for k in order}, option=ormsgpack.OPT_NON_STR_KEYS)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(checkpoints())
def test_well_formed_checkpoints_are_read_as_ormsgpack_reads_them(blob):
    ref = reference(blob)
    assert ref not in ("error", "not a checkpoint")
    # Well-formed checkpoints are the scanner's job: it must not decline them.
    assert scanned(blob) == ref


@st.composite
def mutated(draw):
    blob = bytearray(draw(checkpoints()))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "set", "cut", "insert"]))
        if not blob:
            break
        i = draw(st.integers(0, len(blob) - 1))
        if kind == "flip":
            blob[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            blob[i] = draw(st.sampled_from([0xC1, 0xC0, 0xDD, 0xDF, 0xC9, 0xDB, 0x80, 0xFF, 0xED, 0xA0]))
        elif kind == "cut":
            del blob[i:]
        else:
            blob[i:i] = draw(st.binary(min_size=1, max_size=6))
    return bytes(blob)


# The same comparison runs much deeper in the differential fuzzing of `_scan.row` (fuzz/targets.py
# `target_row`: C answers only where the ormsgpack path does, with the same checkpoint).
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_damaged_blob_is_declined_or_read_exactly_as_ormsgpack_reads_it(blob):
    ref = reference(blob)
    got = scanned(blob)
    if got is not None:
        assert ref not in ("error", "not a checkpoint"), f"accepted what ormsgpack refuses: {blob!r}"
        assert got == ref


@pytest.mark.parametrize(
    "blob",
    [
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa8messages\x91\xd4\x05\x01",  # the smallest accepted
        b"\x82\xa2ts\xa3\xed\xa0\x80\xaechannel_values\x80",  # ts is an encoded surrogate
        b"\x83\xa2ts\xa1x\xa2ts\xa1y\xaechannel_values\x80",  # repeated key
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa8messages\x91\x81\xa1a\x01",  # a plain-dict message
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa8messages\xdd\xff\xff\xff\xff",  # a count beyond the blob
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\x91\x01\x01",  # an array as a key (ormsgpack: a tuple)
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa1k" + b"\x91" * 100 + b"\xc0",  # deeper than the scanner goes
        b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa8messages\xc0",  # messages is nil
    ],
)
def test_edge_cases_are_declined_or_agree(blob):
    got = scanned(blob)
    ref = reference(blob)
    assert got is None or got == ref


def test_the_smallest_checkpoint_is_accepted_and_trailing_bytes_are_ignored_like_ormsgpack():
    blob = b"\x82\xa2ts\xa1x\xaechannel_values\x81\xa8messages\x91\xd4\x05\x01"
    assert scanned(blob) == ("x", [b"\x01"])
    assert scanned(blob + b"\xc1junk") == reference(blob + b"\xc1junk") == ("x", [b"\x01"])


def _blob(payload_list: list[bytes], pad: bytes = b"") -> bytes:
    # `pad` moves the payloads within the blob: the comparison is by content, not offset.
    return ormsgpack.packb({"pad": pad, "ts": "t", "channel_values": {"messages": [ormsgpack.Ext(5, p) for p in payload_list]}})


def _row(blob: bytes, metadata=b'{"step": 1}') -> tuple:
    return ("t", "", "c", None, "msgpack", blob, metadata)


@settings(max_examples=300)
@given(st.lists(st.tuples(st.lists(st.sampled_from([b"a", b"b", b"ab", b"", b"c" * 300]), max_size=7), st.booleans(), st.binary(max_size=3))))
def test_numbering_is_first_seen_numbering_whichever_path_each_list_takes(lists):
    table = Payloads()
    reference_items: list = []
    for items, by_scan, pad in lists:
        expected = []
        for item in items:
            if item not in reference_items:
                reference_items.append(item)
            expected.append(reference_items.index(item))
        if by_scan:
            cp = _scan.row(_row(_blob(items, pad)), table, RawCheckpoint, MAX_ELEMENTS)
            assert cp is not None
            got = cp.messages
        else:
            got = table.versions(items)
        assert got.tolist() == expected
    assert table.items == reference_items


def test_row_builds_the_checkpoint_the_python_path_builds(monkeypatch):
    rows = [
        ("acme:web:1", "", "0001", None, "msgpack", _blob([b"x", b"y"]), '{"step": 2, "note": "é"}'.encode()),
        ("acme:web:1", "", "0002", "0001", "msgpack", _blob([b"x", b"y", b"z"], b"pad"), '{"step": 3}'),  # text metadata
        ("acme:web:1", "", "0003", "0002", "msgpack", ormsgpack.packb({"ts": "u", "channel_values": {}}), b"{}"),
    ]
    fast_table, plain_table = Payloads(), Payloads()
    fast = [_scan.row(r, fast_table, RawCheckpoint, MAX_ELEMENTS) for r in rows]
    monkeypatch.setattr(bundles, "native_scan", None)
    plain = [bundles.fast_checkpoint(r, plain_table) for r in rows]
    assert all(type(cp) is RawCheckpoint for cp in fast + plain)
    as_lists = lambda cps: [(*cp[:5], None if cp.messages is None else cp.messages.tolist(), *cp[6:]) for cp in cps]  # noqa: E731
    assert as_lists(fast) == as_lists(plain)
    assert fast[1].messages.tolist() == [0, 1, 2] and fast[2].messages is None
    assert fast_table.items == plain_table.items == [b"x", b"y", b"z"]


@pytest.mark.parametrize(
    "row",
    [
        ("t", "", "c", None, "json", _blob([b"x"]), b"{}"),  # another serialization type
        ("t", 1, "c", None, "msgpack", _blob([b"x"]), b"{}"),  # a key that is not text
        ("t", "", "c", b"p", "msgpack", _blob([b"x"]), b"{}"),  # a BLOB parent
        ("t", "", "c", None, "msgpack", bytearray(_blob([b"x"])), b"{}"),  # not bytes
        ("t", "", "c", None, "msgpack", _blob([b"x"]), b"[1]"),  # metadata not an object
        ("t", "", "c", None, "msgpack", _blob([b"x"]), b'{"a": NaN}'),  # not strict JSON
        ("t", "", "c", None, "msgpack", _blob([b"x"]), b'{"a": "\xff"}'),  # not UTF-8
        ("t", "", "c", None, "msgpack", _blob([b"x"]), None),  # no metadata
        ("t", "", "c", None, "msgpack", b"\xc1", b"{}"),  # not msgpack
    ],
)
def test_row_declines_what_the_python_path_must_judge_and_leaves_the_numbering_untouched(row):
    table = Payloads()
    table.versions([b"q"])
    before = (table.items[:], table._prev_versions.tolist(), table.blob, table.spans)
    assert _scan.row(row, table, RawCheckpoint, MAX_ELEMENTS) is None
    assert (table.items, table._prev_versions.tolist(), table.blob, table.spans) == before


def test_every_checkpoint_of_a_real_store_is_read_as_ormsgpack_reads_it(sqlite_store):
    import sqlite3

    con = sqlite3.connect(f"file:{sqlite_store.path}?mode=ro&immutable=1", uri=True)
    blobs = [b for (b,) in con.execute("SELECT checkpoint FROM checkpoints WHERE type = 'msgpack'")]
    con.close()
    assert len(blobs) > 100
    for blob in blobs:
        assert scanned(blob) == reference(blob)


def test_the_ormsgpack_fast_path_alone_equals_the_full_path(sqlite_store, tmp_path, monkeypatch):
    """Without the C scanner (a machine with no compiler), the Python fast path carries the load."""
    without, full = tmp_path / "without.duckdb", tmp_path / "full.duckdb"
    monkeypatch.setattr(bundles, "native_scan", None)
    load_db(sqlite_store.path, without, workers=1)
    monkeypatch.setattr(bundles, "fast_checkpoint", lambda row, payloads, limit=None: None)
    load_db(sqlite_store.path, full, workers=1)
    assert_same_tables(without, full, with_errors=True)


# --- checkpoint timestamps: `_scan.ts_list` reads LangGraph's UTC form, the rest goes to `ts_micros`

def _cps(values):
    return [RawCheckpoint("t", "", f"c{i}", None, v, None, False, None) for i, v in enumerate(values)]


def _ts_reference(values):
    from loaders.transform.timestamps import ts_micros

    return [ts_micros(v) for v in values]


def _ts_fast(values):
    from loaders.transform.timestamps import ts_micros

    calls = []

    def fallback(v):
        calls.append(v)
        return ts_micros(v)

    return _scan.ts_list(_cps(values), fallback), calls


@settings(max_examples=400, deadline=None)
@given(st.datetimes(min_value=__import__("datetime").datetime(1, 1, 1), max_value=__import__("datetime").datetime(9999, 12, 31, 23, 59, 59, 999999)))
def test_ts_list_reads_langgraph_timestamps_as_python_does(naive):
    import datetime as dt

    text = naive.replace(tzinfo=dt.timezone.utc).isoformat()  # what LangGraph writes
    got, calls = _ts_fast([text])
    assert got == _ts_reference([text])
    assert calls == []  # read in C, not handed to the fallback


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_ts_list_equals_ts_micros_on_mutated_timestamps(data):
    base = data.draw(st.sampled_from(["2024-02-29T23:59:59.999999+00:00", "1970-01-01T00:00:00+00:00", "2023-12-31T12:00:00.5+00:00"]))
    chars = list(base)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(chars) - 1))
        chars[i] = data.draw(st.sampled_from("0123456789-:T.+Z 5x\u0661"))
    text = "".join(chars)
    got, _ = _ts_fast([text])
    assert got == _ts_reference([text]), text


def test_ts_list_edge_cases():
    values = [
        "2024-07-31T12:34:56.789012+00:00", "2024-07-31T12:34:56+00:00", "0001-01-01T00:00:00+00:00",
        "9999-12-31T23:59:59.999999+00:00", "1969-12-31T23:59:59.999999+00:00", "2000-02-29T00:00:00+00:00",
        "1900-02-29T00:00:00+00:00", "2023-02-29T00:00:00+00:00", "2024-04-31T00:00:00+00:00",
        "2024-07-31T24:00:00+00:00", "2024-07-31T23:60:00+00:00", "2024-07-31T23:59:60+00:00", "0000-01-01T00:00:00+00:00",
        "2024-07-31T12:34:56.789012+02:00", "2024-07-31T12:34:56.789012", "2024-07-31 12:34:56+00:00",
        "2024-07-31T12:34:56Z", "not a time", "", None, 17, b"2024-07-31T12:34:56+00:00",
    ]
    got, calls = _ts_fast(values)
    assert got == _ts_reference(values)
    assert got[:6] == [1722429296789012, 1722429296000000, -62135596800000000, 253402300799999999, -1, 951782400000000]
    assert got[6:13] == [None] * 7
    # Only valid dates and times in LangGraph's own shape are read in C; the fallback decides the rest.
    assert calls == values[6:]


def test_ts_list_needs_checkpoint_tuples():
    with pytest.raises(TypeError):
        _scan.ts_list([object()], lambda v: None)
    assert _scan.ts_list((), lambda v: None) == []


# --- regressions found by the differential fuzzer (fuzz/, `make fuzz`) -------------------------------

def test_stage_declines_a_strided_int32_view_with_a_type_error_and_pyarrow_stages_it(tmp_path):
    """fuzz `stage` target: a non-contiguous int32 buffer in a list column raised BufferError, which
    `PartWriter` does not catch (a traceback instead of the pyarrow path); it must be declined as any
    other value of another type is."""
    import pyarrow as pa
    import pyarrow.ipc as ipc
    from array import array

    from loaders.parts import PartWriter

    strided = memoryview(array("i", [1, 2, 3, 4]))[::2]
    with pytest.raises(TypeError):
        _scan.stage([(strided,)], "L")
    schema = pa.schema([("v", pa.list_(pa.int32()))])
    writer = PartWriter(tmp_path, {"t": schema}, "p0")
    writer.append("t", [(strided,), (array("i", [5]),)])
    with ipc.open_file(writer.close()["t"]) as fh:
        assert fh.read_all().to_pylist() == [{"v": [1, 3]}, {"v": [5]}]
