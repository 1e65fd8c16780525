"""Time the topics of N conversations (default 100,000) as a load computes them, on 2 cores, and their agreement.

    .venv/bin/python bench/bench_topics.py                           # writes the labelled set in a temp folder
    .venv/bin/python bench/bench_topics.py --store x.sqlite --threads 100000

The labelled set (storegen/labelled.py, ~290 conversations written by real graphs; without its
restarts, whose long paging turns would multiply the messages copied) is loaded,
then its `threads` and `messages` rows are copied into a database of N threads, each copy's
4-digit numbers (order, invoice, subscription and account numbers) replaced by others so its
question is a new text (`--distinct`: and a made-up word added, so every question has its own
words and the model handles 100,000 items instead of a few hundred). `analytics.topic_mining.materialize.materialize_topics` then runs on that
database as a load would: the documents' queries, the model, both tables written. Prints the
seconds of each step against the 60 s target and the adjusted Rand index against the copied
labels. DuckDB and numpy are held to 2 threads; the target is judged on the process's CPU
time (all its threads), which an idle 2-core machine spends in at most that wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 60.0


def replicate(source_db: Path, db: Path, threads: int, distinct: bool = False) -> None:
    """A database of `threads` threads: the loaded set's `threads` and `messages`, copied with new ids and numbers
    (`distinct`: each copy's user messages also end in a made-up word, so no two questions have the same words)."""
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute("SET threads = 2")
        con.execute(f"ATTACH '{source_db}' AS src (READ_ONLY)")
        n = con.execute("SELECT count(*) FROM src.threads").fetchone()[0]
        copies = -(-threads // n)
        con.execute("CREATE TABLE copies AS SELECT range AS c FROM range(?)", [copies])
        con.execute("""CREATE TABLE threads AS
            SELECT t.* REPLACE (t.thread_id || '#' || c AS thread_id) FROM src.threads t, copies
            QUALIFY row_number() OVER (ORDER BY c, t.thread_id) <= ?""", [threads])
        con.execute("""CREATE TABLE messages AS
            SELECT m.* REPLACE (m.thread_id || '#' || c AS thread_id,
                                CASE WHEN c = 0 THEN m.content ELSE regexp_replace(m.content, '[0-9]{4}',
                                     (1000 + hash(m.thread_id, c) % 9000)::VARCHAR, 'g')
                                     || CASE WHEN ? AND m.role = 'user'
                                             THEN ' ' || translate(left(md5(m.thread_id || c), 8), '0123456789', 'ghijklmnop')
                                             ELSE '' END END AS content)
            FROM src.messages m, copies WHERE m.thread_id || '#' || c IN (SELECT thread_id FROM threads)""", [distinct])
        con.execute("DROP TABLE copies")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="a labelled store (its labels beside it); default: write one in a temp folder")
    ap.add_argument("--threads", type=int, default=100_000)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="the size of the labelled set written (storegen.labelled; 0.05: one conversation per pattern)")
    ap.add_argument("--distinct", action="store_true",
                    help="every copied question gets a made-up word: no two share their words (the model's worst case)")
    a = ap.parse_args(argv)
    import json

    import duckdb

    import transcript_lens
    from analytics.topic_mining import materialize as mat
    from bench.bench_outcomes import adjusted_rand, purity
    from storegen.labelled import build_labelled_store, labels_path

    with tempfile.TemporaryDirectory(prefix="bench-topics-") as tmp:
        store = Path(a.store) if a.store else Path(tmp) / "labelled.sqlite"
        labels = (json.loads(labels_path(store).read_text(encoding="utf-8")) if a.store
                  else build_labelled_store(store, scale=a.scale, restarts=False))
        small = Path(tmp) / "labelled.duckdb"
        transcript_lens.load(store, small)
        big = Path(tmp) / "big.duckdb"
        replicate(small, big, a.threads, a.distinct)
        with duckdb.connect(str(big)) as con:
            con.execute("SET threads = 2")
            (messages,), = con.execute("SELECT count(*) FROM messages").fetchall()  # (fetched whole: thread_documents reads with con.sql)
            print(f"{a.threads} conversations, {messages} messages (copies of {len(labels['threads'])} labelled ones)")
            start, cpu_start = time.perf_counter(), time.process_time()
            docs, asked = mat.thread_documents(con)
            read, cpu_read = time.perf_counter(), time.process_time()
            found = mat.model.cluster(docs)
            clustered, cpu_clustered = time.perf_counter(), time.process_time()
            mat.write_tables(con, found, asked)
            done, cpu_done = time.perf_counter(), time.process_time()
            unique = len({(tuple(mat.model.words(d.text)), d.tools) for d in docs})
            print(f"documents read: {read - start:.1f} s wall, {cpu_read - cpu_start:.1f} s CPU "
                  f"({unique} distinct words and tools among {len(docs)})")
            print(f"model (features, LSA, k-means, merge, assignment): {clustered - read:.1f} s wall, "
                  f"{cpu_clustered - cpu_read:.1f} s CPU")
            print(f"tables written: {done - clustered:.1f} s wall, {cpu_done - cpu_clustered:.1f} s CPU")
            wall, cpu = done - start, cpu_done - cpu_start
            print(f"topics of {a.threads} conversations: {wall:.1f} s wall, {cpu:.1f} s CPU (every thread's, 2 at most); "
                  f"target {TARGET_SECONDS:.0f} s: {'met' if cpu <= TARGET_SECONDS else 'MISSED'} by CPU time "
                  f"({cpu / TARGET_SECONDS:.2f} of the budget; {os.getloadavg()[0]:.1f} load average: wall time counts "
                  "the waits of a shared machine)")
            ids = sorted(found.assignment)
            truth = [labels["threads"][t.split("#")[0]]["topic"] for t in ids]
            got = [found.assignment[t] for t in ids]
            print(f"{len(found.topics)} topics; agreement with the copied labels: adjusted Rand index "
                  f"{adjusted_rand(truth, got):.3f}, purity {purity(truth, got):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
