"""Observed rehydrate windows (JSONL) compared with the expected ones (contract §5).

A runtime that logs what it put back into its recency deque after a restart
writes one JSON object per rehydrated entry (docs/resume_qa.md, "The observed
JSONL format"):

    {"thread_id": "acme:web:s1", "checkpoint_id": "1eff…", "position": 0,
     "speaker": "user", "content": "Hi", "metadata": {"source": "resume_rehydrate"}}

`parse_observed` reads such a file without a database: good lines become
`ObservedEntry`s, bad ones `LineError`s with their line number. `compare`
resolves each line to a thread and a root checkpoint, groups the lines into
one observed window per resume, computes the expected window there
(`analytics.resume_rehydrate.windows_at`) and reports every divergence:

- `missing`: an expected entry that no observed entry stands for;
- `extra`: an observed entry that stands for no expected entry;
- `reordered`: a matched entry out of order relative to the others;
- `altered_content`: a matched entry whose text differs (exact comparison);
- `wrong_speaker`: a matched entry whose speaker differs;
- `wrong_source`: `metadata.source` present and not `resume_rehydrate`;
- `malformed` / `unresolved`: a line that could not be compared (bad JSON or
  fields / unknown thread or checkpoint), reported with its line number.

A resume passes when none of these concern it.

>>> findings, summary = compare("lens.duckdb", "observed.jsonl")  # doctest: +SKIP
>>> summary[["thread_id", "checkpoint_id", "verdict"]]  # doctest: +SKIP
"""

from __future__ import annotations

import bisect
import difflib
import importlib.util
import io
import json
import numbers
import os
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Union


from analytics._pandas import pd
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest
from analytics.filters import Filters, as_utc
from analytics.frames import fetch_frame, typed
from analytics.resume_common import DEFAULT_CAP, NO_FILTERS, RESUME_SOURCE, check_cap
from analytics.resume_gap import DEFAULT_GAP_MINUTES, check_gap, gap_option
from analytics.resume_chain import current_chain, resume_points
from analytics.resume_rehydrate import resume_windows_sql, windows_at

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
    "observed_source": "str",
    "detail": "str",
}

#: Columns of the summary frame of `compare()`: one row per observed resume.
SUMMARY_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_id": "str",
    "named_by": "str",
    "expected_entries": "Int64",
    "observed_entries": "Int64",
    "matched": "Int64",
    **{kind: "Int64" for kind in FINDING_KINDS if kind != "unresolved"},
    "passed": "boolean",
    "verdict": "str",
}

Source = Union[str, os.PathLike, bytes, IO[str], IO[bytes], "ObservedLog"]


@dataclass(frozen=True)
class ObservedEntry:
    """One well-formed line: a rehydrated entry as the runtime reports it.

    `thread_id` is as given, or None when the line names the thread by
    `tenant_id` / `sub_tenant_id` / `session_id`; `source` is `metadata.source`.
    """

    line: int
    speaker: str
    content: str
    position: int
    thread_id: str | None = None
    tenant_id: str | None = None
    sub_tenant_id: str | None = None
    session_id: str | None = None
    checkpoint_id: str | None = None
    resume_at: datetime | None = None
    message_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class LineError:
    """A line that cannot be compared: its number, why, and its text (shortened).

    The thread / resume fields are filled when the line names them readably,
    so the error can count against that resume.
    """

    line: int
    error: str
    text: str
    thread_id: str | None = None
    tenant_id: str | None = None
    sub_tenant_id: str | None = None
    session_id: str | None = None
    checkpoint_id: str | None = None
    resume_at: datetime | None = None
    kind: str = "malformed"


@dataclass(frozen=True)
class ObservedLog:
    """A parsed observed JSONL: the good lines and the bad ones.

    >>> log = parse_observed(io.BytesIO(b'{"thread_id": "t", "speaker": "user", "content": "hi", "position": 0}\\n{'))
    >>> len(log.entries), [e.line for e in log.errors]
    (1, [2])
    """

    entries: tuple[ObservedEntry, ...] = ()
    errors: tuple[LineError, ...] = field(default=())

    def entries_frame(self) -> pd.DataFrame:
        """The good lines as a DataFrame (one column per `ObservedEntry` field)."""
        return pd.DataFrame([e.__dict__ for e in self.entries], columns=list(ObservedEntry.__dataclass_fields__))

    def errors_frame(self) -> pd.DataFrame:
        """The bad lines: line, error, text."""
        return pd.DataFrame([(e.line, e.error, e.text) for e in self.errors], columns=["line", "error", "text"])


