"""How well the outcome signals find what the labelled set holds: precision, recall, outcome accuracy, topic agreement.

    .venv/bin/python bench/bench_outcomes.py                     # writes the labelled set (~320 conversations) in a temp folder
    .venv/bin/python bench/bench_outcomes.py --store x.sqlite    # a set written by `python -m storegen labelled x.sqlite`
    .venv/bin/python bench/bench_outcomes.py --scale 0.05 --errors 5

The set (storegen/labelled.py) is loaded with `transcript_lens.load`; `analytics.outcomes`
(or `--impl module:function`, called the same way) gives one row per thread, compared with
the labels: precision and recall per signal and accuracy of `outcome` with a confusion table,
each against the target (>= 0.9); "points at" counts the threads both flag whose computed
`<signal>_ordinals` include a labelled ordinal; each signal's rate per app version. When `analytics.topics` exists, its topic per thread is
compared with the labelled topic: adjusted Rand index and purity (both computed here). Figures are from one run; nothing is timed. Exit status 0, or 3 when
there is no `analytics.outcomes` to measure.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET = 0.9
TOPIC_TARGET = 0.8
NO_OUTCOMES = 3


def _callable(module: Any, name: str) -> Any:
    """`module.name` when it is a function; a subpackage of that name is searched for the function."""
    found = getattr(module, name, None)
    if found is not None and not callable(found):
        found = getattr(found, name, None)
    return found if callable(found) else None


def _impl(spec: str | None, name: str) -> Any:
    if spec:
        module, _, func = spec.partition(":")
        return getattr(importlib.import_module(module), func)
    import analytics

    return _callable(analytics, name)


def _mark(value: float | None, target: float) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f} {'met' if value >= target else 'MISSED'}"


def signal_table(labels: dict[str, Any], frame: Any, errors: int) -> list[str]:
    """Precision and recall per signal (threads missing from `frame` count as all-false)."""
    threads = labels["threads"]
    got = frame.set_index("thread_id")
    lines = [f"{'signal':24} {'true':>5} {'TP':>4} {'FP':>4} {'FN':>4}  {'precision':14} {'recall':14} points at"]
    for signal in labels["signals"]:
        if signal not in got.columns:
            lines.append(f"{signal:24} column missing from the outcomes frame")
            continue
        col = got[signal].fillna(False).astype(bool).to_dict()
        fp = [t for t, want in threads.items() if col.get(t, False) and not want[signal]]
        fn = [t for t, want in threads.items() if want[signal] and not col.get(t, False)]
        tp = sum(1 for t, want in threads.items() if want[signal] and col.get(t, False))
        precision = tp / (tp + len(fp)) if tp + len(fp) else None
        recall = tp / (tp + len(fn)) if tp + len(fn) else None
        at = _points_at(labels, got, signal)
        lines.append(f"{signal:24} {tp + len(fn):5} {tp:4} {len(fp):4} {len(fn):4}  {_mark(precision, TARGET):14} "
                     f"{_mark(recall, TARGET):14} {at}")
        for kind, ids in (("false positive", fp), ("missed", fn)):
            lines += [f"    {kind}: {t} ({threads[t]['pattern']}, {threads[t]['lang']})" for t in ids[:errors]]
    return lines


def _points_at(labels: dict[str, Any], got: Any, signal: str) -> str:
    """Of the threads both flag, the share whose computed ordinals include a labelled one (no target: a pointer check)."""
    column = f"{signal}_ordinals"
    if column not in got.columns:
        return "-"
    both = [t for t, want in labels["threads"].items() if want[signal] and t in got.index and bool(got.at[t, signal])]
    if not both:
        return "n/a"
    hit = sum(1 for t in both if set(labels["threads"][t]["ordinals"].get(signal, [])) & {int(o) for o in (got.at[t, column] or [])})
    return f"{hit}/{len(both)}"


def outcome_table(labels: dict[str, Any], frame: Any, errors: int) -> list[str]:
    """Accuracy of `outcome` and the confusion table (rows: labelled, columns: computed)."""
    threads = labels["threads"]
    got = frame.set_index("thread_id")["outcome"].to_dict() if "outcome" in frame.columns else {}
    pairs = Counter((want["outcome"], str(got.get(t))) for t, want in threads.items())
    right = sum(n for (a, b), n in pairs.items() if a == b)
    classes = list(labels["outcomes"]) + sorted({b for _, b in pairs} - set(labels["outcomes"]))
    lines = [f"outcome accuracy: {_mark(right / len(threads), TARGET)} ({right}/{len(threads)})",
             "labelled \\ computed " + " ".join(f"{c:>9}" for c in classes)]
    for a in labels["outcomes"]:
        lines.append(f"{a:19} " + " ".join(f"{pairs.get((a, b), 0):9}" for b in classes))
    wrong = [(t, want["outcome"], got.get(t)) for t, want in threads.items() if want["outcome"] != str(got.get(t))]
    lines += [f"    {t}: labelled {a}, computed {b} ({threads[t]['pattern']})" for t, a, b in wrong[:errors]]
    return lines


def cohort_lines(labels: dict[str, Any], frame: Any) -> list[str]:
    """Each signal's rate per app version, labelled and computed: the difference a cohort comparison should find."""
    got = frame.set_index("thread_id")
    versions = sorted({t["app_version"] for t in labels["threads"].values()})
    lines = ["signal rate by app_version (labelled / computed): " + ", ".join(versions)]
    for signal in labels["signals"]:
        cells = []
        for v in versions:
            ids = [t for t, want in labels["threads"].items() if want["app_version"] == v]
            want = sum(labels["threads"][t][signal] for t in ids) / len(ids)
            computed = got[signal].reindex(ids).fillna(False).astype(bool).mean() if signal in got.columns else float("nan")
            cells.append(f"{want:.2f} / {computed:.2f}")
        lines.append(f"  {signal:24} " + "   ".join(cells))
    return lines


