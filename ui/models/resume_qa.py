"""The Resume QA page: threads ranked by risk; one thread's resume points, timeline, risks and window.

The data are `analytics.resume` / `analytics.observed` answers; this module
picks the page's columns, writes its labels and hover text and places the
resume points on the timeline chart.

>>> risk_overview("lens.duckdb", cap=50, page=2).table.head(3)  # doctest: +SKIP
>>> thread_qa("lens.duckdb", "acme:web:sess-restart", at="1").window.speaker.tolist()  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analytics import observed, resume
from analytics.db import ConOrPath, connection
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame
from analytics.resume.gap import DEFAULT_GAP_MINUTES
from ui.models.frames import empty
from ui.models.problems import Problem, problem_of

DEFAULT_CAP = resume.DEFAULT_CAP
RESUME_SOURCE = resume.RESUME_SOURCE

#: Columns of the ranked risk table the page shows (and its CSV download).
RISK_TABLE_COLUMNS: tuple[str, ...] = (
    "thread_id",
    "risk_score",
    "flags",
    "resume_points",
    "window_size",
    "truncated_by",
    "window_no_id",
    "window_no_ts",
    "edited_in_window",
    "edited_messages",
    "removed_messages",
    "forks",
    "latest_not_leaf",
    "interrupt_pending",
    "undecodable_messages",
    "load_errors",
    "last_ts",
)

#: Resume QA's ranked table: each column's header (`RISK_TABLE_COLUMNS`; `ui.columns.risks`), which
#: its "Sort by", its caption and the flag legend use too, and what each holds: in the words of a
#: runtime's restart (the messages it restores), not the names of the columns behind them.
RISK_LABELS = {
    "thread_id": "thread",
    "risk_score": "risk",
    "flags": "flags",
    "resume_points": "restarts",
    "window_size": "messages restored",
    "truncated_by": "left out (over the cap)",
    "window_no_id": "restored without an id",
    "window_no_ts": "restored without a time",
    "edited_in_window": "restored, since edited",
    "edited_messages": "edited",
    "removed_messages": "removed",
    "forks": "branches",
    "latest_not_leaf": "resumes from an older turn",
    "interrupt_pending": "waiting on a human",
    "undecodable_messages": "unreadable",
    "load_errors": "rows skipped at load",
    "last_ts": "last active (UTC)",
}


def risk_header(name: str) -> str:
    """A column of the ranked table as its header (and its CSV's) reads it.

    >>> risk_header("latest_not_leaf")
    'Resumes from an older turn'
    """
    label = RISK_LABELS[name]
    return label[0].upper() + label[1:]


#: Columns of a window table on the page (and its CSV download).
WINDOW_TABLE_COLUMNS: tuple[str, ...] = ("position", "speaker", "content", "message_id", "ts", "ordinal", "source")

#: `ThreadQA.at` value for the window a restart *now* would rebuild.
LATEST = "latest"

#: The greatest `risk_score` a thread can have (every flag at once).
MAX_RISK_SCORE = sum(f.weight for f in resume.RISK_FLAGS)


#: Each risk flag as the table says it: what a restart of the thread would meet.
FLAG_WORDS = {
    "latest_not_leaf": "resumes from an older turn",
    "undecodable": "unreadable messages",
    "no_id_in_window": "restored messages without an id",
    "edited_in_window": "restored messages since edited",
    "removed": "messages removed",
    "forked": "branched",
    "interrupt_pending": "waiting on a human",
    "load_errors": "rows skipped at load",
    "edited": "messages edited",
    "no_ts_in_window": "restored messages without a time",
    "truncated": "older turns left out",
}


#: The column of the ranked table (and its CSV) holding the figure each flag rests on.
FLAG_COLUMNS = {
    "latest_not_leaf": "latest_not_leaf",
    "undecodable": "undecodable_messages",
    "no_id_in_window": "window_no_id",
    "edited_in_window": "edited_in_window",
    "removed": "removed_messages",
    "forked": "forks",
    "interrupt_pending": "interrupt_pending",
    "load_errors": "load_errors",
    "edited": "edited_messages",
    "no_ts_in_window": "window_no_ts",
    "truncated": "truncated_by",
}


def flag_legend() -> str:
    """What each risk flag means, as a markdown list, most severe first, with the header of the
    column its figure is in (the table's and the CSV's) and its code (the name docs/resume_qa.md
    gives it).

    >>> flag_legend().splitlines()[0][:100]
    '- **resumes from an older turn** (weight 5; its column “Resumes from an older turn”; `latest_not_lea'
    """
    column = {f: risk_header(c) for f, c in FLAG_COLUMNS.items()}
    return "\n".join(f"- **{flags_text(f.name)}** (weight {f.weight}; its column “{column[f.name]}”; "
                     f"`{f.name}` in docs/resume_qa.md): {f.meaning}" for f in resume.RISK_FLAGS)


#: Why a restart point is one (`analytics.resume` `reason`), as the page says it.
REASON_WORDS = {"idle_gap": "idle gap", "process_change": "new run or process",
                "idle_gap+process_change": "idle gap and a new run or process"}


def points_shown(points: pd.DataFrame) -> pd.DataFrame:
    """A thread's resume points as the page draws them and its CSV holds them: each reason in words.

    >>> points_shown(pd.DataFrame({"reason": ["idle_gap+process_change"]}))["reason"].tolist()
    ['idle gap and a new run or process']
    """
    return points.assign(reason=points["reason"].map(lambda r: REASON_WORDS.get(r, r)))


def flags_text(flags: str | None) -> str:
    """A thread's risk flags as the table shows them: words, `, ` between them.

    >>> flags_text("no_id_in_window,no_ts_in_window"), flags_text(None)
    ('restored messages without an id, restored messages without a time', '')
    """
    return ", ".join(FLAG_WORDS.get(f, f.replace("_", " ")) for f in flags.split(",")) if flags else ""


def at_label(at: str) -> str:
    """How the window picker names a choice of `ThreadQA.at_options`.

    >>> at_label("2"), at_label(LATEST)
    ('resume #2', 'latest checkpoint (a restart now)')
    """
    return "latest checkpoint (a restart now)" if at == LATEST else f"resume #{at}"


# --- threads ranked by risk --------------------------------------------------------------


#: Rows per page of the ranked table: sorted and cut in DuckDB, so a page ships this many rows however many match.
PAGE_SIZE = 50
#: Columns the ranked table can be sorted by (every column it shows).
SORTABLE: tuple[str, ...] = tuple(c for c in RISK_TABLE_COLUMNS if c in resume.RISK_SORT_COLUMNS)
DEFAULT_SORT = resume.DEFAULT_RISK_SORT


@dataclass(frozen=True)
class RiskOverview:
    """One page of the ranked risk table (`RISK_TABLE_COLUMNS`, rows offset+1 … offset+len of the
    sort), a picker label per thread of the page, and where the page lies in the whole list."""

    table: pd.DataFrame
    labels: dict[str, str]
    matching: int = 0  # threads passing the filters (and `restarted_only`): the sort's rows, the CSV's rows
    page: int = 1  # 1-based, clamped to the last page
    pages: int = 1  # at least 1
    offset: int = 0  # rows before this page


def _labels(table: pd.DataFrame) -> dict[str, str]:
    """`thread · risk N · flags` per row of the page's table: its Risk and its flags, in its words."""
    flags = table["flags"].fillna("")
    label = table["thread_id"] + " · risk " + table["risk_score"].astype(str) + (" · " + flags).where(flags != "", "")
    # Whole columns to lists first: a (pyarrow-backed) Series iterated value by value costs ~2 µs a value.
    return dict(zip(table["thread_id"].tolist(), label.tolist()))


def risk_overview(
    con_or_path: ConOrPath,
    filters: Filters = Filters(),
    cap: int = DEFAULT_CAP,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    restarted_only: bool = False,
    sort: str = DEFAULT_SORT,
    descending: bool = True,
    page: int = 1,
    page_size: int | None = None,
) -> RiskOverview:
    """Page `page` of `risks()` sorted by `sort` (default: riskiest first), in the page's columns, with
    `thread · risk N · flags` labels; `restarted_only` keeps the threads with a resume point at
    `gap_minutes`. The count, the sort and the page are DuckDB's: a page ships `page_size` rows
    however many threads match (1.7M at 10M messages).

    >>> risk_overview("lens.duckdb", sort="resume_points", page=2).table.head()  # doctest: +SKIP
    """
    if sort not in SORTABLE:
        raise BadRequest(f"cannot sort the risk table by {sort!r}; sort columns: {', '.join(SORTABLE)}")
    page_size = page_size or PAGE_SIZE
    with connection(con_or_path) as con:
        ((matching,),) = con.execute(*resume.risk_count_sql(con, filters, cap, gap_minutes, restarted_only)).fetchall()
        pages = max(1, -(-matching // page_size))
        page = min(max(1, int(page)), pages)
        offset = (page - 1) * page_size
        sql, params = resume.risk_list_sql(
            con, filters, cap, gap_minutes, sort, descending, page_size, offset, restarted_only
        )
        frame = fetch_frame(con, sql, params, resume.RISK_COLUMNS)
    table = frame[list(RISK_TABLE_COLUMNS)].reset_index(drop=True)
    table["flags"] = table["flags"].map(flags_text)
    return RiskOverview(table, _labels(table), matching, page, pages, offset)


def risk_table(con_or_path: ConOrPath, filters: Filters, cap: int, gap_minutes: float, restarted_only: bool,
               sort: str, descending: bool) -> pd.DataFrame:  # fmt: skip
    """Every row of `risk_overview`'s sorted list in `RISK_TABLE_COLUMNS` (the CSV download, built on click).

    >>> risk_table("lens.duckdb", Filters(), 50, 60.0, False, "risk_score", True)  # doctest: +SKIP
    """
    with connection(con_or_path) as con:
        sql, params = resume.risk_list_sql(con, filters, cap, gap_minutes, sort, descending, None, 0, restarted_only)
        table = fetch_frame(con, sql, params, resume.RISK_COLUMNS)[list(RISK_TABLE_COLUMNS)]
    return table.assign(flags=table["flags"].map(flags_text))  # (in the table's words)


# --- one thread ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ThreadQA:
    """Everything the Resume QA page shows about one thread.

    `at` names the window shown: `"latest"` or a resume number (`"1"`, …);
    `at_options` lists every choice (resume numbers first, then latest).
    `timeline` is `timeline()` plus `branch` (`current` / `other`) and `label`
    (hover text); `markers` places each resume point on the chart both in time
    (`before_ts`, `after_ts`) and in steps (`before_step`, `after_step`).
    `problem` replaces a traceback (unknown thread, bad argument).
    """

    thread_id: str
    at: str = LATEST
    at_options: tuple[str, ...] = (LATEST,)
    points: pd.DataFrame = field(default_factory=lambda: empty(resume.RESUME_COLUMNS))
    timeline: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    risks: pd.DataFrame = field(default_factory=lambda: empty(resume.THREAD_RISK_COLUMNS))
    window_checkpoint_id: str | None = None
    window: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(WINDOW_TABLE_COLUMNS)))
    markers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    problem: Problem | None = None

    def template(self) -> bytes:
        """The window shown as observed JSONL: the lines a faithful runtime would log for this rehydrate
        (with `recorded_at` = the resume's first post-restart checkpoint, when it is a resume point)."""
        after = None
        if self.at != LATEST:
            after = self.points.loc[self.points["resume_no"] == int(self.at), "after_ts"].iloc[0]
        window = self.window.assign(checkpoint_id=self.window_checkpoint_id)
        return observed.template_lines(window, self.thread_id, after)


def _hover(line: pd.DataFrame) -> pd.Series:
    """`source · step N · M messages · process · resume role` per checkpoint."""
    return (
        line["source"].fillna("?")
        + " · step "
        + line["step"].astype("string").fillna("?")
        + " · "
        + line["message_count"].astype("string").fillna("0")
        + " messages"
        + line["process"].map(lambda p: f" · {p}" if isinstance(p, str) else "")
        + line["resume"].map(lambda r: f" · {r}" if isinstance(r, str) else "")
    )


#: What a resume point's label adds when it is an idle gap alone that began at a checkpoint waiting
#: on an interrupt: a person taking their time to answer, not a restart (the Restarts count and
#: "Restarted threads only" leave it out, `analytics.resume.chain`).
HUMAN_WAIT = " · human wait"


def _markers(points: pd.DataFrame, line: pd.DataFrame) -> pd.DataFrame:
    """Each resume point's span on the chart, in time and in steps, with its label ("resume #1",
    "resume #2 · human wait")."""
    step_of = dict(zip(line["checkpoint_id"], line["step"]))
    waiting = points["before_checkpoint_id"].map(dict(zip(line["checkpoint_id"], line["has_interrupt"]))).fillna(False)
    waiting = waiting.astype(bool) & (points["reason"] == "idle_gap")
    return pd.DataFrame(
        {
            "resume_no": points["resume_no"],
            "label": "resume #" + points["resume_no"].astype(str) + waiting.astype(bool).map({True: HUMAN_WAIT, False: ""}),
            "before_ts": points["before_ts"],
            "after_ts": points["after_ts"],
            "before_step": points["before_checkpoint_id"].map(step_of).astype("Int64"),
            "after_step": points["after_checkpoint_id"].map(step_of).astype("Int64"),
        }
    )


def thread_qa(
    con_or_path: ConOrPath,
    thread_id: str,
    gap_minutes: float = DEFAULT_GAP_MINUTES,
    cap: int = DEFAULT_CAP,
    at: str | None = None,
) -> ThreadQA:
    """Resume points, timeline, risk details and one expected window of a thread.

    `at=None` shows the window at the first resume point (the latest when there
    is none); an `at` that names no resume point falls back the same way.
    """
    try:
        with connection(con_or_path) as con:
            points = resume.resume_points(con, thread_id, gap_minutes)
            line = resume.timeline(con, thread_id, gap_minutes)
            details = resume.thread_risks(con, thread_id, cap)
            options = tuple(str(n) for n in points["resume_no"]) + (LATEST,)
            chosen = at if at in options else options[0]
            if chosen == LATEST:
                checkpoint_id = resume.latest_root(con, thread_id)
            else:
                checkpoint_id = points.loc[points["resume_no"] == int(chosen), "before_checkpoint_id"].item()
            window = resume.expected_window(con, thread_id, checkpoint_id, cap) if checkpoint_id else None
    except (BadRequest, NotFound) as exc:
        return ThreadQA(thread_id, problem=problem_of(exc))
    line = line.assign(
        branch=line["on_current_branch"].map({True: "current branch", False: "other branch"}),
        label=_hover(line),
    )
    shown = (window if window is not None else empty(resume.WINDOW_COLUMNS))[list(WINDOW_TABLE_COLUMNS)]
    return ThreadQA(thread_id, chosen, options, points, line, details, checkpoint_id, shown, _markers(points, line))


# --- an observed JSONL ------------------------------------------------------------------------


#: What the page calls each kind of finding (`observed.FINDING_KINDS`); the CSVs keep the codes.
KIND_WORDS = {
    "missing": "missing", "extra": "extra", "reordered": "reordered", "altered_content": "altered",
    "wrong_speaker": "wrong speaker", "wrong_source": "wrong source", "malformed": "malformed line",
    "unresolved": "unknown thread or checkpoint",
}  # fmt: skip
#: How the page says a window was placed at its resume (`attributed_by`).
ATTRIBUTED_WORDS = {"checkpoint_id": "matched by checkpoint id", "time": "matched by time",
                    "position order": "matched by position order"}


def kind_text(kinds: str | None) -> str:
    """Finding kinds (`, ` between them) as the page words them.

    >>> kind_text("altered_content, wrong_speaker"), kind_text(None)
    ('altered, wrong speaker', '')
    """
    return ", ".join(KIND_WORDS.get(k, k.replace("_", " ")) for k in kinds.split(", ")) if kinds else ""


def message_text(number, position) -> str:
    """An expected entry as the transcript numbers it ("Message N"), else by its place in the window."""
    if pd.notna(number):
        return f"Message {int(number)}"
    return f"entry {int(position) + 1}" if pd.notna(position) else ""


def window_shown(window: pd.DataFrame) -> pd.DataFrame:
    """The expected window as the page draws it and its CSV holds it: each entry by the
    transcript's "Message N" (ordinal + 1) instead of its 0-based position and ordinal (the
    JSONL template, in the observed log's own format, keeps the positions)."""
    shown = window.drop(columns=["position", "ordinal"])
    shown.insert(0, "message", _numbers(window))
    return shown


def risks_shown(risks: pd.DataFrame) -> pd.DataFrame:
    """A thread's risks as the page draws them and its CSV holds them: the message each names by
    the transcript's "Message N" (its 0-based ordinal and window position left out, as in
    `window_shown`), and only the columns some risk fills."""
    shown = risks.drop(columns=["position", "ordinal"])
    shown["flag"] = shown["flag"].map(flags_text)
    shown.insert(shown.columns.get_loc("detail"), "message", _numbers(risks))
    filled = [c for c in shown.columns if c in ("flag", "detail") or (shown[c].notna() & (shown[c] != "")).any()]
    return shown[filled]


def _numbers(frame: pd.DataFrame) -> list[str]:
    return [message_text(o + 1 if pd.notna(o) else None, p) for o, p in zip(frame["ordinal"], frame["position"])]


@dataclass(frozen=True)
class ObservedCheck:
    """`observed.compare_detail()` of an uploaded JSONL, with the counts the page's headline shows."""

    findings: pd.DataFrame
    summary: pd.DataFrame  # one row per observed window
    rows: pd.DataFrame  # every window's entries side by side (observed.ALIGNED_COLUMNS)
    passed: int  # windows without any finding
    uncompared: int  # malformed lines and lines naming an unknown thread / checkpoint
    problem: Problem | None = None  # why the file was not compared (the frames then empty)
    numbers: dict = field(default_factory=dict)  # {(thread_id, message_id): the transcript's message number}

    @property
    def failed(self) -> int:
        return len(self.summary) - self.passed

    @property
    def window_labels(self) -> dict[int, str]:
        """`window · thread · resume #N (or the checkpoint) · attributed by … (confidence) · verdict` per window."""
        out = {}
        for s in self.summary.itertuples():
            where = f"resume #{s.resume_no}" if pd.notna(s.resume_no) else f"checkpoint {s.checkpoint_id}"
            by = ATTRIBUTED_WORDS.get(s.attributed_by, s.attributed_by)
            out[int(s.window)] = f"window {s.window} · {s.thread_id} · {where} · {by} ({s.confidence}) · {s.verdict}"
        return out

    def _message(self, threads, message_ids, positions) -> list[str]:
        return [message_text(self.numbers.get((t, m)), p) for t, m, p in zip(threads, message_ids, positions)]

    def side_by_side(self, window: int) -> pd.DataFrame:
        """One window's expected and observed entries side by side, with the findings each carries
        and, in `message`, each expected entry as the transcript numbers it."""
        rows = self.rows[self.rows["window"] == window].drop(columns=["window"]).reset_index(drop=True)
        thread = self.summary.loc[self.summary["window"] == window, "thread_id"]
        thread = thread.iloc[0] if len(thread) else None
        return rows.assign(message=self._message([thread] * len(rows), rows["message_id"], rows["expected_position"]))

    def findings_shown(self) -> pd.DataFrame:
        """The findings as the page draws them: kinds in words, each expected entry as "Message N"."""
        f = self.findings
        shown = f.drop(columns=["expected_position"]).assign(kind=f["kind"].map(kind_text))
        shown.insert(shown.columns.get_loc("line"), "message",
                     self._message(f["thread_id"], f["message_id"], f["expected_position"]))
        return shown

    def summary_shown(self) -> pd.DataFrame:
        """The summary as the page draws it: how each window was placed, in words."""
        s = self.summary
        return s.assign(attributed_by=s["attributed_by"].map(lambda b: ATTRIBUTED_WORDS.get(b, b)))


def observed_check(
    con_or_path: ConOrPath, data: bytes, cap: int = DEFAULT_CAP, gap_minutes: float = DEFAULT_GAP_MINUTES
) -> ObservedCheck:
    """Compare the observed windows in `data` (JSONL) with the expected ones; a file the reader
    refuses (more lines than `analytics.jsonlines.MAX_LINES`) is an empty check saying why."""
    try:
        result = observed.compare_detail(con_or_path, data, cap, gap_minutes)
    except BadRequest as exc:
        return ObservedCheck(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), 0, 0, problem_of(exc))
    findings, summary = result.findings, result.summary
    uncompared = int(findings["kind"].isin(["malformed", "unresolved"]).sum())
    ids = pd.concat([findings[["thread_id", "message_id"]],
                     result.rows[["window", "message_id"]].merge(summary[["window", "thread_id"]], on="window")
                     [["thread_id", "message_id"]]]).dropna().drop_duplicates()
    numbers = {}
    if len(ids):
        with connection(con_or_path) as con:
            found = fetch_frame(con, "SELECT thread_id, message_id, ordinal + 1 AS number FROM messages "
                                     "WHERE list_contains(?, thread_id) AND list_contains(?, message_id)",
                                [sorted(set(ids["thread_id"])), sorted(set(ids["message_id"]))], mask=False)
        wanted = set(zip(ids["thread_id"], ids["message_id"]))
        numbers = {(t, m): int(n) for t, m, n in zip(found["thread_id"], found["message_id"], found["number"])
                   if (t, m) in wanted}
    return ObservedCheck(findings, summary, result.rows, int(summary["passed"].sum()), uncompared, numbers=numbers)