# ---------------------------------------------------------------------------
# parsing (no database)

_IDENTITY = ("thread_id", "tenant_id", "sub_tenant_id", "session_id", "checkpoint_id")
_TEXT_WIDTH = 200


def _lines(source: Source) -> Iterable[str]:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"no observed JSONL file at {path}")
        data = path.read_bytes()
    elif isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read()  # a file object, or a Streamlit upload
    else:
        raise BadRequest(f"observed must be a path, bytes or a file object, got {type(source).__name__}")
    if isinstance(data, (bytes, bytearray)):
        # Invalid UTF-8 becomes U+FFFD: the line still gets a number and, if broken, an error.
        data = bytes(data).decode("utf-8-sig", errors="replace")
    return io.StringIO(data).read().splitlines()


def _opt_str(obj: dict, key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    return value


def _resume_at(obj: dict) -> datetime | None:
    value = obj.get("resume_at")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"resume_at must be an ISO 8601 string, got {type(value).__name__}")
    try:
        return as_utc(datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ValueError(f"resume_at {value!r} is not an ISO 8601 date/time") from None


def _identity(obj: dict) -> dict:
    """The thread / resume naming of a line, leniently: an unreadable field is left out."""
    out = {}
    for key in _IDENTITY:
        value = obj.get(key)
        if isinstance(value, str):
            out[key] = value
    try:
        out["resume_at"] = _resume_at(obj)
    except ValueError:
        pass
    return out


def _entry(number: int, obj: dict) -> ObservedEntry:
    ident = {key: _opt_str(obj, key) for key in _IDENTITY}
    if ident["sub_tenant_id"] == "":
        ident["sub_tenant_id"] = None  # an empty sub-tenant is NULL in the database (contract §3)
    if not ident["thread_id"] and not ident["session_id"]:
        raise ValueError("names no thread: give thread_id, or tenant_id / sub_tenant_id / session_id")
    speaker = obj.get("speaker")
    if not isinstance(speaker, str) or not speaker:
        raise ValueError("speaker must be a non-empty string")
    content = obj.get("content")
    if not isinstance(content, str):
        raise ValueError("content must be a string" + (" (missing)" if content is None else ""))
    position = obj.get("position")
    if isinstance(position, bool) or not isinstance(position, numbers.Integral) or position < 0:
        raise ValueError(f"position must be an integer >= 0, got {position!r}")
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError(f"metadata must be an object, got {type(metadata).__name__}")
    source = (metadata or {}).get("source")
    if source is not None and not isinstance(source, str):
        raise ValueError(f"metadata.source must be a string, got {type(source).__name__}")
    return ObservedEntry(
        line=number,
        speaker=speaker,
        content=content,
        position=int(position),
        resume_at=_resume_at(obj),
        message_id=_opt_str(obj, "message_id"),
        source=source,
        **ident,
    )


def parse_observed(source: Source) -> ObservedLog:
    """Read an observed JSONL (path, bytes or file object) into entries and line errors.

    Blank lines are skipped; every other line is one JSON object (see
    docs/resume_qa.md). A line that is not valid JSON, not an object, or lacks
    or mistypes a field becomes a `LineError` with its 1-based line number.

    >>> parse_observed(b'{"session_id": "s", "speaker": "user", "content": "x", "position": -1}').errors[0].error
    'position must be an integer >= 0, got -1'
    """
    if isinstance(source, ObservedLog):
        return source
    entries: list[ObservedEntry] = []
    errors: list[LineError] = []
    for number, text in enumerate(_lines(source), start=1):
        if not text.strip():
            continue
        short = text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 1] + "…"
        try:
            obj = json.loads(text)
        except ValueError as exc:
            errors.append(LineError(number, f"not valid JSON: {exc}", short))
            continue
        if not isinstance(obj, dict):
            errors.append(LineError(number, f"not a JSON object but a {type(obj).__name__}", short))
            continue
        try:
            entries.append(_entry(number, obj))
        except ValueError as exc:
            errors.append(LineError(number, str(exc), short, **_identity(obj)))
    return ObservedLog(tuple(entries), tuple(errors))


