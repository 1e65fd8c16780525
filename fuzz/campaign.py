"""Run the fuzz targets one after another and say what happened (make fuzz, make fuzz-smoke).

    python -m fuzz.campaign [--dir build/fuzz] [--seconds 600] [--targets row,thread,...] [--smoke] [--jobs 2]

Each target runs in its own process (`python -m fuzz.run`, under `nice -n 10`:
the machine is shared; `--jobs` of them side by side, one by default) with the sanitizer runtime preloaded, for `--seconds`,
on its growing corpus (FUZZ_DIR/corpus/TARGET) seeded from real stores
(FUZZ_DIR/seeds/TARGET, `fuzz.seeds`). `--smoke` splits `--seconds` (then the
total) over the targets, starts from the seeds alone with a fixed random seed
and stops each target after its seeds and SMOKE_RUNS[target] more inputs, so every
smoke run tries the same inputs however busy the machine is (`--seconds` only caps a
run that has become slow); it is what `make test` runs. Before any target, one check proves the
sanitizer is live in such a process (an out-of-bounds read must be reported),
so a broken preload cannot pass as "no findings".

Exit status 1 on any crash, sanitizer report or mismatch; the input is kept as
FUZZ_DIR/crashes/TARGET-crash-* and `python -m fuzz.run TARGET --replay FILE`
re-runs it. A summary per target (inputs executed, corpus, findings) is
printed and written to FUZZ_DIR/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzz.common import EXT_ENV, ROOT
from fuzz.targets import TARGETS, scratch_root

# libFuzzer's -max_len per target: row and thread inputs hold several real checkpoint blobs.
MAX_LEN = {"row": 131072, "thread": 131072, "ts_list": 4096, "stage": 16384, "readahead": 4096, "rows": 4096}
# The inputs a smoke run mutates per target after the seeds: a few seconds each on a quiet core
# at the rates of docs/security.md's campaign (row, ts_list, stage: thousands a second;
# thread, readahead, rows read whole stores: tens a second).
SMOKE_RUNS = {"row": 8000, "thread": 120, "ts_list": 8000, "stage": 3000, "readahead": 200, "rows": 120}
_STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)


def environment(fuzz_dir: Path) -> dict[str, str]:
    site = fuzz_dir / "site"
    env = dict(os.environ)
    env.pop("TRANSCRIPT_LENS_PUREPYTHON", None)  # the C side must be there to be compared
    env.update({
        "LD_PRELOAD": str((site / "asan_with_fuzzer.so").resolve()),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(site.resolve())]),
        # Every Python allocation through malloc, so that ASan bounds-checks PyMem / bytes buffers
        # too (pymalloc's arenas would hide an overrun of a small block).
        "PYTHONMALLOC": "malloc",
        # Python keeps memory to its exit by design: leak reports would be noise.
        "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:handle_abort=1",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        EXT_ENV: str((fuzz_dir / "ext" / "loaders").resolve()),
        "TL_FUZZ_BASES": str((fuzz_dir / "seeds" / "bases").resolve()),
    })
    return env


_CANARY = """
import ctypes
buf = ctypes.create_string_buffer(16)
ctypes.string_at(ctypes.addressof(buf), 64)  # reads 48 bytes past the buffer: ASan must stop here
print("NOT CAUGHT")
"""


def sanitizer_is_live(env: dict[str, str]) -> bool:
    """An out-of-bounds read in a process started like a target is reported by AddressSanitizer."""
    proc = subprocess.run([sys.executable, "-c", _CANARY], env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode != 0 and "AddressSanitizer" in proc.stderr and "NOT CAUGHT" not in proc.stdout


def failures(new_files: set[Path], name: str) -> list[str]:
    """The new artifacts of target `name` that are failures: a crash, a leak, a timeout or an out-of-memory
    input; not an input libFuzzer kept only for being slow (`slow-unit-*`), which a busy machine makes
    without any fault (a real hang is `-timeout`'s).

    >>> sorted(failures({Path("c/rows-crash-1"), Path("c/rows-slow-unit-2"), Path("c/scan-crash-3")}, "rows"))
    ['c/rows-crash-1']
    """
    return sorted(str(p) for p in new_files if p.name.startswith(f"{name}-") and not p.name.startswith(f"{name}-slow-unit-"))


def run_target(name: str, fuzz_dir: Path, seconds: int, smoke: bool, env: dict[str, str]) -> dict:
    seeds = fuzz_dir / "seeds" / name
    corpus = fuzz_dir / ("smoke-corpus" if smoke else "corpus") / name
    if smoke and corpus.exists():
        shutil.rmtree(corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    crashes = fuzz_dir / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    before = set(crashes.iterdir())
    log = fuzz_dir / "logs" / f"{name}{'-smoke' if smoke else ''}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    args = [
        "nice", "-n", "10", sys.executable, "-m", "fuzz.run", name,
        f"-max_total_time={seconds}", f"-max_len={MAX_LEN[name]}", f"-artifact_prefix={crashes}/{name}-",
        "-print_final_stats=1", "-timeout=60", "-report_slow_units=60", "-rss_limit_mb=4096", "-detect_leaks=0",
    ]
    if smoke:
        args += ["-seed=1", f"-runs={sum(1 for _ in seeds.iterdir()) + SMOKE_RUNS[name]}"]
    args += [str(corpus), str(seeds)]
    start = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="tl-fuzz-", dir=scratch_root())
    try:
        with log.open("w") as fh:
            proc = subprocess.run(args, env={**env, "TL_FUZZ_SCRATCH": scratch}, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = log.read_text(errors="replace")
    stats = {k: int(v) for k, v in _STAT.findall(text)}
    # Only this target's (its -artifact_prefix): another target may be running beside it.
    found = failures(set(crashes.iterdir()) - before, name)
    reports = sorted(set(re.findall(r"ERROR: (AddressSanitizer: [\w-]+|libFuzzer: [\w-]+)|runtime error: .*", text)))
    mismatch = sorted(set(re.findall(r"^(?:fuzz\.common\.)?Mismatch: (.*)", text, re.M)))
    return {
        "target": name,
        "seconds": round(time.monotonic() - start),
        "inputs": stats.get("number_of_executed_units"),
        "new_units": stats.get("new_units_added"),
        "corpus_files": sum(1 for _ in corpus.iterdir()),
        "peak_rss_mb": stats.get("peak_rss_mb"),
        "exit": proc.returncode,
        "crashes": found,
        "reports": [r for r in reports if r],
        "mismatches": mismatch[:3],
        "log": str(log),
        "ok": proc.returncode == 0 and not found,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="build/fuzz", type=Path)
    ap.add_argument("--seconds", type=int, default=600, help="per target (with --smoke: in all, a cap)")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="targets run side by side (each is one process)")
    a = ap.parse_args(argv)
    names = [t for t in a.targets.split(",") if t]
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    fuzz_dir = a.dir
    env = environment(fuzz_dir)
    if not Path(env["LD_PRELOAD"]).is_file():
        print(f"fuzz: {env['LD_PRELOAD']} is missing: run scripts/build-sanitized.sh {fuzz_dir}", file=sys.stderr)
        return 1
    if not sanitizer_is_live(env):
        print("fuzz: AddressSanitizer did not report an out-of-bounds read: the preload is broken", file=sys.stderr)
        return 1
    jobs = max(1, min(a.jobs, len(names)))
    per_target = max(1, a.seconds * jobs // len(names)) if a.smoke else a.seconds
    results = []
    # Each target is one single-threaded process: `jobs` of them keep that many cores busy. The
    # results are reported in the order the targets were named, whatever order they end in.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = [pool.submit(run_target, name, fuzz_dir, per_target, a.smoke, env) for name in names]
        for run in runs:
            r = run.result()
            results.append(r)
            status = "ok" if r["ok"] else "FAILED"
            print(f"fuzz {r['target']}: {status}: {r['inputs']} inputs in {r['seconds']} s, corpus {r['corpus_files']} "
                  f"(+{r['new_units']}), peak {r['peak_rss_mb']} MB"
                  + "".join(f"\n  {x}" for x in r["crashes"] + r["reports"] + r["mismatches"])
                  + ("" if r["ok"] else f"\n  log: {r['log']}"), flush=True)
    out = fuzz_dir / ("results-smoke.json" if a.smoke else "results.json")
    out.write_text(json.dumps(results, indent=2))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
