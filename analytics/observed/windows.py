"""Observed rehydrate windows (JSONL) compared with the expected ones (contract §5.5–§5.6).

A runtime that logs what it put back into its recency window after a restart
writes one JSON object per rehydrated entry, in its own field names
(`analytics.observed.log`, docs/resume_qa.md "The observed JSONL format").
`compare` reads such a log, places every line in an observed window and each
window at the resume it belongs to (`analytics.observed.attribution`: by
checkpoint, by time, else by position order), computes the expected window
there (`analytics.resume.rehydrate.windows_at`), aligns the two
(`analytics.align`) and reports every divergence:

- `missing`: an expected entry that no observed entry stands for;
- `extra`: an observed entry that stands for no expected entry;
- `reordered`: a matched entry out of order relative to the others;
- `altered_content`: a matched entry whose text differs (exact comparison);
- `wrong_speaker`: a matched entry whose speaker differs;
- `wrong_source`: `metadata.source` present and not `resume_rehydrate`;
- `malformed` / `unresolved`: a line that could not be compared (bad JSON or
  fields / unknown thread or checkpoint, or a time no restart fits),
  reported with its line number.

A window passes when none of these concern it; a resume fails when any of its
windows does. The CSV report is `analytics.observed.report`; `analytics.observed` is the face of both.

>>> findings, summary = compare("lens.duckdb", "observed.jsonl")  # doctest: +SKIP
>>> summary[["thread_id", "resume_no", "attributed_by", "confidence", "verdict"]]  # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from analytics import _pandas as pd
from analytics.align import merged_order, pair
from analytics.db import ConOrPath, applied_policy, connection
from analytics.frames import mask_frame, typed
from analytics.observed.attribution import LEAD_S, TOLERANCE_S, Target, Window, attribute
from analytics.observed.log import LineError, ObservedEntry, ObservedLog, Source, parse_observed
from analytics.resume.common import DEFAULT_CAP, RESUME_SOURCE, check_cap
from analytics.resume.gap import DEFAULT_GAP_MINUTES, check_gap
from analytics.resume.rehydrate import windows_at
from analytics.textdiff import inline

#: Every kind of finding, in report order.
FINDING_KINDS: tuple[str, ...] = (
    "missing",
    "extra",
    "reordered",
    "altered_content",
    "wrong_speaker",
    "wrong_source",
    "malformed",
    "unresolved",
)

#: Columns of the findings frame of `compare()`.
FINDING_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "window": "Int64",
    "resume_no": "Int64",
    "checkpoint_id": "str",
    "kind": "str",
    "line": "Int64",
    "expected_position": "Int64",
    "observed_position": "Int64",
    "message_id": "str",
    "expected_speaker": "str",
    "observed_speaker": "str",
    "expected_content": "str",
    "observed_content": "str",
    "text_diff": "str",
    "observed_source": "str",
    "detail": "str",
}

#: Columns of the summary frame of `compare()`: one row per observed window.
SUMMARY_COLUMNS: dict[str, str] = {
    "window": "int64",
    "thread_id": "str",
    "resume_no": "Int64",
    "checkpoint_id": "str",
    "after_checkpoint_id": "str",
    "attributed_by": "str",
    "confidence": "str",
    "attribution": "str",
    "logged_at": "datetime64[us, UTC]",
    "first_line": "Int64",
    "last_line": "Int64",
    "expected_entries": "Int64",
    "observed_entries": "Int64",
    "matched": "Int64",
    **{kind: "Int64" for kind in FINDING_KINDS if kind != "unresolved"},
    "passed": "boolean",
    "verdict": "str",
}


#: Columns of `ObservedComparison.rows`: both windows side by side, one row per entry of either.
ALIGNED_COLUMNS: dict[str, str] = {
    "window": "int64",
    "expected_position": "Int64",
    "expected_speaker": "str",
    "expected_content": "str",
    "message_id": "str",
    "observed_position": "Int64",
    "observed_speaker": "str",
    "observed_content": "str",
    "line": "Int64",
    "findings": "str",
    "text_diff": "str",
}


@dataclass(frozen=True)
class ObservedComparison:
    """`compare()`'s answer with the windows side by side: `findings`, `summary` and `rows`
    (`ALIGNED_COLUMNS`: each expected entry with the observed one standing for it, in window order)."""

    findings: pd.DataFrame
    summary: pd.DataFrame
    rows: pd.DataFrame


@dataclass(frozen=True)
class _Exp:
    position: int
    speaker: str
    content: str
    message_id: str | None


def _aligned(window: int, expected: list[_Exp], observed: list[ObservedEntry], findings: list[dict]) -> list[dict]:
    """One window's entries side by side (`ALIGNED_COLUMNS`), each with the kinds of finding it carries."""
    alignment = pair(expected, observed)
    kinds: dict[tuple, list[str]] = defaultdict(list)
    for f in findings:
        kinds[(f["expected_position"], f["observed_position"])].append(f["kind"])
    rows = []
    for i, j in merged_order(len(expected), len(observed), alignment):
        e = expected[i] if i is not None else None
        o = observed[j] if j is not None else None
        key = (e.position if e else None, o.position if o else None)
        rows.append({
            "window": window,
            "expected_position": key[0], "expected_speaker": e.speaker if e else None,
            "expected_content": e.content if e else None,
            "message_id": (e.message_id if e else None) or (o.message_id if o else None),
            "observed_position": key[1], "observed_speaker": o.speaker if o else None,
            "observed_content": o.content if o else None, "line": o.line if o else None,
            "findings": ", ".join(kinds.get(key, [])) or None,
            "text_diff": inline(e.content, o.content) if e and o and e.content != o.content else None,
        })  # fmt: skip
    return rows


