"""Seed corpora from real stores: `python -m fuzz.seeds FUZZ_DIR/seeds` (make fuzz runs it).

The project's real graphs (storegen: every scenario, and a small benchmark store
with long threads) are run into SqliteSaver files in a temporary folder; their
rows become one seed folder per target:

- row, thread: runs of 1-3 consecutive checkpoints of a thread, with their real metadata;
- ts_list: the checkpoints' real `ts` values, with LangGraph's shapes around them;
- stage: the staged rows of real threads (`transform_thread`), table by table;
- readahead: the stores themselves (in `bases/`, with copies at other page sizes),
  and inputs that patch a header, a page or the end of one.

Nothing is committed: the seeds are rebuilt when missing (a few seconds).
"""

from __future__ import annotations

import shutil
import sqlite3
import struct
import sys
import tempfile
from hashlib import sha1
from pathlib import Path

from fuzz.common import encode_records, write_value

CHECKPOINTS = ("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
               "FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")


def _write(folder: Path, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / sha1(data).hexdigest()).write_bytes(data)


def _threads(path: Path) -> dict[str, list[tuple]]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        threads: dict[str, list[tuple]] = {}
        for row in con.execute(CHECKPOINTS):
            threads.setdefault(row[0], []).append(row)
        return threads
    finally:
        con.close()


def row_seeds(threads: dict[str, list[tuple]], out: Path, per_thread: int = 12) -> int:
    """Runs of consecutive checkpoints: the scanner's common-prefix path needs a previous list."""
    n = 0
    for rows in threads.values():
        starts = range(len(rows))
        step = max(1, len(rows) // per_thread)
        for i in starts[::step]:
            run = rows[i:i + 1 + (i % 3)]
            md = run[0][6]
            flags = 7 | (8 if isinstance(md, bytes) else 0) | 0x10 | (0x20 if run[0][1] else 0)
            md_bytes = md if isinstance(md, bytes) else (md or "").encode()
            _write(out, encode_records(flags, [md_bytes, *[r[5] for r in run]]))
            n += 1
    return n


def ts_seeds(threads: dict[str, list[tuple]], out: Path) -> int:
    import ormsgpack

    values = []
    for rows in threads.values():
        for r in rows:
            try:
                values.append(ormsgpack.unpackb(r[5], ext_hook=lambda c, d: None, option=ormsgpack.OPT_NON_STR_KEYS)["ts"])
            except Exception:  # noqa: BLE001 - a seed less
                pass
    values += ["2024-07-31T12:34:56+00:00", "2024-02-29T23:59:59.999999+00:00", "0001-01-01T00:00:00+00:00",
               "9999-12-31T23:59:59.999999+00:00", "2024-07-31T12:34:56.789012+02:00", "2024-07-31T12:34:56Z",
               "2023-02-29T00:00:00+00:00", "", None]
    n = 0
    for i in range(0, len(values), 8):
        _write(out, b"\x00" + b"".join(write_value(v) for v in values[i:i + 8]))
        n += 1
    return n


def stage_seeds(threads: dict[str, list[tuple]], out: Path, rows_per_seed: int = 12) -> int:
    """A real thread's staged rows per table (every staging schema, in `staging_schemas()` order)."""
    from loaders.catalog import staging_schemas
    from loaders.bundles import bundle_thread
    from loaders.thread_keys import compile_thread_key
    from loaders.transform.thread import transform_thread

    names = list(staging_schemas())
    regex = compile_thread_key(None)
    n = 0
    for tid, rows in list(threads.items())[:12]:
        trows = transform_thread(bundle_thread(tid, rows, []), regex)
        tables = {name: getattr(trows, name, None) for name in names}
        tables["load_errors"] = [(e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.stage, e.reason) for e in trows.errors]
        for i, name in enumerate(names):
            staged = tables.get(name) or []
            for start in range(0, min(len(staged), 3 * rows_per_seed), rows_per_seed):
                body = b"".join(b"\x00" + b"".join(write_value(v) for v in row) for row in staged[start:start + rows_per_seed])
                _write(out, bytes([i]) + body)
                n += 1
    return n


def bases(stores: list[Path], out: Path) -> list[Path]:
    """The stores as read-ahead bases, plus copies of the first at 1 kB and 64 kB pages."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for i, store in enumerate(stores):
        dst = out / f"{i}-{store.stem}.sqlite"
        shutil.copyfile(store, dst)
        made.append(dst)
    for size in (1024, 65536):
        dst = out / f"{len(made)}-page{size}.sqlite"
        shutil.copyfile(stores[0], dst)
        con = sqlite3.connect(dst)
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute(f"PRAGMA page_size={size}")
        con.execute("VACUUM")
        con.close()
        made.append(dst)
    return made


def readahead_seeds(images: list[Path], out: Path) -> int:
    n = 0
    for i, img in enumerate(images):
        size = img.stat().st_size
        page = struct.unpack(">H", img.read_bytes()[16:18])[0] or 65536
        _write(out, bytes([i, 0]))  # the store as it is
        _write(out, bytes([i, 1]) + struct.pack("<I", size - page - 1000))  # cut mid-page
        _write(out, bytes([i, 1]) + struct.pack("<I", size // 2))
        _write(out, bytes([i, 0, 0, 0, 0, 0]) + struct.pack("<IB", size // 3, 255) + b"\0" * 255)  # zeroed bytes
        _write(out, bytes([i, 0, 0, 0, 0, 0]) + struct.pack("<IB", 28, 4) + b"\xff\xff\xff\xff")  # page count
        n += 5
    return n


def build(seeds: Path) -> dict[str, int]:
    """Write every target's seeds under `seeds/` (replacing what was there); returns counts."""
    from storegen.bench import build_bench_store
    from storegen.build import build_sqlite_store

    if seeds.exists():
        shutil.rmtree(seeds)
    tmp = Path(tempfile.mkdtemp(prefix="tl-fuzz-stores-"))
    try:
        scenarios, bench = tmp / "scenarios.sqlite", tmp / "bench.sqlite"
        build_sqlite_store(scenarios)
        build_bench_store(bench, threads=2, turns=14, progress=False)
        threads = {**_threads(scenarios), **{f"bench:{k}": v for k, v in _threads(bench).items()}}
        counts = {
            "row": row_seeds(threads, seeds / "row"),
            "ts_list": ts_seeds(threads, seeds / "ts_list"),
            "stage": stage_seeds(threads, seeds / "stage"),
        }
        shutil.copytree(seeds / "row", seeds / "thread")
        counts["thread"] = counts["row"]
        images = bases([scenarios, bench], seeds / "bases")
        counts["readahead"] = readahead_seeds(images, seeds / "readahead")
        shutil.copytree(seeds / "readahead", seeds / "rows")  # (the same damaged images, read whole)
        counts["rows"] = counts["readahead"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return counts


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz/seeds")
    counts = build(target)
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    print(f"fuzz seeds in {target}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f" ({size // 1024} kB)")