# ---------------------------------------------------------------------------
# resolving lines to (thread, root checkpoint)


_THREAD_KEYS_SQL = """
SELECT thread_id, tenant_id, sub_tenant_id, session_id, latest_checkpoint_id FROM threads
WHERE thread_id IN (SELECT unnest(?)) OR session_id IN (SELECT unnest(?))
"""

_ROOTS_SQL = """
SELECT thread_id, checkpoint_id FROM checkpoints
WHERE is_root AND thread_id IN (SELECT unnest(?)) AND checkpoint_id IN (SELECT unnest(?))
"""


class _Resolver:
    """Maps a line's naming to (thread_id, checkpoint_id, named_by), or says why it cannot."""

    def __init__(self, con, items: list) -> None:
        self.con = con
        ids = sorted({i.thread_id for i in items if i.thread_id})
        sessions = sorted({i.session_id for i in items if i.session_id})
        rows = con.sql(_THREAD_KEYS_SQL, params=[ids, sessions]).fetchall()
        self.latest = {r[0]: r[4] for r in rows}
        self.by_key: dict[tuple, list[str]] = defaultdict(list)
        for thread_id, tenant, sub, session, _ in rows:
            self.by_key[(tenant, sub, session)].append(thread_id)
        named = sorted({i.checkpoint_id for i in items if i.checkpoint_id})
        self.roots = set(con.sql(_ROOTS_SQL, params=[sorted(self.latest), named]).fetchall()) if named else set()
        self.chains: dict[str, list[tuple[str, datetime | None]]] = {}

    def thread(self, item) -> str:
        if item.thread_id:
            if item.thread_id not in self.latest:
                raise LookupError(f"no thread {item.thread_id!r} in this database")
            return item.thread_id
        key = (item.tenant_id, item.sub_tenant_id or None, item.session_id)
        found = self.by_key.get(key, [])
        if len(found) != 1:
            what = "no thread" if not found else f"{len(found)} threads"
            raise LookupError(
                f"{what} with tenant_id={key[0]!r}, sub_tenant_id={key[1]!r}, session_id={key[2]!r} in this database"
            )
        return found[0]

    def checkpoint(self, item, thread_id: str) -> tuple[str, str]:
        if item.checkpoint_id:
            if (thread_id, item.checkpoint_id) not in self.roots:
                raise LookupError(f"no root checkpoint {item.checkpoint_id!r} in thread {thread_id!r}")
            return item.checkpoint_id, "checkpoint_id"
        if item.resume_at is not None:
            if thread_id not in self.chains:
                self.chains[thread_id] = current_chain(self.con, thread_id)
            # The transcript as it stood at the restart: the last checkpoint of the chain written by then.
            before = [cid for cid, ts in self.chains[thread_id] if ts is not None and ts <= item.resume_at]
            if not before:
                raise LookupError(
                    f"thread {thread_id!r} has no checkpoint at or before resume_at {item.resume_at.isoformat()}"
                )
            return before[-1], "resume_at"
        latest = self.latest[thread_id]
        if latest is None:
            raise LookupError(f"thread {thread_id!r} has no root checkpoint")
        return latest, "latest"


# ---------------------------------------------------------------------------
# matching one observed window against the expected one


@dataclass(frozen=True)
class _Exp:
    position: int
    speaker: str
    content: str
    message_id: str | None


def _increasing(seq: list[int]) -> set[int]:
    """Indexes (into `seq`) of one longest strictly increasing subsequence."""
    tails: list[int] = []  # tails[k] = index in seq of the smallest tail of an increasing run of length k+1
    prev: list[int | None] = [None] * len(seq)
    for i, value in enumerate(seq):
        k = bisect.bisect_left([seq[t] for t in tails], value)
        if k > 0:
            prev[i] = tails[k - 1]
        if k == len(tails):
            tails.append(i)
        else:
            tails[k] = i
    keep: set[int] = set()
    node = tails[-1] if tails else None
    while node is not None:
        keep.add(node)
        node = prev[node]
    return keep


#: Texts at least this similar (difflib ratio) stand for the same entry when nothing else matches.
SIMILARITY = 0.5


