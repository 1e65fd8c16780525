"""Load many damaged copies of a real store end to end: every row loads or is reported (contract §10).

For each copy (page bytes overwritten, pages zeroed, swapped or duplicated, the file
cut short, the header or a b-tree page header broken), `transcript-lens load` runs in
a fresh process and the sweep checks that it

- exits 0 (loaded) or 2 with one `error: …` line (refused), never a traceback;
- peaks under `--max-rss-mb` (the whole process tree, `ru_maxrss` of its children);
- accounts for every checkpoint of the undamaged store: loaded, or its thread (or the
  file) named in `load_errors`.

    .venv/bin/python bench/damage_sweep.py                     # the demo store, 60 copies
    .venv/bin/python bench/damage_sweep.py --store s.sqlite --copies 200 --seed 7

Prints one line per damage kind (copies, loaded, refused, violations) and every
violation; exits 1 when there is one. A measurement, not a test: the copies differ
with `--seed`, and the tests build their own damaged stores (tests/loaders/).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
# Runs the load in a child and prints the tree's peak RSS (KiB) on its last stderr line.
_RUN = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:])\n"
    "print('maxrss', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(r.returncode)\n"
)


def page_size(path: Path) -> int:
    head = path.read_bytes()[:100]
    size = int.from_bytes(head[16:18], "big")
    return 65536 if size == 1 else size


def table_pages(path: Path) -> dict[str, list[int]]:
    """Page numbers of each b-tree (from `dbstat` when SQLite has it; else all pages but the first)."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        rows = con.execute("SELECT name, pageno FROM dbstat").fetchall()
    except sqlite3.Error:
        n = path.stat().st_size // page_size(path)
        return {"any": list(range(2, n + 1))}
    finally:
        con.close()
    out: dict[str, list[int]] = defaultdict(list)
    for name, pageno in rows:
        out[name].append(pageno)
    return out


def damage(src: Path, dst: Path, kind: str, rng: random.Random) -> str:
    """Write a damaged copy of `src` to `dst`; returns what was done."""
    shutil.copyfile(src, dst)
    data = bytearray(dst.read_bytes())
    ps = page_size(src)
    pages = table_pages(src)
    everything = sorted({p for ps_ in pages.values() for p in ps_ if p > 1})
    ours = [p for name, ps_ in pages.items() if name.startswith(("checkpoints", "writes", "sqlite_autoindex")) for p in ps_ if p > 1]
    pick = lambda: rng.choice(ours or everything)  # noqa: E731
    off = lambda p: (p - 1) * ps  # noqa: E731
    if kind == "flip":
        p = pick()
        for _ in range(rng.randint(1, 16)):
            data[off(p) + rng.randrange(ps)] ^= 1 << rng.randrange(8)
        what = f"bit flips in page {p}"
    elif kind == "zero":
        p = pick()
        data[off(p):off(p) + ps] = bytes(ps)
        what = f"page {p} zeroed"
    elif kind == "btree_header":
        p = pick()
        data[off(p) + rng.randrange(12)] = rng.randrange(256)
        what = f"b-tree header byte of page {p}"
    elif kind == "swap":
        a, b = pick(), pick()
        pa_, pb = bytes(data[off(a):off(a) + ps]), bytes(data[off(b):off(b) + ps])
        data[off(a):off(a) + ps], data[off(b):off(b) + ps] = pb, pa_
        what = f"pages {a} and {b} swapped"
    elif kind == "duplicate":
        a, b = pick(), pick()
        data[off(b):off(b) + ps] = data[off(a):off(a) + ps]
        what = f"page {a} copied over page {b}"
    elif kind == "truncate":
        cut = rng.randrange(ps * 2, len(data))
        del data[cut:]
        what = f"cut at byte {cut} of {len(dst.read_bytes())}"
    elif kind == "file_header":
        i = rng.randrange(16, 100)
        data[i] = rng.randrange(256)
        what = f"file header byte {i}"
    else:
        raise ValueError(kind)
    dst.write_bytes(bytes(data))
    return what


KINDS = ("flip", "zero", "btree_header", "swap", "duplicate", "truncate", "file_header")


def run_load(cli: list[str], store: Path, db: Path, env: dict) -> tuple[int, str, int]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *cli, "load", str(store), "--db", str(db), "--quiet"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    lines = proc.stderr.strip().splitlines()
    rss = int(lines[-1].split()[1]) if lines and lines[-1].startswith("maxrss") else -1
    return proc.returncode, "\n".join(lines[:-1]), rss


