"""The versions of a thread: each distinct payload decoded once, and equal messages in other bytes merged.

A version is a distinct payload of the thread, numbered by its first appearance in (ts, id)
order (`loaders.transform.thread`); a `message_versions` row is a version that decoded.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from loaders.decode import DecodeError
from loaders.elements import max_elements
from loaders.messages import Message, decode_message, same_message
from loaders.records import LoadError


def decode_versions(thread_id: str, payloads: list[Any], first_cids: list[str], errors: list[LoadError]) -> list[Message | None]:
    """Each distinct payload of a thread decoded (None, and an error naming its first
    checkpoint, when it is not a message), in version order."""
    decoded: list[Message | None] = []
    append = decoded.append
    limit = max_elements()
    for payload, cid in zip(payloads, first_cids):
        try:
            append(decode_message(payload, limit))
        except DecodeError as exc:
            append(None)
            errors.append(LoadError(thread_id, "", cid, "message", str(exc)))
    return decoded


def merge_equal_versions(decoded: list[Message | None]) -> list[int] | None:
    """For each version the first version of equal value (`messages.same_message`), itself
    if none; None when all are distinct.

    Equal values share an id (or both have none): a thread whose versions all have ids
    of their own, the common case, costs one set of its ids. Otherwise only versions
    that share an id, text length and text prefix are compared.

    >>> m = Message(None, "ai", "assistant", None, None, "OK", 0, None, 0, (), *[None] * 9)
    >>> merge_equal_versions([m, m._replace(response_metadata='{"a":1,"b":2}'), m._replace(response_metadata='{"b":2,"a":1}')])
    [0, 1, 1]
    >>> merge_equal_versions([m, None, m._replace(content="KO")]) is None
    True
    """
    mids = [msg[0] if msg is not None else None for msg in decoded]
    if len(set(mids)) == len(mids):
        return None
    shared = {mid for mid, n in Counter(mids).items() if n > 1}
    seen: dict[tuple, int | list[int]] = {}
    into = None
    for v, msg in enumerate(decoded):
        if msg is None or msg.message_id not in shared:
            continue
        content = msg.content
        key = (msg.message_id, len(content), content[:32])
        first = seen.get(key)
        if first is None:
            seen[key] = v
            continue
        group = first if isinstance(first, list) else [first]
        for u in group:
            if same_message(decoded[u], msg):
                if into is None:
                    into = list(range(len(decoded)))
                into[v] = u
                break
        else:
            group.append(v)
            seen[key] = group
    return into
