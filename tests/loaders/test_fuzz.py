"""Fuzzing the decoder with mutated REAL checkpoint blobs (hypothesis, bounded, deterministic).

Every example runs the per-row path of a load — `bundle_thread` (fast path and full path) →
`transform_thread` → the Arrow conversion of the staged parts — on a
real thread of the session store in which one blob was mutated (bit flips,
truncation, splices, inserted bytes, hostile length headers, random msgpack
with extension values, random values in every message field). Properties: it
never raises (damage becomes `LoadError`s), never hangs (an alarm per example),
and what it produces can be staged. Pathological inputs ormsgpack could choke
on run in a subprocess, so a crash (the ext-nesting segfault fixed in
`loaders.decode.unpack`) fails the test instead of the session.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loaders.decode import DecodeError, decode_typed, plain
from loaders.records import RawWrite
from loaders.parts import _column
from loaders.bundles import bundle_thread
from loaders.thread_keys import compile_thread_key
from loaders.transform.thread import transform_thread
from loaders.catalog import staging_schemas
from tests import oracle
from loaders.catalog import DATA_TABLES
from tests.loaders.hostile_util import RawExt, StoreEditor, pack, unpack
from tests.loaders.util import load_db, rows

ROOT = Path(__file__).resolve().parents[2]
REGEX = compile_thread_key(None)
SCHEMAS = staging_schemas()
TABLES = DATA_TABLES
# Deterministic and bounded in the suite; a longer random campaign: TL_FUZZ_EXAMPLES=5000 pytest tests/loaders/test_fuzz.py
_CAMPAIGN = int(os.environ.get("TL_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=_CAMPAIGN or 200, deadline=None, derandomize=not _CAMPAIGN, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Length headers that declare far more than follows (array32, map32, str32, bin32, ext32, ext8).
HUGE_HEADERS = [b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff", b"\xc6\xff\xff\xff\xff",
                b"\xc9\xff\xff\xff\xff\x05", b"\xc7\xff\x05", b"\x91" * 5000]
FIELDS = ("content", "type", "id", "name", "tool_calls", "tool_call_id", "status", "usage_metadata",
          "response_metadata", "additional_kwargs", "role", "invalid_tool_calls")


@contextmanager
def time_limit(seconds: int):
    """Fail an example that runs longer than `seconds` (a hang would otherwise stall the suite)."""

    def fire(signum, frame):
        raise TimeoutError(f"decoding took more than {seconds}s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Corpus:
    threads: dict[str, list[tuple]]  # thread → its checkpoint rows, ordered
    blobs: list[bytes]  # every checkpoint blob
    payloads: list[bytes]  # distinct message payloads (ext 5 data)
    writes: list[bytes]  # values of special-channel writes


@pytest.fixture(scope="module")
def corpus(sqlite_store) -> Corpus:
    con = sqlite3.connect(f"file:{sqlite_store.path}?immutable=1", uri=True)
    try:
        threads: dict[str, list[tuple]] = {}
        for row in con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                               "FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id"):
            threads.setdefault(row[0], []).append(row)
        writes = [r[0] for r in con.execute("SELECT value FROM writes WHERE channel LIKE '\\_\\_%' ESCAPE '\\' AND type = 'msgpack'")]
    finally:
        con.close()
    blobs = [r[5] for rs in threads.values() for r in rs]
    payloads = sorted({m.data for b in blobs for m in unpack(b).get("channel_values", {}).get("messages", [])
                       if isinstance(m, RawExt) and m.code == 5})
    return Corpus(threads, blobs, payloads, writes)


def stage(out) -> None:
    """What `PartWriter` does with the rows: Arrow arrays of the staging schemas."""
    for table in TABLES:
        rows_ = getattr(out, table)
        if rows_:
            schema = SCHEMAS[table]
            pa.Table.from_arrays([_column(c, f.type) for c, f in zip(zip(*rows_), schema)], schema=schema)
    errors = [(e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.stage, e.reason) for e in out.errors]
    if errors:
        schema = SCHEMAS["load_errors"]
        pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(zip(*errors), schema)], schema=schema)


def run_thread(rows_: list[tuple], writes: list[RawWrite] = ()) -> object:
    """The per-thread path of a load; must never raise."""
    with time_limit(20):
        bundle = bundle_thread(rows_[0][0], rows_, [])
        out = transform_thread(replace(bundle, writes=list(writes)), REGEX)
        stage(out)
    return out


# --- mutations ----------------------------------------------------------------------


def mutate(data: st.DataObject, blob: bytes, others: list[bytes]) -> bytes:
    kind = data.draw(st.sampled_from(["flip", "truncate", "splice", "insert", "header", "overwrite"]), label="kind")
    n = len(blob)
    if kind == "flip":
        out = bytearray(blob)
        for _ in range(data.draw(st.integers(1, 8), label="flips")):
            i = data.draw(st.integers(0, n - 1))
            out[i] ^= 1 << data.draw(st.integers(0, 7))
        return bytes(out)
    if kind == "truncate":
        return blob[: data.draw(st.integers(0, n - 1), label="cut")]
    if kind == "splice":
        other = data.draw(st.sampled_from(others), label="other")
        return blob[: data.draw(st.integers(0, n))] + other[data.draw(st.integers(0, len(other))):]
    if kind == "insert":
        i = data.draw(st.integers(0, n))
        return blob[:i] + data.draw(st.binary(min_size=1, max_size=16), label="inserted") + blob[i:]
    if kind == "header":
        i = data.draw(st.integers(0, n))
        return blob[:i] + data.draw(st.sampled_from(HUGE_HEADERS), label="header") + blob[i:]
    i = data.draw(st.integers(0, n - 1))
    patch = data.draw(st.binary(min_size=1, max_size=8), label="patch")
    return blob[:i] + patch + blob[i + len(patch):]


_leaves = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.binary(max_size=12))


def _extend(children):
    return (st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=6) | st.integers(-3, 3), children, max_size=4)
            | st.builds(lambda code, v: RawExt(code, pack(v)), st.integers(0, 12), children)
            | st.builds(lambda code, b: RawExt(code, b), st.integers(0, 12), st.binary(max_size=12)))


VALUES = st.recursive(_leaves, _extend, max_leaves=24)


def _pick(data, corpus: Corpus) -> tuple[str, list[tuple], int]:
    thread = data.draw(st.sampled_from(sorted(corpus.threads)), label="thread")
    rows_ = corpus.threads[thread]
    return thread, rows_, data.draw(st.integers(0, len(rows_) - 1), label="row")


def _with(rows_: list[tuple], i: int, **cols) -> list[tuple]:
    names = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata")
    row = dict(zip(names, rows_[i]))
    row.update(cols)
    return [*rows_[:i], tuple(row[n] for n in names), *rows_[i + 1:]]


@FUZZ
@given(data=st.data())
def test_mutated_checkpoint_blobs_never_break_a_load(corpus, data):
    _, rows_, i = _pick(data, corpus)
    blob = mutate(data, rows_[i][5], corpus.blobs)
    run_thread(_with(rows_, i, checkpoint=blob))


@FUZZ
@given(data=st.data())
def test_mutated_message_payloads_never_break_a_load(corpus, data):
    _, rows_, i = _pick(data, corpus)
    cp = unpack(rows_[i][5])
    msgs = cp.get("channel_values", {}).get("messages")
    if not msgs:
        msgs = cp.setdefault("channel_values", {})["messages"] = []
    j = data.draw(st.integers(0, len(msgs)), label="position")
    payload = mutate(data, data.draw(st.sampled_from(corpus.payloads), label="payload"), corpus.payloads)
    msgs.insert(j, RawExt(data.draw(st.sampled_from([5, 5, 5, 2, 4, 0, 7]), label="code"), payload))
    run_thread(_with(rows_, i, checkpoint=pack(cp)))


@FUZZ
@given(data=st.data(), values=st.lists(VALUES, min_size=1, max_size=3))
def test_random_values_in_every_message_field_never_break_a_load(corpus, data, values):
    _, rows_, i = _pick(data, corpus)
    cp = unpack(rows_[i][5])
    msgs = cp.get("channel_values", {}).get("messages")
    if not msgs:
        return
    j = data.draw(st.integers(0, len(msgs) - 1), label="message")
    if not (isinstance(msgs[j], RawExt) and msgs[j].code == 5):
        return
    payload = msgs[j].fields()
    for v in values:
        payload[2][data.draw(st.sampled_from(FIELDS), label="field")] = v
    msgs[j] = RawExt(5, pack(payload))
    if data.draw(st.booleans(), label="also as a list element"):
        msgs.append(values[0])
    run_thread(_with(rows_, i, checkpoint=pack(cp)))


@FUZZ
@given(data=st.data(), value=VALUES)
def test_random_msgpack_anywhere_never_breaks_a_load(corpus, data, value):
    _, rows_, i = _pick(data, corpus)
    where = data.draw(st.sampled_from(["checkpoint", "channel_values", "messages", "ts", "write", "metadata"]), label="where")
    if where == "checkpoint":
        run_thread(_with(rows_, i, checkpoint=pack(value)))
        return
    if where == "metadata":
        text = data.draw(st.one_of(st.text(max_size=40), st.just('{"step": NaN}'), st.just("[]"), st.binary(max_size=20)))
        run_thread(_with(rows_, i, metadata=text))
        return
    cp = unpack(rows_[i][5])
    if where == "write":
        try:
            decoded = plain(decode_typed("msgpack", pack([value])))
        except DecodeError:
            return
        w = RawWrite(rows_[i][0], rows_[i][1], rows_[i][2], "t", 0, "__interrupt__", decoded)
        run_thread(rows_, [w])
        return
    if where == "channel_values":
        cp["channel_values"] = value
    elif where == "messages":
        cp.setdefault("channel_values", {})["messages"] = value
    else:
        cp["ts"] = value
    run_thread(_with(rows_, i, checkpoint=pack(cp)))


@FUZZ
@given(data=st.data())
def test_mutated_write_values_never_break_a_load(corpus, data):
    _, rows_, i = _pick(data, corpus)
    value = mutate(data, data.draw(st.sampled_from(corpus.writes), label="write"), corpus.writes)
    try:
        decoded = plain(decode_typed("msgpack", value))
    except DecodeError:
        return
    run_thread(rows_, [RawWrite(rows_[i][0], rows_[i][1], rows_[i][2], "t", 0, "__interrupt__", decoded)])


_PATHOLOGICAL = r"""
import resource, sys, time
import ormsgpack
from loaders.decode import DecodeError, decode_typed, plain
from loaders.messages import decode_message
from tests.loaders.hostile_util import deep_array_message, deep_ext_payload, pack
HUGE = [b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff", b"\xc6\xff\xff\xff\xff",
        b"\xc9\xff\xff\xff\xff\x05", b"\xc7\xff\x05"]
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.monotonic()
outcomes = []
def attempt(fn, *args):
    try:
        fn(*args)
        outcomes.append("ok")
    except DecodeError:
        outcomes.append("refused")