def _findings_for(window: int, w: Window, expected: list[_Exp], observed: list[ObservedEntry]) -> tuple[list[dict], int]:
    """Finding rows of one window, and how many expected entries were matched faithfully."""
    alignment = pair(expected, observed)
    pairs, reordered = alignment.pairs, alignment.moved
    rows: list[dict] = []
    target = w.target

    def row(kind: str, detail: str, e: _Exp | None = None, o: ObservedEntry | None = None) -> None:
        rows.append(
            {
                "thread_id": w.thread_id,
                "window": window,
                "resume_no": target.resume_no if target else None,
                "checkpoint_id": target.checkpoint_id if target else None,
                "kind": kind,
                "line": o.line if o else None,
                "expected_position": e.position if e else None,
                "observed_position": o.position if o else None,
                "message_id": (e.message_id if e else None) or (o.message_id if o else None),
                "expected_speaker": e.speaker if e else None,
                "observed_speaker": o.speaker if o else None,
                "expected_content": e.content if e else None,
                "observed_content": o.content if o else None,
                "text_diff": inline(e.content, o.content) if kind == "altered_content" and e and o else None,
                "observed_source": o.source if o else None,
                "detail": detail,
            }
        )

    matched_e = set(pairs.values())
    for i, e in enumerate(expected):
        if i not in matched_e:
            row("missing", f"expected {e.speaker} entry at position {e.position} is not in the observed window", e=e)
    faithful = 0
    for j, o in enumerate(observed):
        e = expected[pairs[j]] if j in pairs else None
        before = len(rows)
        if e is None:
            row("extra", f"observed {o.speaker} entry at position {o.position} is not in the expected window", o=o)
        else:
            if j in reordered:
                row("reordered", f"expected at position {e.position}, observed at position {o.position}: out of order", e, o)
            if o.content != e.content:
                row("altered_content", "observed text differs from the transcript", e, o)
            if o.speaker != e.speaker:
                row("wrong_speaker", f"expected speaker {e.speaker!r}, observed {o.speaker!r}", e, o)
        if o.source is not None and o.source != RESUME_SOURCE:
            row("wrong_source", f"metadata.source is {o.source!r}, not {RESUME_SOURCE!r}", e, o)
        faithful += e is not None and len(rows) == before
    return rows, faithful


def _entries(w: Window) -> list[ObservedEntry]:
    """A window's good lines in position order; a second line at a taken position is a bad line."""
    kept: dict[int, ObservedEntry] = {}
    for e in sorted(w.entries, key=lambda e: e.line):
        if e.position in kept:
            w.errors.append(LineError(e.line, f"duplicate position {e.position} (also on line {kept[e.position].line})", "",
                                      thread_id=w.thread_id, position=e.position))  # fmt: skip
        else:
            kept[e.position] = e
    return sorted(kept.values(), key=lambda e: e.position)


