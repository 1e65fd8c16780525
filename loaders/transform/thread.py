"""One thread's checkpoints → rows of every table: the walk over its checkpoints (contract §3).

The walk finds, once per thread, what every table's rows are made of: the versions in
order of first appearance (`loaders.transform.versions`), each root checkpoint's list of
versions, the tree's shape (children, latest per namespace, the current branch and where
each other branch hangs), the events between each root checkpoint and its parent
(`loaders.transform.events`), and the staged bytes of the big tables; the rows themselves
are `loaders.transform.rows`'.
"""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import islice
from operator import attrgetter, itemgetter, le as _le, lt as _lt
from typing import Any

from loaders.decode import Ext, JsonPayload
from loaders.linear_regex import BuiltinRegex, LinearRegex
from loaders.messages import Message
from loaders.records import RawCheckpoint, ThreadBundle, LoadError, max_list_entries, max_thread_events
from loaders.subgraphs import subgraph_rows
from loaders.thread_keys import parse_thread_key
from loaders.transform.events import list_events
from loaders.transform.limits import (
    METADATA_MAX_CHARS, events_over_error, metadata_too_deep, metadata_too_long, within_list_entries,
)
from loaders.transform.rows import (
    SizedRows, ThreadRows, interrupts_of, make_thread_row, stale_reason, transcript_rows, versions_rows,
)
from loaders.transform.timestamps import ts_micros_of
from loaders.transform.versions import decode_versions, merge_equal_versions

_NO_TS = 1 << 62  # sorts after every real timestamp
_checkpoint_id = attrgetter("checkpoint_id")
# Version lists are `array('i')` (see `RawCheckpoint.messages`); an array never
# equals a list, so an empty one is an array too. Never mutated.
_NO_VERSIONS = array("i")

_checkpoint_ns = itemgetter(RawCheckpoint._fields.index("checkpoint_ns"))
_parent_id = itemgetter(RawCheckpoint._fields.index("parent_checkpoint_id"))
_damaged = itemgetter(RawCheckpoint._fields.index("damaged"))
_messages = itemgetter(RawCheckpoint._fields.index("messages"))
_SIZED = {bytes, str, JsonPayload}  # payloads whose size is their len() (`_payload_bytes`)
_metadata = itemgetter(RawCheckpoint._fields.index("metadata"))
_mid_of = itemgetter(Message._fields.index("message_id"))


def _payload_bytes(payload: Any) -> int:
    """The size of an undecoded payload (msgpack bytes, legacy JSON text, an `Ext`, a plain dict)."""
    if isinstance(payload, (bytes, str)):
        return len(payload)
    if isinstance(payload, Ext):
        return len(payload.data)
    return len(repr(payload))