def keys(db: Path) -> tuple[set, set, bool]:
    """(checkpoint keys, thread ids named in load_errors, a file-level error row?)"""
    con = duckdb.connect(str(db), read_only=True)
    try:
        cps = set(con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints").fetchall())
        errs = con.execute("SELECT thread_id FROM load_errors").fetchall()
    finally:
        con.close()
    named = {t for (t,) in errs if t is not None}
    return cps, named, any(t is None for (t,) in errs)


def tables(db: Path) -> dict[str, list]:
    """Every data table's rows, sorted, without the columns a load stamps (load id, times of the load)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for table in ("threads", "checkpoints", "messages", "message_versions", "message_events", "load_errors"):
            cols = [c for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]
            ).fetchall() if c not in ("load_id", "loaded_at")]
            out[table] = sorted(map(repr, con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()))
        return out
    finally:
        con.close()


def differ(cli: list[str], copy: Path, tmp: Path, env: dict, rc: int, db: Path) -> str | None:
    """The same copy loaded by the pure-Python twins: a different outcome is a violation."""
    pure_db = tmp / "pure.duckdb"
    pure_db.unlink(missing_ok=True)
    prc, perr, _ = run_load(cli, copy, pure_db, {**env, "TRANSCRIPT_LENS_PUREPYTHON": "1"})
    if prc != rc:
        return f"compiled path exit {rc}, pure-Python exit {prc} ({perr.strip()[-200:]})"
    if rc != 0:
        return None
    a, b = tables(db), tables(pure_db)
    for table in a:
        if a[table] != b[table]:
            return f"{table}: compiled {len(a[table])} rows, pure-Python {len(b[table])} rows, contents differ"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=ROOT / "demo" / "demo.sqlite")
    ap.add_argument("--copies", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-rss-mb", type=int, default=1024)
    ap.add_argument("--cli", default=str(Path(sys.executable).with_name("transcript-lens")),
                    help="the transcript-lens command (default: beside this Python)")
    ap.add_argument("--keep", type=Path, help="keep failing copies in this folder")
    ap.add_argument("--differential", action="store_true",
                    help="also load each copy with TRANSCRIPT_LENS_PUREPYTHON=1; a difference is a violation")
    a = ap.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = [a.cli]
    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="damage-sweep-"))
    try:
        rc, err, _ = run_load(cli, a.store, tmp / "clean.duckdb", env)
        if rc != 0:
            print(f"the undamaged store does not load: {err}", file=sys.stderr)
            return 1
        clean, _, _ = keys(tmp / "clean.duckdb")
        tally: dict[str, Counter] = defaultdict(Counter)
        violations: list[str] = []
        peak = 0
        for i in range(a.copies):
            kind = KINDS[i % len(KINDS)]
            copy = tmp / f"copy{i}.sqlite"
            what = damage(a.store, copy, kind, rng)
            db = tmp / f"copy{i}.duckdb"
            rc, err, rss = run_load(cli, copy, db, env)
            peak = max(peak, rss)
            t = tally[kind]
            t["copies"] += 1
            problem = None
            if "Traceback" in err:
                problem = "traceback: " + err.strip().splitlines()[-1]
            elif rss > a.max_rss_mb * 1024:
                problem = f"peak RSS {rss // 1024} MB"
            elif rc == 2:
                t["refused"] += 1
                if len(err.strip().splitlines()) != 1 or not err.startswith("error:"):
                    problem = f"refusal is not one error line: {err!r}"
            elif rc == 0:
                t["loaded"] += 1
                got, named, file_level = keys(db)
                missing = {k for k in clean - got if k[0] not in named}
                if missing and not file_level:
                    problem = f"{len(missing)} checkpoints missing with no load_errors row (e.g. {sorted(missing)[0]})"
                extra = got - clean
                if extra and not file_level:
                    problem = f"{len(extra)} checkpoints not in the store (e.g. {sorted(extra)[0]})"
            else:
                problem = f"exit {rc}: {err.strip()[-300:]}"
            if problem is None and a.differential:
                problem = differ(cli, copy, tmp, env, rc, db)
            if problem:
                t["violations"] += 1
                violations.append(f"copy {i} ({kind}: {what}): {problem}")
                if a.keep:
                    a.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(copy, a.keep / copy.name)
            copy.unlink()
            db.unlink(missing_ok=True)
        print(f"store {a.store} ({len(clean)} checkpoints), {a.copies} damaged copies, seed {a.seed}, peak RSS {peak // 1024} MB")
        for kind in KINDS:
            t = tally[kind]
            print(f"  {kind:13} copies {t['copies']:4}  loaded {t['loaded']:4}  refused {t['refused']:4}  violations {t['violations']:4}")
        for v in violations:
            print("  VIOLATION", v)
        print(json.dumps({"copies": a.copies, "violations": len(violations)}))
        return 1 if violations else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
