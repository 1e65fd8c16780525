"""The edit log: how a transcript came to be what it is (contract §3.7), for people and for markers.

`message_events` holds every change of a root message list against its
parent's. `edit_log` picks the ones worth a reader's attention, on the chain
of the checkpoint read (the transcript by default), oldest first:

- `edited`: the same message id with another text, role, tool calls or name
  (an operator's `update_state`); `old_content` → `new_content`, and
  `text_diff` inline (`[-old-]{+new+}`);
- `removed`: a message gone from the list (`RemoveMessage`, trimming);
- `re_added`: a message whose id an earlier checkpoint of the chain removed,
  back again;
- `reordered`: the same messages in another order.

Each row says where it happened (`checkpoint_id`, its `ts`, `source`, `step`
and `branch`, numbered as `analytics.branches` numbers them) and where it
shows in the transcript read: `ordinal` is the message's place there (NULL
when it is no longer in it); for a removal, `before_ordinal` is the place of
the first message that followed the removed one and is still there (NULL:
it was at the end). A chat view draws an edit marker under `ordinal` and a
removal marker above `before_ordinal` (or after the last message).

>>> edit_log("lens.duckdb", "initech:helpdesk:sess-5005")[["event", "ordinal", "text_diff"]]  # doctest: +SKIP
"""

from __future__ import annotations

from analytics import _pandas as pd
from analytics.history.branches import branch_tree
from analytics.db import ConOrPath, connection
from analytics.errors import NotFound
from analytics.filters import Filters
from analytics.frames import fetch_frame, typed
from analytics.textdiff import inline

__all__ = ["EDIT_EVENTS", "EDIT_LOG_COLUMNS", "edit_log", "edit_logs"]

#: The events an edit log lists.
EDIT_EVENTS: tuple[str, ...] = ("edited", "removed", "re_added", "reordered")

#: Columns of `edit_log()`.
EDIT_LOG_COLUMNS: dict[str, str] = {
    "thread_id": "str",
    "branch": "int64",
    "checkpoint_id": "str",
    "parent_checkpoint_id": "str",
    "ts": "datetime64[us, UTC]",
    "source": "str",
    "step": "Int64",
    "event": "str",
    "message_id": "str",
    "role": "str",
    "position": "Int64",
    "ordinal": "Int64",
    "before_ordinal": "Int64",
    "old_content": "str",
    "new_content": "str",
    "text_diff": "str",
    "version": "Int64",
    "previous_version": "Int64",
}

_EVENTS_SQL = """
SELECT e.checkpoint_id, e.parent_checkpoint_id, e.ts, c.source, c.step, e.event, e.message_id,
       coalesce(v.role, pv.role) AS role, e.position, pv.content AS old_content, v.content AS new_content,
       e.version, e.previous_version
FROM message_events AS e
JOIN checkpoints AS c ON c.thread_id = e.thread_id AND c.checkpoint_id = e.checkpoint_id AND c.is_root
LEFT JOIN message_versions AS v ON v.thread_id = e.thread_id AND v.version = e.version
LEFT JOIN message_versions AS pv ON pv.thread_id = e.thread_id AND pv.version = e.previous_version
WHERE e.thread_id = $thread_id AND e.event IN ('edited', 'removed', 'reordered', 'added')
ORDER BY e.checkpoint_id, e.position
"""

_LISTS_SQL = """
SELECT checkpoint_id, message_versions FROM checkpoints
WHERE thread_id = $thread_id AND is_root AND checkpoint_id IN (SELECT unnest($ids))
"""

_IDS_SQL = "SELECT version, message_id FROM message_versions WHERE thread_id = $thread_id"


_LAST = 1 << 62


def _micros(ts: object) -> int:
    return pd.Timestamp(ts).value // 1000 if pd.notna(ts) else _LAST


def _int(value: object, default: int) -> int:
    return int(value) if pd.notna(value) else default


def _ancestors(node: str | None, parent_of: dict[str, str | None]) -> list[str]:
    out, seen = [], set()
    while node is not None and node in parent_of and node not in seen:
        out.append(node)
        seen.add(node)
        node = parent_of[node]
    return out


