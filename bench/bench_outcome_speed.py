"""Speed of the outcome features on the 1M-message database: what their load-time tables add to a
full load, the topics of 100,000 conversations, and each call their pages make.

    .venv/bin/python bench/bench_outcome_speed.py                       # builds .cache/bench-1000k.sqlite once (~1 min)
    .venv/bin/python bench/bench_outcome_speed.py --store s.sqlite --repeat 3 --runs 3 --topics-threads 100000

Not a test; it prints figures and ratios and asserts none. Three parts, in one run:

1. **Loads.** `transcript-lens load` of the store, each in its own process, in pairs: every
   load-time table (as every load writes them), and the same load without `conversation_signals`,
   `topics` and `conversation_topics` (in that process only, `analytics.derived`'s two steps are
   replaced by no-ops; both processes import `analytics.derived` first, so the only difference is
   those steps). The two are interleaved, the first of a pair alternating; each pair prints its
   with/without ratio of wall time and of CPU time (user + system of the whole process tree,
   steadier on a shared machine), then their range. Target: ≤ 1.15.
2. **The two steps alone** on the database the last full load wrote (CPU and wall seconds), and
   their CPU as a share of the loads' without them (one process: steadier than the ratio of loads).
   Then **the derived tables as a full load writes them** (`write_derived_tables`, the two steps
   side by side with the other tables, under the load's 256 MB memory limit), with and without the
   two steps, interleaved, --repeat pairs: what the steps add to that phase's wall time is what they
   add to a load's, here without the decode's noise; its share of the loads' median wall time
   without them.
3. **Topics of --topics-threads conversations**: `bench/bench_topics.py --distinct` as its own
   process (the labelled set copied to that many threads, each question with a made-up word of
   its own: no two alike). Target: ≤ 60 s.
4. **Pages**: each analytics call the Outcomes, Topics, Failure patterns and Compare pages and the
   Conversations list with an outcome or signal filter make, uncached (each opens its own
   read-only connection, as on a cache miss of the app), on that database (or --db): median of
   --runs, and its CPU. Target: ≤ 1 s each.

The store (default) is the demo store's threads copied by bench/replicate_store.py until it holds
about 1M messages: loaded, it is the 1M-message database of bench/bench_pages.py.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

LOAD_TARGET = 1.15
PAGE_TARGET_S = 1.0

# One load in a process of its own; "without": the signal and topic steps are no-ops there.
_LOAD = """
import sys
import analytics.derived as derived
if sys.argv[1] == "without":
    derived.materialize_signals = derived.materialize_topics = lambda *args: None
