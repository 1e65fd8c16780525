"""First render in a real browser: each page of the app against a bare Streamlit page, in one run.

Not a test. Serves a bare page (one line and one plotly chart) and
the app (on the bundled demo database, or `--db`) on loopback, opens every page
`--runs` times in headless Chromium (Debian's /usr/bin/chromium through
Playwright), each time in a fresh browser context, and times from navigation
until the page is drawn: its run is over and the element that shows its answer
is visible (the bare page: its chart). Prints each page's median and its ratio to
the bare page's, measured in the same run, and the longest main-thread task the
browser reported while the page drew and for a second after (a "freeze": no input
is handled meanwhile). A one-line page (no chart) is timed too, for reference.

    .venv/bin/python bench/bench_render.py                 # the demo database, 5 runs per page
    .venv/bin/python bench/bench_render.py --db my.duckdb --runs 7
    .venv/bin/python bench/bench_render.py --db my.duckdb --thread acme:web:s1 --search refund

The pages: Overview, Conversations, Search (with `--search`), the transcript
explorer with a thread (`--thread`, default: the thread with the most messages,
drawn whole up to its first window) and Resume QA.
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
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TARGET = 1.5  # the bound: every page within 1.5x the bare page
FREEZE_S = 1.0  # and no main-thread task over a second

# Collect long tasks (main thread busy > 50 ms) from the first paint on.
_OBSERVE = """
window.__longest = 0;
new PerformanceObserver(list => {
  for (const e of list.getEntries()) { window.__longest = Math.max(window.__longest, e.duration); }
}).observe({type: 'longtask', buffered: true});
"""


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


def pages(thread: str, search: str) -> list[tuple[str, str, str]]:
    """(name, path, CSS selector of the element that shows the page's answer)."""
    return [
        ("Overview", "/", '[data-testid="stMetric"]'),
        ("Conversations", "/conversations", '[data-testid="stDataFrame"]'),
        ("Search", "/search?" + urlencode({"q": search}), ".tl-snippet"),
        ("Transcript (a thread)", "/transcript?" + urlencode({"thread": thread}), '[data-testid="stChatMessage"]'),
        ("Resume QA", "/resume_qa", '[data-testid="stDataFrame"]'),
        ("Waiting on a human", "/backlog", '[data-testid="stMetric"]'),
        ("Review", "/review", '[data-testid="stDataFrame"], [data-testid="stAlert"]'),  # the queues, or "no queue yet"
    ]


async def _time(browser, url: str, ready: str) -> tuple[float, float]:
    """(seconds until drawn, longest main-thread task in seconds up to a second after)."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(_OBSERVE)
    page = await context.new_page()
    t0 = time.perf_counter()
    await page.goto(url)
    await page.locator(ready).first.wait_for(state="visible", timeout=120_000)
    await page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=120_000)
    elapsed = time.perf_counter() - t0
    await page.wait_for_timeout(1000)
    longest = await page.evaluate("window.__longest") / 1000
    await context.close()
    return elapsed, longest


BARE = "bare page (one plotly chart)"
LINE = "one-line page"
_BARE_SCRIPT = """import plotly.graph_objects as go
import streamlit as st

st.write("ready")
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[3, 1, 2])))
"""
_LINE_SCRIPT = 'import streamlit as st\n\nst.write("ready")\n'


async def _measure(bare: str, app: str, runs: int, shown: list[tuple[str, str, str]]) -> dict[str, list[tuple[float, float]]]:
    from playwright.async_api import async_playwright

    baselines = [(BARE, bare + "bare", '[data-testid="stPlotlyChart"] .main-svg'), (LINE, bare + "line", "text=ready")]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in baselines}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _, url, ready in baselines:  # warm-up: each server's first session pays imports
            await _time(browser, url, ready)
        for _, path, ready in shown:
            await _time(browser, app + path, ready)
        for _ in range(runs):  # interleaved, so the machine's drift falls on every page alike
            for name, url, ready in baselines:
                times[name].append(await _time(browser, url, ready))
            for name, path, ready in shown:
                times.setdefault(name, []).append(await _time(browser, app + path, ready))
        await browser.close()
    return times


def _busiest_thread(db: str | None) -> str:
    import duckdb

    from ui import database

    path = db or str(database.ensure_demo_db())
    con = duckdb.connect(path, read_only=True)
    try:
        return con.execute("SELECT thread_id FROM threads ORDER BY message_count DESC, thread_id LIMIT 1").fetchall()[0][0]
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="the database the app opens (default: the bundled demo)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--thread", help="the transcript to open (default: the thread with the most messages)")
    parser.add_argument("--search", default="refund", help="the text the Search page looks for (default: refund)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    shown = pages(args.thread or _busiest_thread(args.db), args.search)
    with tempfile.TemporaryDirectory() as tmp:
        bare_script = Path(tmp) / "bare.py"  # a two-page app: /bare (the bare page) and /line
        (Path(tmp) / "bare_page.py").write_text(_BARE_SCRIPT)
        (Path(tmp) / "line_page.py").write_text(_LINE_SCRIPT)
        bare_script.write_text(
            "import streamlit as st\n\nst.navigation([st.Page('bare_page.py', url_path='bare', default=True),"
            " st.Page('line_page.py', url_path='line')], position='hidden').run()\n"
        )
        bare_port, app_port = _free_port(), _free_port()
        servers = [_serve(bare_script, bare_port), _serve(ROOT / "app.py", app_port, *(["--db", args.db] if args.db else []))]
        try:
            times = asyncio.run(_measure(f"http://127.0.0.1:{bare_port}/", f"http://127.0.0.1:{app_port}", args.runs, shown))
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)
    base = statistics.median(t for t, _ in times[BARE])
    print(f"database: {args.db or 'the bundled demo'}; {dict((n, p) for n, p, _ in shown)}")
    print(f"| page | first render s (median of {args.runs}) | runs, s | vs bare page | longest main-thread task, s |")
    print("|---|---:|---|---:|---:|")
    over = []
    for name, runs in times.items():
        med = statistics.median(t for t, _ in runs)
        freeze = max(f for _, f in runs)
        if name not in (BARE, LINE) and (med / base > TARGET or freeze > FREEZE_S):
            over.append(name)
        print(f"| {name} | {med:.2f} | {' / '.join(f'{t:.2f}' for t, _ in runs)} | {med / base:.2f}x | {freeze:.2f} |")
    print(f"\nall pages within {TARGET}x and no task over {FREEZE_S:.0f} s" if not over else f"\nOVER: {', '.join(over)}")


if __name__ == "__main__":
    main()