def edit_log(
    con_or_path: ConOrPath, thread_id: str, checkpoint_id: str | None = None, all_branches: bool = False
) -> pd.DataFrame:
    """The edits, removals, re-adds and reorders behind the transcript read at `checkpoint_id`.

    `checkpoint_id=None` is the transcript (the latest root checkpoint);
    `all_branches=True` lists those of every branch (`branch` says which),
    still placed (`ordinal`, `before_ordinal`) in the transcript read. Oldest
    first along the parent chain. Columns: `EDIT_LOG_COLUMNS` (module docstring).
    Raises `NotFound` for an unknown thread or a checkpoint that is not one of its root checkpoints.

    >>> edit_log("lens.duckdb", "initech:helpdesk:sess-5005").event.tolist()  # doctest: +SKIP
    ['edited']
    """
    with connection(con_or_path) as con:
        tree = branch_tree(con, thread_id).checkpoints
        ids = tree["checkpoint_id"].tolist()
        parent_of = {c: p if isinstance(p, str) else None for c, p in zip(ids, tree["parent_checkpoint_id"].tolist())}
        read_at = checkpoint_id
        if read_at is None:
            latest = tree.loc[tree["is_latest"], "checkpoint_id"].tolist()
            read_at = latest[0] if latest else None
        elif read_at not in parent_of:
            raise NotFound(f"no root checkpoint {read_at!r} in thread {thread_id!r}")
        if read_at is None:
            return typed(pd.DataFrame(), EDIT_LOG_COLUMNS)
        events = fetch_frame(con, _EVENTS_SQL, {"thread_id": thread_id})
        removal_parents = events.loc[events["event"] == "removed", "parent_checkpoint_id"].dropna().unique().tolist()
        lists = dict(con.sql(_LISTS_SQL, params={"thread_id": thread_id, "ids": [read_at, *removal_parents]}).fetchall())
        id_of = dict(con.sql(_IDS_SQL, params={"thread_id": thread_id}).fetchall())

    chain = _ancestors(read_at, parent_of)
    on_chain = set(chain)
    branch_of = dict(zip(ids, tree["branch"].tolist()))
    step_order = {c: i for i, c in enumerate(reversed(chain))}

    # Where a message stands in the transcript read: by id, a message without one by its version.
    def ident(version: int | None) -> object:
        mid = id_of.get(version)
        return mid if mid is not None else ("version", version)

    place: dict[object, int] = {}
    for ordinal, v in enumerate(lists.get(read_at) or ()):
        place.setdefault(ident(v), ordinal)

    removed_at: dict[str, set[str]] = {}  # message id → checkpoints that removed it
    for e in events.itertuples(index=False):
        if e.event == "removed" and isinstance(e.message_id, str):
            removed_at.setdefault(e.message_id, set()).add(e.checkpoint_id)

    rows = []
    for e in events.to_dict("records"):
        cid = e["checkpoint_id"]
        if not all_branches and cid not in on_chain:
            continue
        event = e["event"]
        mid = e["message_id"] if isinstance(e["message_id"], str) else None
        if event == "added":
            # A re-add: an earlier checkpoint of this one's chain removed the same id.
            earlier = set(_ancestors(parent_of.get(cid), parent_of))
            if mid is None or not removed_at.get(mid, set()) & earlier:
                continue
            event = "re_added"
        key = ident(e["version"] if event != "removed" else e["previous_version"])
        before = None
        if event == "removed":
            parent_list = list(lists.get(e["parent_checkpoint_id"]) or ())
            following = parent_list[int(e["position"]) + 1 :] if pd.notna(e["position"]) else []
            before = next((place[ident(v)] for v in following if ident(v) in place), None)
        rows.append({
            **e,
            "event": event,
            "thread_id": thread_id,
            "branch": branch_of.get(cid, 0),
            "ordinal": place.get(key),
            "before_ordinal": before,
            "text_diff": inline(e["old_content"], e["new_content"]) if event == "edited" else None,
            "_order": (step_order.get(cid, len(step_order)), _micros(e["ts"]), cid, _int(e["position"], -1)),
        })  # fmt: skip
    # Along the chain read, oldest first; other branches' events after it, by time.
    rows.sort(key=lambda r: r.pop("_order"))
    return typed(pd.DataFrame(rows), EDIT_LOG_COLUMNS)


_EDITED_THREADS_SQL = """
SELECT DISTINCT e.thread_id FROM message_events AS e
JOIN threads AS t USING (thread_id)
WHERE ({where}) AND e.event IN ('edited', 'removed', 'reordered')
ORDER BY e.thread_id
"""


def edit_logs(con_or_path: ConOrPath, filters: Filters = Filters(), all_branches: bool = False) -> pd.DataFrame:
    """`edit_log()` of every thread in `filters` that has one, in thread order (the `edits` report).

    >>> edit_logs("lens.duckdb", Filters(tenants=("initech",))).event.value_counts()  # doctest: +SKIP
    """
    where, params = filters.thread_where("t")
    with connection(con_or_path) as con:
        # `where` is Filters' own SQL with placeholders; the values stay bound.
        threads = [r[0] for r in con.sql(_EDITED_THREADS_SQL.format(where=where), params=params).fetchall()]
        frames = [edit_log(con, t, all_branches=all_branches) for t in threads]
    frames = [f for f in frames if len(f)]
    return typed(pd.concat(frames, ignore_index=True), EDIT_LOG_COLUMNS) if frames else typed(pd.DataFrame(), EDIT_LOG_COLUMNS)