def _resolver(con, items: list) -> tuple[dict[int, str], list[LineError]]:
    """Each line's thread (by `thread_id`, or tenant / sub-tenant / session); lines naming none known."""
    ids = sorted({i.thread_id for i in items if i.thread_id})
    sessions = sorted({i.session_id for i in items if i.session_id})
    rows = con.sql(
        "SELECT thread_id, tenant_id, sub_tenant_id, session_id FROM threads "
        "WHERE thread_id IN (SELECT unnest($ids)) OR session_id IN (SELECT unnest($sessions))",
        params={"ids": ids, "sessions": sessions},
    ).fetchall()
    known = {r[0] for r in rows}
    by_key: dict[tuple, list[str]] = defaultdict(list)
    for thread_id, tenant, sub, session in rows:
        by_key[(tenant, sub, session)].append(thread_id)
    found: dict[int, str] = {}
    unknown: list[LineError] = []
    for item in items:
        if item.thread_id:
            if item.thread_id in known:
                found[item.line] = item.thread_id
                continue
            why = f"no thread {item.thread_id!r} in this database"
        elif item.session_id:
            key = (item.tenant_id, item.sub_tenant_id or None, item.session_id)
            matches = by_key.get(key, [])
            if len(matches) == 1:
                found[item.line] = matches[0]
                continue
            what = "no thread" if not matches else f"{len(matches)} threads"
            why = f"{what} with tenant_id={key[0]!r}, sub_tenant_id={key[1]!r}, session_id={key[2]!r} in this database"
        else:
            continue  # a bad line naming no thread: reported as it is
        if isinstance(item, ObservedEntry):
            unknown.append(LineError(item.line, why, "", kind="unresolved"))
    return found, unknown