def purity(truth: list[str], found: list[Any]) -> float:
    """Share of threads whose found cluster's majority label is their own.

    >>> purity(["a", "a", "b", "b"], [1, 1, 1, 2])
    0.75
    """
    by_cluster: dict[Any, Counter] = {}
    for t, f in zip(truth, found):
        by_cluster.setdefault(f, Counter())[t] += 1
    return sum(c.most_common(1)[0][1] for c in by_cluster.values()) / len(truth)


def adjusted_rand(truth: list[Any], found: list[Any]) -> float:
    """Adjusted Rand index of two labellings (Hubert and Arabie): 1 the same partition, ~0 chance.

    >>> adjusted_rand(["a", "a", "b", "b"], [7, 7, 3, 3]), round(adjusted_rand(["a", "a", "b", "b"], [1, 2, 1, 2]), 3)
    (1.0, -0.5)
    """
    from math import comb

    pairs = sum(comb(n, 2) for n in Counter(zip(truth, found)).values())
    rows, cols = (sum(comb(n, 2) for n in Counter(x).values()) for x in (truth, found))
    expected = rows * cols / comb(len(truth), 2) if len(truth) > 1 else 0.0
    top = (rows + cols) / 2
    return 1.0 if top == expected else (pairs - expected) / (top - expected)


def topic_lines(labels: dict[str, Any], db: Path, spec: str | None) -> list[str]:
    topics = _impl(spec, "topics")
    if topics is None:
        return ["topics: analytics.topics is not available here; topic agreement not measured"]
    frame = topics(str(db))
    column = next((c for c in ("topic_id", "topic") if c in frame.columns), None)
    if column is None or "thread_id" not in frame.columns:
        return [f"topics: expected thread_id and topic_id columns, got {list(frame.columns)}; not measured"]
    found = frame.set_index("thread_id")[column].to_dict()
    ids = [t for t in labels["threads"] if t in found]
    truth, got = [labels["threads"][t]["topic"] for t in ids], [found[t] for t in ids]
    return [f"topic agreement (adjusted Rand index): {_mark(adjusted_rand(truth, got), TOPIC_TARGET)} over {len(ids)} threads, "
            f"purity {_mark(purity(truth, got), TOPIC_TARGET)}, {len(set(got))} topics found for {len(set(truth))} labelled"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="a labelled store (its labels beside it); default: write one in a temp folder")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--errors", type=int, default=3, help="list up to N mistaken threads per signal")
    ap.add_argument("--impl", help="module:function to measure instead of analytics.outcomes")
    ap.add_argument("--topics-impl", help="module:function to measure instead of analytics.topics")
    a = ap.parse_args(argv)
    outcomes = _impl(a.impl, "outcomes")
    if outcomes is None:
        print("analytics.outcomes is not available in this tree: nothing to measure", file=sys.stderr)
        return NO_OUTCOMES
    import json

    import transcript_lens
    from storegen.labelled import build_labelled_store, composition, labels_path

    with tempfile.TemporaryDirectory(prefix="bench-outcomes-") as tmp:
        store = Path(a.store) if a.store else Path(tmp) / "labelled.sqlite"
        if a.store:
            labels = json.loads(labels_path(store).read_text(encoding="utf-8"))
        else:
            labels = build_labelled_store(store, seed=a.seed, scale=a.scale)
        db = Path(tmp) / "labelled.duckdb"
        transcript_lens.load(store, db)
        frame = outcomes(str(db))
        print(f"labelled set: {len(labels['threads'])} conversations, seed {labels['seed']}, scale {labels['scale']}")
        for key, counts in composition(labels).items():
            print(f"  {key}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        print(f"computed rows: {len(frame)}")
        for line in signal_table(labels, frame, a.errors) + [""] + outcome_table(labels, frame, a.errors) + [""] + cohort_lines(labels, frame) + [""]:
            print(line)
        for line in topic_lines(labels, db, a.topics_impl):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
