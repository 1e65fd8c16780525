"""What the pages show of the review workspace, shaped for display (no streamlit here).

- `thread_annotations`: one thread's annotations placed where the transcript
  draws them — on the thread, next to a message (by its current ordinal), next
  to the first message a checkpoint saved — and the orphaned ones apart;
- `review_columns`: the Conversations table's Labels / Review cells for a page of threads;
- `queue_view`: one item of a review queue being walked, with its neighbours and progress.

>>> notes = thread_annotations(con, ws, "acme:web:sess-1002")  # doctest: +SKIP
>>> notes.by_ordinal[3][0].label  # doctest: +SKIP
'wrong answer'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace  # noqa: F401  (replace: Note.where's doctest)

import duckdb
import pandas as pd

from analytics.workspace import Label, Queue, QueueItem, Workspace
from analytics.workspace import annotations as listed
from analytics.workspace import get_queue, item, labels, progress, step, thread_summaries
from ui.escape import code
from ui.formats import article, plural

#: How a verdict reads in a cell and a chip.
VERDICT_MARKS = {"pass": "✓ pass", "fail": "✗ fail"}
NO_COLOR = "#9e9e9e"


@dataclass(frozen=True)
class Note:
    """One annotation as the app shows it."""

    annotation_id: str
    revision: int
    target: str
    label: str | None
    color: str | None
    verdict: str | None
    note: str | None
    author: str
    created_at: str
    updated_at: str
    status: str | None
    orphan_reason: str | None
    ordinal: int | None  # where its message is now
    annotated_ordinal: int | None
    message_id: str | None
    checkpoint_id: str | None
    role: str | None
    excerpt: str | None

    def when(self) -> str:
        """`2025-03-03 10:05 UTC` (edited: the time of the last change)."""
        return self.updated_at[:16].replace("T", " ") + " UTC"

    def where(self) -> str:
        """What an orphan was on, in words: a message by its role and its number in the transcript
        when annotated ("Message N", as the chat numbers it), else its id.

        >>> note = Note("a", 1, "message", *[None] * 4, "ana", "", "", "orphaned", "gone", None, 3, "m-1", None,
        ...             "assistant", None)
        >>> note.where(), replace(note, role="other", annotated_ordinal=None).where()
        ('an assistant message (Message 4)', 'a message (id `m-1`)')
        """
        if self.target == "thread":
            return "the thread"
        if self.target == "checkpoint":
            return f"checkpoint {code(self.checkpoint_id)}"
        which = (f"Message {self.annotated_ordinal + 1}" if self.annotated_ordinal is not None
                 else f"id {code(self.message_id)}" if self.message_id else "no longer known")
        kind = article(f"{self.role} message") if self.role in ("user", "assistant", "tool", "system") else "a message"
        return f"{kind} ({which})"


@dataclass(frozen=True)
class ThreadAnnotations:
    thread: list[Note] = field(default_factory=list)
    by_ordinal: dict[int, list[Note]] = field(default_factory=dict)
    by_checkpoint: dict[str, list[Note]] = field(default_factory=dict)
    orphaned: list[Note] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)  # the set, active ones first (the form offers those)

    @property
    def count(self) -> int:
        return (len(self.thread) + sum(map(len, self.by_ordinal.values())) + sum(map(len, self.by_checkpoint.values()))
                + len(self.orphaned))


def _none(value):
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else value


def _note(row: dict) -> Note:
    ordinal, annotated = _none(row["ordinal"]), _none(row["annotated_ordinal"])
    return Note(
        row["annotation_id"], int(row["revision"]), row["target"], _none(row["label"]), _none(row["label_color"]),
        _none(row["verdict"]), _none(row["note"]), row["author"], row["created_at"], row["updated_at"],
        _none(row["status"]), _none(row["orphan_reason"]), None if ordinal is None else int(ordinal),
        None if annotated is None else int(annotated), _none(row["message_id"]), _none(row["checkpoint_id"]),
        _none(row["role"]), _none(row["excerpt"]),
    )


def thread_annotations(con: duckdb.DuckDBPyConnection, ws: Workspace, thread_id: str) -> ThreadAnnotations:
    """Every annotation of `thread_id`, placed as the transcript draws them (oldest first in each place)."""
    out = ThreadAnnotations(labels=labels(ws))
    for row in listed(con, thread_id, workspace=ws).to_dict("records"):
        note = _note(row)
        if note.status == "orphaned":
            out.orphaned.append(note)
        elif note.target == "thread":
            out.thread.append(note)
        elif note.target == "message":
            out.by_ordinal.setdefault(note.ordinal, []).append(note)
        else:
            out.by_checkpoint.setdefault(note.checkpoint_id, []).append(note)
    return out


ORPHAN_COLUMNS = ("thread_id", "orphan_reason", "target", "label", "verdict", "note", "excerpt", "author",
                  "created_at", "source")


def orphaned(con: duckdb.DuckDBPyConnection, ws: Workspace, thread_id: str | None = None) -> pd.DataFrame:
    """The orphaned annotations (of one thread, or all), newest first, in `ORPHAN_COLUMNS`."""
    rows = listed(con, thread_id, status="orphaned", workspace=ws)
    return rows[list(ORPHAN_COLUMNS)].iloc[::-1].reset_index(drop=True)


def review_columns(ws: Workspace, thread_ids: Sequence[str]) -> pd.DataFrame:
    """`thread_id`, `labels` (`a, b`), `review` (`✗ 1 · ✓ 2 · 3 notes`) for these threads, in order."""
    found = thread_summaries(ws, list(thread_ids))
    cells_labels, cells_review = [], []
    for thread_id in thread_ids:
        s = found.get(thread_id)
        cells_labels.append(", ".join(s.labels) if s else "")
        bits = []
        if s and s.fails:
            bits.append(f"✗ {s.fails}")
        if s and s.passes:
            bits.append(f"✓ {s.passes}")
        if s and s.notes:
            bits.append(plural(s.notes, "note"))
        cells_review.append(" · ".join(bits))
    return pd.DataFrame({"thread_id": list(thread_ids), "labels": cells_labels, "review": cells_review})


@dataclass(frozen=True)
class QueueView:
    """One queue walked at one item."""

    queue: Queue
    item: QueueItem | None  # None: the queue (or your part of it) has no item there
    previous: int | None  # the positions of the neighbours (None at an end)
    next: int | None
    next_pending: int | None  # the first pending item after this one (wrapping to the start)
    progress: pd.DataFrame  # analytics.workspace.queueing.PROGRESS_COLUMNS rows of this queue


def queue_view(ws: Workspace, queue: int, position: int | None, assignee: str | None = None) -> QueueView:
    """Item `position` of `queue`; when there is none (or, walking `assignee`'s items, it is not
    theirs), their first pending item, else their first."""
    q = get_queue(ws, queue)
    current = None
    if position is not None:
        try:
            current = item(ws, q.queue_id, position)
        except LookupError:
            current = None
        if current is not None and assignee is not None and current.assignee != assignee:
            current = None  # walking one reviewer's items: another's is not one of them
    if current is None:
        current = (step(ws, q.queue_id, 0, assignee=assignee, pending_only=True)
                   or step(ws, q.queue_id, 0, assignee=assignee))  # fmt: skip
    at = current.position if current else 0
    before = step(ws, q.queue_id, at, -1, assignee=assignee) if current else None
    after = step(ws, q.queue_id, at, assignee=assignee) if current else None
    pending = step(ws, q.queue_id, at, assignee=assignee, pending_only=True) or step(
        ws, q.queue_id, 0, assignee=assignee, pending_only=True)
    if pending is not None and current is not None and pending.position == current.position:
        pending = None
    return QueueView(q, current, before.position if before else None, after.position if after else None,
                     pending.position if pending else None, progress(ws, q.queue_id))