def similar(expected: str, observed: str) -> bool:
    """Whether an observed text is recognisably the expected one, altered.

    One a prefix of the other (a truncated or extended text), or a difflib
    similarity of at least `SIMILARITY`.

    >>> similar("The review is on Tuesday at 10:00.", "The review is on Wednesday at 10:00.")
    True
    >>> similar("Question 21: what is step 21?", "I never said this.")
    False
    """
    a, b = " ".join(expected.split()), " ".join(observed.split())
    if not a or not b:
        return a == b
    if a.startswith(b) or b.startswith(a):
        return True
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return (
        matcher.real_quick_ratio() >= SIMILARITY
        and matcher.quick_ratio() >= SIMILARITY
        and matcher.ratio() >= SIMILARITY
    )


def _pair(expected: list[_Exp], observed: list[ObservedEntry]) -> tuple[dict[int, int], set[int]]:
    """Pair observed entries (by index) with expected ones; return (obs → exp, pairs out of order).

    Anchors first — the same message id, then the same speaker and text, then
    the same text — each in window order, so repeated texts pair up in turn.
    Anchors not on one longest in-order run are `reordered`. What is left is
    paired within the stretch between two in-order anchors, same speaker, in
    order, when the texts are `similar`: those entries stand for each other but
    their text was altered. Anything still unpaired is missing or extra.
    """
    pairs: dict[int, int] = {}
    free_e = set(range(len(expected)))

    def claim(key_e, key_o) -> None:
        buckets: dict[object, deque[int]] = defaultdict(deque)
        for i, e in enumerate(expected):
            if i in free_e and key_e(e) is not None:
                buckets[key_e(e)].append(i)
        for j, o in enumerate(observed):
            if j in pairs or key_o(o) is None:
                continue
            bucket = buckets.get(key_o(o))
            if bucket:
                i = bucket.popleft()
                pairs[j] = i
                free_e.discard(i)

    claim(lambda e: e.message_id, lambda o: o.message_id)
    claim(lambda e: (e.speaker, e.content), lambda o: (o.speaker, o.content))
    claim(lambda e: e.content, lambda o: o.content)

    anchors = sorted(pairs)  # observed indexes, in observed order
    keep = _increasing([pairs[j] for j in anchors])
    in_order = [anchors[k] for k in sorted(keep)]
    reordered = {j for j in anchors if j not in set(in_order)}

    # Stretch number of an entry = how many in-order anchors precede it on its side.
    anchor_obs = in_order
    anchor_exp = [pairs[j] for j in in_order]
    left_e: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in sorted(free_e):
        left_e[(bisect.bisect_left(anchor_exp, i), expected[i].speaker)].append(i)
    for j in range(len(observed)):
        if j in pairs:
            continue
        candidates = left_e.get((bisect.bisect_left(anchor_obs, j), observed[j].speaker), [])
        for k, i in enumerate(candidates):
            if similar(expected[i].content, observed[j].content):
                pairs[j] = i
                del candidates[: k + 1]  # keep the pairing in order within the stretch
                break
    return pairs, reordered


