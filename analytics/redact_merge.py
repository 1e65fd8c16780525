"""Findings of several detectors made into one list of spans, none overlapping, in linear time.

The detectors run in priority order. A finding that overlaps nothing taken is taken; one inside
what is taken is dropped; one reaching past what it overlaps takes the union of them all, named
as the longest (ties: the finding, then what was taken first) — dropping it would leave the rest
of it as text (a configured `x+` inside an address).

Each detector's findings come in runs sorted by start (a regex's matches, a matcher's); a run is
merged with what is taken in one pass, so the cost is the number of findings times the number of
runs (a handful per detector), not the square of the number of findings.

>>> from analytics.redact import Finding
>>> merge_findings([[Finding(0, 5, "EMAIL", "a"), Finding(8, 9, "EMAIL", "b")],
...                 [Finding(2, 3, "PHONE", "c"), Finding(7, 12, "PHONE", "d")]])
[Finding(start=0, end=5, kind='EMAIL', value='a'), Finding(start=7, end=12, kind='PHONE', value='d')]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# One taken span: (start, end, order taken, finding). The order breaks ties between equally
# long spans of a union: the one taken first names it.
_Span = tuple[int, int, int, Any]


def merge_findings(detected: Iterable[Iterable[Any]]) -> list[Any]:
    """`detected`: each detector's findings (objects with `start`, `end`, `_replace`), in priority
    order. The spans taken, sorted; empty findings mask nothing and are skipped."""
    taken: list[_Span] = []
    counter = [0]
    for findings in detected:
        run: list[Any] = []
        for f in findings:
            if f.end <= f.start:
                continue
            if run and f.start < run[-1].start:
                taken = _merge_run(taken, run, counter)
                run = []
            run.append(f)
        if run:
            taken = _merge_run(taken, run, counter)
    return sorted(span[3] for span in taken)


def _merge_run(taken: list[_Span], run: list[Any], counter: list[int]) -> list[_Span]:
    """`taken` (sorted, none overlapping) with `run` (sorted by start) merged in, one pass over both."""
    out: list[_Span] = []
    i, n = 0, len(taken)
    for f in run:
        while i < n and taken[i][1] <= f.start:  # wholly before f and every later finding of the run
            out.append(taken[i])
            i += 1
        j = len(out)  # spans of this run's making that reach into f
        while j and out[j - 1][1] > f.start:
            j -= 1
        k = i  # spans taken before that reach into f
        while k < n and taken[k][0] < f.end:
            k += 1
        over = out[j:] + taken[i:k]
        if not over:
            out.append(_span(f, counter))
            continue
        if not any(f.start < t[0] or t[1] < f.end for t in over):
            continue  # inside what is taken
        longest = f
        for t in sorted(over, key=lambda t: t[2]):
            if t[1] - t[0] > longest.end - longest.start:
                longest = t[3]
        union = longest._replace(start=min(f.start, over[0][0]), end=max(f.end, over[-1][1]))
        del out[j:]
        i = k
        out.append(_span(union, counter))
    out.extend(taken[i:])
    return out


def _span(f: Any, counter: list[int]) -> _Span:
    counter[0] += 1
    return (f.start, f.end, counter[0], f)
