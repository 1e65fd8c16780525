"""First render in a real browser: every page and state of the app against a bare Streamlit page, in one run.

Not a test. Serves a bare page (one line and one plotly chart) and
the app (on the bundled demo database, or `--db`) on loopback, opens every page of
the navigation and the states worth a look (a thread selected, the longest
conversation, a dialog open) `--runs` times in headless Chromium (Debian's
/usr/bin/chromium through Playwright), each time in a fresh browser context, and
times from navigation until the page is drawn (`_DRAWN`): its script run is over,
the element that shows its answer is visible, and every chart on it is drawn (an
ECharts chart: a canvas or svg of non-zero size inside it; plotly: its `.main-svg`).
Prints each page's median and its ratio to the bare page's, measured in the same
run, and the longest main-thread task the browser reported while the page drew and
for a second after (a "freeze": no input is handled meanwhile), and the CPU seconds the
page's main thread spent until drawn (Chromium's TaskDuration: what drawing costs the
browser, which a busy machine stretches less than wall time). A one-line page (no
chart) is timed too, for reference. `--baseline` serves a second checkout
beside this one and times each page on both, interleaved: a change's before/after in one run.

A state reached by a click (the Annotate dialog) is timed from the click until
what it opens is drawn. Page-to-page: from a drawn page, a click on a sidebar link
to another page, timed until that page is drawn (the target: 0.5 s on a quiet machine).

    .venv/bin/python bench/bench_render.py                 # the demo database, 5 runs per page
    .venv/bin/python bench/bench_render.py --db my.duckdb --runs 7
    .venv/bin/python bench/bench_render.py --db my.duckdb --thread acme:web:s1 --search refund
    .venv/bin/python bench/bench_render.py --only resume   # the pages whose name holds "resume"
    .venv/bin/python bench/bench_render.py --only overview --baseline CHECKOUT  # another checkout, same run

`--thread` (default: the thread with the most messages, the long conversation) is
the thread the transcript explorer and Resume QA open.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from debian_chromium import launch_options

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5  # the bound: every page within 1.5x the bare page
FREEZE_S = 1.0  # and no main-thread task over a second
HOP_S = 0.5  # page-to-page inside the app, on a quiet machine
TIMEOUT_MS = 120_000

# Collect long tasks (main thread busy > 50 ms) from the first paint on; and note when a script run
# starts (a click's run: until one started, the page on screen is the one clicked from).
_OBSERVE = """
window.__longest = 0;
window.__ran = false;
new PerformanceObserver(list => {
  for (const e of list.getEntries()) { window.__longest = Math.max(window.__longest, e.duration); }
}).observe({type: 'longtask', buffered: true});
new MutationObserver(() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && app.getAttribute('data-test-script-state') === 'running') window.__ran = true;
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
"""

# Drawn: a script run happened and is over, nothing is a placeholder still, the answer (`ready`, a CSS
# selector) is visible, and every chart holds what it draws at a non-zero size.
_DRAWN = """(ready) => {
  if (!window.__ran) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSkeletonElement"]')) return false;
  const seen = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  if (![...document.querySelectorAll(ready)].some(seen)) return false;
  const drawn = (chart, inner) => [...chart.querySelectorAll(inner)].some(seen);
  return [...document.querySelectorAll('[data-testid="stEChartsChart"]')].every(c => drawn(c, 'canvas, svg'))
      && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => drawn(c, '.main-svg'));
}"""


@dataclass(frozen=True)
class State:
    """One thing timed: the app at `path`, drawn when `ready` shows; `click` (a button's name), when
    set, is pressed once the page is drawn, and the time is from the click until `opens` shows."""

    name: str
    path: str
    ready: str
    click: str | None = None
    opens: str | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(script: Path, port: int, *extra: str, root: Path = ROOT) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", *(["--", *extra] if extra else [])]
    env = {**os.environ, "PYTHONPATH": str(root)}  # (the checkout whose app this is imports its own code)
    proc = subprocess.Popen(cmd, cwd=script.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"{script}: Streamlit did not answer on port {port}")


TABLE = '[data-testid="stDataFrame"]'
METRIC = '[data-testid="stMetric"]'
ALERT = '[data-testid="stAlert"]'
CHART = '[data-testid="stEChartsChart"], [data-testid="stPlotlyChart"]'


def states(thread: str, search: str) -> list[State]:
    """Every page of the navigation (`ui.nav.PAGES`) as it opens, and the states beyond it."""
    with_thread = urlencode({"thread": thread})
    return [
        State("Overview", "/", METRIC),
        State("Conversations", "/conversations", TABLE),
        State("Outcomes", "/outcomes", TABLE),
        State("Search", "/search?" + urlencode({"q": search}), ".tl-snippet"),
        State("Transcript explorer", "/transcript", '[data-testid="stSelectbox"]'),
        State("Transcript: a thread (the longest)", "/transcript?" + with_thread, '[data-testid="stChatMessage"]'),
        State("Transcript: the Annotate dialog", "/transcript?" + with_thread, '[data-testid="stChatMessage"]',
              "Annotate", '[role="dialog"] textarea'),
        State("Resume QA", "/resume_qa", TABLE),
        State("Resume QA: a thread", "/resume_qa?" + with_thread, CHART),
        State("Waiting on a human", "/backlog", METRIC),
        State("Topics", "/topics", TABLE),
        State("Failure patterns", "/patterns", f"{TABLE}, {ALERT}"),  # the patterns, or "no failed conversation"
        State("Compare", "/compare", f"{TABLE}, {ALERT}"),  # the cohorts' table, or "choose a cohort"
        State("Review", "/review", f"{TABLE}, {ALERT}"),  # the queues, or "no queue yet"
    ]


#: Page-to-page: (from, what shows its answer, the sidebar link's text, what shows the answer of the page it opens).
HOPS = [
    ("/", METRIC, "Conversations", TABLE),
    ("/conversations", TABLE, "Overview", METRIC),
    ("/conversations", TABLE, "Resume QA", TABLE),
    ("/resume_qa", TABLE, "Waiting on a human", METRIC),
    ("/backlog", METRIC, "Topics", TABLE),
]


async def _context(browser):
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(_OBSERVE)
    page = await context.new_page()
    page.cdp = await context.new_cdp_session(page)
    await page.cdp.send("Performance.enable")
    return context, page


async def _busy(page) -> float:
    """CPU seconds the page's main thread has spent on tasks so far (Chromium's TaskDuration): what
    drawing costs the browser, less sensitive than wall time to what else the machine runs."""
    metrics = (await page.cdp.send("Performance.getMetrics"))["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


async def _drawn(page, ready: str) -> None:
    # Polled every 100 ms, not every frame: `_DRAWN` reads the layout, and doing so each frame slows
    # the very drawing it waits for.
    await page.wait_for_function(_DRAWN, arg=ready, polling=100, timeout=TIMEOUT_MS)


async def _rearm(page) -> None:
    await page.evaluate("window.__ran = false; window.__longest = 0")


async def _time(browser, url: str, ready: str, click: str | None = None,
                opens: str | None = None) -> tuple[float, float, float]:
    """(seconds until drawn, longest main-thread task in seconds up to a second after, main-thread
    CPU seconds until drawn)."""
    context, page = await _context(browser)
    t0, busy0 = time.perf_counter(), 0.0
    await page.goto(url)
    await _drawn(page, ready)
    if click:
        await page.wait_for_timeout(1000)  # the page's own tasks end
        await _rearm(page)
        button = page.get_by_role("button", name=click).first
        t0, busy0 = time.perf_counter(), await _busy(page)
        await button.click()
        await _drawn(page, opens or ready)
    elapsed, busy = time.perf_counter() - t0, await _busy(page) - busy0
    await page.wait_for_timeout(1000)
    longest = await page.evaluate("window.__longest") / 1000
    await context.close()
    return elapsed, longest, busy


async def _hop(browser, app: str, start: str, shown: str, link: str, ready: str) -> tuple[float, float, float]:
    """From `start` (drawn), a click on the sidebar link `link`: seconds until the page it opens is drawn
    (a run started after the click and is over, and what the previous page showed is gone with it)."""
    context, page = await _context(browser)
    await page.goto(app + start)
    await _drawn(page, shown)
    await page.wait_for_timeout(1000)  # the page's own tasks end
    await _rearm(page)
    anchor = page.locator('[data-testid="stSidebar"] a', has_text=link).first
    t0, busy0 = time.perf_counter(), await _busy(page)
    await anchor.click()
    await _drawn(page, ready)
    elapsed, busy = time.perf_counter() - t0, await _busy(page) - busy0
    await page.wait_for_timeout(1000)
    longest = await page.evaluate("window.__longest") / 1000
    await context.close()
    return elapsed, longest, busy


BARE = "bare page (one plotly chart)"
BASELINE = " — baseline checkout"  # (`--baseline`: its pages' names end so)
LINE = "one-line page"
_BARE_SCRIPT = """import plotly.graph_objects as go
import streamlit as st