def _findings_for(
    thread_id: str, checkpoint_id: str, expected: list[_Exp], observed: list[ObservedEntry]
) -> tuple[list[dict], int]:
    """Finding rows of one resume, and how many expected entries were matched faithfully."""
    pairs, reordered = _pair(expected, observed)
    rows: list[dict] = []

    def row(kind: str, detail: str, e: _Exp | None = None, o: ObservedEntry | None = None) -> None:
        rows.append(
            {
                "thread_id": thread_id,
                "checkpoint_id": checkpoint_id,
                "kind": kind,
                "line": o.line if o else None,
                "expected_position": e.position if e else None,
                "observed_position": o.position if o else None,
                "message_id": (e.message_id if e else None) or (o.message_id if o else None),
                "expected_speaker": e.speaker if e else None,
                "observed_speaker": o.speaker if o else None,
                "expected_content": e.content if e else None,
                "observed_content": o.content if o else None,
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
                row(
                    "reordered",
                    f"expected at position {e.position}, observed at position {o.position}: out of order",
                    e,
                    o,
                )
            if o.content != e.content:
                row("altered_content", "observed text differs from the transcript", e, o)
            if o.speaker != e.speaker:
                row("wrong_speaker", f"expected speaker {e.speaker!r}, observed {o.speaker!r}", e, o)
        if o.source is not None and o.source != RESUME_SOURCE:
            row("wrong_source", f"metadata.source is {o.source!r}, not {RESUME_SOURCE!r}", e, o)
        faithful += e is not None and len(rows) == before
    return rows, faithful


# ---------------------------------------------------------------------------
# compare


def compare(con_or_path: ConOrPath, observed: Source, cap: int = DEFAULT_CAP) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compare observed windows with the expected ones; return `(findings, summary)`.

    `observed` is a JSONL path, its bytes, a file object or an `ObservedLog`.
    Each line is resolved to a thread (`thread_id`, or tenant / sub-tenant /
    session) and a root checkpoint (`checkpoint_id`; else `resume_at`, the last
    checkpoint of the current branch written by then; else the latest), and the
    lines of one (thread, checkpoint) form one observed window, ordered by
    `position`. Findings: `FINDING_COLUMNS`, one row per divergence
    (`FINDING_KINDS`), lines that could not be compared included. Summary:
    `SUMMARY_COLUMNS`, one row per observed resume with `passed` / `verdict`.

    >>> findings, summary = compare("lens.duckdb", "observed.jsonl", cap=50)  # doctest: +SKIP
    >>> summary.verdict.tolist()  # doctest: +SKIP
    ['pass', 'fail']
    """
    cap = check_cap(cap)
    log = parse_observed(observed)
    with connection(con_or_path) as con:
        resolver = _Resolver(con, [*log.entries, *log.errors])
        groups: dict[tuple[str, str], list[ObservedEntry]] = defaultdict(list)
        named_by: dict[tuple[str, str], str] = {}
        errors: list[tuple[LineError, tuple[str, str] | None]] = []

        def locate(item) -> tuple[str, str, str]:
            thread_id = resolver.thread(item)
            checkpoint_id, how = resolver.checkpoint(item, thread_id)
            return thread_id, checkpoint_id, how

        for err in log.errors:
            try:
                thread_id, checkpoint_id, _ = locate(err)
                errors.append((err, (thread_id, checkpoint_id)))
            except LookupError:
                errors.append((err, None))
        for entry in log.entries:
            try:
                thread_id, checkpoint_id, how = locate(entry)
            except LookupError as exc:
                errors.append((LineError(entry.line, str(exc), "", kind="unresolved"), None))
                continue
            key = (thread_id, checkpoint_id)
            seen = {e.position: e.line for e in groups[key]}
            if entry.position in seen:
                err = LineError(
                    entry.line, f"duplicate position {entry.position} (also on line {seen[entry.position]})", ""
                )
                errors.append((err, key))
                continue
            groups[key].append(entry)
            # Several namings of one resume: the most explicit one is reported.
            order = ("checkpoint_id", "resume_at", "latest")
            if key not in named_by or order.index(how) < order.index(named_by[key]):
                named_by[key] = how
        for _, key in errors:
            if key is not None:
                groups.setdefault(key, [])
                named_by.setdefault(key, "checkpoint_id")
        windows = windows_at(con, sorted(groups), cap) if groups else None

    expected_by: dict[tuple[str, str], list[_Exp]] = defaultdict(list)
    if windows is not None:
        for w in windows.itertuples(index=False):
            mid = None if pd.isna(w.message_id) else w.message_id
            expected_by[(w.thread_id, w.checkpoint_id)].append(_Exp(int(w.position), w.speaker, w.content, mid))

    finding_rows: list[dict] = []
    summary_rows: list[dict] = []
    for key in sorted(groups):
        entries = sorted(groups[key], key=lambda e: e.position)
        expected = expected_by.get(key, [])
        rows, faithful = _findings_for(key[0], key[1], expected, entries)
        line_errors = [err for err, k in errors if k == key]
        for err in line_errors:
            rows.append(_error_row(err, key))
        finding_rows.extend(rows)
        counts = {kind: sum(r["kind"] == kind for r in rows) for kind in FINDING_KINDS}
        summary_rows.append(
            {
                "thread_id": key[0],
                "checkpoint_id": key[1],
                "named_by": named_by[key],
                "expected_entries": len(expected),
                "observed_entries": len(entries),
                "matched": faithful,
                **{kind: counts[kind] for kind in FINDING_KINDS if kind != "unresolved"},
                "passed": not rows,
                "verdict": "pass" if not rows else "fail",
            }
        )
    for err, key in errors:
        if key is None:
            finding_rows.append(_error_row(err, None))
    findings = typed(pd.DataFrame(finding_rows), FINDING_COLUMNS)
    if len(findings):
        rank = {k: i for i, k in enumerate(FINDING_KINDS)}
        findings = (
            findings.assign(
                _k=findings["kind"].map(rank), _p=findings["expected_position"].fillna(findings["observed_position"])
            )
            .sort_values(["thread_id", "checkpoint_id", "_p", "_k", "line"], na_position="last", kind="stable")
            .drop(columns=["_k", "_p"])
            .reset_index(drop=True)
        )
    return findings, typed(pd.DataFrame(summary_rows), SUMMARY_COLUMNS)


def _error_row(err: LineError, key: tuple[str, str] | None) -> dict:
    return {
        "thread_id": key[0] if key else err.thread_id,
        "checkpoint_id": key[1] if key else err.checkpoint_id,
        "kind": err.kind,
        "line": err.line,
        "expected_position": None,
        "observed_position": None,
        "message_id": None,
        "expected_speaker": None,
        "observed_speaker": None,
        "expected_content": None,
        "observed_content": err.text or None,
        "observed_source": None,
        "detail": err.error,
    }


# ---------------------------------------------------------------------------
# the `resume` CSV report

#: Columns of `python -m analytics report resume` (docs/resume_qa.md, "The report").
#: Without --observed every row is an expected entry (`kind = expected`, or
#: `empty_window` for a resume with nothing to rehydrate); with --observed every
#: row is a per-resume `verdict` or one finding (`FINDING_KINDS`).
RESUME_REPORT_COLUMNS: tuple[str, ...] = (
    "thread_id",
    "checkpoint_id",
    "resume_no",
    "after_checkpoint_id",
    "before_ts",
    "after_ts",
    "gap_s",
    "reason",
    "process_change",
    "kind",
    "verdict",
    "line",
    "position",
    "observed_position",
    "speaker",
    "observed_speaker",
    "content",
    "observed_content",
    "message_id",
    "ts",
    "source",
    "observed_source",
    "ordinal",
    "detail",
)

_REPORT_DTYPES: dict[str, str] = {
    **{c: "str" for c in RESUME_REPORT_COLUMNS},
    "resume_no": "Int64",
    "before_ts": "datetime64[us, UTC]",
    "after_ts": "datetime64[us, UTC]",
    "gap_s": "Float64",
    "line": "Int64",
    "position": "Int64",
    "observed_position": "Int64",
    "ts": "datetime64[us, UTC]",
    "ordinal": "Int64",
}

_WINDOW_REPORT_SQL = """
SELECT thread_id, before_checkpoint_id AS checkpoint_id, resume_no, after_checkpoint_id, before_ts, after_ts,
       gap_s, reason, process_change,
       CASE WHEN position IS NULL THEN 'empty_window' ELSE 'expected' END AS kind,
       CAST(NULL AS VARCHAR) AS verdict, CAST(NULL AS BIGINT) AS line,
       position, CAST(NULL AS BIGINT) AS observed_position,
       speaker, CAST(NULL AS VARCHAR) AS observed_speaker,
       content, CAST(NULL AS VARCHAR) AS observed_content,
       message_id, ts, source, CAST(NULL AS VARCHAR) AS observed_source, ordinal,
       CASE WHEN position IS NULL THEN 'no user or assistant message to rehydrate' END AS detail
FROM ({inner}) AS r
ORDER BY thread_id, resume_no, position
"""


def _findings_report(con, filters: Filters, gap_minutes: float, cap: int, observed: Source) -> pd.DataFrame:
    findings, summary = compare(con, observed, cap)
    if filters != NO_FILTERS:
        where, params = filters.thread_where("t")
        # `where` is Filters' own SQL with placeholders; values stay bound.
        keep = {r[0] for r in con.sql(f"SELECT t.thread_id FROM threads AS t WHERE {where}", params=params).fetchall()}
        findings = findings[findings["thread_id"].isin(keep)]
        summary = summary[summary["thread_id"].isin(keep)]
    threads = sorted(set(summary["thread_id"]))
    points = resume_points(con, None, gap_minutes, filters=Filters(thread_ids=tuple(threads))) if threads else None
    verdicts = summary.assign(
        kind="verdict",
        detail=[
            f"{s.matched}/{s.expected_entries} expected entries matched faithfully, {s.observed_entries} observed, "
            f"{sum(int(getattr(s, k)) for k in FINDING_KINDS if k != 'unresolved')} finding(s)"
            for s in summary.itertuples()
        ],
    )[["thread_id", "checkpoint_id", "kind", "verdict", "detail"]]
    verdict_of = dict(zip(zip(summary["thread_id"], summary["checkpoint_id"]), summary["verdict"]))
    rows = findings.rename(
        columns={"expected_position": "position", "expected_speaker": "speaker", "expected_content": "content"}
    ).assign(verdict=[verdict_of.get(k) for k in zip(findings["thread_id"], findings["checkpoint_id"])])
    # Verdict first, then the findings of that resume in window order; lines nobody could place last.
    frame = pd.concat([verdicts.assign(_order=0), rows.assign(_order=1)], ignore_index=True)
    if points is not None and len(points):
        info = points.rename(columns={"before_checkpoint_id": "checkpoint_id"})[
            [
                "thread_id",
                "checkpoint_id",
                "resume_no",
                "after_checkpoint_id",
                "before_ts",
                "after_ts",
                "gap_s",
                "reason",
                "process_change",
            ]
        ]
        frame = frame.merge(info, on=["thread_id", "checkpoint_id"], how="left")
    frame = frame.sort_values(
        ["thread_id", "checkpoint_id", "_order", "position", "observed_position", "line"],
        na_position="last",
        kind="stable",
    )
    return typed(frame.reset_index(drop=True), _REPORT_DTYPES)


def resume_report(
    con_or_path: ConOrPath,
    filters: Filters = NO_FILTERS,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    cap: int = DEFAULT_CAP,
    observed: Source | None = None,
) -> pd.DataFrame:
    """The rows of `report resume` as a DataFrame (`RESUME_REPORT_COLUMNS`, timestamps as datetimes).

    Without `observed`: the expected window at every resume point of the
    threads in `filters`. With it: a `verdict` row per observed resume and a
    row per finding.

    >>> resume_report("lens.duckdb", cap=10).kind.unique().tolist()  # doctest: +SKIP
    ['expected']
    """
    with connection(con_or_path) as con:
        if observed is None:
            inner, params = resume_windows_sql(filters, gap_minutes, cap)
            return fetch_frame(con, _WINDOW_REPORT_SQL.format(inner=inner), params, _REPORT_DTYPES)
        return _findings_report(con, filters, check_gap(gap_minutes), check_cap(cap), observed)


def _report_rows(con, filters: Filters, options):
    gap = gap_option(options)
    cap = check_cap(DEFAULT_CAP if options.get("cap") is None else options["cap"])
    source = options.get("observed")
    if source is None:
        # Set-based all the way: DuckDB streams the rows to the CSV.
        inner, params = resume_windows_sql(filters, gap, cap)
        return con.sql(_WINDOW_REPORT_SQL.format(inner=inner), params=params)
    return con.from_df(_findings_report(con, filters, gap, cap, source))


def _report_arguments(parser) -> None:
    parser.add_argument(
        "--observed",
        metavar="FILE.jsonl",
        help="resume: compare these observed windows; the report lists verdicts and findings",
    )
    parser.add_argument(
        "--cap", type=int, metavar="N", help="resume: window size, user/assistant messages (default 50)"
    )


def _register_report() -> None:
    if importlib.util.find_spec("analytics.reports") is None:
        return  # the report registry ships separately; without it there is no `report resume` (yet)
    from analytics.reports import ReportSpec, register_report

    register_report(ReportSpec(
        "resume",
        "restart-resume QA: the expected window at each resume point, or with --observed the verdicts and findings",
        RESUME_REPORT_COLUMNS,
        _report_rows,
        _report_arguments,
    ))  # fmt: skip


_register_report()
