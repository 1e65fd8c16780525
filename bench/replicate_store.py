"""A large SqliteSaver store made of copies of a small one: the demo store's threads under new ids.

    .venv/bin/python bench/replicate_store.py out.sqlite                     # ~1M messages: the demo store x 5,682
    .venv/bin/python bench/replicate_store.py out.sqlite --copies 10 --source other.sqlite

Copy k of thread T is thread `T~r<k>` (the id bench/bench_pages.py gives its copies in a
database), its checkpoints' `ts` shifted by the same days and minutes as there, so a load of
this store is the 1M-message benchmark database of bench_pages.py read through the loader:
176,142 threads, 1,000,032 messages from the demo store's 31 threads and 176 messages. The
checkpoints keep their ids and their order; each blob's `ts` string is rewritten in place
(an ISO time of the same length), the rest of every row is copied as it is.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import sys
import time
from pathlib import Path

import ormsgpack

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MESSAGES = 1_000_000


def shift(k: int) -> dt.timedelta:
    """The shift of copy k: bench_pages.py's `_SHIFT` (copies over ~half a year of days, then by minutes)."""
    return dt.timedelta(days=k % 180, minutes=(k // 180) % 600)


def _ignore(code: int, data: bytes) -> None:
    """Extension values (LangChain objects) are not read: only the checkpoint's `ts` is."""


def _with_ts(blob: bytes, ts: str, new: str) -> bytes:
    old_b, new_b = ts.encode(), new.encode()
    if len(old_b) != len(new_b):
        raise ValueError(f"shifted ts {new!r} is not as long as {ts!r}")
    at = blob.index(b"\xa2ts")  # the key "ts" (fixstr 2); its value follows
    return blob[:at] + blob[at:].replace(old_b, new_b, 1)


def copies_for(source: Path, messages: int) -> int:
    """How many copies hold about `messages` messages (the source's message count read by a load)."""
    import tempfile

    import duckdb

    import transcript_lens

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "one.duckdb"
        transcript_lens.load(str(source), db)
        with duckdb.connect(str(db), read_only=True) as con:
            base = con.execute("SELECT count(*) FROM messages").fetchone()[0]
    return max(1, -(-messages // base))


def replicate(source: Path, target: Path, copies: int) -> None:
    """Write `target`: `copies` copies of every thread of `source` (copy 0 keeps the ids and times)."""
    tmp = target.with_name(target.name + ".building")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.unlink(missing_ok=True)
    src = sqlite3.connect(source)
    out = sqlite3.connect(tmp)
    out.execute("PRAGMA journal_mode = OFF")
    out.execute("PRAGMA synchronous = OFF")
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'writes')"):
        out.execute(sql)
    rows = src.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                       "FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id").fetchall()
    times = [ormsgpack.unpackb(r[5], ext_hook=_ignore)["ts"] if r[4] == "msgpack" else None for r in rows]
    writes = src.execute("SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx").fetchall()
    src.close()

    by_thread: dict[str, tuple[list, list]] = {}
    for row, ts in zip(rows, times):
        by_thread.setdefault(row[0], ([], []))[0].append((row, ts))
    for w in writes:
        by_thread.setdefault(w[0], ([], []))[1].append(w)
    # Thread by thread in id order, as a store written one conversation at a time lays them out.
    order = sorted((thread + (f"~r{k}" if k else ""), thread, k) for thread in by_thread for k in range(copies))
    for n, (new_id, thread, k) in enumerate(order):
        its_rows, its_writes = by_thread[thread]
        out.executemany("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (new_id, *row[1:5], _with_ts(row[5], ts, (dt.datetime.fromisoformat(ts) + shift(k)).isoformat())
             if k and ts is not None else row[5], row[6]) for row, ts in its_rows])
        out.executemany(f"INSERT INTO writes VALUES ({', '.join('?' * 9)})", [(new_id, *w[1:]) for w in its_writes])
        if n % 20_000 == 19_999:
            out.commit()
    out.commit()
    out.close()
    tmp.replace(target)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", type=Path)
    ap.add_argument("--source", type=Path, help="a SqliteSaver store (default: the demo store)")
    ap.add_argument("--copies", type=int, help=f"default: as many as hold about --messages ({MESSAGES:,})")
    ap.add_argument("--messages", type=int, default=MESSAGES)
    a = ap.parse_args(argv)
    import transcript_lens

    source = a.source or transcript_lens.demo_store()
    copies = a.copies or copies_for(source, a.messages)
    t0 = time.perf_counter()
    replicate(source, a.target, copies)
    print(f"{a.target}: {copies} copies of {source} ({a.target.stat().st_size / 1e6:,.0f} MB) "
          f"in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
