"""Time the data calls behind each app page on a database of about a million messages (or ten).

Not a test. Builds (or takes, with --db) a DuckDB whose threads are the demo
threads replicated under new thread ids (SQL INSERT … SELECT inside a copy of
the demo database, timestamps shifted so days and tenants spread out), then
times each page's calls uncached, the way the app's cache wrappers make them on
a miss (each call opens and closes its own read-only connection while one idle
connection keeps the database loaded): median of --runs runs.

    .venv/bin/python bench/bench_pages.py                      # builds .cache/bench-1000k.duckdb once
    .venv/bin/python bench/bench_pages.py --messages 200000 --runs 3
    .venv/bin/python bench/bench_pages.py --db some.duckdb
    .venv/bin/python bench/bench_pages.py --render      # also each page's whole script run (AppTest)
    .venv/bin/python bench/bench_pages.py --distinct-text   # every copy's text made unique (see below)
    .venv/bin/python bench/bench_pages.py --messages 10000000 --distinct-text --runs 3   # the 10M-message target
    .venv/bin/python bench/bench_pages.py --db X.duckdb --baseline ../old-checkout   # before/after, in turns
    .venv/bin/python bench/bench_pages.py --db X.duckdb --baseline ../old --baseline-db X-old.duckdb  # tables differ

Each call's median is printed against its target (<= 1 s a page's data
call, <= 50 ms a transcript read), with how many calls meet theirs.

The replicated database holds only the demo's ~150 distinct texts, which DuckDB
stores once per row group (dictionary compression) and a text search then reads
a few hundred strings, not a million. `--distinct-text` builds
`.cache/bench-<n>k-distinct.duckdb`, where each copy's messages end in their copy
number, so a search reads every message's text as it would on real data.

With --render, each page is also run through Streamlit's AppTest on that
database: "first" is a new session's first render (cache empty: data calls
included), "rerun" the next rerun (answers cached: widgets, tables and charts only).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

import analytics  # noqa: E402

from analytics import contents  # noqa: E402
from analytics.filters import Filters  # noqa: E402
from loaders.writer import connect_for_writing  # noqa: E402
from ui import database  # noqa: E402
from ui.models import conversations, outcomes, overview, resume_qa, search, transcript  # noqa: E402

TARGET_S = 1.0  # any page's data call (at 10M messages)
READ_TARGET_S = 0.050  # a transcript read, `analytics.read` (at 10M messages)
API_TARGETS_S = {"read": 0.020, "conversations": 0.200}  # at 1M messages: a transcript read, the conversation metrics


def target_of(page: str, call: str) -> float:
    """The target for a call's median: 50 ms for a transcript read, 1 s for any other call.

    >>> target_of("api", "read(thread)"), target_of("search", "search_page('e')")
    (0.05, 1.0)
    """
    return READ_TARGET_S if page == "api" and call.startswith("read(") else TARGET_S

# Columns rewritten per copy k: a new thread id (and session), timestamps shifted.
# Tenant and sub-tenant stay, so tenant filters still select a realistic share.
_ID = "thread_id || '~r' || CAST(k AS VARCHAR) AS thread_id"
_SESSION = "session_id || '~r' || CAST(k AS VARCHAR) AS session_id"
_REPLACE = {
    "threads": f"{_ID}, {_SESSION}, first_ts + {{shift}} AS first_ts, last_ts + {{shift}} AS last_ts",
    "messages": f"{_ID}, {_SESSION}, ts + {{shift}} AS ts",
    "checkpoints": f"{_ID}, ts + {{shift}} AS ts",
    "message_versions": f"{_ID}, first_ts + {{shift}} AS first_ts",
    "message_events": f"{_ID}, ts + {{shift}} AS ts",
}
# Copies spread over ~half a year of days, and within a day by minutes.
_SHIFT = "(to_days(CAST(k % 180 AS INTEGER)) + to_minutes(CAST((k // 180) % 600 AS BIGINT)))"


def build(target: Path, messages: int, distinct_text: bool = False) -> Path:
    """Copy the demo database and replicate its threads until it holds about `messages` messages
    (with `distinct_text`, each copy's message texts end in " #<copy>")."""
    demo = database.ensure_demo_db()
    tmp = target.with_name(target.name + ".building")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(demo, tmp)
    con = connect_for_writing(tmp)  # the row groups a load writes
    con.execute("SET TimeZone = 'UTC'")
    base = con.execute("SELECT count(*) FROM messages").fetchone()[0]
    copies = max(0, -(-messages // base) - 1)
    print(f"replicating {base} demo messages ×{copies + 1} …", file=sys.stderr)
    t0 = time.perf_counter()
    con.execute(f"CREATE TEMP TABLE copies AS SELECT range AS k FROM range(1, {copies + 1})")
    replaces = dict(_REPLACE)
    if distinct_text:
        replaces["messages"] += ", CASE WHEN content IS NULL THEN NULL ELSE content || ' #' || CAST(k AS VARCHAR) END AS content"
    for table, replace in replaces.items():
        con.execute(
            f"INSERT INTO {table} SELECT src.* REPLACE ({replace.format(shift=_SHIFT)}) "
            f"FROM (SELECT * FROM {table}) AS src CROSS JOIN copies"
        )
    # A load writes every table in thread order (workers take thread ranges in id
    # order): a thread's rows are contiguous, and a read skips every row group whose
    # thread-id range (its first 8 bytes, in DuckDB's zone maps) excludes the thread.
    # The copies are put in that order too; appended, a thread's rows would be spread
    # over the whole table.
    for table in _REPLACE:
        con.execute(f"CREATE TEMP TABLE in_thread_order AS SELECT * FROM {table} ORDER BY thread_id, rowid")
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT * FROM in_thread_order")
        con.execute("DROP TABLE in_thread_order")
    # Tables a load derives from the ones above (e.g. conversation_metrics) are rebuilt
    # the way the loader builds them; a copy of the demo's would describe 31 threads.
    derive_tables(con)
    con.execute("CHECKPOINT")
    con.close()
    tmp.replace(target)
    print(f"built {target} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return target


def derive_tables(con) -> None:
    """What a load through `transcript_lens.load` writes at its end, on `con`."""
    from analytics.derived import write_derived_tables

    write_derived_tables(con)


def in_thread_order(db: Path) -> bool:
    """Whether a built database's messages are in thread order, as a load writes them (older builds appended)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        sql = "SELECT count(*) FROM (SELECT thread_id < lag(thread_id) OVER () AS back FROM messages) WHERE back"
        return con.execute(sql).fetchall()[0][0] == 0
    finally:
        con.close()


def stale(db: Path) -> bool:
    """Whether a built database lacks a derived table the current code would read (written by older code)."""
    from analytics import metrics

    con = duckdb.connect(str(db), read_only=True)
    try:
        if not metrics.materialized(con):
            return True
        from analytics.resume import risk_figures as resume_risks

        if not resume_risks._risks_materialized(con):
            return True
        return metrics.current_trend_tables(con) != set(metrics.trend_tables())
    finally:
        con.close()


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float, float, float]:
    """(median, min, max) wall seconds and the median CPU seconds of the process (every DuckDB
    thread included): on a shared machine the CPU time holds while the wall time follows the load."""
    fn()  # warm the OS page cache and DuckDB's catalog once; the app's first visitor pays this too
    samples, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        samples.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(samples), min(samples), max(samples), statistics.median(cpu)


def cases(db: str) -> list[tuple[str, str, Callable[[], object]]]:
    con = duckdb.connect(db, read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    busiest_tenant = con.execute(
        "SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()[0]
    thread = con.execute(
        "SELECT thread_id FROM threads WHERE thread_id LIKE 'globex:api:sess-2107~r%' ORDER BY last_ts DESC LIMIT 1"
    ).fetchone()[0]
    first_ts, last_ts = con.execute("SELECT min(ts), max(ts) FROM messages WHERE thread_id = ?", [thread]).fetchone()
    corpus_first, corpus_last = con.execute("SELECT min(first_ts), max(last_ts) FROM threads").fetchone()
    con.close()
    whole_range = Filters(since=corpus_first, until=corpus_last)  # a window that is not whole UTC days
    tenant = Filters(tenants=(busiest_tenant,))
    out = [
        # The API calls the targets name (a notebook's calls, on a path: each opens its own connection).
        ("api", "read(thread)", lambda: analytics.read(db, thread)),
        ("api", "read(thread, user, index 0)", lambda: analytics.read(db, thread, speaker="user", index=0)),
        ("api", "read(thread, since, until)", lambda: analytics.read(db, thread, since=first_ts, until=last_ts)),
        ("api", "conversations()", lambda: analytics.conversations(db)),
        ("sidebar", "database_info", lambda: contents.database_info(db)),
        ("overview", "facets", lambda: contents.facets(db)),
        ("overview", "overview_page()", lambda: overview.overview_page(db)),
        ("overview", f"overview_page(tenant={busiest_tenant})", lambda: overview.overview_page(db, tenant)),
        ("conversations", "conversations_page()", lambda: conversations.conversations_page(db)),
        ("conversations", "conversations_page(min_turns=2)", lambda: conversations.conversations_page(db, min_turns=2)),
        ("conversations", "conversations_page(text='refund')",
         lambda: conversations.conversations_page(db, Filters(text="refund"))),
        ("conversations", "conversations_page(whole range)", lambda: conversations.conversations_page(db, whole_range)),
        ("conversations", "conversations_page(signal=agent_loop)",
         lambda: conversations.conversations_page(db, Filters(signals=("agent_loop",)))),
        ("outcomes", "outcomes_page()", lambda: outcomes.outcomes_page(db)),
        ("outcomes", f"outcomes_page(tenant={busiest_tenant}, week)", lambda: outcomes.outcomes_page(db, tenant, "week")),
        ("overview", "outcome_counts()", lambda: outcomes.outcome_counts(db)),
        ("transcript", "thread_outcome(thread)", lambda: outcomes.thread_outcome(db, thread)),
        ("transcript", "thread_choices('')", lambda: transcript.thread_choices(db, "", thread)),
        ("transcript", "thread_choices('refund')", lambda: transcript.thread_choices(db, "refund", thread)),
        ("transcript", "transcript_page(all)", lambda: transcript.transcript_page(db, thread)),
        ("transcript", "transcript_page(user, 0)", lambda: transcript.transcript_page(db, thread, "user", 0)),
        ("transcript", "transcript_page(time range)",
         lambda: transcript.transcript_page(db, thread, "all", None, first_ts, last_ts)),
    ]
    out += [
        ("resume_qa", "risk_overview()", lambda: resume_qa.risk_overview(db, Filters(), resume_qa.DEFAULT_CAP)),
        ("resume_qa", "risk_overview(restarted, resume_points asc)",
         lambda: resume_qa.risk_overview(db, restarted_only=True, sort="resume_points", descending=False)),
        ("resume_qa", f"risk_overview(tenant={busiest_tenant}, page 1000)",
         lambda: resume_qa.risk_overview(db, tenant, page=1000)),
    ]
    oldest = _oldest_thread(db)
    out += [
        ("transcript", "conversation(thread) in context", lambda: transcript.conversation(db, thread)),
        ("transcript", "thread_choices(typed oldest id)", lambda: transcript.thread_choices(db, "", oldest)),
        ("search", "search_page('refund')", lambda: search.search_page(db, "refund")),
        ("search", "search_page('refund', user)", lambda: search.search_page(db, "refund", "user")),
        ("search", "search_page('A-1043', tool_calls)", lambda: search.search_page(db, "A-1043", "all", "tool_calls")),
        ("search", "search_page('Rückerstattung')", lambda: search.search_page(db, "Rückerstattung")),
        ("search", f"search_page('refund', tenant={busiest_tenant})", lambda: search.search_page(db, "refund", filters=tenant)),
        ("search", "search_page('e') (most messages match)", lambda: search.search_page(db, "e")),
    ]
    return out


def _oldest_thread(db: str) -> str:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT thread_id FROM threads ORDER BY last_ts NULLS FIRST, thread_id LIMIT 1").fetchall()[0][0]
    finally:
        con.close()


def render_times(db: Path, runs: int) -> list[tuple[str, float, float]]:
    """(page, first render, cached rerun) seconds, median of `runs`, through AppTest."""
    import os

    import streamlit as st
    from streamlit.runtime import pages_manager
    from streamlit.testing.v1 import AppTest

    original = pages_manager.PagesManager.__init__

    def v2(self, *args, **kwargs):  # see tests/pages/conftest.py: AppTest restarts in v1 mode every run
        original(self, *args, **kwargs)
        pages_manager.PagesManager.uses_pages_directory = False

    pages_manager.PagesManager.__init__ = v2
    os.environ["TRANSCRIPT_LENS_DB"] = str(db)
    con = duckdb.connect(str(db), read_only=True)
    thread = con.execute("SELECT thread_id FROM threads ORDER BY last_ts DESC LIMIT 1").fetchone()[0]
    con.close()
    out = []
    for page, params in (("overview", {}), ("conversations", {}), ("transcript", {"thread": thread})):
        first, rerun = [], []
        for _ in range(runs):
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
            at.query_params.update(params)
            at.switch_page(f"pages/{page}.py")
            st.cache_data.clear()  # a first visitor: nothing cached
            t0 = time.perf_counter()
            at.run()
            first.append(time.perf_counter() - t0)
            assert not at.exception, at.exception
            t0 = time.perf_counter()
            at.run()
            rerun.append(time.perf_counter() - t0)
        out.append((page, statistics.median(first), statistics.median(rerun)))
    return out


# A worker times the calls of one checkout (its own bench/bench_pages.py `cases()`), one run per
# request, so two checkouts can be timed call by call in turns on a shared machine. Protocol
# lines start with "@@" (DuckDB may print a progress bar on the same stdout).
_WORKER = """
import json, sys, time
root, db = sys.argv[1], sys.argv[2]
sys.path.insert(0, root + '/bench')
import duckdb
import bench_pages
held = duckdb.connect(db, read_only=True)  # what ui.cache keeps open, as in main()
cases = {(page, call): fn for page, call, fn in bench_pages.cases(db)}
print('@@' + json.dumps(list(cases)), flush=True)
for line in sys.stdin:
    page, call, warm = json.loads(line)
    t0, c0 = time.perf_counter(), time.process_time()
    cases[(page, call)]()
    print('@@' + json.dumps(None if warm else [time.perf_counter() - t0, time.process_time() - c0]), flush=True)
"""


class _Worker:
    def __init__(self, root: Path, db: Path) -> None:
        import subprocess

        root, db = root.resolve(), db.resolve()
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(root), str(db)], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        self.calls = [tuple(c) for c in self._answer()]

    def _answer(self):
        import json

        for line in self.proc.stdout:
            # A query over ~2 s draws DuckDB's progress bar on the same stdout, with no newline
            # after it: the answer may follow it on its line (a line-start match hung the run).
            if "@@" in line:
                return json.loads(line[line.index("@@") + 2:])
        raise RuntimeError(f"worker exited ({self.proc.wait()})")

    def run(self, call: tuple[str, str], warm: bool = False):
        import json

        self.proc.stdin.write(json.dumps([*call, warm]) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def compare(db: Path, baseline: Path, runs: int, baseline_db: Path | None = None) -> None:
    """Each call timed on `baseline` (another checkout) and on this one in turns (warmed once each,
    then `runs` runs alternating which goes first): medians of wall and CPU, and the target.
    `baseline_db`: the database the baseline reads, when its load writes a derived table otherwise
    (a table of another definition is ignored: it would run the live queries)."""
    before, after = _Worker(baseline, baseline_db or db), _Worker(ROOT, db)
    try:
        calls = list(dict.fromkeys([*after.calls, *before.calls]))
        rows = []
        for call in calls:
            sides = [w for w in (before, after) if call in w.calls]
            for w in sides:
                w.run(call, warm=True)
            samples: dict[int, list] = {id(w): [] for w in sides}
            for r in range(runs):
                for w in sides if r % 2 == 0 else sides[::-1]:
                    samples[id(w)].append(w.run(call))
            med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in samples.items()}
            rows.append((call, med.get(id(before)), med.get(id(after))))
    finally:
        before.close()
        after.close()

    def fmt(m):
        return f"{m[0] * 1000:>7.0f}ms {m[1] * 1000:>7.0f}ms" if m else f"{'—':>9} {'—':>9}"

    width = max(len(c[1]) for c, *_ in rows)
    print(f"before: {baseline}{f' on {baseline_db}' if baseline_db else ''}; after: {ROOT}; "
          f"medians of {runs} runs each, in turns\n")
    print(f"{'page':<14} {'call':<{width}} {'before':>9} {'CPU':>9} {'after':>9} {'CPU':>9} {'target':>9}  met")
    met = 0
    for (page, call), b, a in rows:
        target = target_of(page, call)
        ok = a is not None and a[0] <= target
        met += ok
        print(f"{page:<14} {call:<{width}} {fmt(b)} {fmt(a)} {target * 1000:>7.0f}ms  {'yes' if ok else 'NO'}")
    print(f"\nafter: {met} of {len(rows)} calls meet the target")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, help="time this database instead of building one")
    ap.add_argument("--messages", type=int, default=1_000_000, help="size of the built database (default 1e6)")
    ap.add_argument("--out", type=Path, default=None, help="where to build (default .cache/bench-<n>.duckdb)")
    ap.add_argument("--rebuild", action="store_true", help="build even if the file exists")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per call (median reported)")
    ap.add_argument("--render", action="store_true", help="also time each page's whole script run through AppTest")
    ap.add_argument("--baseline", type=Path,
                    help="another checkout (e.g. of the commit before a change): time its calls and this one's in turns")
    ap.add_argument("--baseline-db", type=Path,
                    help="with --baseline: the database its checkout reads (built by its code), when not --db's")
    ap.add_argument("--distinct-text", action="store_true",
                    help="build with every copy's message texts made unique (a text search reads them all)")
    args = ap.parse_args(argv)

    if args.db:
        db = args.db
    else:
        suffix = "-distinct" if args.distinct_text else ""
        db = args.out or database.cache_dir() / f"bench-{args.messages // 1000}k{suffix}.duckdb"
        if args.rebuild or not db.exists() or not in_thread_order(db):
            build(db, args.messages, args.distinct_text)
        elif stale(db):  # built by older code: derive its tables as a load of today would
            t0 = time.perf_counter()
            con = duckdb.connect(str(db))
            derive_tables(con)
            con.execute("CHECKPOINT")
            con.close()
            print(f"derived tables rewritten in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    con = duckdb.connect(str(db), read_only=True)
    threads, messages = con.execute("SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM messages)").fetchone()
    con.close()
    print(f"database {db}: {threads:,} threads, {messages:,} messages; median of {args.runs} runs\n")
    if args.baseline:
        compare(db, args.baseline, args.runs, args.baseline_db)
        return 0

    t0 = time.perf_counter()
    held = duckdb.connect(str(db), read_only=True)  # what ui.cache keeps open per database version
    print(f"opening the database (once per version): {(time.perf_counter() - t0) * 1000:.0f}ms\n")
    rows = []
    for page, call, fn in cases(str(db)):
        med, lo, hi, cpu = timed(fn, args.runs)
        rows.append((page, call, med, lo, hi, cpu))
    width = max(len(r[1]) for r in rows)
    # Each call's median against its target (<= 1 s a page call, <= 50 ms a transcript read).
    print(f"{'page':<14} {'call':<{width}} {'median':>9} {'min':>9} {'max':>9} {'CPU':>9} {'target':>9}  met")
    met = 0
    for page, call, med, lo, hi, cpu in rows:
        target = target_of(page, call)
        met += med <= target
        print(f"{page:<14} {call:<{width}} {med * 1000:>7.0f}ms {lo * 1000:>7.0f}ms {hi * 1000:>7.0f}ms "
              f"{cpu * 1000:>7.0f}ms {target * 1000:>7.0f}ms  {'yes' if med <= target else 'NO'}")
    print(f"\ntargets (median <= 1 s a page call, <= 50 ms a transcript read): {met} of {len(rows)} calls met"
          + ("" if met == len(rows) else f"; over: {', '.join(r[1] for r in rows if r[2] > target_of(r[0], r[1]))}"))
    # A page's first render (cold cache) makes its facets call plus one data call.
    facets = next(r[2] for r in rows if r[1] == "facets")
    print()
    for page, call, med, *_ in rows:
        if page == "api":
            target = API_TARGETS_S[call.split("(")[0]]
            print(f"{'api':<14} {call:<{width}} {med * 1000:>7.0f}ms  {'ok' if med <= target else 'OVER'} "
                  f"(the target at 1M: {target * 1000:.0f} ms)")
    for page in dict.fromkeys(r[0] for r in rows if r[0] != "api"):
        worst = max(r[2] for r in rows if r[0] == page and r[1] != "facets")
        worst_cpu = max(r[5] for r in rows if r[0] == page and r[1] != "facets")
        extra = facets if page in ("overview", "conversations", "resume_qa", "search") else 0.0
        total = worst + extra
        print(f"{page:<14} slowest view {total * 1000:>7.0f}ms (CPU {worst_cpu * 1000:.0f} ms)  "
              f"{'ok' if total < TARGET_S else 'OVER the 1 s target'}")
    held.close()
    if args.render:
        print(f"\n{'page':<14} {'first render':>13} {'cached rerun':>13}   (AppTest, median of {min(args.runs, 3)})")
        for page, first, rerun in render_times(db, min(args.runs, 3)):
            print(f"{page:<14} {first * 1000:>11.0f}ms {rerun * 1000:>11.0f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