st.write("ready")
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[3, 1, 2])))
"""
_LINE_SCRIPT = 'import streamlit as st\n\nst.write("ready")\n'


def _hop_name(hop: tuple) -> str:
    return f"{hop[0]} → {hop[2]}"


async def _measure(bare: str, app: str, runs: int, shown: list[State], hops: list,
                   baseline: str | None = None) -> dict[str, list[tuple[float, float]]]:
    from playwright.async_api import async_playwright

    baselines = [(BARE, bare + "bare", '[data-testid="stPlotlyChart"]'), (LINE, bare + "line", '[data-testid="stMarkdown"]')]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in baselines}
    async with async_playwright() as p:
        browser = await p.chromium.launch(**launch_options())
        for _, url, ready in baselines:  # warm-up: each server's first session pays imports
            await _time(browser, url, ready)
        apps = [("", app)] + ([(BASELINE, baseline)] if baseline else [])
        for _, served in apps:
            for s in shown:
                await _time(browser, served + s.path, s.ready, s.click, s.opens)
        for _ in range(runs):  # interleaved, so the machine's drift falls on every page alike
            for name, url, ready in baselines:
                times[name].append(await _time(browser, url, ready))
            for s in shown:
                for suffix, served in apps:
                    times.setdefault(s.name + suffix, []).append(
                        await _time(browser, served + s.path, s.ready, s.click, s.opens))
            for hop in hops:
                times.setdefault(_hop_name(hop), []).append(await _hop(browser, app, *hop))
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


def _load() -> str:
    return " / ".join(f"{v:.1f}" for v in os.getloadavg())


def _report(times: dict, shown: list[State], hops: list, runs: int) -> list[str]:
    base = statistics.median(t for t, *_ in times[BARE])
    base_cpu = statistics.median(c for *_, c in times[BARE])
    print(f"| page or state | drawn in s (median of {runs}) | runs, s | vs bare page | longest main-thread task, s "
          "| main-thread CPU s until drawn (vs bare) |")
    print("|---|---:|---|---:|---:|---:|")
    over = []
    hop_names = {_hop_name(h) for h in hops}
    for name, measured in times.items():
        med = statistics.median(t for t, *_ in measured)
        freeze = max(f for _, f, _ in measured)
        cpu = statistics.median(c for *_, c in measured)
        if name in hop_names:
            if med > HOP_S:
                over.append(f"{name} ({med:.2f} s)")
        elif name not in (BARE, LINE):
            why = [f"{med / base:.2f}x"] * (med / base > TARGET) + [f"a {freeze:.1f} s task"] * (freeze > FREEZE_S)
            if why:
                over.append(f"{name} ({', '.join(why)})")
        clicked = any(s.name == name.removesuffix(BASELINE) and s.click for s in shown)
        label = f"{name} (click → drawn)" if clicked else f"{name} (click a link → drawn)" if name in hop_names else name
        print(f"| {label} | {med:.2f} | {' / '.join(f'{t:.2f}' for t, *_ in measured)} | {med / base:.2f}x | {freeze:.2f} "
              f"| {cpu:.2f} ({cpu / base_cpu:.2f}x) |")
    return over


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="the database the app opens (default: the bundled demo)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--thread", help="the thread the transcript and Resume QA open (default: the one with the most messages)")
    parser.add_argument("--search", default="refund", help="the text the Search page looks for (default: refund)")
    parser.add_argument("--only", help="only the pages and states whose name holds this text (and no page-to-page)")
    parser.add_argument("--baseline", help="another checkout of the app, served beside this one: each "
                                           "page is timed on both, interleaved, in the same run")
    parser.add_argument("--baseline-db", help="the database the baseline opens (default: --db; another schema "
                                              "version needs its own)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    thread = args.thread or _busiest_thread(args.db)
    shown = [s for s in states(thread, args.search) if not args.only or args.only.lower() in s.name.lower()]
    hops = [] if args.only else HOPS
    with tempfile.TemporaryDirectory() as tmp:
        bare_script = Path(tmp) / "bare.py"  # a two-page app: /bare (the bare page) and /line
        (Path(tmp) / "bare_page.py").write_text(_BARE_SCRIPT)
        (Path(tmp) / "line_page.py").write_text(_LINE_SCRIPT)
        bare_script.write_text(
            "import streamlit as st\n\nst.navigation([st.Page('bare_page.py', url_path='bare', default=True),"
            " st.Page('line_page.py', url_path='line')], position='hidden').run()\n"
        )
        bare_port, app_port, base_port = _free_port(), _free_port(), _free_port()
        servers = [_serve(bare_script, bare_port), _serve(ROOT / "app.py", app_port, *(["--db", args.db] if args.db else []))]
        base_db = args.baseline_db or args.db
        if args.baseline:
            base = Path(args.baseline).resolve()
            servers.append(_serve(base / "app.py", base_port, *(["--db", base_db] if base_db else []), root=base))
        load_before = _load()
        try:
            times = asyncio.run(_measure(f"http://127.0.0.1:{bare_port}/", f"http://127.0.0.1:{app_port}", args.runs,
                                         shown, hops, f"http://127.0.0.1:{base_port}" if args.baseline else None))
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)
    print(f"database: {args.db or 'the bundled demo'}; thread {thread}; load average (1 / 5 / 15 min) "
          f"{load_before} before, {_load()} after")
    over = _report(times, shown, hops, args.runs)
    print(f"\nall pages within {TARGET}x, no task over {FREEZE_S:.0f} s, page-to-page within {HOP_S} s"
          if not over else f"\nOVER: {', '.join(over)}")


if __name__ == "__main__":
    main()
