"""The rows of each table for one thread, from what the walk over its checkpoints found
(`loaders.transform.thread`), as tuples of the table's staged columns in catalogue order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loaders.cipher import missing_key
from loaders.decode import plain, to_json
from loaders.messages import Message
from loaders.records import LoadError, RawWrite, over_checkpoint_cap
from loaders.thread_keys import ThreadKey


@dataclass(slots=True)
class ThreadRows:
    """Rows of every table for one thread, as tuples of the table's staged columns in
    catalogue order (`loaders.catalog`; tests/loaders/test_catalog.py holds every tuple to it).

    TIMESTAMPTZ columns hold integer microseconds since the Unix epoch, UTC (see `loaders.transform.timestamps.ts_micros`).
    """

    threads: list[tuple]
    checkpoints: list[tuple]
    messages: list[tuple]
    message_versions: list[tuple]
    message_events: list[tuple]
    subgraph_messages: list[tuple]
    errors: list[LoadError]


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
    "response_metadata", "additional_kwargs", "media",
)
if Message._fields != _MESSAGE_FIELDS:
    raise ImportError(f"loaders.transform.rows unpacks messages.Message as {_MESSAGE_FIELDS}; it is now {Message._fields}")


def interrupts_of(writes: list[RawWrite]) -> dict[tuple[str, str], list[Any]]:
    """(namespace, checkpoint id) → the values of its `__interrupt__` writes."""
    interrupts: dict[tuple[str, str], list[Any]] = {}
    for w in writes:
        if w.channel == "__interrupt__":
            interrupts.setdefault((w.checkpoint_ns, w.checkpoint_id), []).append(w.value)
    return interrupts


def versions_rows(thread_id: str, decoded: list[Message | None], first_cids: list[str], first_ts: list[int | None]) -> list[tuple]:
    """`message_versions` rows: every decoded version with its first checkpoint and ts."""
    rows = []
    append = rows.append
    for v, msg in enumerate(decoded):
        if msg is None:
            continue
        (mid, lc_type, role, chat_role, name, content, non_text, tool_calls, tool_call_count, _, tool_call_id, tool_status,
         input_tokens, output_tokens, total_tokens, model, *_, media) = msg
        append((thread_id, v, mid, lc_type, role, name, content, len(content), non_text, media, tool_calls, tool_call_count,
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
         input_tokens, output_tokens, total_tokens, model, usage, response, additional, media) = msg
        seen = first_seen.get(mid) if mid is not None else None
        append((thread_id, tenant, sub, session, ordinal, role, lc_type, chat_role, name, content, len(content), non_text,
                media, mid,
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
