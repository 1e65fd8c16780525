"""`message_events`: what turned one checkpoint's message list into its child's.

`loaders.transform.thread` compares each root checkpoint with its parent; a list that only
appends new messages it reads itself (each one `added`), any other change is compared by `list_events`.
"""

from __future__ import annotations

from array import array
from typing import Any

from loaders.messages import Message


def list_events(prev: array, cur: array, decoded: list[Message | None], ident_of: list[Any]) -> list[tuple]:
    """Events turning the version list `prev` into `cur`, keyed by message id
    (a message without one by its payload), occurrence by occurrence: the k-th copy
    of an id in one list matches the k-th in the other, so a repeated message that
    is appended (an `operator.add` list) is added, and one copy dropped is removed.

    An entry that is not a message (`decoded` None: reported once as a row error) takes
    no part: a list flooded with them costs no events. (Lists that only append new
    messages are handled by the caller, cheaper.)

    >>> m = lambda mid: Message(mid, "ai", "assistant", None, None, "OK", 0, None, 0, (), None, None, None, None, None, None, None, None, None)
    >>> decoded = [m(None), m(None)]
    >>> list_events(array("i", [0, 1]), array("i", [0, 1, 1]), decoded, [("version", 0), ("version", 1)])
    [('added', None, 2, 1, None)]
    """

    def index(versions: array) -> dict[Any, tuple[int, int]]:
        out: dict[Any, tuple[int, int]] = {}
        seen: dict[Any, int] = {}
        for i, v in enumerate(versions):
            if decoded[v] is None:
                continue  # not a message (a row error): never an event
            ident = ident_of[v]
            k = seen.get(ident, 0)
            seen[ident] = k + 1
            out[(ident, k)] = (i, v)
        return out

    before, after = index(prev), index(cur)
    events = []
    for k, (i, v) in before.items():
        if k not in after:
            events.append(("removed", _mid(v, decoded), i, None, v))
    common_before = [k for k in before if k in after]
    common_after = [k for k in after if k in before]
    moved = {a for a, b in zip(common_after, common_before) if a != b}
    for k, (i, v) in after.items():
        if k not in before:
            events.append(("added", _mid(v, decoded), i, v, None))
            continue
        pv = before[k][1]
        if pv != v and _changed(decoded[pv], decoded[v]):
            events.append(("edited", _mid(v, decoded), i, v, pv))
        if k in moved:
            events.append(("reordered", _mid(v, decoded), i, v, pv))
    return events


def _mid(v: int, decoded: list[Message | None]) -> str | None:
    msg = decoded[v]
    return msg.message_id if msg is not None else None


def _changed(a: Message | None, b: Message | None) -> bool:
    if a is None or b is None:
        return a is not b
    return b.edited_from(a)
