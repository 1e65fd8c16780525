"""A thread's branch tree (contract §3.8): every root branch, where it forks, which one is current.

Several root checkpoints with one parent are branches: an operator's
`update_state` on an old checkpoint, a replay (`source: fork`), a new input
from an old checkpoint. A branch here is the parent chain of a **head**: a
root checkpoint without children, or the latest root checkpoint (greatest id)
even when it has children (ids out of order, §7.11). The **current** branch
is the latest's (branch 1: it is the transcript); every other branch is
**abandoned** and numbered 2.. by its head id, newest first.

Each checkpoint belongs to one branch: the current branch claims its whole
chain, then each other head claims its chain up to the first checkpoint some
earlier branch claimed, which is its **fork point** (and that branch its
`parent_branch`); a branch whose chain reaches no claimed checkpoint (a second
first checkpoint, a parent not in the store) has none. `read(…,
checkpoint_id=head)` reads a branch as a transcript.

>>> branches("lens.duckdb", "globex:api:sess-2105")[["branch", "status", "fork_checkpoint_id"]]  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

from analytics import _pandas as pd
from analytics.db import ConOrPath, connection
from analytics.errors import NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame, typed
from analytics.resume.common import require_thread

__all__ = [
    "BRANCH_COLUMNS", "TREE_COLUMNS", "Tree", "branch_head", "branch_tree", "branches", "branches_of", "checkpoint_tree",
]

#: Columns of `branches()`: one row per branch, the current one first.
BRANCH_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "branch": "int64",
    "status": "str",
    "head_checkpoint_id": "str",
    "fork_checkpoint_id": "str",
    "parent_branch": "Int64",
    "first_checkpoint_id": "str",
    "created_by": "str",
    "checkpoints": "int64",
    "messages": "Int64",
    "fork_messages": "Int64",
    "first_ts": "datetime64[us, UTC]",
    "last_ts": "datetime64[us, UTC]",
    "fork_ts": "datetime64[us, UTC]",
    "has_interrupt": "bool",
    "depth": "int64",
}

#: Columns of `checkpoint_tree()`: one row per root checkpoint, with its branch and place.
TREE_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "checkpoint_id": "str",
    "parent_checkpoint_id": "str",
    "branch": "int64",
    "position": "int64",
    "ts": "datetime64[us, UTC]",
    "step": "Int64",
    "source": "str",
    "message_count": "Int64",
    "is_head": "bool",
    "is_fork_point": "bool",
    "is_latest": "bool",
    "has_interrupt": "bool",
}

_ROOTS_SQL = """
SELECT c.thread_id, c.checkpoint_id, c.parent_checkpoint_id, c.ts, c.step, c.source, c.message_count,
       c.has_interrupt, c.checkpoint_id = t.transcript_checkpoint_id AS is_latest
FROM checkpoints AS c JOIN threads AS t USING (thread_id)
WHERE c.is_root AND c.thread_id IN (SELECT unnest($threads))
ORDER BY c.thread_id, c.checkpoint_id
"""


@dataclass(frozen=True)
class Tree:
    """One thread's tree: `branches` (`BRANCH_COLUMNS`) and `checkpoints` (`TREE_COLUMNS`)."""

    branches: pd.DataFrame
    checkpoints: pd.DataFrame


def _positions(parent_of: dict[str, str | None]) -> dict[str, int]:
    """Distance of each checkpoint from the first of its chain (0), walking parents (cycles cut)."""
    pos: dict[str, int] = {}
    for start in parent_of:
        path, node = [], start
        while node in parent_of and node not in pos and node not in path:
            path.append(node)
            node = parent_of[node]
        base = pos.get(node, -1) if node in pos else -1
        for i, cid in enumerate(reversed(path), start=1):
            pos[cid] = base + i
    return pos


def _tree(thread_id: str, roots: pd.DataFrame) -> Tree:
    ids = roots["checkpoint_id"].tolist()
    parents = [p if isinstance(p, str) else None for p in roots["parent_checkpoint_id"].tolist()]
    parent_of = dict(zip(ids, parents))
    known = set(ids)
    children: dict[str, int] = {}
    for p in parents:
        if p in known:
            children[p] = children.get(p, 0) + 1
    latest = next((c for c, is_latest in zip(ids, roots["is_latest"].tolist()) if is_latest), max(ids, default=None))
    others = sorted((c for c in ids if c not in children and c != latest), reverse=True)
    heads = ([latest] if latest is not None else []) + others
    branch_of: dict[str, int] = {}
    made = []
    for number, head in enumerate(heads, start=1):
        chain, node = [], head
        while node is not None and node in known and node not in branch_of and node not in chain:
            chain.append(node)
            node = parent_of[node]
        fork = node if node in branch_of else None
        for cid in chain:
            branch_of[cid] = number
        made.append((number, head, chain, fork))

    by_id = roots.set_index("checkpoint_id")
    depth: dict[int, int] = {}
    rows = []
    for number, head, chain, fork in made:
        parent_branch = branch_of.get(fork) if fork is not None else None
        depth[number] = depth[parent_branch] + 1 if parent_branch is not None else (0 if number == 1 else 1)
        own = by_id.loc[chain]
        first = chain[-1]
        rows.append({
            "thread_id": thread_id,
            "branch": number,
            "status": "current" if number == 1 else "abandoned",
            "head_checkpoint_id": head,
            "fork_checkpoint_id": fork,
            "parent_branch": parent_branch,
            "first_checkpoint_id": first,
            "created_by": by_id.at[first, "source"],
            "checkpoints": len(chain),
            "messages": by_id.at[head, "message_count"],
            "fork_messages": by_id.at[fork, "message_count"] if fork is not None else None,
            "first_ts": own["ts"].min(),
            "last_ts": own["ts"].max(),
            "fork_ts": by_id.at[fork, "ts"] if fork is not None else None,
            "has_interrupt": bool(by_id.at[head, "has_interrupt"]),
            "depth": depth[number],
        })  # fmt: skip
    pos = _positions(parent_of)
    tree = roots.assign(
        branch=[branch_of[c] for c in ids],
        position=[pos.get(c, 0) for c in ids],
        is_head=[c in set(heads) for c in ids],
        is_fork_point=[children.get(c, 0) > 1 for c in ids],
    ).sort_values(["branch", "position", "checkpoint_id"], kind="stable")
    return Tree(typed(pd.DataFrame(rows), BRANCH_COLUMNS), typed(tree, TREE_COLUMNS))


