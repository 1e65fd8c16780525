"""The transcript page's History section: branch tree and picker, a branch read with its markers,
compare with…, the edit log and subgraph runs. No streamlit here: `ui/history.py` draws it.

The data are `analytics.branches` / `read` / `edit_log` / `diff` / `subgraph_runs` answers; this
module picks what is shown, writes the labels, and places the markers on the messages read:

- `Marker`s under a message (`after` an ordinal) or before the first one: where a branch forks off
  or this one left its parent, each edit (old → new, inline), removal and re-add, each subgraph run
  started from that message;
- a compare-with choice is a short text that also lives in the URL: `b2` (branch 2's last
  checkpoint), `c:<checkpoint id>` (any root checkpoint of the thread), `t:<thread id>` (another
  thread's transcript).

>>> thread_history("lens.duckdb", "globex:api:sess-2105", branch=2).labels[2]  # doctest: +SKIP
'branch 2 · abandoned · 4 messages · forks after message 3 · last 2025-03-10 10:02'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analytics.history.branches import TREE_COLUMNS, branch_tree
from analytics.db import ConOrPath, connection
from analytics.history.diff import DIFF_COLUMNS, diff, diff_counts
from analytics.errors import AnalyticsError, BadRequest
from analytics.history.edits import EDIT_LOG_COLUMNS, edit_log
from analytics.subgraphs import RUN_COLUMNS, SUBGRAPH_MESSAGE_COLUMNS, subgraph_messages, subgraph_runs
from analytics.transcript import TRANSCRIPT_COLUMNS, TranscriptQuery, read
from ui.formats import plural
from ui.escape import code
from ui.models.frames import empty
from ui.models.problems import Problem, problem_of

#: How a branch came to be, by its first own checkpoint's `metadata.source`.
CREATED_BY = {"fork": "replay", "update": "update_state", "input": "new input", "loop": "original run"}

#: What wrote a checkpoint, by its `metadata.source`.
SOURCES = {"update": "update_state", "loop": "a graph step", "fork": "a replay", "input": "new input"}

#: Columns of the branch table (and its CSV).
BRANCH_TABLE_COLUMNS = (
    "branch", "status", "created_by", "messages", "checkpoints", "fork_messages", "fork_checkpoint_id", "parent_branch", "first_ts",
    "last_ts", "has_interrupt", "head_checkpoint_id",
)  # fmt: skip

#: Columns of the edit log table (and its CSV).
EDIT_TABLE_COLUMNS = (
    "ts", "event", "role", "ordinal", "before_ordinal", "text_diff", "old_content", "new_content", "source", "branch",
    "checkpoint_id", "message_id",
)  # fmt: skip

#: Columns of the compare table (and its CSV).
COMPARE_TABLE_COLUMNS = (
    "status", "moved", "left_ordinal", "right_ordinal", "left_role", "right_role", "left_content", "right_content",
    "text_diff", "changed", "matched_by",
)  # fmt: skip


@dataclass(frozen=True)
class Marker:
    """A note drawn between messages: after the message at `after` (-1: before the first one).

    `kind`: `fork` (a branch leaves here), `left` (where the branch read left its parent),
    `edited`, `removed`, `re_added`, `reordered`, `subgraph` (a run this message started),
    `from_subgraph` (this message was said inside a subgraph run and handed back).
    """

    after: int
    kind: str
    text: str
    diff: str | None = None  # an edit inline: `[-old-]{+new+}`
    old: str | None = None  # an edit's texts, before and after
    new: str | None = None
    run: str | None = None  # checkpoint_ns of a subgraph run


@dataclass(frozen=True)
class ThreadHistory:
    """What the History section shows about one thread, read at one branch."""

    thread_id: str
    branch: int = 1
    branches: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(BRANCH_TABLE_COLUMNS)))
    tree: pd.DataFrame = field(default_factory=lambda: empty(TREE_COLUMNS))
    labels: dict[int, str] = field(default_factory=dict)
    head_checkpoint_id: str | None = None
    rows: pd.DataFrame = field(default_factory=lambda: empty(TRANSCRIPT_COLUMNS))
    markers: tuple[Marker, ...] = ()
    edits: pd.DataFrame = field(default_factory=lambda: empty(EDIT_LOG_COLUMNS))
    runs: pd.DataFrame = field(default_factory=lambda: empty(RUN_COLUMNS))
    run_messages: pd.DataFrame = field(default_factory=lambda: empty(SUBGRAPH_MESSAGE_COLUMNS))
    checkpoints: dict[str, str] = field(default_factory=dict)
    problem: Problem | None = None

    @property
    def default_checkpoint(self) -> str | None:
        """The checkpoint to compare the branch read with first: the one before its last edit
        (the state before an operator's `update_state`), else the one before its last checkpoint."""
        edited = self.edits[self.edits["event"] == "edited"]
        if len(edited):
            return edited["parent_checkpoint_id"].iloc[-1]
        parent = self.tree.loc[self.tree["checkpoint_id"] == self.head_checkpoint_id, "parent_checkpoint_id"]
        return parent.iloc[0] if len(parent) and isinstance(parent.iloc[0], str) else None

    @property
    def summary(self) -> str:
        """One line: how many branches, edits, removals, subgraph runs the thread has."""
        parts = [plural(len(self.labels), "branch")]
        abandoned = len(self.labels) - 1
        if abandoned > 0:
            parts[0] += f" ({abandoned} abandoned)"
        counts = self.edits["event"].value_counts().to_dict() if len(self.edits) else {}
        for event, word in (("edited", "edit"), ("removed", "removal"), ("re_added", "re-add")):
            n = counts.get(event, 0)
            if n:
                parts.append(plural(n, word))
        if len(self.runs):
            parts.append(plural(len(self.runs), "subgraph run"))
        return " · ".join(parts)


def _minute(ts: object) -> str:
    return "no time" if ts is None or pd.isna(ts) else pd.Timestamp(ts).tz_convert("UTC").strftime("%Y-%m-%d %H:%M")


def branch_label(b: pd.Series) -> str:
    """How the picker names a branch (a `branches()` row); where it forks, in the transcript's numbering.

    >>> branch_label(pd.Series({"branch": 2, "status": "abandoned", "messages": 4, "fork_checkpoint_id": "c1",
    ...                         "fork_messages": 3, "last_ts": pd.Timestamp("2025-03-10 10:02", tz="UTC")}))
    'branch 2 · abandoned · 4 messages · forks after message 3 · last 2025-03-10 10:02'
    >>> branch_label(pd.Series({"branch": 3, "status": "abandoned", "messages": 1, "fork_checkpoint_id": "c0",
    ...                         "fork_messages": 0, "last_ts": None}))
    'branch 3 · abandoned · 1 message · forks before message 1 · last no time'
    """
    messages = "no messages" if pd.isna(b["messages"]) else plural(int(b["messages"]), "message")
    where = f" · {fork_place(b['fork_messages'])}" if isinstance(b["fork_checkpoint_id"], str) else ""
    return f"branch {b['branch']} · {b['status']} · {messages}{where} · last {_minute(b['last_ts'])}"


def fork_place(shared: object) -> str:
    """Where a branch leaves its parent, by the messages they share (the transcript's "Message N").

    >>> fork_place(2), fork_place(0), fork_place(None)
    ('forks after message 2', 'forks before message 1', 'forks')
    """
    if shared is None or pd.isna(shared):
        return "forks"
    return f"forks after message {int(shared)}" if int(shared) else "forks before message 1"


def checkpoint_label(c: pd.Series) -> str:
    """How the compare-with picker names a root checkpoint (a `checkpoint_tree()` row)."""
    count = "no messages" if pd.isna(c["message_count"]) else plural(int(c["message_count"]), "message")
    step = "?" if pd.isna(c["step"]) else c["step"]
    return f"step {step} · {c['source'] or '?'} · {_minute(c['ts'])} · {count} · branch {c['branch']}"


def _ordinals(rows: pd.DataFrame) -> dict[str, int]:
    """message id → its (first) ordinal in the rows read."""
    out: dict[str, int] = {}
    for mid, ordinal in zip(rows["message_id"].tolist(), rows["ordinal"].tolist()):
        if isinstance(mid, str):
            out.setdefault(mid, int(ordinal))
    return out


def _markers(history: ThreadHistory, branches: pd.DataFrame) -> tuple[Marker, ...]:
    rows, branch = history.rows, history.branch
    last = int(rows["ordinal"].max()) if len(rows) else -1
    out: list[Marker] = []
    here = branches[branches["branch"] == branch].iloc[0]
    # Where the branch read left its parent: after the messages it shares with the fork point.
    if isinstance(here["fork_checkpoint_id"], str):
        shared = int(here["fork_messages"]) if pd.notna(here["fork_messages"]) else 0
        out.append(Marker(shared - 1, "left", (
            f"Fork point: branch {branch} leaves branch {here['parent_branch']} here ({fork_place(here['fork_messages'])}, "
            f"checkpoint {here['fork_checkpoint_id']}, "
            f"{_minute(here['fork_ts'])}); what follows was written on this branch only ({CREATED_BY.get(here['created_by'], here['created_by'])})")))  # fmt: skip
    # Branches that fork off the one read, after the messages they share with it.
    for b in branches[branches["parent_branch"] == branch].itertuples():
        shared = int(b.fork_messages) if pd.notna(b.fork_messages) else 0
        out.append(Marker(shared - 1, "fork", (
            f"Branch {b.branch} ({b.status}, {CREATED_BY.get(b.created_by, b.created_by)}) forks here: "
            f"{'no messages' if pd.isna(b.messages) else plural(int(b.messages), 'message')}, last {_minute(b.last_ts)}")))  # fmt: skip
    for e in history.edits.itertuples():
        when = f"{_minute(e.ts)} ({SOURCES.get(e.source, e.source or '?')}, checkpoint {e.checkpoint_id})"
        if e.event == "removed":
            at = int(e.before_ordinal) - 1 if pd.notna(e.before_ordinal) else last
            out.append(Marker(at, "removed", f"Removed at {when}: {e.role or 'message'} “{_short(e.old_content)}”"))
        elif pd.notna(e.ordinal):
            text = {"edited": "Edited", "re_added": "Re-added", "reordered": "Moved"}[e.event]
            edited = e.event == "edited"
            out.append(Marker(int(e.ordinal), e.event, f"{text} at {when}", diff=e.text_diff if edited else None,
                              old=e.old_content if edited else None, new=e.new_content if edited else None))  # fmt: skip
    where = _ordinals(rows)
    for r in history.runs.itertuples():
        if r.depth != 1 or not isinstance(r.trigger_message_id, str) or r.trigger_message_id not in where:
            continue
        call = f" by tool call {r.tool_call_name} ({r.tool_call_id})" if isinstance(r.tool_call_id, str) else ""
        out.append(Marker(where[r.trigger_message_id], "subgraph",
                          f"Subgraph run {code(r.node)} started here{call}: {plural(r.messages, 'message')}", run=r.checkpoint_ns))  # fmt: skip
    # Messages a subgraph run handed back to this transcript: where they were said (the innermost run).
    said: dict[int, str] = {}
    for ns, mid in zip(history.run_messages["checkpoint_ns"].tolist(), history.run_messages["message_id"].tolist()):
        if isinstance(mid, str) and mid in where and ns.count("|") >= said.get(where[mid], "").count("|"):
            said[where[mid]] = ns
    for ordinal, ns in said.items():
        path = " › ".join(part.split(":", 1)[0] for part in ns.split("|") if ":" in part)
        out.append(Marker(ordinal, "from_subgraph", f"said in subgraph run {path}, handed back to the graph", run=ns))
    order = {"from_subgraph": 0, "left": 1, "fork": 2, "edited": 3, "re_added": 4, "reordered": 5, "removed": 6,
             "subgraph": 7}
    return tuple(sorted(out, key=lambda m: (m.after, order[m.kind])))


def _short(text: object, width: int = 160) -> str:
    s = " ".join(str(text).split()) if isinstance(text, str) else ""
    return s if len(s) <= width else s[: width - 1] + "…"


def thread_history(con_or_path: ConOrPath, thread_id: str, branch: int = 1) -> ThreadHistory:
    """The History section of one thread, reading `branch` (1 = current; one it lacks reads the current)."""
    try:
        with connection(con_or_path) as con:
            tree = branch_tree(con, thread_id)
            branches = tree.branches
            if branches.empty:
                return ThreadHistory(thread_id)
            if branch not in set(branches["branch"]):
                branch = 1
            head = branches.loc[branches["branch"] == branch, "head_checkpoint_id"].item()
            rows = read(con, TranscriptQuery(thread_id, checkpoint_id=head))
            edits = edit_log(con, thread_id, checkpoint_id=head)
            runs = subgraph_runs(con, thread_id)
            run_messages = subgraph_messages(con, thread_id) if len(runs) else empty(SUBGRAPH_MESSAGE_COLUMNS)
    except AnalyticsError as exc:
        return ThreadHistory(thread_id, problem=problem_of(exc))
    labels = {int(b["branch"]): branch_label(b) for _, b in branches.iterrows()}
    checkpoints = {c["checkpoint_id"]: checkpoint_label(c) for _, c in tree.checkpoints.iterrows()}
    history = ThreadHistory(
        thread_id, branch, branches[list(BRANCH_TABLE_COLUMNS)], tree.checkpoints, labels, head, rows, (), edits,
        runs, run_messages, checkpoints,
    )  # fmt: skip
    return ThreadHistory(**{**history.__dict__, "markers": _markers(history, branches)})


_SUMMARY_SQL = """
SELECT branch_count, edited_message_count, removed_message_count, namespace_count - 1, NOT coalesce(latest_is_leaf, TRUE)
FROM threads WHERE thread_id = $thread_id
"""


def history_summary(con_or_path: ConOrPath, thread_id: str) -> str | None:
    """One line about a thread's history from its `threads` row (one small read, for the page's
    first render): branches, edits and removals on the current branch, subgraph runs; None for
    an unknown thread.

    >>> history_summary("lens.duckdb", "globex:api:sess-2105")  # doctest: +SKIP
    '2 branches (1 abandoned)'
    """
    with connection(con_or_path) as con:
        found = con.sql(_SUMMARY_SQL, params={"thread_id": thread_id}).fetchall()
    if not found:
        return None
    branches, edited, removed, runs, not_leaf = found[0]
    branches += bool(not_leaf)  # a latest checkpoint with children heads a branch of its own
    parts = [plural(branches, "branch") + (f" ({branches - 1} abandoned)" if branches > 1 else "")]
    parts += [plural(n, word) for n, word in ((edited, "edit"), (removed, "removal"), (runs, "subgraph run")) if n]
    return " · ".join(parts)


# --- compare with… ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompareView:
    """A diff of two transcripts as the section shows it: `table` (`COMPARE_TABLE_COLUMNS`), the whole
    `frame` (`DIFF_COLUMNS`, the CSV), counts per status and the two sides' names."""

    frame: pd.DataFrame = field(default_factory=lambda: empty(DIFF_COLUMNS))
    counts: dict[str, int] = field(default_factory=dict)
    left: str = ""
    right: str = ""
    problem: Problem | None = None

    @property
    def table(self) -> pd.DataFrame:
        return self.frame[list(COMPARE_TABLE_COLUMNS)]


def side_query(con, thread_id: str, spec: str) -> tuple[TranscriptQuery, str]:
    """A compare-with choice (`b2`, `c:<id>`, `t:<thread>`) as a query and a name.

    >>> side_query(None, "t1", "t:t2")
    (TranscriptQuery(thread_id='t2', speaker='all', index=None, since=None, until=None, limit=None, checkpoint_id=None), 'thread t2 (its transcript)')
    """
    if spec.startswith("t:") and len(spec) > 2:
        return TranscriptQuery(spec[2:]), f"thread {spec[2:]} (its transcript)"
    if spec.startswith("c:") and len(spec) > 2:
        return TranscriptQuery(thread_id, checkpoint_id=spec[2:]), f"checkpoint {spec[2:]}"
    if spec.startswith("b") and spec[1:].isdigit():
        found = branch_tree(con, thread_id).branches
        heads = found.loc[found["branch"] == int(spec[1:]), "head_checkpoint_id"].tolist()
        if not heads:
            raise BadRequest(f"thread {thread_id!r} has no branch {spec[1:]}")
        return TranscriptQuery(thread_id, checkpoint_id=heads[0]), f"branch {spec[1:]}"
    raise BadRequest(f"not a side to compare with: {spec!r} (b<N>, c:<checkpoint id> or t:<thread id>)")


def compare_view(con_or_path: ConOrPath, thread_id: str, branch: int, spec: str) -> CompareView:
    """The diff from the chosen side (`spec`, left) to branch `branch` of the thread read (right)."""
    try:
        with connection(con_or_path) as con:
            left, left_name = side_query(con, thread_id, spec)
            right, right_name = side_query(con, thread_id, f"b{branch}")
            frame = diff(con, left, right)
    except AnalyticsError as exc:
        return CompareView(problem=problem_of(exc))
    return CompareView(frame, diff_counts(frame), left_name, f"{right_name} of {thread_id}")