def compare(
    con_or_path: ConOrPath,
    observed: Source,
    cap: int = DEFAULT_CAP,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    tolerance_s: float = TOLERANCE_S,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compare observed windows with the expected ones; return `(findings, summary)`.

    (`compare_detail` answers the same with the windows side by side as well.)

    `observed` is a JSONL path, its bytes, a file object or an `ObservedLog`.
    Each line is resolved to a thread (`thread_id`, or tenant / sub-tenant /
    session) and placed in a window, and each window at a resume point
    (`analytics.observed.attribution`: by `checkpoint_id`, by its time and the
    resume points at `gap_minutes` with `tolerance_s`, else by position order).
    Summary: `SUMMARY_COLUMNS`, one row per observed window (`window` 1..) with
    the resume it was attributed to, how (`attributed_by`), how surely
    (`confidence`: exact, high, medium, low) and why (`attribution`), the counts
    and `passed` / `verdict`. Findings: `FINDING_COLUMNS`, one row per divergence
    (`FINDING_KINDS`), naming its window and resume; lines that fit no window last.

    >>> findings, summary = compare("lens.duckdb", "observed.jsonl", cap=50)  # doctest: +SKIP
    >>> summary[["resume_no", "attributed_by", "verdict"]].values.tolist()  # doctest: +SKIP
    [[1, 'time', 'pass'], [2, 'time', 'fail']]
    """
    result = compare_detail(con_or_path, observed, cap, gap_minutes, tolerance_s)
    return result.findings, result.summary


def compare_detail(
    con_or_path: ConOrPath,
    observed: Source,
    cap: int = DEFAULT_CAP,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    tolerance_s: float = TOLERANCE_S,
) -> ObservedComparison:
    """`compare()`, with `rows`: every window's expected and observed entries side by side.

    >>> compare_detail("lens.duckdb", "observed.jsonl").rows.query("window == 1")  # doctest: +SKIP
    """
    cap = check_cap(cap)
    gap_minutes = check_gap(gap_minutes)
    log = parse_observed(observed)
    with connection(con_or_path) as con:
        threads, unknown = _resolver(con, [*log.entries, *log.errors])
        items = [(i, threads[i.line]) for i in (*log.entries, *log.errors) if i.line in threads]
        expected_cache: dict[tuple[str, str], list[_Exp]] = {}

        def expected_at(pairs: list[tuple[str, str]]) -> None:
            wanted = sorted({p for p in pairs if p not in expected_cache})
            if not wanted:
                return
            for key in wanted:
                expected_cache[key] = []
            # As stored: the runtime logged the text itself; what leaves here is masked (below).
            for w in windows_at(con, wanted, cap, mask=False).itertuples(index=False):
                mid = None if pd.isna(w.message_id) else w.message_id
                expected_cache[(w.thread_id, w.checkpoint_id)].append(_Exp(int(w.position), w.speaker, w.content, mid))

        def score(window: Window, target: Target) -> float:
            expected_at([(window.thread_id, target.checkpoint_id)])
            probe = Window(window.thread_id, target, "", "", "", list(window.entries), [])
            rows, _ = _findings_for(0, probe, expected_cache[(window.thread_id, target.checkpoint_id)], _entries(probe))
            return -float(len(rows) + len(probe.errors))

        windows, unplaced = attribute(con, items, gap_minutes, score, LEAD_S, tolerance_s)
        expected_at([(w.thread_id, w.target.checkpoint_id) for w in windows])
        policy = applied_policy(con)

    finding_rows: list[dict] = []
    summary_rows: list[dict] = []
    aligned: list[dict] = []
    for number, w in enumerate(windows, start=1):
        entries = _entries(w)
        expected = expected_cache.get((w.thread_id, w.target.checkpoint_id), [])
        rows, faithful = _findings_for(number, w, expected, entries)
        aligned.extend(_aligned(number, expected, entries, rows))
        rows.extend(_error_row(err, w, number) for err in sorted(w.errors, key=lambda e: e.line))
        finding_rows.extend(rows)
        counts = {kind: sum(r["kind"] == kind for r in rows) for kind in FINDING_KINDS}
        lines = w.lines
        summary_rows.append({
            "window": number,
            "thread_id": w.thread_id,
            "resume_no": w.target.resume_no,
            "checkpoint_id": w.target.checkpoint_id,
            "after_checkpoint_id": w.target.after_checkpoint_id,
            "attributed_by": w.attributed_by,
            "confidence": w.confidence,
            "attribution": w.attribution,
            "logged_at": w.logged_at,
            "first_line": lines[0] if lines else None,
            "last_line": lines[-1] if lines else None,
            "expected_entries": len(expected),
            "observed_entries": len(entries),
            "matched": faithful,
            **{kind: counts[kind] for kind in FINDING_KINDS if kind != "unresolved"},
            "passed": not rows,
            "verdict": "pass" if not rows else "fail",
        })  # fmt: skip
    placed = {line for w in windows for line in w.lines}
    leftovers = [e for e in (*log.errors, *unknown, *unplaced) if e.line not in placed]
    seen: set[int] = set()
    for err in sorted(leftovers, key=lambda e: e.line):
        if err.line not in seen:
            seen.add(err.line)
            finding_rows.append(_error_row(err, None, None, threads.get(err.line)))
    findings = typed(pd.DataFrame(finding_rows), FINDING_COLUMNS)
    if len(findings):
        rank = {k: i for i, k in enumerate(FINDING_KINDS)}
        findings = (
            findings.assign(
                _w=findings["window"].fillna(1 << 30),
                _k=findings["kind"].map(rank),
                _p=findings["expected_position"].fillna(findings["observed_position"]),
            )
            .sort_values(["_w", "_p", "_k", "line"], na_position="last", kind="stable")
            .drop(columns=["_w", "_k", "_p"])
            .reset_index(drop=True)
        )
    # Compared as stored and as logged; answered as the connection reads (masked under redaction).
    return ObservedComparison(
        mask_frame(findings, policy, FINDING_COLUMNS),
        mask_frame(typed(pd.DataFrame(summary_rows), SUMMARY_COLUMNS), policy, SUMMARY_COLUMNS),
        mask_frame(typed(pd.DataFrame(aligned), ALIGNED_COLUMNS), policy, ALIGNED_COLUMNS),
    )


def _error_row(err: LineError, w: Window | None, window: int | None, thread_id: str | None = None) -> dict:
    target = w.target if w is not None else None
    return {
        "thread_id": w.thread_id if w is not None else thread_id or err.thread_id,
        "window": window,
        "resume_no": target.resume_no if target else None,
        "checkpoint_id": target.checkpoint_id if target else err.checkpoint_id,
        "kind": err.kind,
        "line": err.line,
        "expected_position": None,
        "observed_position": err.position,
        "message_id": None,
        "expected_speaker": None,
        "observed_speaker": None,
        "expected_content": None,
        "observed_content": err.text or None,
        "text_diff": None,
        "observed_source": None,
        "detail": err.error,
    }

