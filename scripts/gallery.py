"""The gallery: a screenshot of every page and state of the app, and an index page to look at them.

    .venv/bin/python scripts/gallery.py                     # make gallery: build/gallery/index.html
    .venv/bin/python scripts/gallery.py --out /tmp/g --threads 300 --only transcript

Serves the app (`streamlit run app.py -- --db …`) on loopback on two databases it
builds in `<out>/stores/` (kept between runs): the bundled demo store, and a larger one
written by `storegen bench` (real LangGraph graphs). Opens every shot in headless Chromium
(Debian's /usr/bin/chromium through Playwright), each in a fresh browser context, waits
until the script run is over and every chart is drawn (an ECharts canvas, a plotly SVG),
and writes `<out>/<database>-<shot>.png` and `<out>/index.html`.

The shots (`shots()`): every page of `ui.nav.PAGES` as it opens, so a new page is in the
gallery without a line here, and the states `EXTRA` names per page: a selected thread,
a dialog open, an empty result, an error. A shot whose state could not be reached (its
button gone, say) is still taken and marked in the index, as is any page showing an
exception.
"""

from __future__ import annotations

import argparse
import html
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from debian_chromium import launch_options  # noqa: E402  (the one browser: bench/debian_chromium.py)
VIEWPORT = {"width": 1400, "height": 1000}
MAX_HEIGHT = 7000  # pixels: a longer page is cut here
#: A thread of the demo store with an interrupt, a resume and a tool call (demo/README.md).
DEMO_THREAD = "acme:mobile:sess-3003"
#: The shot of a thread on the larger store opens its longest conversation.
LONGEST = "<longest>"

# Drawn: the page's title is there (before the first run the app is "notRunning" too), no element is
# a placeholder still, the run is over, and every chart holds what it draws (ECharts: a canvas; plotly: its SVG).
_DRAWN = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (!document.querySelector('[data-testid="stMainBlockContainer"] h1')) return false;
  if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSkeletonElement"]')) return false;
  const echarts = [...document.querySelectorAll('[data-testid="stEChartsChart"]')];
  const plotly = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return echarts.every(e => e.querySelector('canvas, svg')) && plotly.every(e => e.querySelector('.main-svg'));
}"""


@dataclass(frozen=True)
class Shot:
    """One screenshot: a page (`ui.nav` stem) opened with `params`, then `act` done in it."""

    page: str
    name: str  # the file's and the index's name, unique per page
    title: str
    params: dict[str, str] = field(default_factory=dict)
    act: str | None = None  # an `ACTIONS` key
    databases: tuple[str, ...] = ("demo", "large")


def _click(label: str, wait: str = '[role="dialog"]') -> Callable:
    def act(page) -> None:
        page.get_by_role("button", name=label).first.click(timeout=10_000)
        page.locator(wait).first.wait_for(timeout=20_000)
    return act


def _load_missing_file(page) -> None:
    page.locator('[data-testid="stExpander"] summary', has_text="Load a source").first.click(timeout=10_000)
    page.get_by_placeholder("store.sqlite").first.fill("/nonexistent/store.sqlite", timeout=10_000)
    page.keyboard.press("Tab")
    page.get_by_role("button", name="Load", exact=True).first.click(timeout=10_000)
    page.locator('[data-testid="stAlert"]').first.wait_for(timeout=30_000)


#: What a shot does after the page opened (it waits for what it opened).
ACTIONS: dict[str, Callable] = {
    "annotate": _click("Annotate"),
    "queue": _click("Review queue…"),
    "display": _click("Display", '[data-testid="stPopoverBody"]'),
    "load_error": _load_missing_file,
}

_EMPTY_DAYS = {"from": "2099-01-01", "to": "2099-01-02"}
#: The states of each page beyond the page as it opens, by `ui.nav` stem.
EXTRA: dict[str, list[Shot]] = {
    "overview": [
        *(Shot("overview", f"trend-{v}", f"trends: {v}", {"trend": v}, databases=("demo",))
          for v in ("tokens", "tools", "latency")),
        Shot("overview", "empty", "no thread in the days chosen (an empty result)", _EMPTY_DAYS, databases=("demo",)),
        Shot("overview", "load-error", "a source that cannot be loaded (an error)", act="load_error",
             databases=("demo",)),
    ],
    "conversations": [
        Shot("conversations", "sorted-duration", "sorted by duration, low first", {"sort": "duration_s", "order": "asc"},
             databases=("demo",)),
        Shot("conversations", "queue-dialog", "the New review queue dialog", act="queue", databases=("demo",)),
        Shot("conversations", "empty", "no thread in the days chosen", _EMPTY_DAYS, databases=("demo",)),
    ],
    "search": [
        Shot("search", "hits", "hits for 'refund'", {"q": "refund"}),
        Shot("search", "tools", "tool calls naming 'order'", {"q": "order", "in": "tool_calls"}, databases=("demo",)),
        Shot("search", "nothing", "a word no message holds (an empty result)", {"q": "zzxqvv"}, databases=("demo",)),
    ],
    "transcript": [
        Shot("transcript", "thread", "a selected thread", {"thread": DEMO_THREAD}, databases=("demo",)),
        Shot("transcript", "longest", "the longest conversation", {"thread": LONGEST}, databases=("large",)),
        Shot("transcript", "display", "the Display menu open", {"thread": DEMO_THREAD}, act="display",
             databases=("demo",)),
        Shot("transcript", "annotate", "the Annotate dialog", {"thread": DEMO_THREAD}, act="annotate",
             databases=("demo",)),
        Shot("transcript", "history", "the thread's history (branch tree)", {"thread": DEMO_THREAD, "history": "1"},
             databases=("demo",)),
        Shot("transcript", "filtered", "a filtered read: the assistant's last reply",
             {"thread": DEMO_THREAD, "view": "filtered", "speaker": "assistant", "index": "-1"}, databases=("demo",)),
        Shot("transcript", "missing", "a thread id that is not there (an error)", {"thread": "acme:nope:none"},
             databases=("demo",)),
    ],
    "resume_qa": [
        Shot("resume_qa", "thread", "a selected thread: its timeline and window", {"thread": DEMO_THREAD},
             databases=("demo",)),
        Shot("resume_qa", "steps", "the timeline by steps", {"thread": DEMO_THREAD, "steps": "1"}, databases=("demo",)),
    ],
    "backlog": [],
    "review": [
        Shot("review", "queue", "a review queue walked: its first thread", {"queue": "1", "item": "1"},
             databases=("demo",)),
    ],
}


def shots() -> list[Shot]:
    """Every page of the app as it opens (from `ui.nav.PAGES`), then each page's `EXTRA` states."""
    from ui import nav

    out = []
    for spec in nav.PAGES:
        out.append(Shot(spec.stem, "page", f"{spec.title} as it opens"))
        out += EXTRA.get(spec.stem, [])
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(db: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--", "--db", str(db)],
        cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"the app did not start on {db}; see {log}")


