"""A thread's subgraph namespaces → `subgraph_messages` rows (contract §3.9).

A subgraph writes its own checkpoints under `checkpoint_ns = "<node>:<task_id>"`
(nested levels joined by `|`; a second call inside one task adds `|1`, …), each
holding the subgraph's own copy of the messages, the input it was given
included. These rows are the list at each namespace's latest checkpoint, so a
reader can see what a subgraph run said; they never feed the transcript, its
versions, events or `ts` (those are the root namespace's alone).

Only the run's own messages are rows: those the list the run started from
does not hold (by id; by payload for a message without one), that list being
the enclosing namespace's checkpoint that `metadata.parents` names (the root
checkpoint for a top-level run; `loaders.catalog.enclosing_namespace`). The
input is the enclosing list itself, and a subgraph given the whole
conversation would otherwise store it again for every run. When that list is
not loaded, every message of the run is a row.

Payloads are the thread's (`ThreadBundle.payloads`): those a root list holds
were decoded already and are passed in, so only what a subgraph alone said is
decoded here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loaders.catalog import enclosing_namespace
from loaders.decode import DecodeError
from loaders.messages import Message, decode_message
from loaders.elements import max_elements
from loaders.records import LoadError, RawCheckpoint

_NO_TS = 1 << 62  # sorts after every real timestamp


def _parents(metadata: str | None) -> Any:
    if not metadata:
        return None
    try:
        return json.loads(metadata).get("parents")
    except (ValueError, AttributeError):
        return None


def subgraph_rows(
    thread_id: str,
    cps: list[RawCheckpoint],
    ts_list: list[int | None],
    payloads: list[Any],
    decoded: dict[int, Message | None],
    errors: list[LoadError],
) -> list[tuple]:
    """`subgraph_messages` rows of one thread (none when it has no subgraph checkpoint).

    `decoded` maps payload numbers (`RawCheckpoint.messages`) to their decoded
    message (None: not a message, already reported); what it lacks is decoded
    here, and a payload that is not a message is reported against the
    namespace's latest checkpoint.
    """
    by_ns: dict[str, list[tuple[RawCheckpoint, int | None]]] = {}
    lists: dict[tuple[str, str], Any] = {}
    for cp, ts in zip(cps, ts_list):
        if not cp.damaged:
            lists[(cp.checkpoint_ns, cp.checkpoint_id)] = cp.messages
            if cp.checkpoint_ns != "":
                by_ns.setdefault(cp.checkpoint_ns, []).append((cp, ts))
    rows: list[tuple] = []
    limit = max_elements() if by_ns else 0
    for ns, items in by_ns.items():
        latest = max(items, key=lambda item: item[0].checkpoint_id)[0]
        if latest.messages is None:
            continue

        def message(n: int, where: RawCheckpoint = latest) -> Message | None:
            if n not in decoded:
                try:
                    decoded[n] = decode_message(payloads[n], limit)
                except DecodeError as exc:
                    decoded[n] = None
                    errors.append(LoadError(thread_id, ns, where.checkpoint_id, "message", str(exc)))
            return decoded[n]

        first_ts: dict[int, int | None] = {}
        for cp, ts in sorted(items, key=lambda item: (_NO_TS if item[1] is None else item[1], item[0].checkpoint_id)):
            for n in cp.messages or ():
                first_ts.setdefault(n, ts)
        inherited = _inherited(ns, latest, lists, message)
        for ordinal, n in enumerate(latest.messages):
            msg = message(n)
            if msg is None or (inherited is not None and _ident(n, msg) in inherited):
                continue
            rows.append((
                thread_id, ns, latest.checkpoint_id, ordinal, msg.role, msg.lc_type, msg.name, msg.content,
                len(msg.content), msg.non_text_blocks, msg.media, msg.message_id, first_ts.get(n), msg.tool_calls,
                msg.tool_call_count, msg.tool_call_id, msg.tool_status, msg.input_tokens, msg.output_tokens,
                msg.total_tokens, msg.model,
            ))  # fmt: skip
    return rows


def _ident(n: int, msg: Message | None) -> Any:
    """A message by its id; one without an id (or undecodable) by its payload."""
    return msg.message_id if msg is not None and msg.message_id is not None else ("payload", n)


def _inherited(
    ns: str, latest: RawCheckpoint, lists: dict[tuple[str, str], Any], message: Callable[[int], Message | None]
) -> set | None:
    """The idents of the list the run of `ns` started from; None when that list is not loaded."""
    parents = _parents(latest.metadata)
    outer = enclosing_namespace(ns, parents)
    if outer is None:
        return None
    key = (outer, parents[outer])
    if key not in lists:
        return None
    return {_ident(n, message(n)) for n in lists[key] or ()}