def _fetch(con, threads: list[str]) -> pd.DataFrame:
    return fetch_frame(con, _ROOTS_SQL, {"threads": threads})


def branch_tree(con_or_path: ConOrPath, thread_id: str) -> Tree:
    """`branches()` and `checkpoint_tree()` of one thread from one read (what the tree view draws).

    Raises `NotFound` for an unknown thread; a thread without root checkpoints has empty frames.
    """
    with connection(con_or_path) as con:
        require_thread(con, thread_id)
        roots = _fetch(con, [thread_id])
    return _tree(thread_id, roots)


def branches(con_or_path: ConOrPath, thread_id: str) -> pd.DataFrame:
    """Every root branch of a thread, the current one first. Columns: `BRANCH_COLUMNS`.

    `status` is `current` (branch 1, the latest root checkpoint's chain: the
    transcript) or `abandoned`; `head_checkpoint_id` is the branch's last
    checkpoint (read it with `read(con, thread_id, checkpoint_id=…)`),
    `fork_checkpoint_id` where it leaves `parent_branch`, `created_by` the
    `metadata.source` of its first own checkpoint (`fork`: a replay; `update`:
    `update_state`; `input`: a new input from an old checkpoint), `checkpoints`
    its own checkpoints (after the fork point), `messages` the list length at
    its head and `fork_messages` at the fork point, `first_ts` / `last_ts` the
    span of its own checkpoints, `depth` how many forks away from the current branch.

    >>> branches("lens.duckdb", "globex:api:sess-2105")[["branch", "status", "messages"]]  # doctest: +SKIP
    """
    return branch_tree(con_or_path, thread_id).branches


def branch_head(con_or_path: ConOrPath, thread_id: str, branch: int) -> str:
    """The head checkpoint of branch number `branch` (1 = current) of a thread, to read it.

    Raises `NotFound` for an unknown thread or a branch it does not have.

    >>> read("lens.duckdb", "t", checkpoint_id=branch_head("lens.duckdb", "t", 2))  # doctest: +SKIP
    """
    found = branches(con_or_path, thread_id)
    heads = found.loc[found["branch"] == branch, "head_checkpoint_id"].tolist()
    if not heads:
        raise NotFound(f"thread {thread_id!r} has no branch {branch} (it has {len(found)})")
    return heads[0]


def checkpoint_tree(con_or_path: ConOrPath, thread_id: str) -> pd.DataFrame:
    """Every root checkpoint of a thread with its `branch` (as `branches()` numbers them) and
    `position` (distance from the first checkpoint along the parents). Columns: `TREE_COLUMNS`.

    >>> checkpoint_tree("lens.duckdb", "globex:api:sess-2105").groupby("branch").size()  # doctest: +SKIP
    """
    return branch_tree(con_or_path, thread_id).checkpoints


_FORKED_SQL = """
SELECT t.thread_id FROM threads AS t
WHERE ({where}) AND (t.branch_count > 1 OR NOT coalesce(t.latest_is_leaf, true))
ORDER BY t.thread_id
"""


def branches_of(con_or_path: ConOrPath, filters: Filters = Filters()) -> pd.DataFrame:
    """`branches()` of every thread in `filters` that has more than one branch, in thread order.

    (A thread with one branch has only its current one; the `branches` report lists the others.)

    >>> branches_of("lens.duckdb").query("status == 'abandoned'")  # doctest: +SKIP
    """
    where, params = filters.thread_where("t")
    with connection(con_or_path) as con:
        # `where` is Filters' own SQL with placeholders; the values stay bound.
        threads = [r[0] for r in con.sql(_FORKED_SQL.format(where=where), params=params).fetchall()]
        roots = _fetch(con, threads) if threads else None
    if roots is None:
        return typed(pd.DataFrame(), BRANCH_COLUMNS)
    frames = [_tree(t, group.reset_index(drop=True)).branches for t, group in roots.groupby("thread_id", sort=True)]
    return typed(pd.concat(frames, ignore_index=True), BRANCH_COLUMNS) if frames else typed(pd.DataFrame(), BRANCH_COLUMNS)