def databases(folder: Path, threads: int, turns: int) -> dict[str, Path]:
    """The demo store and a `storegen bench` store loaded into `folder` (each built once)."""
    import transcript_lens
    from storegen.bench import build_bench_store
    from storegen.build import remove_store

    folder.mkdir(parents=True, exist_ok=True)
    demo = folder / "demo.duckdb"
    if not demo.exists():
        transcript_lens.load(transcript_lens.demo_store(), demo)
        review_something(demo)
    large = folder / f"bench-{threads}x{turns}.duckdb"
    if not large.exists():
        store = folder / f"bench-{threads}x{turns}.sqlite"
        if not store.exists():
            print(f"writing a {threads}-thread store with storegen (real LangGraph graphs)…", flush=True)
            build_bench_store(str(store), threads, turns, 0)
        transcript_lens.load(str(store), large)
        remove_store(store)  # hundreds of MB; the loaded database is what the gallery keeps
    return {"demo": demo, "large": large}


def review_something(db: Path) -> None:
    """A review queue and a few annotations in the database's workspace, so the Review page, the
    transcript's notes and the Overview's review numbers show what they look like in use (the
    larger store keeps an empty workspace: the pages before any review)."""
    from analytics import workspace

    queue = workspace.create_queue(db, "gallery sample", sample=6, seed=1, author="gallery")
    workspace.annotate(db, DEMO_THREAD, label="good answer", verdict="pass", note="refund approved as asked",
                       author="gallery")
    workspace.annotate(db, DEMO_THREAD, ordinal=3, label="needs follow-up", note="said 'shortly': the approval took 38 min",
                       author="gallery")
    workspace.mark(db, queue.queue_id, 1, by="gallery")


