"""One thread's checkpoints → rows of every table (contract §3).

The transcript is `state['messages']` of the latest root checkpoint (greatest
checkpoint id in namespace ''). A message's `ts` is that of the oldest root
checkpoint (smallest ts, tie → smallest id; any branch) holding its id. When the
latest root checkpoint does not decode, the transcript is the greatest one that
did, and the `threads` row says so (`stale_reason`).

Why payloads stay bytes until here: a SqliteSaver re-serializes the whole
message list in every checkpoint, so the same payload bytes recur in every
later checkpoint. The reader has numbered the distinct payloads of the thread
(`records.Payloads`), so each checkpoint arrives as an `array` of small ints and
each distinct payload is decoded once per thread, here.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter, itemgetter, le as _le, lt as _lt
from datetime import datetime, timedelta, timezone
from typing import Any

from loaders import _native
from loaders.cipher import missing_key
from loaders.decode import DecodeError, Ext, JsonPayload, plain, to_json
from loaders.elements import max_elements
from loaders.linear_regex import BuiltinRegex, LinearRegex
from loaders.messages import Message, decode_message, same_message
from loaders.records import (
    LoadError, RawCheckpoint, RawWrite, ThreadBundle, list_entries_reason, max_list_entries, max_thread_events,
    over_checkpoint_cap,
)
from loaders.subgraphs import subgraph_rows
from loaders.thread_keys import ThreadKey, parse_thread_key

# LangGraph's own UTC timestamps read in C, same answers (None: every one goes through `ts_micros`).
_ts_list = _native.scan.ts_list if _native.scan is not None else None

# DuckDB parses a checkpoint's metadata JSON at ingest (step, source, run_id), which takes
# several times its size in memory at once under the writer's memory limit: metadata
# longer than this is reported and not loaded (its checkpoint still is). Real metadata is
# a few hundred bytes; a LangGraph 0.2 checkpoint's `writes` in it, some kilobytes.
METADATA_MAX_CHARS = 8 << 20


def metadata_too_long(chars: int) -> str:
    """The reason metadata of `chars` characters is not loaded (over `METADATA_MAX_CHARS`)."""
    return (f"metadata is {chars} characters long, over the {METADATA_MAX_CHARS}-character limit; "
            "not loaded (step, source and run_id are NULL)")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


_MIN_MICROS = (datetime.min.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND
_MAX_MICROS = (datetime.max.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND


def ts_micros(value: Any) -> int | None:
    """A checkpoint `ts` as integer microseconds since the Unix epoch (UTC); None if unreadable
    or, in UTC, outside years 1 to 9999.

    Rows carry timestamps this way: an int orders and converts to Arrow at C
    speed, where an aware `datetime` costs microseconds per value.

    >>> ts_micros("1970-01-01T00:00:01.5+00:00"), ts_micros("1970-01-01T01:00:00+01:00")
    (1500000, 0)
    """
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    # Aware subtraction honours the offset: no conversion to UTC needed first.
    micros = (dt - _EPOCH) // _MICROSECOND
    # An offset can push a time past the years a datetime holds (9999-12-31T23:59:59-01:00 is
    # in year 10000 UTC): such a ts is as unreadable as any other (contract §7.12).
    return micros if _MIN_MICROS <= micros <= _MAX_MICROS else None


@dataclass(slots=True)
class ThreadRows:
    """Rows of every table for one thread, as tuples of the table's staged columns in
    catalogue order (`loaders.catalog`; tests/loaders/test_catalog.py holds every tuple to it).

    TIMESTAMPTZ columns hold integer microseconds since the Unix epoch, UTC (see `ts_micros`).
    """

    threads: list[tuple]
    checkpoints: list[tuple]
    messages: list[tuple]
    message_versions: list[tuple]
    message_events: list[tuple]
    subgraph_messages: list[tuple]
    errors: list[LoadError]


_NO_TS = 1 << 62  # sorts after every real timestamp
_checkpoint_id = attrgetter("checkpoint_id")
# Version lists are `array('i')` (see `RawCheckpoint.messages`); an array never
# equals a list, so an empty one is an array too. Never mutated.
_NO_VERSIONS = array("i")


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
    ts_list = _ts_list(cps, ts_micros) if _ts_list is not None else [ts_micros(cp.ts) for cp in cps]
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
        if metadata is not None and len(metadata) > METADATA_MAX_CHARS:
            errors.append(LoadError(thread_id, ns, cid, "metadata", metadata_too_long(len(metadata))))
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
        events = _diff(prev, cur, decoded, ident_of)
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


def within_list_entries(thread_id: str, cps: list[RawCheckpoint], cap: int, errors: list[LoadError]) -> list[RawCheckpoint]:
    """`cps` with the checkpoints whose message lists pass `cap` entries in all (by namespace
    and id) damaged: they load without messages, and the first one is a row error.

    A Postgres-shaped store keeps a list once per version and any number of checkpoints may
    name it: the entries loaded are not bounded by the store's size, as a SqliteSaver's are.

    >>> cp = RawCheckpoint("t", "", "c1", None, None, array("i", [0, 1]))
    >>> errors = []
    >>> [c.damaged for c in within_list_entries("t", [cp, cp._replace(checkpoint_id="c2")], 3, errors)]
    [False, True]
    >>> errors[0].reason.startswith("the thread's message lists hold more than 3 entries")
    True
    """
    if sum(map(len, filter(None, map(_messages, cps)))) <= cap:
        return cps
    out = list(cps)
    entries = 0
    first = True
    for i in sorted(range(len(out)), key=lambda i: (out[i].checkpoint_ns, out[i].checkpoint_id)):
        cp = out[i]
        if cp.damaged:
            continue
        # (one past the limit without a messages channel is cut too: else it would be the transcript's)
        entries += len(cp.messages) if cp.messages is not None else 0
        if entries > cap:
            if first:
                errors.append(LoadError(thread_id, cp.checkpoint_ns, cp.checkpoint_id, "messages",
                                        f"{list_entries_reason(cap)}: this checkpoint and the later ones load without messages"))
                first = False
            out[i] = cp._replace(messages=None, damaged=True)
    return out


def events_over_error(thread_id: str, checkpoint_id: str, cap: int) -> LoadError:
    """The row error of a thread whose `message_events` pass `cap` at root checkpoint `checkpoint_id`
    (event rows are held until the thread is staged, and a list reordered at every checkpoint
    makes an event of every entry each time).

    >>> events_over_error("t", "c9", 5).reason.split(":")[0]
    'message events of this checkpoint and the later ones not recorded'
    """
    return LoadError(thread_id, "", checkpoint_id, "messages", (
        "message events of this checkpoint and the later ones not recorded: the thread's events pass "
        f"the per-thread limit of {cap:,} (TRANSCRIPT_LENS_MAX_THREAD_EVENTS)"))


class SizedRows(list):
    """Rows with `nbytes`, an estimate of their staged text and list bytes, which
    `parts.PartWriter` takes instead of measuring them value by value.

    >>> SizedRows([("t", "hello")], 6).nbytes
    6
    """

    __slots__ = ("nbytes",)

    def __init__(self, rows: list[tuple], nbytes: int) -> None:
        super().__init__(rows)
        self.nbytes = nbytes


# `versions_rows` and `transcript_rows` unpack a `Message` in one step (per message, its
# attributes cost a descriptor call each), in this field order.
_MESSAGE_FIELDS = (
    "message_id", "lc_type", "role", "chat_role", "name", "content", "non_text_blocks", "tool_calls", "tool_call_count",
    "tool_names", "tool_call_id", "tool_status", "input_tokens", "output_tokens", "total_tokens", "model", "usage_metadata",
    "response_metadata", "additional_kwargs",
)
if Message._fields != _MESSAGE_FIELDS:
    raise ImportError(f"loaders.transform unpacks messages.Message as {_MESSAGE_FIELDS}; it is now {Message._fields}")

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


# --- rows per message and per thread

def interrupts_of(writes: list[RawWrite]) -> dict[tuple[str, str], list[Any]]:
    """(namespace, checkpoint id) → the values of its `__interrupt__` writes."""
    interrupts: dict[tuple[str, str], list[Any]] = {}
    for w in writes:
        if w.channel == "__interrupt__":
            interrupts.setdefault((w.checkpoint_ns, w.checkpoint_id), []).append(w.value)
    return interrupts


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


def versions_rows(thread_id: str, decoded: list[Message | None], first_cids: list[str], first_ts: list[int | None]) -> list[tuple]:
    """`message_versions` rows: every decoded version with its first checkpoint and ts."""
    rows = []
    append = rows.append
    for v, msg in enumerate(decoded):
        if msg is None:
            continue
        (mid, lc_type, role, chat_role, name, content, non_text, tool_calls, tool_call_count, _, tool_call_id, tool_status,
         input_tokens, output_tokens, total_tokens, model, *_) = msg
        append((thread_id, v, mid, lc_type, role, name, content, len(content), non_text, tool_calls, tool_call_count,
                tool_call_id, tool_status, chat_role, input_tokens, output_tokens, total_tokens, model, first_cids[v],
                first_ts[v]))
    return rows


def transcript_rows(
    thread_id: str, key: ThreadKey, latest_versions, decoded: list[Message | None], first_cids: list[str], first_ts: list[int | None]
) -> list[tuple]:
    """`messages` rows: the latest root checkpoint's list (`latest_versions`, None when
    there is no root checkpoint); a message's ts is its id's first sighting."""
    if latest_versions is None:
        return []
    first_seen: dict[str, int] = {}
    for v, msg in enumerate(decoded):
        # Versions are numbered oldest first, so the first one met holds the id's first sighting.
        if msg is not None and msg.message_id is not None and msg.message_id not in first_seen:
            first_seen[msg.message_id] = v
    rows = []
    append = rows.append
    tenant, sub, session = key.tenant_id, key.sub_tenant_id, key.session_id
    for ordinal, v in enumerate(latest_versions):
        msg = decoded[v]
        if msg is None:
            continue
        (mid, lc_type, role, chat_role, name, content, non_text, tool_calls, tool_call_count, _, tool_call_id, tool_status,
         input_tokens, output_tokens, total_tokens, model, usage, response, additional) = msg
        seen = first_seen.get(mid) if mid is not None else None
        append((thread_id, tenant, sub, session, ordinal, role, lc_type, chat_role, name, content, len(content), non_text, mid,
                first_ts[seen] if seen is not None else None, first_cids[seen] if seen is not None else None, tool_calls,
                tool_call_count, tool_call_id, tool_status, input_tokens, output_tokens, total_tokens, model, usage,
                response, additional, v))
    return rows


def make_thread_row(
    thread_id: str, key: ThreadKey, first_ts: int | None, last_ts: int | None, checkpoints: int, roots: int,
    namespaces: int, messages: int, latest_root: str | None, transcript_root: str | None, stale: str | None,
    latest_is_leaf: bool | None, branch_count: int,
    fork_count: int, pending: list[Any] | None, removed_current: int, edited_current: int,
) -> tuple:
    """The `threads` row (`latest_root`: the greatest root id; `transcript_root`: the transcript's checkpoint)."""
    return (
        thread_id,
        key.tenant_id,
        key.sub_tenant_id,
        key.session_id,
        first_ts,
        last_ts,
        checkpoints,
        roots,
        checkpoints - roots,
        namespaces,
        messages,
        latest_root,
        transcript_root,
        stale,
        latest_is_leaf,
        branch_count,
        fork_count,
        bool(pending),
        to_json(plain(pending)) if pending else None,
        removed_current,
        edited_current,
    )


def stale_reason(latest_root: str | None, transcript_root: str | None, errors: list[LoadError]) -> str | None:
    """Why the transcript does not come from the latest root checkpoint `latest_root`; None when it does.

    They differ when the latest did not decode, and the thread's `load_errors` say why
    (its own row, or the thread's one "no key given" row: `cipher.one_hint_per_thread` folds those);
    and when the thread was cut at the checkpoint limit (`records.checkpoint_cap_error`): the
    latest checkpoints were not read at all.

    >>> e = LoadError("t", "", "c2", "checkpoint", "AES-EAX MAC check failed")
    >>> stale_reason("c2", "c1", [e]), stale_reason("c2", "c2", [e])
    ('latest root checkpoint c2 not decoded: AES-EAX MAC check failed', None)
    """
    cut = [e for e in errors if e.checkpoint_id is None and over_checkpoint_cap(e.reason)]
    if cut:  # (the latest checkpoints were not read: whichever was read last is not the latest)
        return f"the thread was cut short: {cut[0].reason}"
    if latest_root == transcript_root:
        return None
    own = [e for e in errors if e.checkpoint_id == latest_root and e.checkpoint_ns == ""]
    # Else the thread's "no key given" row, else the last root error before it (a DeltaChannel
    # rebuild stopped there: every later list, the latest's included, was not rebuilt).
    why = (own or [e for e in errors if e.checkpoint_id is None and missing_key(e.reason)]
           or sorted((e for e in errors if e.checkpoint_ns == "" and e.checkpoint_id is not None
                      and e.checkpoint_id < latest_root), key=lambda e: e.checkpoint_id)[-1:])
    return f"latest root checkpoint {latest_root} not decoded: {why[0].reason if why else 'damaged (see load_errors)'}"


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


def _diff(prev: array, cur: array, decoded: list[Message | None], ident_of: list[Any]) -> list[tuple]:
    """Events turning the version list `prev` into `cur`, keyed by message id
    (a message without one by its payload), occurrence by occurrence: the k-th copy
    of an id in one list matches the k-th in the other, so a repeated message that
    is appended (an `operator.add` list) is added, and one copy dropped is removed.

    An entry that is not a message (`decoded` None: reported once as a row error) takes
    no part: a list flooded with them costs no events. (Lists that only append new
    messages are handled by the caller, cheaper.)

    >>> m = lambda mid: Message(mid, "ai", "assistant", None, None, "OK", 0, None, 0, (), None, None, None, None, None, None, None, None, None)
    >>> decoded = [m(None), m(None)]
    >>> _diff(array("i", [0, 1]), array("i", [0, 1, 1]), decoded, [("version", 0), ("version", 1)])
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
