"""Reading annotations together with the loaded database: the list, per-thread summaries, counts.

`annotations()` is the API's list (every annotation with where it is now);
`thread_summaries` gives the Conversations table its Labels / Review columns,
`threads_with` its "has label" / "failed review" filters, and `review_counts`
the Overview's numbers — all from the same stored rows and the same resolution
(`analytics.workspace.resolve`).

>>> annotations("lens.duckdb", label="wrong answer", status="orphaned")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from analytics import _pandas as pd
from analytics.db import connection
from analytics.errors import BadRequest
from analytics.filters import Filters
from analytics.workspace.annotating import COLUMNS, VERDICTS, stored, with_status
from analytics.workspace.guard import shown
from analytics.workspace.resolve import TARGETS
from analytics.workspace.store import Workspace, takes_workspace, workspace_of

STATUSES = ("ok", "orphaned")


def _threads_in_scope(con: duckdb.DuckDBPyConnection, filters: Filters) -> set[str] | None:
    """The thread ids `filters` keeps, or None when it keeps every thread (orphans included)."""
    where, params = filters.thread_where("t")
    if where == "TRUE":
        return None
    return {r[0] for r in con.execute(f"SELECT t.thread_id FROM threads t WHERE {where}", params).fetchall()}


def annotations(
    db,
    thread_id: str | Sequence[str] | None = None,
    *,
    label: str | None = None,
    verdict: str | None = None,
    target: str | None = None,
    author: str | None = None,
    status: str | None = None,
    filters: Filters | None = None,
    workspace=None,
) -> pd.DataFrame:
    """Every annotation (optionally of these threads, with this label, verdict, target, author,
    status) with where it is now: `status` `ok` or `orphaned` (`orphan_reason` says why),
    the message's current `ordinal`, the thread's tenant; columns `COLUMNS`, oldest first.

    `db` is the loaded database (a path, or a connection with `workspace=`); `filters`
    keeps annotations whose thread passes them (so none of a thread that is gone). Read
    under the connection's policy (`guard`): a tenant scope shows only its threads'
    annotations, masking masks the notes and excerpts.

    >>> annotations("lens.duckdb", "acme:web:sess-1")[["target", "label", "status"]]  # doctest: +SKIP
    """
    if verdict is not None and verdict not in VERDICTS:
        raise BadRequest(f"verdict is one of {', '.join(VERDICTS)}, got {verdict!r}")
    if status is not None and status not in STATUSES:
        raise BadRequest(f"status is one of {', '.join(STATUSES)}, got {status!r}")
    if target is not None and target not in TARGETS:
        raise BadRequest(f"target is one of {', '.join(TARGETS)}, got {target!r}")
    ws = workspace_of(db, workspace)
    ids = [thread_id] if isinstance(thread_id, str) else thread_id
    rows = stored(ws, ids, label=label, verdict=verdict, target=target, author=author)
    with connection(db) as con:
        out = shown(con, with_status(con, rows))  # the reader's policy: their tenants, masked text
        scope = _threads_in_scope(con, filters) if filters is not None else None
    if scope is not None:
        out = out[out["thread_id"].isin(scope)]
    if status is not None:
        out = out[out["status"] == status]
    return out.reset_index(drop=True)


@dataclass(frozen=True)
class ThreadReview:
    """What the annotations say about one thread (any target: the thread, its messages, checkpoints)."""

    labels: tuple[str, ...]  # distinct labels, in the label set's order
    passes: int
    fails: int
    notes: int
    annotations: int
    orphaned: int


@takes_workspace
def thread_summaries(ws: Workspace, thread_ids: Sequence[str]) -> dict[str, ThreadReview]:
    """{thread: ThreadReview} for those of `thread_ids` that have annotations (a page of the table)."""
    rows = stored(ws, thread_ids)
    return _summaries(rows)


def _summaries(rows: pd.DataFrame) -> dict[str, ThreadReview]:
    out = {}
    for thread_id, group in rows.groupby("thread_id", sort=False):
        labels = tuple(dict.fromkeys(group["label"].dropna()))
        out[thread_id] = ThreadReview(
            labels, int((group["verdict"] == "pass").sum()), int((group["verdict"] == "fail").sum()),
            int(group["note"].notna().sum()), len(group),
            int((group["status"] == "orphaned").sum()) if "status" in group else 0,
        )
    return out


@takes_workspace
def threads_with(ws: Workspace, labels: Sequence[str] = (), failed: bool = False) -> tuple[str, ...]:
    """Threads that carry every one of `labels` (on the thread or any of its messages or
    checkpoints) and, with `failed`, a `fail` verdict: the Conversations filters.

    >>> threads_with(ws, ["lost context"], failed=True)  # doctest: +SKIP
    ('acme:web:sess-1002',)
    """
    rows = stored(ws)
    keep = set(rows["thread_id"])
    for label in labels:
        keep &= set(rows.loc[rows["label"] == label, "thread_id"])
    if failed:
        keep &= set(rows.loc[rows["verdict"] == "fail", "thread_id"])
    return tuple(sorted(keep))


REVIEW_COUNT_COLUMNS = ("label", "color", "annotations", "threads")


@dataclass(frozen=True)
class ReviewCounts:
    """The Overview's review numbers over the threads in scope."""

    annotations: int
    threads: int  # annotated threads
    passes: int
    fails: int
    failed_threads: int
    orphaned: int  # of the whole workspace (an orphan's thread may be in no scope)
    by_label: pd.DataFrame  # REVIEW_COUNT_COLUMNS, in the label set's order


def review_counts(con: duckdb.DuckDBPyConnection, ws: Workspace, filters: Filters = Filters()) -> ReviewCounts:
    """Annotations, annotated threads, verdicts and per-label counts of the threads `filters` keeps;
    orphaned annotations of the whole workspace."""
    from analytics.workspace.label_set import labels as label_set

    everything = shown(con, with_status(con, stored(ws)))
    scope = _threads_in_scope(con, filters)
    if scope is None:  # every thread of the database: not those that are gone
        rows = everything[everything["orphan_reason"].fillna("") != "thread gone"]
    else:
        rows = everything[everything["thread_id"].isin(scope)]
    order = {label.name: (i, label.color) for i, label in enumerate(label_set(ws))}
    labelled = rows[rows["label"].notna()]
    by_label = (labelled.groupby("label").agg(annotations=("annotation_id", "size"), threads=("thread_id", "nunique"))
                .reset_index())  # fmt: skip
    by_label["color"] = by_label["label"].map(lambda n: order.get(n, (0, "#9e9e9e"))[1])
    by_label = by_label.sort_values("label", key=lambda s: s.map(lambda n: order.get(n, (len(order), ""))[0]))
    return ReviewCounts(
        len(rows), rows["thread_id"].nunique(), int((rows["verdict"] == "pass").sum()),
        int((rows["verdict"] == "fail").sum()), rows.loc[rows["verdict"] == "fail", "thread_id"].nunique(),
        int((everything["status"] == "orphaned").sum()), by_label[list(REVIEW_COUNT_COLUMNS)].reset_index(drop=True),
    )


__all__ = ["COLUMNS", "ReviewCounts", "ThreadReview", "annotations", "review_counts", "thread_summaries", "threads_with"]