def transform_thread(bundle: ThreadBundle, key_regex: BuiltinRegex | LinearRegex) -> ThreadRows:
    """Turn one thread's checkpoints and special writes into table rows.

    >>> rows = transform_thread(ThreadBundle("t", []), compile_thread_key(None))  # doctest: +SKIP
    """
    thread_id = bundle.thread_id
    errors = list(bundle.errors)
    if not bundle.checkpoints:
        # Nothing loadable (e.g. rows skipped for a damaged key): only the errors.
        return ThreadRows([], [], [], [], [], [], errors)
    key = parse_thread_key(thread_id, key_regex)
    cps = within_list_entries(thread_id, bundle.checkpoints, max_list_entries(), errors)

    # Per-checkpoint work here runs once per checkpoint of the store: lists and
    # comprehensions rather than dicts keyed by (namespace, id) tuples.
    ts_list = ts_micros_of(cps)
    if None in ts_list:
        for cp, ts in zip(cps, ts_list):
            if ts is None and cp.ts is not None:
                errors.append(LoadError(thread_id, cp.checkpoint_ns, cp.checkpoint_id, "checkpoint", f"unreadable ts {cp.ts!r:.60} (ISO 8601, years 1 to 9999 in UTC)"))
    # A thread of root checkpoints only, none damaged (no subgraph, the common case): the
    # lists below are `cps` itself, built in C by `map` (an attribute read per checkpoint
    # and a comprehension each cost more than the rest of this block).
    flat = not any(map(_checkpoint_ns, cps)) and not any(map(_damaged, cps))
    if flat:
        ids = list(map(_checkpoint_id, cps))
        root_ts_of = dict(zip(ids, ts_list))
        roots = usable_roots = cps
        root_by_id = dict(zip(ids, cps))
    else:
        root_ts_of = {cp.checkpoint_id: ts for cp, ts in zip(cps, ts_list) if cp.checkpoint_ns == ""}
        roots = [cp for cp in cps if cp.checkpoint_ns == ""]
        root_by_id = {cp.checkpoint_id: cp for cp in roots}
        usable_roots = [cp for cp in roots if not cp.damaged]

    # --- versions: distinct payloads numbered by first appearance in (ts, id) order.
    # The reader numbered them in its own (id) order; walking the root checkpoints
    # oldest first, only what follows the previous list's common prefix can be new.
    def order_key(cp: RawCheckpoint) -> tuple:
        ts = root_ts_of[cp.checkpoint_id]
        return (_NO_TS if ts is None else ts, cp.checkpoint_id)

    # Readers hand checkpoints over by id, and ids mostly follow time: then both
    # orders below are the given one, and checking that is cheaper than sorting.
    usable_ids = ids if flat else [cp.checkpoint_id for cp in usable_roots]
    by_id = all(map(_lt, usable_ids, islice(usable_ids, 1, None)))
    usable_ts = [root_ts_of[cid] for cid in usable_ids]
    by_time = by_id and None not in usable_ts and all(map(_le, usable_ts, islice(usable_ts, 1, None)))
    first_of: dict[int, RawCheckpoint] = {}
    order: list[int] = []  # reader numbers, in order of first appearance
    prev = _NO_VERSIONS
    for cp in usable_roots if by_time else sorted(usable_roots, key=order_key):
        cur = cp.messages
        if cur is None:
            continue
        n = len(prev)
        for v in cur[n:] if len(cur) >= n and cur[:n] == prev else cur:
            if v not in first_of:
                first_of[v] = cp
                order.append(v)
        prev = cur
    first_cids = [first_of[v].checkpoint_id for v in order]
    payloads = [bundle.payloads[old] for old in order]
    decoded = decode_versions(thread_id, payloads, first_cids, errors)
    # Subgraph lists repeat root payloads: what a root list holds is decoded once, here.
    sub_rows = (
        subgraph_rows(thread_id, cps, ts_list, bundle.payloads, dict(zip(order, decoded)), errors)
        if len(roots) != len(cps) else []
    )
    # The reader told payloads apart by their bytes: the same message in other bytes
    # (another serializer, another field order) is one version, the first one met.
    into = merge_equal_versions(decoded)
    # A checkpoint without a messages channel has an empty list.
    if into is None and order == list(range(len(order))):
        lists = list(map(_messages, usable_roots))
        if None in lists:
            lists = [_NO_VERSIONS if m is None else m for m in lists]
        versions_at = dict(zip(usable_ids, lists))
    else:
        final = range(len(order))  # each version's number once merged ones are dropped
        if into is not None:
            kept: dict[int, int] = {}
            final = [kept.setdefault(v, len(kept)) if v == target else kept[target] for v, target in enumerate(into)]
            decoded = [decoded[v] for v in kept]
            payloads = [payloads[v] for v in kept]
            first_cids = [first_cids[v] for v in kept]
        renumber = {old: final[v] for v, old in enumerate(order)}.__getitem__
        versions_at = {cp.checkpoint_id: array("i", map(renumber, cp.messages or ())) for cp in usable_roots}
    first_ts = [root_ts_of[cid] for cid in first_cids]

    # --- tree shape (checkpoints unpacked in the loop header: cheaper than attribute access)
    children: dict[str, dict[str, int]] = {}  # namespace → parent id → number of children
    latest_by_ns: dict[str, str] = {}
    if flat:
        parents = [p for p in map(_parent_id, cps) if p is not None]
        if parents:
            children[""] = Counter(parents)
        latest_by_ns[""] = latest_root = transcript_root = max(ids)  # (no checkpoint is damaged)
    else:
        for _, ns, cid, parent, _, _, _, _ in cps:
            if parent is not None:
                of_ns = children.get(ns)
                if of_ns is None:
                    of_ns = children[ns] = {}
                of_ns[parent] = of_ns.get(parent, 0) + 1
            latest = latest_by_ns.get(ns)
            if latest is None or cid > latest:
                latest_by_ns[ns] = cid
        # The transcript's checkpoint: the greatest root id that decoded (`stale_reason` when it is not the greatest).
        transcript_root = max((cp.checkpoint_id for cp in usable_roots), default=None)
        latest_root = latest_by_ns.get("")

    current: set[str] = set()
    node = transcript_root
    while node is not None and node not in current and node in root_by_id:
        current.add(node)
        node = root_by_id[node].parent_checkpoint_id

    branch_root: dict[str, str | None] = {}

    def hang_point(cid: str) -> str | None:
        # Iterative walk up the parents; memoised because branches share ancestors.
        path = []
        node = cid
        result: str | None = None
        while node is not None:
            if node in current:
                result = node
                break
            if node in branch_root:
                result = branch_root[node]
                break
            path.append(node)
            parent = root_by_id.get(node)
            node = parent.parent_checkpoint_id if parent is not None else None
            if node in path:
                break
        for p in path:
            branch_root[p] = result
        return result

    interrupts = interrupts_of(bundle.writes)

    # --- checkpoints
    checkpoint_rows = []
    add_row = checkpoint_rows.append
    no_children: dict[str, int] = {}
    for (_, ns, cid, parent, _, messages, _, metadata), ts in zip(cps, ts_list):
        is_root = ns == ""
        if metadata is not None:
            reason = (metadata_too_long(len(metadata)) if len(metadata) > METADATA_MAX_CHARS
                      else metadata_too_deep(metadata))
            if reason is not None:
                errors.append(LoadError(thread_id, ns, cid, "metadata", reason))
                metadata = None
        on_current = is_root and cid in current
        add_row(
            (
                thread_id,
                ns,
                cid,
                parent,
                ts,
                None,  # step, source and run_id: `Column.derived`, read from the metadata JSON at ingest
                None,
                None,
                len(messages) if messages is not None else None,
                versions_at.get(cid) if is_root else None,
                is_root,
                cid == latest_by_ns[ns],
                cid not in children.get(ns, no_children),
                on_current,
                hang_point(cid) if is_root and not on_current else None,
                (ns, cid) in interrupts if interrupts else False,
                metadata,
            )
        )

    version_rows = versions_rows(thread_id, decoded, first_cids, first_ts)
    latest_versions = versions_at.get(transcript_root, _NO_VERSIONS) if transcript_root is not None else None
    message_rows = transcript_rows(thread_id, key, latest_versions, decoded, first_cids, first_ts)

    # --- events: each root checkpoint against its parent
    ident_of = [
        msg.message_id if msg is not None and msg.message_id is not None else ("version", v)
        for v, msg in enumerate(decoded)
    ]
    mid_of = [msg.message_id if msg is not None else None for msg in decoded]
    event_rows = []
    add_events = event_rows.extend
    removed_current = edited_current = 0
    # The idents of the list at checkpoint `chain_at`: a child that only appends to
    # that list extends the set instead of building its parent's again (once per
    # checkpoint, that made the events quadratic in the length of a thread).
    chain_at: str | None = None
    chain_ids: set = set()
    events_cap = max_thread_events()
    for _, _, cid, parent_id, _, _, _, _ in usable_roots if by_id else sorted(usable_roots, key=_checkpoint_id):
        cur = versions_at[cid]
        prev = versions_at.get(parent_id, _NO_VERSIONS) if parent_id is not None else _NO_VERSIONS
        on_chain = parent_id is not None and parent_id == chain_at
        if cur == prev:
            if on_chain:
                chain_at = cid
            continue
        n = len(prev)
        if len(cur) >= n and cur[:n] == prev:
            if not on_chain:
                chain_ids = set(map(ident_of.__getitem__, prev))
            tail = cur[n:]
            tail_ids = list(map(ident_of.__getitem__, tail))
            if not any(map(chain_ids.__contains__, tail_ids)):
                # Only new messages appended: each one is added (a repeated id in the tail too).
                ts = root_ts_of[cid]
                added = [(thread_id, cid, parent_id, ts, "added", mid_of[v], i, v, None) for i, v in enumerate(tail, n)
                         if decoded[v] is not None]
                if len(event_rows) + len(added) > events_cap:
                    errors.append(events_over_error(thread_id, cid, events_cap))
                    break
                add_events(added)
                chain_ids.update(tail_ids)
                chain_at = cid
                continue
        events = list_events(prev, cur, decoded, ident_of)
        if len(event_rows) + len(events) > events_cap:
            errors.append(events_over_error(thread_id, cid, events_cap))
            break
        chain_at = None
        ts = root_ts_of[cid]
        add_events([(thread_id, cid, parent_id, ts, event, mid, pos, v, pv) for event, mid, pos, v, pv in events])
        if cid in current:
            removed_current += sum(e[0] == "removed" for e in events)
            edited_current += sum(e[0] == "edited" for e in events)

    root_ts = [ts for ts in root_ts_of.values() if ts is not None]
    root_children = children.get("", no_children)
    thread_row = make_thread_row(
        thread_id, key, min(root_ts) if root_ts else None, max(root_ts) if root_ts else None,
        len(cps), len(roots), len(set(map(_checkpoint_ns, cps))), len(message_rows), latest_root, transcript_root,
        stale_reason(latest_root, transcript_root, errors),
        (transcript_root not in root_children) if transcript_root is not None else None,
        # (root ids are distinct: one namespace) leaves, and parents of more than one root
        len(roots) - len(root_children.keys() & set(map(_checkpoint_id, roots))),
        len(root_children) - list(root_children.values()).count(1),
        interrupts.get(("", transcript_root)) if transcript_root is not None else None,
        removed_current, edited_current,
    )
    # Staged text and list bytes of the big tables, for the writer's byte budget
    # (`parts.PartWriter`), from lengths known per thread and per version: measuring
    # value by value (`parts.RowSizer`) cost 0.6 µs a row. A message's text is
    # about its payload's size (strings are stored as they are; JSON of small values
    # can be a few times longer, and the writer checks each staged batch exactly).
    tlen = len(thread_id)
    cid_len = max(map(len, map(_checkpoint_id, cps)))
    vbytes = list(map(len, payloads)) if set(map(type, payloads)) <= _SIZED else list(map(_payload_bytes, payloads))
    mid_len = max(map(len, filter(None, map(_mid_of, filter(None, decoded)))), default=0)
    checkpoint_bytes = (
        len(cps) * (tlen + max(map(len, map(_checkpoint_ns, cps))) + 3 * cid_len)  # id, parent, hang point
        + sum(map(len, filter(None, map(_metadata, cps))))
        + 4 * sum(map(len, versions_at.values()))
    )
    key_len = tlen + sum(len(k) for k in (key.tenant_id, key.sub_tenant_id, key.session_id) if k)
    return ThreadRows(
        [thread_row],
        SizedRows(checkpoint_rows, checkpoint_bytes),
        SizedRows(message_rows, len(message_rows) * (key_len + cid_len + 9) + sum(map(vbytes.__getitem__, latest_versions or ()))),
        SizedRows(version_rows, len(version_rows) * (tlen + cid_len) + sum(vbytes)),
        SizedRows(event_rows, len(event_rows) * (tlen + 2 * cid_len + mid_len + 8)),
        sub_rows,
        errors,
    )


def thread_batches(bundle: ThreadBundle, key_regex: BuiltinRegex | LinearRegex):
    """`(table, rows)` of every table for one thread (`loaders.jobs.batches`)."""
    rows = transform_thread(bundle, key_regex)
    yield "threads", rows.threads
    yield "checkpoints", rows.checkpoints
    yield "messages", rows.messages
    yield "message_versions", rows.message_versions
    yield "message_events", rows.message_events
    yield "subgraph_messages", rows.subgraph_messages
    yield "load_errors", rows.errors
