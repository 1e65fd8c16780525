"""Review queues: the threads of a Conversations view (all, or a seeded random sample), walked in order.

A queue is made from the same conditions and sort the Conversations page shows
(`metrics.conversation_ids_sql`), so it holds exactly the threads of that view in
its order; a sample keeps that order too, and the same view, size and seed give
the same threads. Items are assigned round-robin to the reviewers named (or to
anyone), walked with `step` (next / previous, optionally only one reviewer's,
optionally only pending ones) and marked done; `progress` counts per queue and
reviewer.

>>> q = create_queue("lens.duckdb", "refund check", conditions=Filters(text="refund"), sample=10, seed=7,
...                  assignees=("ana", "ben"), author="lead")  # doctest: +SKIP
>>> step(Workspace.beside("lens.duckdb"), q.queue_id, 0).thread_id  # the first thread  # doctest: +SKIP
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analytics import metrics
from analytics import _pandas as pd
from analytics.db import connection
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.workspace.annotating import check_author, database_source, default_author
from analytics.db import applied_policy
from analytics.workspace.guard import reader_policy, scope_json, within_scope
from analytics.workspace.store import Workspace, now, takes_workspace, workspace_of

#: A queue holds at most this many threads (a bigger view is sampled).
MAX_ITEMS = 5_000
STATUSES = ("pending", "done")


@dataclass(frozen=True)
class Queue:
    queue_id: int
    name: str
    description: str | None
    created_by: str
    created_at: str
    view: dict[str, Any] | None  # the Conversations URL parameters it was made from
    matching: int
    sample_size: int | None
    seed: int | None
    source: str | None
    scope: tuple[str, ...] | None  # the tenants its maker was limited to (None: none)
    items: int
    done: int

    @property
    def pending(self) -> int:
        return self.items - self.done


@dataclass(frozen=True)
class QueueItem:
    queue_id: int
    position: int
    thread_id: str
    assignee: str | None
    status: str
    done_by: str | None
    done_at: str | None


_QUEUE_SQL = """
SELECT q.queue_id, q.name, q.description, q.created_by, q.created_at, q.view, q.matching, q.sample_size, q.seed,
       q.source, q.scope, count(i.position), count(i.position) FILTER (WHERE i.status = 'done')
