"""How aligning two message lists (`analytics.align.pair`: Resume QA, the transcript diff)
grows with their length, as ratios measured in one run.

    .venv/bin/python bench/bench_align.py                     # 10,000 and 100,000 entries
    .venv/bin/python bench/bench_align.py --sizes 1000 10000 100000

Two cases at each size, built from one seeded generator:

- `altered`: the observed list is the expected one with a third of its texts altered by a
  word, 2% dropped, 2% extra entries and 1% moved (what a faulty resume looks like);
- `unrelated`: no observed text is the expected one nor like it (English words of another
  vocabulary: every entry is left for the similarity step, which compares it with the next
  `SIMILAR_WINDOW` entries of the other side: the worst case).

Prints each case's time per size and the ratio of consecutive sizes over the ratio of the
sizes: about 1 when aligning is linear (a ratio near the size ratio, 10, means quadratic).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import namedtuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analytics.align import pair  # noqa: E402

M = namedtuple("M", "message_id speaker content")
WORDS = ("refund order invoice shipping account password delivery tuesday wednesday status parcel "
         "customer address payment card return label warehouse courier ticket").split()


OTHER_WORDS = ("weather garden piano holiday mountain river kitchen bicycle camera novel museum "
               "concert breakfast painting jacket umbrella").split()


def sentence(rng: random.Random, n: int = 14, words: tuple[str, ...] | list[str] = WORDS) -> str:
    return " ".join(rng.choice(words) for _ in range(n)) + f" #{rng.randrange(10**9)}"


def lists(n: int, case: str, seed: int = 7) -> tuple[list[M], list[M]]:
    """(expected, observed) of about `n` entries each."""
    rng = random.Random(seed)
    expected = [M(None, ("user", "assistant")[i % 2], sentence(rng)) for i in range(n)]
    if case == "unrelated":
        return expected, [M(None, e.speaker, sentence(rng, words=OTHER_WORDS)) for e in expected]
    observed: list[M] = []
    for e in expected:
        r = rng.random()
        if r < 0.02:
            continue  # dropped
        if r < 0.35:
            words = e.content.split()
            words[rng.randrange(len(words))] = rng.choice(WORDS)
            e = M(None, e.speaker, " ".join(words) + " (edited)")
        observed.append(e)
        if rng.random() < 0.02:
            observed.append(M(None, e.speaker, sentence(rng)))
    for _ in range(n // 100):  # moved: swap two entries a few places apart
        a = rng.randrange(len(observed) - 10)
        b = a + rng.randrange(2, 10)
        observed[a], observed[b] = observed[b], observed[a]
    return expected, observed


def timed(expected: list[M], observed: list[M]) -> tuple[float, int]:
    t = time.perf_counter()
    alignment = pair(expected, observed)
    return time.perf_counter() - t, len(alignment.pairs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--cases", nargs="+", default=["altered", "unrelated"], choices=["altered", "unrelated"])
    a = ap.parse_args(argv)
    for case in a.cases:
        previous = None
        for n in a.sizes:
            expected, observed = lists(n, case)
            seconds, paired = timed(expected, observed)
            line = f"{case:9} {n:>8,} entries: {seconds:8.2f} s, {paired:,} pairs"
            if previous is not None:
                growth = (seconds / max(previous[1], 1e-9)) / (n / previous[0])
                line += f"  (time ratio / size ratio: {growth:.2f})"
            print(line, flush=True)
            previous = (n, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