deep = deep_ext_payload()
attempt(decode_message, deep)                                           # the message that segfaulted
attempt(lambda: plain(decode_typed("msgpack", pack([ormsgpack.Ext(2, deep)]))))   # the same inside a write
attempt(lambda: plain(decode_typed("msgpack", ormsgpack.packb(ormsgpack.Ext(5, deep)))))
attempt(decode_message, deep_array_message())
attempt(decode_typed, "msgpack", b"\x91" * 100_000 + b"\xc0")
inner = None
for _ in range(5000):                                                   # ext in ext in ext ..., 5000 deep
    inner = ormsgpack.Ext(2, ormsgpack.packb(["m", "C", inner]))
attempt(lambda: plain(decode_typed("msgpack", ormsgpack.packb(inner))))
attempt(lambda: plain(decode_typed("msgpack", ormsgpack.packb([ormsgpack.Ext(5, ormsgpack.packb(["m", "C", inner]))]))))
for h in HUGE:
    attempt(decode_typed, "msgpack", h + b"\xc0")
    attempt(decode_message, h + b"\xc0")
    attempt(decode_message, pack(["m", "C", {"type": "human", "content": "x"}])[:-2] + h)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start
print(",".join(outcomes), grown // 1024, round(time.monotonic() - t0, 2))
"""


def test_pathological_payloads_are_refused_without_crash_memory_or_time(tmp_path):
    """Ext nesting (the segfault), 100k nested arrays, 5000 nested exts, length headers declaring 4 GB."""
    proc = subprocess.run([sys.executable, "-c", _PATHOLOGICAL], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    outcomes, grown_mb, _seconds = proc.stdout.split()  # (the time is bounded by the run's timeout)
    assert set(outcomes.split(",")) == {"refused"}, outcomes
    assert int(grown_mb) < 200


def test_a_store_full_of_fuzzed_rows_loads_and_the_rest_equals_the_oracle(sqlite_store, copy_store, tmp_path, oracle_rows, corpus):
    """End to end: 40 clones of real threads, each with one mutated blob, in one load."""
    rng = random.Random(9)
    src = copy_store(sqlite_store.path, tmp_path / "fuzz")
    ed = StoreEditor(src)
    fuzzed = []
    try:
        for k in range(40):
            thread = rng.choice(sorted(sqlite_store.manifest))
            tid = f"fuzz:{k:02d}"
            ed.clone_thread(thread, tid)
            cid = rng.choice(ed.root_ids(tid))
            blob = bytearray(ed.row(tid, cid)[1])
            how = k % 4
            if how == 0:
                for _ in range(rng.randint(1, 6)):
                    blob[rng.randrange(len(blob))] ^= 1 << rng.randrange(8)
            elif how == 1:
                blob = blob[: rng.randrange(len(blob))]
            elif how == 2:
                i = rng.randrange(len(blob))
                blob[i:i] = rng.choice(HUGE_HEADERS[:6])
            else:
                other = rng.choice(corpus.blobs)
                blob = blob[: rng.randrange(len(blob))] + other[rng.randrange(len(other)):]
            ed.set(tid, cid, checkpoint=bytes(blob))
            fuzzed.append(tid)
    finally:
        ed.close()
    db = tmp_path / "fuzz.duckdb"
    load_db(src, db, workers=1)
    got = rows(db, f"SELECT {', '.join(oracle.MESSAGE_KEYS)} FROM messages WHERE thread_id NOT LIKE 'fuzz:%' ORDER BY thread_id, ordinal")
    assert got == oracle_rows
    loaded = {r["thread_id"] for r in rows(db, "SELECT thread_id FROM threads")}
    assert set(fuzzed) <= loaded  # damage costs rows, never whole threads
    errors = rows(db, "SELECT thread_id, checkpoint_id, reason FROM load_errors")
    assert {e["thread_id"] for e in errors} <= set(fuzzed)
    assert all(e["checkpoint_id"] and e["reason"] for e in errors)
