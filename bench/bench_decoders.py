"""Decoder micro-benchmark: the per-checkpoint scan and the per-message decode, in one process.

Not a test. Reads a fixed sample of `checkpoints` rows from a SqliteSaver store
into memory once (whole threads, in the loader's order: thread id, namespace,
checkpoint id; the first threads until --rows rows), then times each way of
decoding them over --rounds interleaved rounds (the order of the ways rotates
from round to round), with the cyclic collector off as in a load worker.
Each way is shown by its median CPU time (this process, user + system) per
item, with every round's figure, and by its ratio to the first row of its
table (medians of the same run).

By default each thread's blobs (or payloads) are read once just before that
thread is timed, so the decoders find them in the CPU's caches as they do in a
load (SQLite has just copied the blob out of its pages). `--cold` times the
whole sample at once instead: most blobs then come from memory, which favours
a decoder that streams through the blob over one that jumps from header to header.

    .venv/bin/python bench/bench_decoders.py                 # bench/out/bench-300x40.sqlite (bench_load.py builds it)
    .venv/bin/python bench/bench_decoders.py --store path/to/checkpoints.sqlite --rows 20000 --rounds 7 [--cold]

Per checkpoint (every sampled row):

- ormsgpack floor: `ormsgpack.unpackb(blob, ext_hook=lambda c, d: d, option=OPT_NON_STR_KEYS)`,
  the decode floor of bench_load.py (payloads as bytes, nothing numbered);
- msgspec: `msgspec.msgpack.Decoder(ext_hook=...)`, payloads kept as memoryviews
  into the blob or copied to bytes (msgspec is not a requirement: `pip install msgspec`;
  its rows are skipped without it);
- `bundles.fast_checkpoint(row, payloads, limit)`, a fresh `records.Payloads()` per
  thread: with `loaders._scan` (the C scan: checks, walk in place, numbering),
  with `native_scan = None` (ormsgpack and `Payloads.versions`, its pure-Python
  twin), and with its ormsgpack call replaced by msgspec (bytes payloads; one
  Python frame more per call).

Per distinct message payload of the sample (`Payloads.items` of every thread):

- `ormsgpack.unpackb(payload)` alone (the unpacking a decode needs, no fields read);
- `messages.decode_message` (the one decoder, in Python, as a load calls it: the transcript
  rules live in one place, so there is no C decoder of messages).

Before timing, each alternative's results are compared with the reference's
(the `_scan` numbering) and the counts printed.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ormsgpack  # noqa: E402

from loaders import bundles, decode, messages  # noqa: E402
from loaders.sqlite import keys  # noqa: E402
from loaders.records import Payloads  # noqa: E402
from loaders.elements import max_elements  # noqa: E402

try:
    import msgspec
except ImportError:  # optional: its rows are skipped
    msgspec = None

DEFAULT_STORE = ROOT / "bench" / "out" / "bench-300x40.sqlite"


def read_sample(store: Path, rows: int) -> list[list[tuple]]:
    """The first whole threads (loader order) holding at least `rows` checkpoint rows."""
    con = sqlite3.connect(f"file:{store.resolve()}?mode=ro&immutable=1", uri=True)
    try:
        cur = con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
                          f"metadata FROM checkpoints ORDER BY {keys.KEY_ORDER}")  # the reader's rows
        threads: list[list[tuple]] = []
        total = 0
        for _, group in itertools.groupby(cur, key=lambda r: r[0]):
            threads.append(list(group))
            total += len(threads[-1])
            if total >= rows:
                break
    finally:
        con.close()
    return threads


# --- the ways, each a function of a list of threads (or of their payload lists) ----------------

def floor_way(threads: list[list[tuple]]) -> None:
    unpackb, opt, hook = ormsgpack.unpackb, ormsgpack.OPT_NON_STR_KEYS, _keep
    for rows in threads:
        for row in rows:
            unpackb(row[5], ext_hook=hook, option=opt)


def _keep(code: int, data):
    return data


def decoder_way(decode_one: Callable[[bytes], object]) -> Callable[[list[list[tuple]]], None]:
    def run(threads: list[list[tuple]]) -> None:
        for rows in threads:
            for row in rows:
                decode_one(row[5])
    return run


def fast_checkpoint_way(scan, unpackb) -> Callable[[list[list[tuple]]], list]:
    """`fast_checkpoint` over every thread with `_scan` and `_unpackb` set as given."""
    def run(threads: list[list[tuple]], keep: bool = False) -> list:
        saved = bundles.native_scan, bundles._unpackb
        bundles.native_scan, bundles._unpackb = scan, unpackb
        fast = bundles.fast_checkpoint
        out = []
        try:
            for rows in threads:
                payloads, limit = Payloads(), max_elements()  # (read once a thread, as `bundle_thread` does)
                cps = [fast(row, payloads, limit) for row in rows]
                if keep:
                    out.append((cps, payloads.items))
        finally:
            bundles.native_scan, bundles._unpackb = saved
        return out
    return run


def msgspec_unpackb() -> Callable:
    """`ormsgpack.unpackb(blob, ext_hook=decode._outer_hook, option=...)` done by msgspec."""
    ext = decode.Ext

    def hook(code: int, data: memoryview):
        return bytes(data) if code == decode.EXT_PYDANTIC_V2 else ext(code, bytes(data))

    dec = msgspec.msgpack.Decoder(ext_hook=hook).decode
    return lambda blob, ext_hook=None, option=None: dec(blob)


def unpack_messages(groups: list[list]) -> None:
    unpackb, opt = ormsgpack.unpackb, ormsgpack.OPT_NON_STR_KEYS
    for payloads in groups:
        for p in payloads:
            unpackb(p, option=opt)


def loader_messages(groups: list[list]) -> None:
    decode_one = messages.decode_message
    for payloads in groups:
        limit = max_elements()  # (read once a thread, as `transform.versions.decode_versions` does)
        for p in payloads:
            decode_one(p, limit)


# --- timing ---------------------------------------------------------------------------------------

def time_rounds(
    ways: dict[str, Callable], groups: list[list], rounds: int, cold: bool,
) -> dict[str, list[tuple[float, float]]]:
    """(CPU s, wall s) of each way over every group (a thread's rows or payloads), `rounds`
    times, interleaved in rotating order. Warm (the default): each group's bytes are read
    just before its own timing, as a load finds a blob SQLite has just copied out; cold:
    the whole sample at once, most of it from memory rather than from the CPU's caches."""
    names = list(ways)
    runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    clock = time.process_time
    for i in range(rounds):
        for name in names[i % len(names):] + names[:i % len(names)]:
            way = ways[name]
            gc.collect()
            gc.disable()
            if cold:
                c0, w0 = clock(), time.perf_counter()
                way(groups)
                cpu, wall = clock() - c0, time.perf_counter() - w0
            else:
                cpu = wall = 0.0
                for group in groups:
                    warm(group)
                    c0, w0 = clock(), time.perf_counter()
                    way([group])
                    cpu, wall = cpu + clock() - c0, wall + time.perf_counter() - w0
            gc.enable()
            runs[name].append((cpu, wall))
    return runs


def warm(group: list) -> None:
    """Read every byte of a group's blobs (or payloads) into the CPU's caches."""
    for item in group:
        (item[5] if type(item) is tuple else item).count(0xFF)


def table(title: str, unit: str, count: int, runs: dict[str, list[tuple[float, float]]]) -> None:
    base = None
    print(f"\n{title} ({count:,} items; µs per {unit})\n")
    print(f"| way | CPU µs/{unit} (median) | rounds, CPU µs | wall µs/{unit} (median) | CPU vs first row |")
    print("|---|---:|---|---:|---:|")
    for name, r in runs.items():
        cpu = statistics.median(c for c, _ in r) / count * 1e6
        wall = statistics.median(w for _, w in r) / count * 1e6
        base = base or cpu
        each = " / ".join(f"{c / count * 1e6:.2f}" for c, _ in r)
        print(f"| {name} | {cpu:.2f} | {each} | {wall:.2f} | {cpu / base:.2f}x |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=DEFAULT_STORE,
                    help=f"a SqliteSaver file (default {DEFAULT_STORE.relative_to(ROOT)})")
    ap.add_argument("--rows", type=int, default=20000,
                    help="checkpoint rows to sample, rounded up to whole threads (default 20000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of every way (default 5)")
    ap.add_argument("--cold", action="store_true",
                    help="time the whole sample at once, most of it read from memory "
                         "(default: each thread's bytes read just before it is timed)")
    args = ap.parse_args()
    if not args.store.is_file():
        raise SystemExit(f"{args.store}: no such store (bench/bench_load.py builds bench/out/bench-300x40.sqlite)")
    if bundles.native_scan is None:
        raise SystemExit("loaders._scan is not built: python setup.py build_ext --inplace")

    t0 = time.perf_counter()
    threads = read_sample(args.store, args.rows)
    n_rows = sum(map(len, threads))
    if not n_rows:
        raise SystemExit(f"{args.store}: no checkpoints")
    blob_mb = sum(len(r[5]) for rows in threads for r in rows) / 1e6
    print(f"store: {args.store}; sample: {len(threads)} threads, {n_rows:,} checkpoints, "
          f"{blob_mb:,.0f} MB of blobs (read in {time.perf_counter() - t0:.1f} s)")
    print(f"python {sys.version.split()[0]}, ormsgpack {ormsgpack.__version__}, "
          f"msgspec {msgspec.__version__ if msgspec else 'not installed'}; {args.rounds} rounds, "
          f"{'cold (whole sample at once)' if args.cold else 'warm (each thread read just before its timing)'}")

    # Checks, untimed: every way numbers the payloads as `_scan` does.
    scan_way = fast_checkpoint_way(bundles.native_scan, ormsgpack.unpackb)
    ref = scan_way(threads, keep=True)
    thread_payloads = [items for _, items in ref]
    payloads = [p for items in thread_payloads for p in items]
    checks = {"fast_checkpoint, _scan = None": fast_checkpoint_way(None, ormsgpack.unpackb)}
    if msgspec is not None:
        checks["fast_checkpoint, msgspec"] = fast_checkpoint_way(None, msgspec_unpackb())
    scanned = sum(cp is not None for cps, _ in ref for cp in cps)
    print(f"_scan.row accepted {scanned:,} of {n_rows:,} rows; {len(payloads):,} distinct message payloads")
    for name, way in checks.items():
        same = way(threads, keep=True) == ref
        print(f"{name}: same checkpoints and payloads as _scan: {'yes' if same else 'NO'}")

    per_cp: dict[str, Callable] = {"ormsgpack floor (payloads as bytes)": floor_way}
    if msgspec is not None:
        per_cp["msgspec (payloads as memoryview)"] = decoder_way(msgspec.msgpack.Decoder(ext_hook=_keep).decode)
        per_cp["msgspec (payloads as bytes)"] = decoder_way(
            msgspec.msgpack.Decoder(ext_hook=lambda code, data: bytes(data)).decode)
    per_cp["fast_checkpoint, _scan (C)"] = scan_way
    per_cp.update(checks)
    runs = time_rounds(per_cp, threads, args.rounds, args.cold)
    table("Per checkpoint: decode only (floor, msgspec) and checks + decode + numbering (fast_checkpoint)",
          "checkpoint", n_rows, runs)
    cp_cpu = {n: statistics.median(c for c, _ in r) for n, r in runs.items()}

    # Messages: the one decoder against the bare unpacking it needs.
    per_msg = {
        "ormsgpack.unpackb(payload) only": unpack_messages,
        "decode_message (as a load calls it)": loader_messages,
    }
    runs_msg = time_rounds(per_msg, thread_payloads, args.rounds, args.cold)
    table("Per distinct message payload", "message", len(payloads), runs_msg)
    msg_cpu = {n: statistics.median(c for c, _ in r) for n, r in runs_msg.items()}

    print("\nRatios (median CPU, this run):")
    scan = cp_cpu["fast_checkpoint, _scan (C)"]
    for name, cpu in cp_cpu.items():
        if name != "fast_checkpoint, _scan (C)":
            print(f"  {name} / fast_checkpoint with _scan = {cpu / scan:.2f}x")
    unpack, decoded = msg_cpu["ormsgpack.unpackb(payload) only"], msg_cpu["decode_message (as a load calls it)"]
    print(f"  decode_message / the bare unpacking = {decoded / unpack:.2f}x")

if __name__ == "__main__":
    main()
