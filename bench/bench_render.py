"""First render in a real browser: each page of the app against a bare Streamlit page, in one run.

Not a test. Serves a one-line Streamlit page and the app (on the bundled demo
database, or `--db`) on loopback, opens every page `--runs` times in headless
Chromium (Debian's /usr/bin/chromium through Playwright), each time in a fresh
browser context, and times from navigation until the page's title is visible
(the bare page: its one line). Prints each page's median and its ratio to the
bare page's, measured in the same run.

    .venv/bin/python bench/bench_render.py                 # the demo database, 5 runs per page
    .venv/bin/python bench/bench_render.py --db my.duckdb --runs 7
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
PAGES = [("/", "Overview"), ("/conversations", "Conversations"), ("/transcript", "Transcript explorer"),
         ("/resume_qa", "Resume QA"), ("/backlog", "Waiting on a human"), ("/review", "Review")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(script: Path, port: int, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", *(["--", *extra] if extra else [])]
    proc = subprocess.Popen(cmd, cwd=script.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"{script}: Streamlit did not answer on port {port}")


async def _time(browser, url: str, text: str) -> float:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    t0 = time.perf_counter()
    await page.goto(url)
    await page.get_by_text(text, exact=True).first.wait_for(state="visible", timeout=120_000)
    elapsed = time.perf_counter() - t0
    await context.close()
    return elapsed


async def _measure(bare: str, app: str, runs: int) -> dict[str, list[float]]:
    from playwright.async_api import async_playwright

    times: dict[str, list[float]] = {"bare page": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        await _time(browser, bare, "ready")  # warm-up: each server's first session pays imports
        for path, title in PAGES:
            await _time(browser, app + path, title)
        for _ in range(runs):  # interleaved, so the machine's drift falls on every page alike
            times["bare page"].append(await _time(browser, bare, "ready"))
            for path, title in PAGES:
                times.setdefault(title, []).append(await _time(browser, app + path, title))
        await browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="the database the app opens (default: the bundled demo)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text('import streamlit as st\n\nst.write("ready")\n')
        bare_port, app_port = _free_port(), _free_port()
        servers = [_serve(bare_script, bare_port), _serve(ROOT / "app.py", app_port, *(["--db", args.db] if args.db else []))]
        try:
            times = asyncio.run(_measure(f"http://127.0.0.1:{bare_port}/", f"http://127.0.0.1:{app_port}", args.runs))
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)
    base = statistics.median(times["bare page"])
    print(f"| page | first render s (median of {args.runs}) | runs, s | vs bare page |")
    print("|---|---:|---|---:|")
    for name, runs in times.items():
        med = statistics.median(runs)
        print(f"| {name} | {med:.2f} | {' / '.join(f'{r:.2f}' for r in runs)} | {med / base:.2f}x |")


if __name__ == "__main__":
    main()
