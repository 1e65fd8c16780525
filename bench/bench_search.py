"""Time text searches with the load-time index (`analytics.search_index`) against the scan of
`messages` they replace, on a database of about ten million messages, and the index's own cost.

Not a test. Takes (or builds, `build`: `bench_pages`' replication of the demo threads, each
copy's texts ending in its copy number, threads and messages only) a database whose every message
text is distinct, writes the index into it when it is not current (timed: wall and CPU seconds, and the file's growth
after a CHECKPOINT), then times each search both ways, interleaved, through `analytics.search`
on a path (each call opens its own read-only connection, as the app's cache wrappers do on a
miss, while one idle connection keeps the database loaded): the scan is the same call with the
index reported absent. Prints medians, the CPU of the
process (every DuckDB thread), the ratio indexed / scan and the index's candidates, and checks
both ways answer the same.

    .venv/bin/python bench/bench_search.py                                  # builds .cache/bench-search-10000k.duckdb once
    .venv/bin/python bench/bench_search.py --db some.duckdb --runs 5
    .venv/bin/python bench/bench_search.py --messages 1000000 --rebuild     # the index's build time on 1M messages
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import duckdb  # noqa: E402

import bench_pages  # noqa: E402
from analytics import search_index  # noqa: E402
from analytics.filters import Filters  # noqa: E402
from analytics.search import SearchQuery, candidates, index_bits, search  # noqa: E402

TARGET_S = 0.3  # a word or phrase search at 10M messages


def build(target: Path, messages: int) -> Path:
    """`bench_pages.build`'s replicated database with distinct texts, but only the tables a search
    reads (`threads`, `messages`, then the index; the demo's other tables are left as they are):
    minutes fewer to build at 10M than every table and every derived one."""
    demo = bench_pages.database.ensure_demo_db()
    tmp = target.with_name(target.name + ".building")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(demo, tmp)
    con = bench_pages.connect_for_writing(tmp)
    con.execute("SET TimeZone = 'UTC'")
    ((base,),) = con.execute("SELECT count(*) FROM messages").fetchall()
    copies = max(0, -(-messages // base) - 1)
    print(f"replicating {base} demo messages ×{copies + 1} (threads and messages only) …", file=sys.stderr)
    con.execute(f"CREATE TEMP TABLE copies AS SELECT range AS k FROM range(1, {copies + 1})")
    distinct = ", CASE WHEN content IS NULL THEN NULL ELSE content || ' #' || CAST(k AS VARCHAR) END AS content"
    for table in ("threads", "messages"):
        replace = bench_pages._REPLACE[table] + (distinct if table == "messages" else "")
        con.execute(f"CREATE TEMP TABLE grown AS SELECT * FROM {table} UNION ALL SELECT src.* REPLACE "
                    f"({replace.format(shift=bench_pages._SHIFT)}) FROM (SELECT * FROM {table}) AS src CROSS JOIN copies")
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT * FROM grown ORDER BY thread_id")  # (a load's order)
        con.execute("DROP TABLE grown")
    con.execute(f"DROP TABLE IF EXISTS {search_index.TABLE}")  # (the demo's: `write_index` writes it for these rows)
    con.execute("CHECKPOINT")
    con.close()
    tmp.replace(target)
    return target


def _index_size(con) -> str:
    ((blocks, size),) = con.execute(
        f"SELECT count(DISTINCT block_id), any_value(block_size) FROM pragma_storage_info('{search_index.TABLE}'), "
        "pragma_database_size() WHERE block_id >= 0").fetchall()
    return f"{blocks * (size or 0) / 1e6:,.0f} MB of blocks"


def write_index(db: Path, rebuild: bool) -> None:
    con = duckdb.connect(str(db))
    try:
        if search_index.current(con) and not rebuild:
            print(f"index: current ({_index_size(con)}; not rebuilt: --rebuild to time it)")
            return
        con.execute(f"DROP TABLE IF EXISTS {search_index.TABLE}")
        con.execute("CHECKPOINT")
        before = os.path.getsize(db)
        (messages,) = con.execute("SELECT count(*) FROM messages").fetchall()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        search_index.materialize_search_index(con)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        con.execute("CHECKPOINT")
        after = os.path.getsize(db)
        print(f"index: {messages:,} messages in {wall:.1f} s wall, {cpu:.1f} CPU-s; {_index_size(con)}; "
              f"the file {before / 1e6:,.0f} MB without it, {after / 1e6:,.0f} MB with it")
    finally:
        con.close()


def _scan(fn):
    """`fn` run with the index reported absent: the search scans `messages`, as without an index."""
    def run():
        real = search_index.current
        search_index.current = lambda con: False
        try:
            return fn()
        finally:
            search_index.current = real
    return run


def cases(db: str) -> list[tuple[str, callable]]:
    con = duckdb.connect(db, read_only=True)
    tenant = con.execute(
        "SELECT tenant_id FROM threads WHERE tenant_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchall()[0][0]
    con.close()
    queries = [
        ("word 'refund'", SearchQuery("refund")),
        ("word 'Refund', user", SearchQuery("Refund", speaker="user")),
        ("phrase 'partial refund'", SearchQuery("partial refund")),
        ("phrase 'the tilt sensor may be damaged'", SearchQuery("the tilt sensor may be damaged")),
        ("word 'A-1043'", SearchQuery("A-1043")),
        (f"word 'refund', tenant {tenant}", SearchQuery("refund", filters=Filters(tenants=(tenant,)))),
        ("word 'Rückerstattung' (two spellings)", SearchQuery("Rückerstattung")),
        ("word 'ΕΠΙΣΤΡΟΦΗ' (Greek)", SearchQuery("ΕΠΙΣΤΡΟΦΗ")),
        ("phrase '返金をお願い' (Japanese)", SearchQuery("返金をお願い")),
        ("phrase 'shipped with UPS and left Louisville'", SearchQuery("shipped with UPS and left Louisville")),
        ("text 'e' (under 3 characters: a scan both ways)", SearchQuery("e")),
    ]
    return [(name, q, (lambda q=q: search(db, q))) for name, q in queries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="a database to use (default: build the replicated one)")
    parser.add_argument("--messages", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true", help="write the index again even when it is current")
    args = parser.parse_args()
    if args.db:
        db = Path(args.db)
    else:
        db = ROOT / ".cache" / f"bench-search-{args.messages // 1000}k.duckdb"
        if not db.exists():
            build(db, args.messages)
    write_index(db, args.rebuild)
    idle = duckdb.connect(str(db), read_only=True)  # keeps the database loaded between calls, as the app does
    print(f"{'search':48} {'indexed s':>10} {'CPU':>6} {'scan s':>8} {'CPU':>6} {'ratio':>6} {'hits':>10} "
          f"{'candidates':>11}  ≤ {TARGET_S} s")
    for name, query, fn in cases(str(db)):
        bits = index_bits(idle, query)
        cands = "-" if bits is None else f"{candidates(idle, bits)[0]:,}"
        indexed, scanned = fn(), _scan(fn)()
        assert (indexed.total, indexed.threads) == (scanned.total, scanned.threads) and indexed.hits.equals(scanned.hits), name
        walls = {"i": [], "s": []}
        cpus = {"i": [], "s": []}
        for _ in range(args.runs):  # interleaved, so both ways see the same machine
            for key, call in (("i", fn), ("s", _scan(fn))):
                t0, c0 = time.perf_counter(), time.process_time()
                call()
                walls[key].append(time.perf_counter() - t0)
                cpus[key].append(time.process_time() - c0)
        wi, ws = statistics.median(walls["i"]), statistics.median(walls["s"])
        ci, cs = statistics.median(cpus["i"]), statistics.median(cpus["s"])
        print(f"{name:48} {wi:10.3f} {ci:6.2f} {ws:8.3f} {cs:6.2f} {wi / ws:6.2f} {indexed.total:10,} {cands:>11}  "
              f"{'met' if wi <= TARGET_S else 'not met'}")
    idle.close()


if __name__ == "__main__":
    main()