def _longest(db: Path) -> str:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT thread_id FROM threads ORDER BY message_count DESC, thread_id LIMIT 1").fetchone()[0]


def settle(page) -> None:
    """Wait until the page is drawn (`_DRAWN`) and still is a moment later (a run can start another)."""
    for _ in range(2):
        page.wait_for_function(_DRAWN, timeout=120_000, polling=200)
        page.wait_for_timeout(500)
    page.wait_for_function(_DRAWN, timeout=120_000, polling=200)


def _whole_page(page) -> None:
    """Grow the window to the page's height: the app scrolls inside its main area, so a full-page
    screenshot of the window alone would cut it at the first screen."""
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 0")
    if height > VIEWPORT["height"]:
        page.set_viewport_size({"width": VIEWPORT["width"], "height": min(height, MAX_HEIGHT)})
        settle(page)


def take(browser, url: str, shot: Shot, params: dict[str, str], path: Path) -> list[str]:
    """Open the shot, do its action, wait for every chart, screenshot; what went wrong, if anything."""
    notes = []
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{url}/{shot.page}" + (f"?{urlencode(params)}" if params else ""))
        settle(page)
        if shot.act:
            try:
                ACTIONS[shot.act](page)
            except Exception as exc:  # the state is not there any more: shoot what there is, and say so
                notes.append(f"state not reached ({shot.act}): {str(exc).splitlines()[0]}")
            settle(page)
        if not shot.act:  # (a dialog or a menu stays over the first screen, where it opened)
            _whole_page(page)
        if page.locator('[data-testid="stException"]').count():
            notes.append("the page shows an exception")
    except Exception as exc:
        notes.append(f"not drawn: {str(exc).splitlines()[0]}")
    page.screenshot(path=str(path), full_page=True)
    context.close()
    return notes


def index(out: Path, taken: list[tuple[str, Shot, str, list[str]]]) -> Path:
    """`out/index.html`: every shot as a thumbnail linking to the full image, grouped by page."""
    cards = []
    for db, shot, file, notes in taken:
        warn = "".join(f'<p class="warn">{html.escape(n)}</p>' for n in notes)
        cards.append(f'<figure><a href="{file}"><img src="{file}" loading="lazy"></a><figcaption>'
                     f'<b>{html.escape(shot.page)}</b> · {html.escape(shot.title)} · <i>{db}</i>{warn}</figcaption></figure>')
    page = out / "index.html"
    page.write_text(
        "<!doctype html><meta charset=utf-8><title>Transcript Lens gallery</title><style>"
        "body{font-family:system-ui;margin:1rem} main{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));"
        "gap:1rem} figure{margin:0;border:1px solid #ccc;border-radius:6px;padding:.4rem} img{width:100%;height:260px;"
        "object-fit:cover;object-position:top} .warn{color:#b00;margin:.2rem 0}</style>"
        f"<h1>Transcript Lens gallery</h1><p>{len(taken)} shots · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        "</p><main>" + "".join(cards) + "</main>"
    )
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "gallery"))
    parser.add_argument("--threads", type=int, default=2000, help="threads of the larger store (storegen bench)")
    parser.add_argument("--turns", type=int, default=6, help="user turns per thread of the larger store")
    parser.add_argument("--only", action="append", help="only these pages (ui.nav stems; repeatable)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    dbs = databases(out / "stores", args.threads, args.turns)
    for old in out.glob("*.png") if not args.only else ():  # (a partial run keeps the other pages' shots)
        old.unlink()
    chosen = [s for s in shots() if not args.only or s.page in args.only]
    taken = []
    with sync_playwright() as p:
        browser = p.chromium.launch(**launch_options())
        for name, db in dbs.items():
            server, url = _serve(db, out / f"app-{name}.log")
            try:
                longest = _longest(db)
                for shot in (s for s in chosen if name in s.databases):
                    params = {k: (longest if v == LONGEST else v) for k, v in shot.params.items()}
                    file = f"{name}-{shot.page}-{shot.name}.png"
                    notes = take(browser, url, shot, params, out / file)
                    print(f"{file}{'  ' + '; '.join(notes) if notes else ''}", flush=True)
                    taken.append((name, shot, file, notes))
            finally:
                server.terminate()
                server.wait(timeout=20)
        browser.close()
    print(f"{index(out, taken)}: {len(taken)} shots, {sum(bool(n) for *_, n in taken)} with a note")


if __name__ == "__main__":
    main()
