"""Every `bench/` script runs end to end on a tiny store: a bench that no longer runs against
the code (a name it reads was renamed) fails here, not on the day someone measures.

Each runs as its README line says, with the smallest sizes (a handful of threads, one round),
its outputs in a temp folder (`$BENCH_OUT`, `--out`); the figures themselves are not checked.
The scripts are smoke-run from three test files, one a group (`GROUPS`): a test run hands each
file to one worker (`--dist loadfile`), and the scripts take minutes together, so the three
groups run beside the rest of the suite instead of one after the other on one worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.util import CHROMIUM, free_port
from tests.loaders.pg_util import ADMIN_DSN

ROOT = Path(__file__).resolve().parents[1]
STORE, OUT, PORT, DB = "{store}", "{out}", "{port}", "{db}"

#: script → its arguments for the smoke run (`{store}`: a copy of the session's store; `{db}`: it loaded).
SMOKE = {
    "app_load.py": ["--store", STORE, "--runs", "1", "--port", PORT],
    "attack_sweep.py": ["--scale", "0.001"],
    "bench_align.py": ["--sizes", "100", "200"],
    "bench_compare.py": [STORE, "--before", str(ROOT), "--runs", "1"],
    "bench_compare_page.py": ["--db", DB, "--runs", "1"],
    "bench_decoders.py": ["--store", STORE, "--rows", "50", "--rounds", "1"],
    "bench_distributed.py": ["--store", STORE, "--repeat", "1"],
    "bench_erasure.py": ["--threads", "3", "--turns", "2", "--repeat", "1", "--sweep", "20", "--notes", "20"],
    "bench_load.py": ["--store", STORE, "--repeat", "1", "--skip-naive", "--workers", "1"],
    "bench_masking_terms.py": ["--terms", "10", "200", "--patterns", "400", "--messages", "20"],
    # (its topics step is `bench_topics.py --distinct` as a process of its own: smoke-run below, not twice)
    "bench_outcome_speed.py": ["--store", STORE, "--repeat", "1", "--workers", "1", "--topics-threads", "0",
                               "--runs", "1"],
    "bench_outcomes.py": None,  # tests/test_bench_outcomes.py runs it and checks its figures
    "bench_pages.py": ["--messages", "2000", "--runs", "1", "--out", f"{OUT}/pages.duckdb"],
    # (every page and state, and the page-to-page hops, took 4.6 min here; the two Resume QA states run its timing code)
    "bench_render.py": ["--runs", "1", "--only", "Resume QA"],
    "bench_rows.py": [STORE, "--rounds", "1", "--threads", "5"],
    "bench_topics.py": ["--threads", "300", "--distinct", "--scale", "0.05"],  # (300 threads: copies of the set)
    "damage_sweep.py": ["--store", STORE, "--copies", "2", "--keep", f"{OUT}/kept"],
    "replicate_store.py": [f"{OUT}/copies.sqlite", "--source", STORE, "--copies", "2"],
    "pg_live_vs_copy.py": ["--threads", "3", "--turns", "2", "--admin-dsn", ADMIN_DSN],
    "thread_caps_sweep.py": ["--scale", "0.001", "--cap", "20"],
    "worker_path.py": [STORE, "--threads", "5"],
}
BROWSER = {"app_load.py", "bench_render.py"}

#: test file → the scripts it smoke-runs, about equal in time (minutes each on a loaded 2-core machine).
GROUPS = {
    "loads": ("bench_load.py", "bench_distributed.py", "bench_compare.py", "bench_decoders.py", "bench_rows.py",
              "worker_path.py", "replicate_store.py", "damage_sweep.py", "pg_live_vs_copy.py"),
    "sweeps": ("attack_sweep.py", "thread_caps_sweep.py", "bench_erasure.py", "bench_masking_terms.py",
               "bench_align.py"),
    "app": ("bench_render.py", "app_load.py", "bench_compare_page.py", "bench_pages.py", "bench_outcome_speed.py",
            "bench_topics.py"),
}


def smoke_run(script: str, store_path: Path, copy_store, tmp_path: Path) -> None:
    """Run `bench/<script>` with its `SMOKE` arguments on a copy of the store at `store_path`."""
    if script in BROWSER and not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    store = copy_store(store_path, tmp_path / "store")
    out = tmp_path / "out"
    out.mkdir()
    if DB in SMOKE[script]:
        from transcript_lens import load

        load(str(store), str(out / "lens.duckdb"))
    args = [a.replace(STORE, str(store)).replace(OUT, str(out)).replace(PORT, str(free_port())).replace(DB, str(out / "lens.duckdb"))
            for a in SMOKE[script]]
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "BENCH_OUT": str(out)})
    assert done.returncode == 0, f"{script} {' '.join(args)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    # (worker_path.py prints nothing: valgrind counts its instructions)
    assert done.stdout.strip() or script == "worker_path.py", "it printed no figure"
