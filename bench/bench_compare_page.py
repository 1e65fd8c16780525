"""Time the Compare page's data calls and `costs()` against the 1 s page target.

Not a test. Builds (or takes, with --db) the replicated demo database of bench/bench_pages.py
(its `build`: demo threads copied under new ids, derived tables rebuilt as a load writes them)
with about --messages messages, then times, uncached as on a cache miss of the app (each call
opens its own read-only connection while one idle connection keeps the database loaded):
the cohort choices (`cohort_facets`), the page's one comparison (`compare_page`) for two
tenants, for two halves of the date range, for two models, and with a price table, and
`costs()` by tenant and by outcome × week. Median of --runs runs.

    .venv/bin/python bench/bench_compare_page.py --messages 11400      # ~2,000 threads (.cache/bench-11k.duckdb)
    .venv/bin/python bench/bench_compare_page.py                        # ~1M messages (.cache/bench-1000k.duckdb)
    .venv/bin/python bench/bench_compare_page.py --db some.duckdb --runs 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import duckdb  # noqa: E402

from bench_pages import TARGET_S, build, in_thread_order, timed  # noqa: E402

from analytics.cohorts.costs import costs  # noqa: E402
from analytics.cohorts.facets import cohort_facets  # noqa: E402
from analytics.filters import Filters  # noqa: E402
from ui import database  # noqa: E402
from ui.models.compare import compare_page  # noqa: E402


def cases(db: str) -> list[tuple[str, object]]:
    con = duckdb.connect(db, read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    tenants = [r[0] for r in con.execute(
        "SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2").fetchall()]
    first, last = con.execute("SELECT min(first_ts), max(last_ts) FROM threads").fetchone()
    models = [r[0] for r in con.execute(
        "SELECT model FROM thread_model_metrics GROUP BY 1 ORDER BY sum(messages) DESC, 1 LIMIT 2").fetchall()]
    con.close()
    middle = first + (last - first) / 2
    prices = ("toml", "".join(f'[models."{m}"]\ninput = 1.0\noutput = 4.0\n' for m in models[:1]))  # one model unpriced
    table = {models[0]: {"input": 1.0, "output": 4.0}}
    a_t, b_t = Filters(tenants=(tenants[0],)), Filters(tenants=(tenants[-1],))
    return [
        ("cohort_facets", lambda: cohort_facets(db)),
        ("compare_page(tenant vs tenant)", lambda: compare_page(db, a_t, b_t)),
        ("compare_page(first half vs second half)",
         lambda: compare_page(db, Filters(until=middle), Filters(since=middle))),
        ("compare_page(model vs model)", lambda: compare_page(db, Filters(models=models[:1]), Filters(models=models[-1:]))),
        ("compare_page(tenants, priced)", lambda: compare_page(db, a_t, b_t, prices)),
        ("costs(by=tenant)", lambda: costs(db, table, by="tenant")),
        ("costs(by=outcome, week)", lambda: costs(db, table, by=("outcome", "week"))),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="an existing database (else the replicated demo is built once)")
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages of the built database (default 1M)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    db = args.db
    if db is None:
        db = database.cache_dir() / f"bench-{args.messages // 1000}k.duckdb"
        if not db.exists() or not in_thread_order(db):
            build(db, args.messages)
    con = duckdb.connect(str(db), read_only=True)
    threads, messages = con.execute("SELECT (SELECT count(*) FROM threads), (SELECT count(*) FROM messages)").fetchone()
    con.close()
    print(f"database {db}: {threads:,} threads, {messages:,} messages; median of {args.runs} runs\n")
    held = duckdb.connect(str(db), read_only=True)  # what ui.cache keeps open per database version
    rows = [(call, *timed(fn, args.runs)) for call, fn in cases(str(db))]
    width = max(len(r[0]) for r in rows)
    print(f"{'call':<{width}} {'median':>9} {'min':>9} {'max':>9} {'CPU':>9}  <= 1 s")
    for call, med, lo, hi, cpu in rows:
        print(f"{call:<{width}} {med * 1000:>7.0f}ms {lo * 1000:>7.0f}ms {hi * 1000:>7.0f}ms {cpu * 1000:>7.0f}ms  "
              f"{'yes' if med <= TARGET_S else 'NO'}")
    slowest = max(r[1] for r in rows if r[0].startswith("compare_page")) + rows[0][1]
    print(f"\nCompare page, first render's data (cohort_facets + the slowest comparison): {slowest * 1000:.0f}ms  "
          f"{'ok' if slowest <= TARGET_S else 'OVER the 1 s target'}")
    held.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
