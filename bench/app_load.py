"""Loads from inside a real Streamlit server: how long `loaders.load` takes there.

    .venv/bin/python bench/app_load.py [--store bench/out/bench-300x40.sqlite] [--runs 3] [--start-method forkserver|spawn]

The app's server runs threads, so a load cannot fork its workers (see
`loaders.jobs.mp_context`). This serves a one-line page that loads the
store `--runs` times with `streamlit run`, opens it in headless Chromium
(Debian's, as the browser test does) and prints each load's seconds. With
`--start-method spawn` the workers are spawned instead, for comparison.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from debian_chromium import launch_options

ROOT = Path(__file__).resolve().parents[1]

PAGE = """
import json, os, sys, time
sys.path.insert(0, {root!r})
import streamlit as st
import loaders.jobs as jobs, transcript_lens
import multiprocessing as mp
if {method!r} == "spawn":
    jobs.mp_context = lambda: mp.get_context("spawn")
if not os.path.exists({out!r}):
    seconds = []
    for _ in range({runs}):
        t = time.perf_counter()
        transcript_lens.load({store!r}, {db!r})
        seconds.append(round(time.perf_counter() - t, 2))
    open({out!r}, "w").write(json.dumps(seconds))
st.write("done")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=str(ROOT / "bench" / "out" / "bench-300x40.sqlite"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--start-method", choices=["forkserver", "spawn"], default="forkserver")
    ap.add_argument("--port", type=int, default=8599)
    args = ap.parse_args()
    if not Path(args.store).is_file():
        raise SystemExit(f"{args.store}: no such store (bench/bench_load.py builds bench/out/bench-300x40.sqlite)")

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="bench-app-"))
    out, page = work / "seconds.json", work / "page.py"
    page.write_text(PAGE.format(root=str(ROOT), method=args.start_method, out=str(out), runs=args.runs,
                                store=str(Path(args.store).resolve()), db=str(work / "app.duckdb")))
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(page), "--server.headless", "true", "--server.port", str(args.port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 120  # the server answers its health check once it is up
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/_stcore/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("streamlit did not start") from None
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(**launch_options("--headless=new"))
            browser.new_page().goto(f"http://localhost:{args.port}")
            deadline = time.monotonic() + 300
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.5)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    if not out.exists():
        raise SystemExit("the page did not finish its loads (see `streamlit run` on it by hand)")
    print(json.dumps({"start_method": args.start_method, "store": args.store, "seconds": json.loads(out.read_text())}))


if __name__ == "__main__":
    main()