from transcript_lens.cli import main
sys.exit(main(["load", sys.argv[2], "--db", sys.argv[3], *sys.argv[4:]]))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_load(mode: str, store: Path, db: Path, extra: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one full load into a new `db`."""
    for stale in db.parent.glob(db.name + "*"):
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", _LOAD, mode, str(store), str(db), *extra], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, _children_cpu() - cpu


def loads(store: Path, folder: Path, repeat: int, extra: list[str]) -> tuple[Path, float, float]:
    """Print the with/without ratios of `repeat` interleaved pairs; returns the last full load's
    database and the median CPU and wall seconds of the loads without the two steps."""
    print(f"loads of {store} ({store.stat().st_size / 1e6:,.0f} MB), {repeat} pairs, interleaved:")
    walls, cpus, without, without_wall = [], [], [], []
    for i in range(repeat):
        order = ("with", "without") if i % 2 == 0 else ("without", "with")
        got = {mode: timed_load(mode, store, folder / f"{mode}.duckdb", extra) for mode in order}
        (w1, c1), (w0, c0) = got["with"], got["without"]
        walls.append(w1 / w0)
        without.append(c0)
        without_wall.append(w0)
        cpus.append(c1 / c0)
        print(f"  pair {i + 1} ({order[0]} first): with {w1:.1f} s wall / {c1:.1f} s CPU, "
              f"without {w0:.1f} s / {c0:.1f} s: ratio {walls[-1]:.3f} wall, {cpus[-1]:.3f} CPU")
    print(f"with/without: wall {min(walls):.3f}–{max(walls):.3f}, CPU {min(cpus):.3f}–{max(cpus):.3f} "
          f"(target ≤ {LOAD_TARGET}: {'met' if statistics.median(walls) <= LOAD_TARGET else 'MISSED'} "
          f"by the median wall ratio, {statistics.median(walls):.3f}; load average {os.getloadavg()[0]:.1f})\n")
    return folder / "with.duckdb", statistics.median(without), statistics.median(without_wall)


def steps(db: Path) -> float:
    """The signal and topic steps alone, written again on `db` (the same tables): their CPU seconds."""
    import duckdb

    from analytics.derived import materialize_signals, materialize_topics

    total = 0.0
    with duckdb.connect(str(db)) as con:
        for step in (materialize_signals, materialize_topics):
            start, cpu = time.perf_counter(), time.process_time()
            step(con, None)
            total += time.process_time() - cpu
            print(f"  {step.__name__}: {time.perf_counter() - start:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
    return total


def derived_phase(db: Path, repeat: int, load_wall: float) -> None:
    """`write_derived_tables` on `db` as a full load runs it, with and without the two steps
    (no-ops, as in the loads without them), `repeat` interleaved pairs: wall and CPU seconds."""
    import duckdb

    import analytics.derived as derived

    steps_ = (derived.materialize_signals, derived.materialize_topics)
    added = []
    for i in range(repeat):
        got = {}
        for mode in ("with", "without") if i % 2 == 0 else ("without", "with"):
            if mode == "without":
                derived.materialize_signals = derived.materialize_topics = lambda *args: None
            with duckdb.connect(str(db)) as con:
                con.execute("SET memory_limit = '256MB'")  # (as the load's writer)
                start, cpu = time.perf_counter(), time.process_time()
                derived.write_derived_tables(con)
                got[mode] = time.perf_counter() - start, time.process_time() - cpu
            derived.materialize_signals, derived.materialize_topics = steps_
        (w1, c1), (w0, c0) = got["with"], got["without"]
        added.append(w1 - w0)
        print(f"  pair {i + 1}: with {w1:.2f} s wall / {c1:.2f} s CPU, without {w0:.2f} s / {c0:.2f} s: "
              f"+{w1 - w0:.2f} s wall, +{c1 - c0:.2f} s CPU (load average {os.getloadavg()[0]:.1f})")
    print(f"  the two steps add {min(added):.2f}–{max(added):.2f} s of wall time to the derived tables: "
          f"{statistics.median(added) / load_wall:.1%} of a load without them by the median "
          f"(its median wall, {load_wall:.1f} s)")


def topics(threads: int) -> None:
    print(f"topics of {threads:,} conversations (bench/bench_topics.py --distinct):", flush=True)
    # --distinct: every copied question gets words of its own, as real questions have (the model's worst case)
    subprocess.run([sys.executable, str(ROOT / "bench" / "bench_topics.py"), "--threads", str(threads), "--distinct"],
                   check=True)
    print()


def page_cases(db: str) -> list[tuple[str, object]]:
    import duckdb
    from bench_compare_page import cases as compare_cases

    from analytics.filters import Filters
    from ui.models.conversations import conversations_page
    from ui.models.outcomes import outcomes_page
    from ui.models.patterns import patterns_page
    from ui.models.topics import topic_threads, topics_page

    with duckdb.connect(db, read_only=True) as con:
        tenant = con.execute("SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL "
                             "GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").fetchone()[0]
        topic = con.execute("SELECT topic_id FROM topics ORDER BY threads DESC, topic_id LIMIT 1").fetchone()
    topic = topic[0] + 1 if topic else None  # (the page numbers topics from 1)
    one = Filters(tenants=(tenant,))
    return [
        ("Outcomes: outcomes_page()", lambda: outcomes_page(db)),
        ("Outcomes: outcomes_page(by=week)", lambda: outcomes_page(db, by="week")),
        (f"Outcomes: outcomes_page(tenant={tenant})", lambda: outcomes_page(db, one)),
        ("Topics: topics_page()", lambda: topics_page(db)),
        (f"Topics: topics_page(tenant={tenant})", lambda: topics_page(db, one)),
        (f"Topics: topic_threads(topic {topic})", lambda: topic_threads(db, topic=topic)),
        (f"Topics: topic_threads(topic {topic}, abandoned)", lambda: topic_threads(db, topic=topic, outcome="abandoned")),
        ("Failure patterns: patterns_page()", lambda: patterns_page(db)),
        (f"Failure patterns: patterns_page(tenant={tenant})", lambda: patterns_page(db, one)),
        *((f"Compare: {name}", fn) for name, fn in compare_cases(db)),
        ("Conversations: conversations_page()", lambda: conversations_page(db)),
        ("Conversations: outcome abandoned", lambda: conversations_page(db, Filters(outcomes=("abandoned",)))),
        ("Conversations: outcome failed, tenant", lambda: conversations_page(db, Filters(tenants=(tenant,), outcomes=("failed",)))),
        ("Conversations: signal agent_loop or user_frustration",
         lambda: conversations_page(db, Filters(signals=("agent_loop", "user_frustration")))),
    ]


def pages(db: Path, runs: int) -> None:
    import duckdb
    from bench_pages import timed

    with duckdb.connect(str(db), read_only=True) as con:
        threads, messages = con.execute("SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM messages)").fetchone()
    print(f"page calls on {db}: {threads:,} threads, {messages:,} messages; median of {runs} runs after one warm-up")
    held = duckdb.connect(str(db), read_only=True)  # what ui.cache keeps open per database version
    rows = [(name, *timed(fn, runs)) for name, fn in page_cases(str(db))]
    held.close()
    width = max(len(r[0]) for r in rows)
    print(f"  {'call':<{width}} {'median':>8} {'min':>8} {'max':>8} {'CPU':>8}  ≤ 1 s")
    for name, med, lo, hi, cpu in rows:
        print(f"  {name:<{width}} {med * 1e3:>6.0f}ms {lo * 1e3:>6.0f}ms {hi * 1e3:>6.0f}ms {cpu * 1e3:>6.0f}ms  "
              f"{'yes' if med <= PAGE_TARGET_S else 'NO'}")
    print(f"slowest: {max(r[1] for r in rows) * 1e3:.0f} ms wall, {max(r[4] for r in rows) * 1e3:.0f} ms CPU "
          f"(load average {os.getloadavg()[0]:.1f})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, help="a checkpoint store (default: the demo store x ~4,600, built once)")
    ap.add_argument("--repeat", type=int, default=3, help="pairs of loads (with / without)")
    ap.add_argument("--workers", type=int, help="the loads' --workers")
    ap.add_argument("--topics-threads", type=int, default=100_000, help="0: no topics run")
    ap.add_argument("--runs", type=int, default=3, help="runs of each page call (0: none)")
    ap.add_argument("--db", type=Path, help="time the page calls on this database instead of the loaded one")
    a = ap.parse_args(argv)
    store = a.store
    if store is None and a.repeat:
        from replicate_store import main as build

        from ui import database

        store = database.cache_dir() / "bench-1000k.sqlite"
        if not store.exists():
            build([str(store)])
    extra = ["--workers", str(a.workers)] if a.workers else []
    with tempfile.TemporaryDirectory(prefix="bench-outcome-speed-") as tmp:
        db, without, without_wall = loads(store, Path(tmp), a.repeat, extra) if a.repeat else (None, 0.0, 0.0)
        if db is not None:
            print("the two steps alone, on the loaded database:")
            cpu = steps(db)
            # (steadier than the loads' ratio on a shared machine: one process, CPU seconds)
            print(f"  together {cpu:.2f} s CPU: {cpu / without:.1%} of a load without them "
                  f"(its median CPU, {without:.1f} s)")
            print("the derived tables as a full load writes them, with and without the two steps:")
            derived_phase(db, a.repeat, without_wall)
            print()
        if a.topics_threads:
            topics(a.topics_threads)
        if a.runs and (a.db or db is not None):
            pages(a.db or db, a.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