FROM queues q LEFT JOIN queue_items i USING (queue_id)
WHERE {where} AND {within}
GROUP BY q.queue_id ORDER BY q.queue_id"""


def _select(where: str, params: Sequence) -> tuple[str, list]:
    """The queues matching `where` that the reader may see (`guard`: made within their tenant scope)."""
    within, scope_params = within_scope("q.scope", reader_policy().tenants)
    return _QUEUE_SQL.format(where=where, within=within), [*params, *scope_params]
_ITEM_SQL = "SELECT queue_id, position, thread_id, assignee, status, done_by, done_at FROM queue_items"


def _queue(row: tuple) -> Queue:
    values = list(row)
    values[5] = json.loads(values[5]) if values[5] else None
    values[10] = tuple(json.loads(values[10])) if values[10] else None
    return Queue(*values)


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise BadRequest(f"a queue name is 1–100 characters, got {name!r}")
    return name.strip()


def pick(thread_ids: Sequence[str], sample: int | None, seed: int | None) -> tuple[list[str], int | None]:
    """The threads a queue takes from a view's (ordered) threads, and the seed used.

    A sample is `random.Random(seed).sample` of the view, kept in the view's order;
    without a seed one is drawn (and recorded, so the queue can be made again).

    >>> pick(["a", "b", "c", "d"], 2, 1)
    (['b', 'c'], 1)
    >>> pick(["a", "b"], None, None)
    (['a', 'b'], None)
    """
    if sample is None:
        return list(thread_ids), None
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise BadRequest(f"a sample size is an integer >= 1, got {sample!r}")
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadRequest(f"a seed is an integer, got {seed!r}")
    if sample >= len(thread_ids):
        return list(thread_ids), seed
    chosen = set(random.Random(seed).sample(range(len(thread_ids)), sample))
    return [t for i, t in enumerate(thread_ids) if i in chosen], seed


def create_queue(
    db,
    name: str,
    *,
    conditions: Filters = Filters(),
    sort: str = metrics.DEFAULT_SORT,
    descending: bool = True,
    sample: int | None = None,
    seed: int | None = None,
    assignees: Sequence[str] = (),
    description: str | None = None,
    view: dict[str, Any] | None = None,
    author: str | None = None,
    workspace: Workspace | None = None,
) -> Queue:
    """A queue of the threads `conversations` lists for `conditions` sorted by `sort` (all, or a
    `sample` of them with `seed`), assigned round-robin to `assignees` (none: anyone).

    `conditions` is a `Filters` (or the Conversations page's `ThreadConditions`); `view`
    is recorded as where the queue came from (the page's URL parameters).
    """
    name = _check_name(name)
    author = check_author(author if author is not None else default_author())
    reviewers = [check_author(a) for a in assignees]
    ws = workspace_of(db, workspace)
    with connection(db) as con:
        ids = [r[0] for r in con.execute(*metrics.conversation_ids_sql(con, conditions, sort, descending)).fetchall()]
        source = database_source(con)
        scope = scope_json(applied_policy(con).tenants)  # the threads it could list: those tenants' only
    if not ids:
        raise BadRequest("the view matches no thread: nothing to review")
    chosen, seed = pick(ids, sample, seed)
    if len(chosen) > MAX_ITEMS:
        raise BadRequest(f"the view matches {len(chosen):,} threads; a queue holds at most {MAX_ITEMS:,}: take a sample")
    with ws.write() as conn:
        try:
            cur = conn.execute(
                "INSERT INTO queues (name, description, created_by, created_at, view, matching, sample_size, seed, "
                "source, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, description, author, now(), json.dumps(view) if view is not None else None, len(ids),
                 sample, seed, source, scope),
            )
        except sqlite3.IntegrityError:
            raise BadRequest(f"a queue named {name!r} exists already") from None
        queue_id = cur.lastrowid
        conn.executemany(
            "INSERT INTO queue_items (queue_id, position, thread_id, assignee) VALUES (?, ?, ?, ?)",
            [(queue_id, i + 1, t, reviewers[i % len(reviewers)] if reviewers else None) for i, t in enumerate(chosen)],
        )
        return _get_queue(conn, queue_id)


def _get_queue(conn: sqlite3.Connection, queue: int | str) -> Queue:
    column = "q.name" if isinstance(queue, str) else "q.queue_id"
    row = conn.execute(*_select(f"{column} = ?", [queue])).fetchone()
    if row is None:
        raise NotFound(f"no review queue {queue!r}")
    return _queue(row)


@takes_workspace
def queues(ws: Workspace) -> list[Queue]:
    """Every queue with its counts, oldest first."""
    with ws.read() as conn:
        return [_queue(r) for r in conn.execute(*_select("1", [])).fetchall()]


@takes_workspace
def get_queue(ws: Workspace, queue: int | str) -> Queue:
    """A queue by id or name (NotFound otherwise)."""
    with ws.read() as conn:
        return _get_queue(conn, queue)


@takes_workspace
def queue_items(ws: Workspace, queue: int | str, assignee: str | None = None) -> pd.DataFrame:
    """A queue's items in walking order (columns of `QueueItem`); `assignee`: only theirs."""
    with ws.read() as conn:
        q = _get_queue(conn, queue)
        rows = conn.execute(f"{_ITEM_SQL} WHERE queue_id = ? AND (? IS NULL OR assignee = ?) ORDER BY position",
                            (q.queue_id, assignee, assignee)).fetchall()
    return pd.DataFrame(rows, columns=list(QueueItem.__dataclass_fields__), dtype=object)


@takes_workspace
def step(
    ws: Workspace, queue: int, position: int, direction: int = 1, *, assignee: str | None = None,
    pending_only: bool = False,
) -> QueueItem | None:
    """The next (`direction` 1) or previous (-1) item after `position` (0 before the first),
    among `assignee`'s items (None: every item) and pending ones if `pending_only`;
    None at either end."""
    if direction not in (1, -1):
        raise BadRequest(f"direction is 1 or -1, got {direction!r}")
    op, order = (">", "ASC") if direction == 1 else ("<", "DESC")
    with ws.read() as conn:
        _get_queue(conn, queue)  # (one the reader may see)
        row = conn.execute(
            f"{_ITEM_SQL} WHERE queue_id = ? AND position {op} ? AND (? IS NULL OR assignee = ?) "
            f"AND (NOT ? OR status = 'pending') ORDER BY position {order} LIMIT 1",
            (queue, position, assignee, assignee, pending_only),
        ).fetchone()
    return QueueItem(*row) if row else None


@takes_workspace
def item(ws: Workspace, queue: int, position: int) -> QueueItem:
    with ws.read() as conn:
        _get_queue(conn, queue)
        row = conn.execute(f"{_ITEM_SQL} WHERE queue_id = ? AND position = ?", (queue, position)).fetchone()
    if row is None:
        raise NotFound(f"review queue {queue} has no item {position}")
    return QueueItem(*row)


@takes_workspace
def mark(ws: Workspace, queue: int, position: int, done: bool = True, by: str | None = None) -> QueueItem:
    """Mark an item done (or pending again); who and when are kept."""
    by = check_author(by if by is not None else default_author())
    with ws.write() as conn:
        _get_queue(conn, queue)
        changed = conn.execute(
            "UPDATE queue_items SET status = ?, done_by = ?, done_at = ? WHERE queue_id = ? AND position = ?",
            ("done", by, now(), queue, position) if done else ("pending", None, None, queue, position),
        ).rowcount
        if not changed:
            raise NotFound(f"review queue {queue} has no item {position}")
        return QueueItem(*conn.execute(f"{_ITEM_SQL} WHERE queue_id = ? AND position = ?", (queue, position)).fetchone())


@takes_workspace
def assign(ws: Workspace, queue: int, assignee: str | None, positions: Sequence[int] | None = None) -> int:
    """Assign items (`positions`; None: every pending one) to `assignee` (None: anyone); how many changed."""
    assignee = None if assignee is None else check_author(assignee)
    with ws.write() as conn:
        _get_queue(conn, queue)
        if positions is None:
            return conn.execute("UPDATE queue_items SET assignee = ? WHERE queue_id = ? AND status = 'pending'",
                                (assignee, queue)).rowcount
        return conn.execute(
            "UPDATE queue_items SET assignee = ? WHERE queue_id = ? AND position IN (SELECT value FROM json_each(?))",
            (assignee, queue, json.dumps([int(p) for p in positions])),
        ).rowcount


@takes_workspace
def delete_queue(ws: Workspace, queue: int) -> None:
    """Delete a queue and its items (the annotations made while walking it stay)."""
    with ws.write() as conn:
        _get_queue(conn, queue)
        conn.execute("DELETE FROM queues WHERE queue_id = ?", (queue,))


PROGRESS_COLUMNS = ("queue_id", "queue", "assignee", "items", "done", "pending", "done_pct")


@takes_workspace
def progress(ws: Workspace, queue: int | None = None) -> pd.DataFrame:
    """Items, done and pending per queue and reviewer (`(anyone)`: unassigned items), after
    each queue's total, a row whose assignee is `(all)`."""
    visible = [q.queue_id for q in queues(ws)]
    with ws.read() as conn:
        rows = conn.execute(
            """
            SELECT queue_id, name, assignee, items, done FROM (
                SELECT q.queue_id, q.name, coalesce(i.assignee, '(anyone)') AS assignee, 1 AS part, count(*) AS items,
                       count(*) FILTER (WHERE status = 'done') AS done
                FROM queue_items i JOIN queues q USING (queue_id) WHERE ? IS NULL OR q.queue_id = ?
                GROUP BY q.queue_id, i.assignee
                UNION ALL
                SELECT q.queue_id, q.name, '(all)', 0, count(*), count(*) FILTER (WHERE status = 'done')
                FROM queue_items i JOIN queues q USING (queue_id) WHERE ? IS NULL OR q.queue_id = ?
                GROUP BY q.queue_id)
            WHERE queue_id IN (SELECT value FROM json_each(?))
            ORDER BY queue_id, part, assignee""",
            (queue, queue, queue, queue, json.dumps(visible)),
        ).fetchall()
    frame = pd.DataFrame(rows, columns=list(PROGRESS_COLUMNS[:5]))
    frame["pending"] = frame["items"] - frame["done"]
    frame["done_pct"] = (100.0 * frame["done"] / frame["items"]).round(1) if len(frame) else pd.Series(dtype=float)
    return frame
